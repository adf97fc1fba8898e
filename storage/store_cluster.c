/* The cluster's limits (migration 0014): one row, read with the snapshot
 * and written by SetClusterLimits or seeded by --cluster-max-running. The
 * statement only; store_read.c sends it. */
#include "store_internal.h"

/* $1 the new max_running, $2 the time, $3 who; $4 false: only where no one
 * has set it yet (a seed). Returns the value in force afterwards. */
const char cs_store_sql_cluster_limits_set[] =
    "WITH u AS (UPDATE cluster_limits SET max_running = $1::integer,"
    "  updated_unix_ms = $2::bigint, updated_by = $3"
    "  WHERE $4::boolean OR updated_unix_ms = 0 RETURNING max_running)"
    " SELECT coalesce((SELECT max_running FROM u), (SELECT max_running FROM cluster_limits))";
