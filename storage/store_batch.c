/* Group commit: the queue of operations, the batches in flight, and their
 * results.
 *
 * Operations queue in `pending` during a loop turn. A uv_prepare handle sends
 * them at the end of the turn, as batches of statements each ended by one
 * PQpipelineSync, so a batch is one implicit transaction. We use uv_prepare
 * rather than uv_check or uv_idle: it runs right before the loop blocks for
 * I/O, so it gathers everything the turn's timers, I/O callbacks and the
 * previous turn's check callbacks queued, without adding a turn of latency,
 * and unlike uv_idle it never makes the loop spin. Batches already sent stay
 * in `inflight` until their sync arrives; the next batch accumulates
 * meanwhile. One connection runs its transactions one after another anyway,
 * so a second batch sent early would only commit separately: holding it back
 * until the first commits makes it larger and the commits fewer (the
 * measurement is in docs/design/0004-group-commit.md).
 *
 * A batch's writes do not each become a statement: store_bulk.c coalesces
 * them into one statement per table, so the database binds and executes far
 * fewer statements per run.
 *
 * Results: each statement yields one result then NULL; a batch ends with
 * PGRES_PIPELINE_SYNC (not followed by NULL). A statement's error aborts the
 * rest of its batch: every operation of a failed batch gets -EIO (-ENOSPC
 * when the database is out of disk space, SQLSTATE 53100), and the first
 * error is logged with its statement's name. A lost connection is not
 * an error of the batch: its writes (and the snapshot reads) go back to the
 * front of the queue and are sent again after reconnecting (every write is
 * an idempotent upsert, and they are coalesced afresh); other reads fail
 * with -ENOTCONN.
 *
 * A watchdog timer runs while anything is in flight and restarts whenever
 * the server sends something (the connection layer says so): when it fires, the connection layer
 * (whose callback it is) takes the connection for dead, as a frozen server never answers and never
 * closes.
 *
 * This layer only talks to libpq: when the connection fails it returns
 * -ENOTCONN and the reason, and the connection layer above reconnects. The
 * flush handle's callback is the store's own (store.c), given as
 * store->flush_cb. Loop thread. */
#include <errno.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* Operations per batch, and their parameter bytes: bound the time one flush
 * spends sending, a batch's transaction, and the rows and bytes of one
 * coalesced statement. A batch closes once it reaches either (so it holds
 * at least one operation, however large). A turn that queues more sends
 * several batches. A batch is never cut after an operation tied to the next
 * (an audit row and the change it records): it then takes one more. */
#define BATCH_MAX_OPS 2000
#define BATCH_MAX_BYTES (4u << 20)
/* Batches in flight at once: one, the classic group commit. Operations
 * wait in the queue and join the next batch; this also bounds libpq's
 * buffers and the time one turn spends sending after a reconnect with a long
 * backlog. */
#define INFLIGHT_MAX_BATCHES 1
/* A failed statement is logged once in this time at most. */
#define STMT_FAILURE_LOG_EVERY_MS 60000

static void queue_push(struct cs_store_queue *q, struct cs_store_op *op)
{
    op->next = NULL;
    if (q->tail != NULL)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
}

static struct cs_store_op *queue_pop(struct cs_store_queue *q)
{
    struct cs_store_op *op = q->head;

    if (op != NULL) {
        q->head = op->next;
        if (q->head == NULL)
            q->tail = NULL;
        op->next = NULL;
    }
    return op;
}

struct cs_store_op *cs_store_op_new(struct cs_store *store, enum cs_store_stmt stmt, bool is_write,
                                    cs_store_op_done_cb done_cb, void (*cb)(void), void *arg)
{
    struct cs_store_op *op = cs_store_xcalloc(1, sizeof(*op));

    op->stmt = stmt;
    op->is_write = is_write;
    op->replay = is_write;
    op->done_cb = done_cb;
    op->cb = cb;
    op->arg = arg;
    op->store = store;
    return op;
}

static size_t op_bytes(const struct cs_store_op *op)
{
    const struct cs_store_params *p = &op->params;
    size_t bytes = 0;

    for (int i = 0; i < p->n; i++) {
        if (p->values[i] != NULL)
            bytes += p->formats[i] == 1 ? (size_t)p->lengths[i] : strlen(p->values[i]);
    }
    return bytes;
}

void cs_store_answer_wait(struct cs_store *store)
{
    /* Neither fails: the callback is set and the handle closes only after
     * the connection is gone for good. */
    if (store->inflight_head != NULL)
        (void)uv_timer_start(&store->answer_timer, store->answer_cb, CS_STORE_ANSWER_TIMEOUT_MS, 0);
    else if (store->conn_state == CS_STORE_CONN_READY && !cs_store_is_closing(store))
        (void)uv_timer_start(&store->answer_timer, store->answer_cb, CS_STORE_PING_IDLE_MS, 0);
    else
        (void)uv_timer_stop(&store->answer_timer);
}

void cs_store_batch_free(struct cs_store_batch *b)
{
    free(b->sent);
    free(b);
}

static void op_finish(struct cs_store *store, struct cs_store_op *op, int status)
{
    if (op->is_write)
        store->n_writes--;
    if (op->done_cb != NULL)
        op->done_cb(op, status, status == 0 ? op->result : NULL);
    PQclear(op->result);
    cs_store_params_clear(&op->params);
    free(op);
}

void cs_store_kick(struct cs_store *store)
{
    /* uv_prepare_start fails only for a NULL callback. */
    if (store->state != CS_STORE_STATE_FINISHING)
        (void)uv_prepare_start(&store->flush_handle, store->flush_cb);
}

void cs_store_op_submit(struct cs_store *store, struct cs_store_op *op)
{
    if (op->is_write)
        store->n_writes++;
    if (store->state == CS_STORE_STATE_FINISHING) {
        op_finish(store, op, -ENOTCONN);
        return;
    }
    if (op->replay || store->conn_state == CS_STORE_CONN_READY)
        queue_push(&store->pending, op);
    else
        queue_push(&store->failed, op);
    cs_store_kick(store);
}

/* A batch that writes first checks, in its own transaction, that the
 * replica's epoch is still its own (csched_fence share-locks the replica's
 * row): a takeover's update of that row waits for the batch, and every
 * batch after it fails. On a shared database a batch with events first
 * takes the lock of their order (csched_fence_ordered, migration 0022), and
 * its events are numbered by the database; the embedded one is this
 * replica's alone, so its own numbers are the commit order. */
static bool has_events(const struct cs_store_batch *b)
{
    for (const struct cs_store_op *op = b->ops.head; op != NULL; op = op->next)
        if (op->stmt == CS_STORE_STMT_EVENT_PUT)
            return true;
    return false;
}

static void fence_first(struct cs_store *store, struct cs_store_batch *b)
{
    struct cs_store_op *op;

    if (store->replica.epoch == 0)
        return;
    bool events = store->embedded_dir == NULL && has_events(b);
    if (events) {
        b->ordered_by = store->replica.id;
        b->ordered_epoch = store->replica.epoch;
    }
    op = cs_store_op_new(store, events ? CS_STORE_STMT_FENCE_ORDERED : CS_STORE_STMT_FENCE, false,
                         NULL, NULL, NULL);
    cs_store_params_text(&op->params, store->replica.id);
    cs_store_params_int(&op->params, store->replica.epoch);
    op->next = b->ops.head;
    b->ops.head = op;
}

int cs_store_send_pending(struct cs_store *store, struct cs_store_err *err)
{
    while (store->pending.head != NULL && store->conn_state == CS_STORE_CONN_READY &&
           store->n_inflight < INFLIGHT_MAX_BATCHES) {
        struct cs_store_batch *b = cs_store_xcalloc(1, sizeof(*b));
        size_t n = 0;
        size_t bytes = 0;
        bool tied = false;

        bool writes = false;
        while (((n < BATCH_MAX_OPS && bytes < BATCH_MAX_BYTES) || tied) &&
               store->pending.head != NULL) {
            struct cs_store_op *op = queue_pop(&store->pending);

            tied = op->tie_next;
            writes |= op->is_write;
            bytes += op_bytes(op);
            queue_push(&b->ops, op);
            n++;
        }
        if (writes)
            fence_first(store, b);
        if (store->inflight_tail != NULL)
            store->inflight_tail->next = b;
        else
            store->inflight_head = b;
        store->inflight_tail = b;
        store->n_inflight++;
        cs_store_answer_wait(store);
        b->sent_ns = cs_store_stats_sent(&store->stats, n);
        if (cs_store_batch_send(store->conn, b) != 0 || !PQpipelineSync(store->conn))
            return cs_store_err_set(err, -ENOTCONN, "%s", PQerrorMessage(store->conn));
    }
    return 0;
}

void cs_store_fail_queue(struct cs_store *store, struct cs_store_queue *q, int status)
{
    struct cs_store_op *op;

    while ((op = queue_pop(q)) != NULL)
        op_finish(store, op, status);
}

/* A batch that failed for want of disk space marks the database out of
 * space; one that commits the statement that failed clears it. Any other
 * write would not do: it may go to a table on another disk, or fit in a
 * page that has room. */
static void note_space(struct cs_store *store, const struct cs_store_batch *b)
{
    bool again = false;

    if (b->failed && b->failed_status == -ENOSPC) {
        if (store->out_of_space_ns == 0)
            cs_store_log(&store->log, CS_STORE_LOG_WARN,
                         "the database is out of disk space (statement %s failed): health is "
                         "NOT_SERVING until it commits",
                         cs_store_stmts[b->failed_stmt].name);
        store->out_of_space_ns = cs_store_now_mono_ns();
        store->out_of_space_stmt = b->failed_stmt;
        return;
    }
    for (const struct cs_store_op *op = b->ops.head; op != NULL && !again; op = op->next)
        again = !b->failed && store->out_of_space_ns != 0 && op->stmt == store->out_of_space_stmt;
    if (again) {
        cs_store_log(&store->log, CS_STORE_LOG_INFO, "the database has room again: %s committed",
                     cs_store_stmts[store->out_of_space_stmt].name);
        store->out_of_space_ns = 0;
    }
}

/* Gives each event of a committed replica's batch the seq the database
 * gave it (cs_store_sql_event_put_ordered): the first event of each
 * statement holds its answer, and the events follow in the order their
 * writer numbered them. */
static void number_events(struct cs_store_batch *b)
{
    int64_t last_local = 0, last_seq = 0, next_seq = 0;

    if (b->ordered_by == NULL || b->failed)
        return;
    for (struct cs_store_op *op = b->ops.head; op != NULL; op = op->next) {
        if (op->stmt != CS_STORE_STMT_EVENT_PUT)
            continue;
        if (op->result != NULL) {
            CS_STORE_ASSERT(PQntuples(op->result) == 1); /* the fence found the replica's row */
            last_local = cs_store_row_int(op->result, 0, 0);
            last_seq = cs_store_row_int(op->result, 0, 1);
            next_seq = cs_store_row_int(op->result, 0, 2) + 1;
        }
        op->key[1] = op->key[0] <= last_local ? last_seq - (last_local - op->key[0]) : next_seq++;
    }
}

static void batch_done(struct cs_store *store)
{
    struct cs_store_batch *b = store->inflight_head;
    struct cs_store_op *op;

    store->inflight_head = b->next;
    if (store->inflight_head == NULL)
        store->inflight_tail = NULL;
    store->n_inflight--;
    cs_store_stats_done(&store->stats, b->sent_ns, b->failed);
    note_space(store, b);
    number_events(b);
    while ((op = queue_pop(&b->ops)) != NULL)
        op_finish(store, op, b->failed ? b->failed_status : 0);
    if (b->done_cb != NULL)
        b->done_cb(store, b->failed ? b->failed_status : 0);
    /* After done_cb: the prepares' batch makes the connection READY. */
    cs_store_answer_wait(store);
    if (b->failed && b->failed_status == -ESTALE) {
        cs_store_batch_free(b);
        store->fence_cb(store, "a batch's fence refused it");
        return;
    }
    cs_store_batch_free(b);
    /* Room for the batches that waited. */
    if (store->pending.head != NULL)
        cs_store_kick(store);
}

/* Logs a statement's failure once a minute at most: on a full disk every
 * batch fails, a line each, and the log may share that disk. */
static void log_failure(struct cs_store *store, const char *stmt, const char *msg)
{
    int64_t now_ns = cs_store_now_mono_ns();

    if (store->stmt_failure_logged_ns != 0 &&
        now_ns - store->stmt_failure_logged_ns < (int64_t)STMT_FAILURE_LOG_EVERY_MS * 1000000) {
        store->stmt_failures_unlogged++;
        return;
    }
    cs_store_log(&store->log, CS_STORE_LOG_ERROR,
                 "statement %s failed: %s (%llu more failed since the last such line)", stmt, msg,
                 (unsigned long long)store->stmt_failures_unlogged);
    store->stmt_failure_logged_ns = now_ns;
    store->stmt_failures_unlogged = 0;
}

/* Records one statement's result (not NULL, not the sync) in batch b.
 * Returns 0, or -ENOTCONN when the connection was lost. */
static int take_result(struct cs_store *store, struct cs_store_batch *b, PGresult *res,
                       struct cs_store_err *err)
{
    ExecStatusType st = PQresultStatus(res);
    const struct cs_store_sent *sent = b->next_result < b->n_sent ? &b->sent[b->next_result] : NULL;
    struct cs_store_op *op = sent != NULL ? sent->op : NULL;

    if (b->next_result == 0)
        cs_store_stats_answered(&store->stats, b->sent_ns);
    if (st == PGRES_FATAL_ERROR) {
        if (cs_store_is_conn_error(store, res)) {
            cs_store_err_set(err, -ENOTCONN, "%s", PQresultErrorMessage(res));
            PQclear(res);
            return -ENOTCONN;
        }
        if (!b->failed) {
            char msg[512];
            const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

            /* A full disk is the operator's to fix, not a fault of the
             * batch: callers say so rather than "the database failed". A
             * fence refused the replica: it is no longer the one writing. */
            b->failed_status = state != NULL && strcmp(state, "53100") == 0 ? -ENOSPC
                               : state != NULL && strcmp(state, CS_STORE_SQLSTATE_FENCED) == 0
                                   ? -ESTALE
                                   : -EIO;
            b->failed_stmt = sent != NULL ? sent->stmt : CS_STORE_STMT_PING;
            cs_store_oneline(PQresultErrorMessage(res), msg, sizeof(msg));
            log_failure(store, sent != NULL ? cs_store_stmts[sent->stmt].name : "?", msg);
        }
        b->failed = true;
        PQclear(res);
    } else if (op != NULL && op->result == NULL && st == PGRES_TUPLES_OK) {
        op->result = res;
    } else {
        PQclear(res);
    }
    return 0;
}

int cs_store_read_results(struct cs_store *store, struct cs_store_err *err)
{
    while (store->conn != NULL && store->inflight_head != NULL && !PQisBusy(store->conn)) {
        struct cs_store_batch *b = store->inflight_head;
        PGresult *res = PQgetResult(store->conn);

        if (res == NULL) {
            if (b->next_result >= b->n_sent)
                break;
            b->next_result++;
            continue;
        }
        if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
            PQclear(res);
            batch_done(store);
            continue;
        }
        if (take_result(store, b, res, err) != 0)
            return -ENOTCONN;
    }
    if (store->conn != NULL && PQstatus(store->conn) == CONNECTION_BAD)
        return cs_store_err_set(err, -ENOTCONN, "%s", PQerrorMessage(store->conn));
    return 0;
}

/* Moves what was in flight back to the queue: writes (and the snapshot)
 * are sent again, other reads fail. */
void cs_store_requeue_inflight(struct cs_store *store)
{
    struct cs_store_queue again = {NULL, NULL};
    struct cs_store_batch *b;
    struct cs_store_op *op;

    while ((b = store->inflight_head) != NULL) {
        store->inflight_head = b->next;
        while ((op = queue_pop(&b->ops)) != NULL) {
            PQclear(op->result);
            op->result = NULL;
            queue_push(op->replay ? &again : &store->failed, op);
        }
        cs_store_batch_free(b);
    }
    store->inflight_tail = NULL;
    store->n_inflight = 0;
    cs_store_answer_wait(store);
    /* Reads queued but not sent fail too: the caller should not wait. */
    while ((op = queue_pop(&store->pending)) != NULL)
        queue_push(op->replay ? &again : &store->failed, op);
    store->pending = again;
}

void cs_store_batch_start_setup(struct cs_store *store, struct cs_store_batch *b)
{
    CS_STORE_ASSERT(store->inflight_head == NULL);
    store->inflight_head = store->inflight_tail = b;
    store->n_inflight = 1;
    cs_store_answer_wait(store);
}
