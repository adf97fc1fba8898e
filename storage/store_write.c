/* The store's writes: each becomes an operation in the current turn's batch
 * (store_batch.c), answered once that batch has committed. Loop thread. */
#include <string.h>

#include "store_internal.h"

/* The done callback of every write: reports status to its cs_store_done_cb. */
static void write_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_done_cb cb = (cs_store_done_cb)op->cb;

    if (cb != NULL)
        cb(op->arg, status);
}

static struct cs_store_op *write_new(struct cs_store *store, enum cs_store_stmt stmt,
                                     cs_store_done_cb cb, void *arg)
{
    CS_STORE_ASSERT_LOOP(store);
    return cs_store_op_new(store, stmt, true, write_done_cb, (void (*)(void))cb, arg);
}

void cs_store_job_put(struct cs_store *store, const Csched__V1__Job *job, int64_t first_run_id,
                      cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_JOB_PUT, cb, arg);

    cs_store_job_params(job, first_run_id, &op->params);
    cs_store_op_submit(store, op);
}

void cs_store_job_delete(struct cs_store *store, const char *name, cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_JOB_DELETE, cb, arg);

    cs_store_params_text(&op->params, name);
    cs_store_op_submit(store, op);
}

void cs_store_run_put(struct cs_store *store, const Csched__V1__Run *run, cs_store_done_cb cb,
                      void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_RUN_PUT, cb, arg);

    op->key[0] = run->id;
    cs_store_run_params(run, &op->params);
    cs_store_op_submit(store, op);
}

void cs_store_attempt_put(struct cs_store *store, int64_t run_id,
                          const Csched__V1__Attempt *attempt, const char *attempt_dir,
                          cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_ATTEMPT_PUT, cb, arg);

    op->key[0] = run_id;
    op->key[1] = attempt->number;
    cs_store_attempt_params(run_id, attempt, attempt_dir, &op->params);
    cs_store_op_submit(store, op);
}

/* key[0] is the seq the event was put with, key[1] the one it got
 * (store_batch.c numbers a shared database's events from their batch's
 * result). */
static void event_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_event_cb cb = (cs_store_event_cb)op->cb;

    if (cb != NULL)
        cb(op->arg, status, op->key[1]);
}

void cs_store_event_put(struct cs_store *store, const Csched__V1__Event *event,
                        cs_store_event_cb cb, void *arg)
{
    CS_STORE_ASSERT_LOOP(store);
    struct cs_store_op *op = cs_store_op_new(store, CS_STORE_STMT_EVENT_PUT, true, event_done_cb,
                                             (void (*)(void))cb, arg);

    /* A shared database skips, in a batch sent again, the events at or
     * below the last it committed of this replica's: their seqs must rise
     * in the order they are put. */
    CS_STORE_ASSERT(store->embedded_dir != NULL || event->seq > store->last_event_local);
    store->last_event_local = event->seq;
    op->key[0] = op->key[1] = event->seq;
    cs_store_event_params(event, &op->params);
    cs_store_op_submit(store, op);
}

/* A tail's copy, or SQL NULL (the column is left as it is). */
static void tail_param(struct cs_store_params *p, const uint8_t *bytes, size_t len)
{
    void *copy = NULL;

    if (bytes == NULL) {
        cs_store_params_null(p);
        return;
    }
    if (len > 0) {
        copy = cs_store_xmalloc(len);
        memcpy(copy, bytes, len);
    }
    cs_store_params_bytes(p, copy, len);
}

void cs_store_attempt_tail_put(struct cs_store *store, int64_t run_id, uint32_t number,
                               const uint8_t *out, size_t out_len, const uint8_t *err,
                               size_t err_len, cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_ATTEMPT_TAIL_PUT, cb, arg);

    op->key[0] = run_id;
    op->key[1] = number;
    cs_store_params_int(&op->params, run_id);
    cs_store_params_int(&op->params, number);
    tail_param(&op->params, out, out_len);
    tail_param(&op->params, err, err_len);
    cs_store_op_submit(store, op);
}

void cs_store_slot_put(struct cs_store *store, const Csched__V1__Slot *slot, cs_store_done_cb cb,
                       void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_SLOT_PUT, cb, arg);

    op->key[0] = slot->slot_unix_ms; /* with the job's name, params.values[0] */
    cs_store_slot_params(slot, &op->params);
    cs_store_op_submit(store, op);
}

void cs_store_hook_put(struct cs_store *store, const struct cs_store_hook_new *d,
                       cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_HOOK_PUT, cb, arg);

    cs_store_hook_put_params(d, &op->params);
    cs_store_op_submit(store, op);
}

void cs_store_hook_update(struct cs_store *store, const struct cs_store_hook_result *r,
                          cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_HOOK_UPDATE, cb, arg);

    op->key[0] = r->id;
    cs_store_hook_update_params(r, &op->params);
    cs_store_op_submit(store, op);
}

struct cs_store_mark cs_store_mark_take(struct cs_store *store)
{
    CS_STORE_ASSERT_LOOP(store);
    return (struct cs_store_mark){store->pending.tail};
}

/* Ties every write queued since tie (NULL: none) to the next one, so that
 * one batch carries them all. The mark and the tied put come in one call
 * chain of the caller's, in which nothing is sent: every write queued since
 * the mark is still in pending, right after it. */
static void tie_since(struct cs_store *store, const struct cs_store_mark *tie)
{
    if (tie != NULL && store->state != CS_STORE_STATE_FINISHING) {
        struct cs_store_op *o = tie->after != NULL ? tie->after->next : store->pending.head;

        for (; o != NULL; o = o->next)
            o->tie_next = true;
    }
}

void cs_store_audit_put(struct cs_store *store, const Csched__V1__AuditEntry *entry,
                        const struct cs_store_mark *tie, cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_AUDIT_PUT, cb, arg);

    cs_store_audit_params(entry, &op->params);
    tie_since(store, tie);
    cs_store_op_submit(store, op);
}

void cs_store_after_put(struct cs_store *store, const Csched__V1__DependencyCause *c,
                        const Csched__V1__DependencyUpstream *up, const struct cs_store_mark *tie,
                        cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = write_new(store, CS_STORE_STMT_AFTER_PUT, cb, arg);

    cs_store_after_params(c, up, &op->params);
    tie_since(store, tie);
    cs_store_op_submit(store, op);
}
