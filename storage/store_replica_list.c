/* The replicas table read whole for ListReplicas: its SQL and the mapping
 * of a row to a csched.v1.Replica. Times come out as the database's clock
 * has them, and a lease's age and expiry are measured against that clock
 * in the same statement, so no replica's clock is compared with another's.
 * The rows are written by the replicas themselves (store_replica.c); this
 * file only reads them. Loop thread. */
#include <stdlib.h>

#include "store_internal.h"

/* Times as unix milliseconds, truncated (the columns keep microseconds).
 * clock_timestamp(), not now(): a read queued behind writes runs in their
 * transaction, whose now() can be older than a renewal another replica
 * committed since, which would read as a lease renewed in the future. It
 * is taken once, in a CTE (PostgreSQL never inlines one that calls a
 * volatile function), so that every row is measured against one time.
 * Ids sort by their bytes, whatever the database's collation. */
const char cs_store_sql_replica_list[] =
    "WITH t AS (SELECT clock_timestamp() AS now)"
    " SELECT r.id, r.epoch, r.state, r.address, r.version,"
    " floor(extract(epoch FROM r.joined_at) * 1000)::bigint,"
    " floor(extract(epoch FROM r.renewed_at) * 1000)::bigint,"
    " floor(extract(epoch FROM r.lease_until) * 1000)::bigint,"
    " floor(extract(epoch FROM r.attempts_until) * 1000)::bigint,"
    " floor(extract(epoch FROM t.now - r.renewed_at) * 1000)::bigint,"
    " r.lease_until < t.now, r.runs_held, r.max_running"
    " FROM replicas r, t ORDER BY r.id COLLATE \"C\"";

Csched__V1__Replica *cs_store_replica_from_row(const PGresult *res, int row)
{
    Csched__V1__Replica *r = cs_store_xmalloc(sizeof(*r));

    csched__v1__replica__init(r);
    r->id = cs_store_row_strdup(res, row, 0);
    r->epoch = cs_store_row_int(res, row, 1);
    r->state = (Csched__V1__ReplicaState)cs_store_row_int(res, row, 2);
    r->address = cs_store_row_strdup(res, row, 3);
    r->version = cs_store_row_strdup(res, row, 4);
    r->joined_unix_ms = cs_store_row_int(res, row, 5);
    r->renewed_unix_ms = cs_store_row_int(res, row, 6);
    r->lease_until_unix_ms = cs_store_row_int(res, row, 7);
    r->attempts_until_unix_ms = cs_store_row_int(res, row, 8);
    r->lease_age_ms = cs_store_row_int(res, row, 9);
    r->lease_expired = cs_store_row_bool(res, row, 10);
    r->runs_held = (int32_t)cs_store_row_int(res, row, 11);
    r->max_running = (uint32_t)cs_store_row_int(res, row, 12);
    return r;
}

void cs_store_replicas_free(Csched__V1__Replica **replicas, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&replicas[i]->base, NULL);
    free(replicas);
}
