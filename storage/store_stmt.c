/* The statement table: every prepared statement's name and SQL, prepared
 * once per connection. The SQL lives beside each table's row mapping
 * (store_job.c, store_run.c, store_event.c, store_slot.c, store_audit.c,
 * store_replica_list.c, store_tail.c, store_hook.c); this file only names it. */
#include "store_internal.h"

const struct cs_store_stmt_def cs_store_stmts[CS_STORE_STMT_COUNT] = {
    [CS_STORE_STMT_JOB_PUT] = {"job_put", cs_store_sql_job_put},
    [CS_STORE_STMT_JOB_DELETE] = {"job_delete", cs_store_sql_job_delete},
    [CS_STORE_STMT_JOB_ALL] = {"job_all", cs_store_sql_job_all},
    [CS_STORE_STMT_RUN_PUT] = {"run_put", cs_store_sql_run_put},
    [CS_STORE_STMT_ATTEMPT_PUT] = {"attempt_put", cs_store_sql_attempt_put},
    [CS_STORE_STMT_RUN_GET] = {"run_get", cs_store_sql_run_get},
    [CS_STORE_STMT_RUN_BY_KEY] = {"run_by_key", cs_store_sql_run_by_key},
    [CS_STORE_STMT_RUN_LIST] = {"run_list", cs_store_sql_run_list},
    [CS_STORE_STMT_RUN_LIST_JOB] = {"run_list_job", cs_store_sql_run_list_job},
    [CS_STORE_STMT_RUN_LIST_JOBS] = {"run_list_jobs", cs_store_sql_run_list_jobs},
    [CS_STORE_STMT_RUN_LIST_NOT_JOBS] = {"run_list_not_jobs", cs_store_sql_run_list_not_jobs},
    [CS_STORE_STMT_RUN_LIST_ARRAY] = {"run_list_array", cs_store_sql_run_list_array},
    [CS_STORE_STMT_RUN_ACTIVE] = {"run_active", cs_store_sql_run_active},
    [CS_STORE_STMT_MAX_IDS] = {"max_ids", cs_store_sql_max_ids},
    [CS_STORE_STMT_EVENT_PUT] = {"event_put", cs_store_sql_event_put},
    [CS_STORE_STMT_EVENT_PUT_ORDERED] = {"event_put_ordered", cs_store_sql_event_put_ordered},
    [CS_STORE_STMT_EVENT_LIST] = {"event_list", cs_store_sql_event_list},
    [CS_STORE_STMT_EVENT_LIST_JOB] = {"event_list_job", cs_store_sql_event_list_job},
    [CS_STORE_STMT_SLOT_PUT] = {"slot_put", cs_store_sql_slot_put},
    [CS_STORE_STMT_SLOT_LIST] = {"slot_list", cs_store_sql_slot_list},
    [CS_STORE_STMT_SLOT_LAST] = {"slot_last", cs_store_sql_slot_last},
    [CS_STORE_STMT_PING] = {"ping", "SELECT 1"},
    [CS_STORE_STMT_AUDIT_PUT] = {"audit_put", cs_store_sql_audit_put},
    [CS_STORE_STMT_AUDIT_LIST] = {"audit_list", cs_store_sql_audit_list},
    [CS_STORE_STMT_AUDIT_EXPIRE] = {"audit_expire", cs_store_sql_audit_expire},
    [CS_STORE_STMT_FENCE] = {"fence", "SELECT csched_fence($1, $2::bigint)"},
    [CS_STORE_STMT_FENCE_ORDERED] = {"fence_ordered",
                                     "SELECT csched_fence_ordered($1, $2::bigint)"},
    [CS_STORE_STMT_REPLICA_RENEW] = {"replica_renew",
                                     "SELECT r.*, (SELECT address FROM replicas a"
                                     " WHERE a.id = r.active_id),"
                                     " CASE WHEN $7::boolean THEN pg_notify('" CS_STORE_WAKE_CHANNEL
                                     "', $1) END FROM csched_renew($1, $2::bigint, $3::bigint,"
                                     " $4::bigint, $5::integer, $6, $8::integer) r"},
    [CS_STORE_STMT_REPLICA_TAKE_OVER] =
        {"replica_take_over",
         "SELECT t, CASE WHEN t THEN pg_notify('" CS_STORE_WAKE_CHANNEL "', $1) END"
         " FROM csched_take_over($1, $2::bigint, $3, $4::bigint, $5::bigint) t"},
    [CS_STORE_STMT_REPLICA_LEAVE] = {"replica_leave",
                                     "SELECT csched_leave($1, $2::bigint),"
                                     " pg_notify('" CS_STORE_WAKE_CHANNEL "', $1)"},
    [CS_STORE_STMT_REPLICA_DRAIN] = {"replica_drain",
                                     "UPDATE replicas SET state = 3"
                                     " WHERE id = $1 AND epoch = $2 AND state = 2"},
    [CS_STORE_STMT_REMOTE_ATTEMPTS] = {"remote_attempts", cs_store_sql_remote_attempts},
    [CS_STORE_STMT_REPLICA_LIST] = {"replica_list", cs_store_sql_replica_list},
    [CS_STORE_STMT_ATTEMPT_TAIL_PUT] = {"attempt_tail_put", cs_store_sql_attempt_tail_put},
    [CS_STORE_STMT_ATTEMPT_TAIL_GET] = {"attempt_tail_get", cs_store_sql_attempt_tail_get},
    [CS_STORE_STMT_HISTORY_PURGE] = {"history_purge", cs_store_sql_history_purge},
    [CS_STORE_STMT_HISTORY_PURGE_JOB] = {"history_purge_job", cs_store_sql_history_purge_job},
    [CS_STORE_STMT_HISTORY_PURGE_CAUSES] = {"history_purge_causes",
                                            cs_store_sql_history_purge_causes},
    [CS_STORE_STMT_CLUSTER_LIMITS_SET] = {"cluster_limits_set", cs_store_sql_cluster_limits_set},
    [CS_STORE_STMT_HOOK_PUT] = {"hook_put", cs_store_sql_hook_put},
    [CS_STORE_STMT_HOOK_UPDATE] = {"hook_update", cs_store_sql_hook_update},
    [CS_STORE_STMT_HOOK_DUE] = {"hook_due", cs_store_sql_hook_due},
    [CS_STORE_STMT_HOOK_LIST] = {"hook_list", cs_store_sql_hook_list},
    [CS_STORE_STMT_AFTER_PUT] = {"after_put", cs_store_sql_after_put},
    [CS_STORE_STMT_AFTER_LOAD] = {"after_load", cs_store_sql_after_load},
    [CS_STORE_STMT_AFTER_LIST] = {"after_list", cs_store_sql_after_list},
};
