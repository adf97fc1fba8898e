/* The store's reads: each is one statement in the queue, behind the writes
 * queued before it, and its result becomes messages for the caller. Loop
 * thread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

static struct cs_store_op *read_new(struct cs_store *store, enum cs_store_stmt stmt,
                                    cs_store_op_done_cb done_cb, void (*cb)(void), void *arg)
{
    CS_STORE_ASSERT_LOOP(store);
    return cs_store_op_new(store, stmt, false, done_cb, cb, arg);
}

static void run_one_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_run_cb cb = (cs_store_run_cb)op->cb;
    Csched__V1__Run **runs;
    size_t n;

    if (status != 0) {
        if (cb != NULL)
            cb(op->arg, status, NULL);
        return;
    }
    n = cs_store_runs_from_rows(&op->store->log, res, &runs, NULL);
    if (n == 0) {
        if (cb != NULL)
            cb(op->arg, -ENOENT, NULL);
        return;
    }
    /* At most one run matches either statement; keep the newest if not. */
    if (cb != NULL)
        cb(op->arg, 0, runs[n - 1]);
    else
        protobuf_c_message_free_unpacked(&runs[n - 1]->base, NULL);
    cs_store_runs_free(runs, n - 1);
}

void cs_store_run_get(struct cs_store *store, int64_t run_id, cs_store_run_cb cb, void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_RUN_GET, run_one_done_cb, (void (*)(void))cb, arg);

    cs_store_params_int(&op->params, run_id);
    cs_store_op_submit(store, op);
}

void cs_store_run_find_by_key(struct cs_store *store, const char *job_name,
                              const char *idempotency_key, cs_store_run_cb cb, void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_RUN_BY_KEY, run_one_done_cb, (void (*)(void))cb, arg);

    cs_store_params_text(&op->params, job_name);
    cs_store_params_text(&op->params, idempotency_key);
    cs_store_op_submit(store, op);
}

static void attempt_tail_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_attempt_tail_cb cb = (cs_store_attempt_tail_cb)op->cb;
    struct cs_store_attempt_tail *tail = NULL;

    if (status == 0 && PQntuples(res) == 0)
        status = -ENOENT;
    if (status == 0)
        tail = cs_store_attempt_tail_from_row(res, 0);
    if (cb != NULL)
        cb(op->arg, status, tail);
    else
        cs_store_attempt_tail_free(tail);
}

void cs_store_attempt_tail_get(struct cs_store *store, int64_t run_id, uint32_t number,
                               cs_store_attempt_tail_cb cb, void *arg)
{
    struct cs_store_op *op = read_new(store, CS_STORE_STMT_ATTEMPT_TAIL_GET, attempt_tail_done_cb,
                                      (void (*)(void))cb, arg);

    cs_store_params_int(&op->params, run_id);
    cs_store_params_int(&op->params, number);
    cs_store_op_submit(store, op);
}

static void run_list_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_runs_cb cb = (cs_store_runs_cb)op->cb;
    Csched__V1__Run **runs;
    size_t n;

    if (status != 0) {
        if (cb != NULL)
            cb(op->arg, status, NULL, 0, false);
        return;
    }
    n = cs_store_runs_from_rows(&op->store->log, res, &runs, NULL);
    if (cb != NULL)
        cb(op->arg, 0, runs, n, cs_store_run_list_more(res));
    else
        cs_store_runs_free(runs, n);
}

void cs_store_run_list(struct cs_store *store, const struct cs_store_run_filter *filter,
                       cs_store_runs_cb cb, void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_RUN_LIST, run_list_done_cb, (void (*)(void))cb, arg);

    op->stmt = cs_store_run_filter_params(filter, &op->params);
    cs_store_op_submit(store, op);
}

static void event_list_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_events_cb cb = (cs_store_events_cb)op->cb;
    Csched__V1__Event **events = NULL;
    size_t n = 0;

    if (status == 0) {
        n = (size_t)PQntuples(res);
        if (n > 0)
            events = cs_store_xmalloc(n * sizeof(*events));
        for (size_t i = 0; i < n; i++)
            events[i] = cs_store_event_from_row(res, (int)i);
    }
    if (cb != NULL)
        cb(op->arg, status, events, n);
    else
        cs_store_events_free(events, n);
}

void cs_store_event_list(struct cs_store *store, int64_t after_seq, const char *job_name,
                         uint32_t limit, cs_store_events_cb cb, void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_EVENT_LIST, event_list_done_cb, (void (*)(void))cb, arg);

    cs_store_params_int(&op->params, after_seq);
    cs_store_params_int(&op->params, limit > 0 ? limit : 100);
    if (job_name != NULL && job_name[0] != '\0') {
        op->stmt = CS_STORE_STMT_EVENT_LIST_JOB;
        cs_store_params_text(&op->params, job_name);
    }
    cs_store_op_submit(store, op);
}

static void slot_list_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_slots_cb cb = (cs_store_slots_cb)op->cb;
    Csched__V1__Slot **slots = NULL;
    size_t n = 0;

    if (status == 0) {
        n = (size_t)PQntuples(res);
        if (n > 0)
            slots = cs_store_xmalloc(n * sizeof(*slots));
        for (size_t i = 0; i < n; i++)
            slots[i] = cs_store_slot_from_row(res, (int)i);
    }
    if (cb != NULL)
        cb(op->arg, status, slots, n);
    else
        cs_store_slots_free(slots, n);
}

void cs_store_slot_list(struct cs_store *store, const struct cs_store_slot_filter *filter,
                        cs_store_slots_cb cb, void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_SLOT_LIST, slot_list_done_cb, (void (*)(void))cb, arg);

    cs_store_slot_filter_params(filter, &op->params);
    cs_store_op_submit(store, op);
}

void cs_store_slot_last(struct cs_store *store, cs_store_slots_cb cb, void *arg)
{
    cs_store_op_submit(store, read_new(store, CS_STORE_STMT_SLOT_LAST, slot_list_done_cb,
                                       (void (*)(void))cb, arg));
}

static void audit_list_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_audit_cb cb = (cs_store_audit_cb)op->cb;
    uint32_t limit = (uint32_t)op->key[0];
    Csched__V1__AuditEntry **entries = NULL;
    size_t n = 0;
    bool more = false;

    if (status == 0) {
        n = (size_t)PQntuples(res);
        more = n > limit;
        if (more)
            n = limit;
        if (n > 0)
            entries = cs_store_xmalloc(n * sizeof(*entries));
        for (size_t i = 0; i < n; i++)
            entries[i] = cs_store_audit_from_row(res, (int)i);
    }
    if (cb != NULL)
        cb(op->arg, status, entries, n, more);
    else
        cs_store_audit_free(entries, n);
}

void cs_store_audit_list(struct cs_store *store, const struct cs_store_audit_filter *filter,
                         cs_store_audit_cb cb, void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_AUDIT_LIST, audit_list_done_cb, (void (*)(void))cb, arg);

    op->key[0] = filter->limit > 0 ? filter->limit : 100;
    cs_store_audit_filter_params(filter, &op->params);
    cs_store_op_submit(store, op);
}

/* A statement that answers one number. */
static void count_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_count_cb cb = (cs_store_count_cb)op->cb;

    if (cb != NULL)
        cb(op->arg, status, status == 0 ? cs_store_row_int(res, 0, 0) : 0);
}

void cs_store_audit_expire(struct cs_store *store, int64_t before_unix_ms,
                           cs_store_count_cb expired_cb, void *arg)
{
    /* Not a write: a lost connection fails it, and the next sweep tries
     * again, rather than holding it in the backlog. */
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_AUDIT_EXPIRE, count_done_cb, (void (*)(void))expired_cb, arg);

    cs_store_params_int(&op->params, before_unix_ms);
    cs_store_op_submit(store, op);
}

void cs_store_cluster_max_running_set(struct cs_store *store, uint32_t max_running,
                                      int64_t at_unix_ms, const char *who, bool seed,
                                      cs_store_count_cb set_cb, void *arg)
{
    struct cs_store_op *op = read_new(store, CS_STORE_STMT_CLUSTER_LIMITS_SET, count_done_cb,
                                      (void (*)(void))set_cb, arg);

    cs_store_params_int(&op->params, max_running);
    cs_store_params_int(&op->params, at_unix_ms);
    cs_store_params_text(&op->params, who);
    cs_store_params_bool(&op->params, !seed);
    cs_store_op_submit(store, op);
}

/* The ids of a comma-separated list (string_agg's), malloc'd. */
static int64_t *ids_parse(const char *text, size_t *n)
{
    size_t cap = 1;
    for (const char *p = text; *p != '\0'; p++)
        cap += *p == ',';
    int64_t *ids = cs_store_xcalloc(cap, sizeof(*ids));
    *n = 0;
    for (const char *p = text; *p != '\0';) {
        char *end;
        ids[(*n)++] = strtoll(p, &end, 10);
        p = *end == ',' ? end + 1 : end + strlen(end);
    }
    return ids;
}

static void purge_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_history_cb cb = (cs_store_history_cb)op->cb;
    struct cs_store_history_purged purged = {0};
    int64_t *deliveries = NULL;

    if (status == 0) {
        purged.runs = cs_store_row_int(res, 0, 0);
        purged.slots = cs_store_row_int(res, 0, 1);
        purged.events = cs_store_row_int(res, 0, 2);
        purged.last_event_seq = cs_store_row_int(res, 0, 3);
        purged.causes = cs_store_row_int(res, 0, 4);
        deliveries = ids_parse(PQgetvalue(res, 0, 5), &purged.n_delivery_ids);
        purged.delivery_ids = deliveries;
    }
    if (cb != NULL)
        cb(op->arg, status, &purged);
    free(deliveries);
}

void cs_store_history_purge(struct cs_store *store, int64_t before_unix_ms,
                            int64_t causes_before_unix_ms, cs_store_history_cb purged_cb, void *arg)
{
    /* Not a write: a lost connection fails it and the next sweep tries
     * again, rather than holding it in the backlog. */
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_HISTORY_PURGE, purge_done_cb, (void (*)(void))purged_cb, arg);

    cs_store_params_int(&op->params, before_unix_ms);
    cs_store_params_int(&op->params, causes_before_unix_ms);
    cs_store_op_submit(store, op);
}

static void purge_job_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_history_cb cb = (cs_store_history_cb)op->cb;
    struct cs_store_history_purged purged = {0};
    size_t n = status == 0 ? (size_t)PQntuples(res) : 0;
    int64_t *ids = cs_store_xcalloc(n + 1, sizeof(*ids)), *deliveries = NULL;

    for (size_t i = 0; i < n; i++)
        ids[i] = cs_store_row_int(res, (int)i, 0);
    purged.runs = (int64_t)n;
    purged.run_ids = ids;
    purged.n_run_ids = n;
    if (n > 0) {
        purged.causes = cs_store_row_int(res, 0, 1);
        deliveries = ids_parse(PQgetvalue(res, 0, 2), &purged.n_delivery_ids);
        purged.delivery_ids = deliveries;
    }
    if (cb != NULL)
        cb(op->arg, status, &purged);
    free(ids);
    free(deliveries);
}

void cs_store_history_purge_job(struct cs_store *store, const struct cs_store_history_job *job,
                                cs_store_history_cb purged_cb, void *arg)
{
    struct cs_store_op *op = read_new(store, CS_STORE_STMT_HISTORY_PURGE_JOB, purge_job_done_cb,
                                      (void (*)(void))purged_cb, arg);

    cs_store_params_text(&op->params, job->job_name);
    cs_store_params_int(&op->params, job->keep_succeeded);
    cs_store_params_int(&op->params, job->keep_failed);
    cs_store_params_int(&op->params, job->before_unix_ms);
    cs_store_params_int(&op->params, job->causes_before_unix_ms);
    cs_store_op_submit(store, op);
}

static void purge_causes_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_causes_cb cb = (cs_store_causes_cb)op->cb;
    struct cs_store_cause_key last = {0};
    int64_t deleted = 0, walked = 0;

    if (status == 0 && PQntuples(res) > 0) {
        deleted = cs_store_row_int(res, 0, 0);
        walked = cs_store_row_int(res, 0, 1);
        last.decided_unix_ms = cs_store_row_int(res, 0, 2);
        (void)snprintf(last.job_name, sizeof(last.job_name), "%s", PQgetvalue(res, 0, 3));
        (void)snprintf(last.cause, sizeof(last.cause), "%s", PQgetvalue(res, 0, 4));
    }
    if (cb != NULL)
        cb(op->arg, status, deleted, walked, &last);
}

void cs_store_history_purge_causes(struct cs_store *store, const struct cs_store_cause_key *from,
                                   int64_t before_unix_ms, cs_store_causes_cb walked_cb, void *arg)
{
    struct cs_store_op *op = read_new(store, CS_STORE_STMT_HISTORY_PURGE_CAUSES,
                                      purge_causes_done_cb, (void (*)(void))walked_cb, arg);

    cs_store_params_int(&op->params, from->decided_unix_ms);
    cs_store_params_text(&op->params, from->job_name);
    cs_store_params_text(&op->params, from->cause);
    cs_store_params_int(&op->params, before_unix_ms);
    cs_store_op_submit(store, op);
}

static void replica_list_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_replicas_cb cb = (cs_store_replicas_cb)op->cb;
    Csched__V1__Replica **replicas = NULL;
    size_t n = 0;

    if (status == 0) {
        n = (size_t)PQntuples(res);
        if (n > 0)
            replicas = cs_store_xmalloc(n * sizeof(*replicas));
        for (size_t i = 0; i < n; i++)
            replicas[i] = cs_store_replica_from_row(res, (int)i);
    }
    if (cb != NULL)
        cb(op->arg, status, replicas, n);
    else
        cs_store_replicas_free(replicas, n);
}

void cs_store_replica_list(struct cs_store *store, cs_store_replicas_cb cb, void *arg)
{
    cs_store_op_submit(store, read_new(store, CS_STORE_STMT_REPLICA_LIST, replica_list_done_cb,
                                       (void (*)(void))cb, arg));
}

static void ping_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    /* The answer is the point; a lost connection is handled by its layer. */
    (void)op;
    (void)status;
    (void)res;
}

void cs_store_ping(struct cs_store *store)
{
    cs_store_op_submit(store, read_new(store, CS_STORE_STMT_PING, ping_done_cb, NULL, NULL));
}

static void hook_due_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_hook_due_cb cb = (cs_store_hook_due_cb)op->cb;
    struct cs_store_hook_due *due = NULL;
    size_t n = 0;

    if (status == 0) {
        n = (size_t)PQntuples(res);
        if (n > 0)
            due = cs_store_xmalloc(n * sizeof(*due));
        for (size_t i = 0; i < n; i++)
            cs_store_hook_due_from_row(res, (int)i, &due[i]);
    }
    if (cb != NULL)
        cb(op->arg, status, due, n);
    else
        cs_store_hook_due_free(due, n);
}

void cs_store_hook_due_list(struct cs_store *store, uint32_t limit, cs_store_hook_due_cb cb,
                            void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_HOOK_DUE, hook_due_done_cb, (void (*)(void))cb, arg);

    cs_store_params_int(&op->params, limit);
    cs_store_op_submit(store, op);
}

static void hook_list_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_hook_list_cb cb = (cs_store_hook_list_cb)op->cb;
    Csched__V1__HookDelivery **deliveries = NULL;
    size_t n = 0;

    if (status == 0) {
        n = (size_t)PQntuples(res);
        if (n > 0)
            deliveries = cs_store_xmalloc(n * sizeof(*deliveries));
        for (size_t i = 0; i < n; i++)
            deliveries[i] = cs_store_hook_delivery_from_row(res, (int)i);
    }
    if (cb != NULL)
        cb(op->arg, status, deliveries, n);
    else
        cs_store_hook_deliveries_free(deliveries, n);
}

void cs_store_hook_list(struct cs_store *store, const char *job_name, int64_t before_id,
                        uint32_t limit, cs_store_hook_list_cb cb, void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_HOOK_LIST, hook_list_done_cb, (void (*)(void))cb, arg);

    cs_store_params_text(&op->params, job_name);
    cs_store_params_int(&op->params, before_id);
    cs_store_params_int(&op->params, limit);
    cs_store_op_submit(store, op);
}

static void after_list_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_after_list_cb cb = (cs_store_after_list_cb)op->cb;
    Csched__V1__DependencyCause **causes = NULL;
    size_t n = 0;

    if (status == 0)
        n = cs_store_after_from_rows(&op->store->log, res, &causes);
    if (cb != NULL)
        cb(op->arg, status, causes, n);
    else
        cs_store_after_causes_free(causes, n);
}

void cs_store_after_load(struct cs_store *store, int64_t since_unix_ms, cs_store_after_list_cb cb,
                         void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_AFTER_LOAD, after_list_done_cb, (void (*)(void))cb, arg);

    cs_store_params_int(&op->params, since_unix_ms);
    cs_store_op_submit(store, op);
}

void cs_store_after_list(struct cs_store *store, const char *job_name, uint32_t limit,
                         cs_store_after_list_cb cb, void *arg)
{
    struct cs_store_op *op =
        read_new(store, CS_STORE_STMT_AFTER_LIST, after_list_done_cb, (void (*)(void))cb, arg);

    cs_store_params_text(&op->params, job_name);
    cs_store_params_int(&op->params, limit);
    cs_store_op_submit(store, op);
}
