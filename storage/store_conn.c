/* The store's connection: one libpq connection driven by a uv_poll on its
 * socket, never blocking the loop.
 *
 * DESIGN
 *
 * Life of a connection: (embedded server started on the pool) -> host name
 * resolved with uv_getaddrinfo when the URL has one -> PQconnectStartParams
 * and PQconnectPoll -> migrations (first connection only, simple queries
 * outside pipeline mode) -> pipeline mode, every statement prepared -> READY.
 * When the connection breaks, it is rebuilt after a backoff (100 ms doubling
 * to 5 s).
 *
 * Group commit: operations queue in `pending` during a loop turn. A uv_prepare
 * handle sends them at the end of the turn, as batches of statements each
 * ended by one PQpipelineSync, so a batch is one implicit transaction. We use
 * uv_prepare rather than uv_check or uv_idle: it runs right before the loop
 * blocks for I/O, so it gathers everything the turn's timers, I/O callbacks
 * and the previous turn's check callbacks queued, without adding a turn of
 * latency, and unlike uv_idle it never makes the loop spin. Batches already
 * sent stay in `inflight` until their sync arrives; the next batch
 * accumulates meanwhile, and several batches may be in flight.
 *
 * Results: each statement yields one result then NULL; a batch ends with
 * PGRES_PIPELINE_SYNC (not followed by NULL). A statement's error aborts the
 * rest of its batch: every operation of a failed batch gets -EIO, and the
 * first error is logged with its statement's name. A lost connection is not
 * an error of the batch: its writes (and the snapshot reads) go back to the
 * front of the queue and are sent again after reconnecting (every write is
 * an idempotent upsert); other reads fail with -ENOTCONN. */
#define CS_LOG_COMPONENT "store"
#include <arpa/inet.h>
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "migrate.h"
#include "pg_embedded.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

/* Statements per batch: bounds the time one flush spends sending, and a
 * batch's transaction size. A turn that queues more sends several batches. */
#define BATCH_MAX_OPS 2000
/* Batches in flight at once. Beyond it, operations wait in the queue (and
 * join later batches): this bounds libpq's buffers and the time one turn
 * spends sending, e.g. after a reconnect with a long backlog. */
#define INFLIGHT_MAX_BATCHES 4
#define DEFAULT_MAX_PENDING_WRITES 100000
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define CONNECT_TIMEOUT_MS 10000
/* How long open keeps trying to reach the database before it fails. */
#define OPEN_TIMEOUT_MS 30000
/* How long close waits for unfinished writes. */
#define CLOSE_TIMEOUT_MS 10000

enum conn_state {
    CONN_IDLE,       /* no connection; a reconnect may be due */
    CONN_STARTING,   /* the embedded server starts, or a host name resolves */
    CONN_CONNECTING, /* PQconnectPoll */
    CONN_MIGRATING,  /* migrations, simple queries outside pipeline mode */
    CONN_PREPARING,  /* pipeline mode: the statements being prepared */
    CONN_READY,
};

struct op_queue {
    struct cs_store_op *head;
    struct cs_store_op *tail;
};

struct batch {
    struct batch *next;
    struct op_queue ops;
    struct cs_store_op *cur; /* the operation whose result comes next */
    bool failed;
    bool setup; /* the prepares of a new connection */
};

enum migrate_step {
    MIGRATE_LOCK,
    MIGRATE_LIST,
    MIGRATE_APPLY,
    MIGRATE_UNLOCK,
    MIGRATE_DONE,
};

struct cs_store {
    uv_loop_t *loop;
    char *database_url;
    char *embedded_dir;
    size_t max_pending_writes;
    char *conninfo; /* what we connect with: database_url or the embedded one */
    char host[256]; /* to resolve, or "" */
    char hostaddrs[CS_STORE_MAX_ADDRS * INET6_ADDRSTRLEN]; /* its addresses */
    char hosts[CS_STORE_MAX_ADDRS * 257];                  /* its name, once per address */

    enum conn_state state;
    PGconn *conn;
    uv_poll_t *poll;
    int poll_events;
    uv_prepare_t flush_handle;
    uv_timer_t retry_timer; /* reconnect backoff, or connect timeout */
    uv_timer_t close_timer;
    uv_work_t work;
    bool work_busy;
    int work_status;
    char work_conninfo[512];
    uv_getaddrinfo_t *resolve; /* in flight, or NULL */

    struct op_queue pending;
    struct op_queue failed; /* reads to fail with -ENOTCONN at end of turn */
    struct batch *inflight_head;
    struct batch *inflight_tail;
    int n_inflight;
    size_t n_writes; /* writes not yet committed */
    unsigned backoff_ms;
    int64_t open_deadline_ns;

    enum migrate_step migrate_step;
    bool migrate_failed;
    size_t migrate_first;
    bool migrated;
    bool pg_started;
    bool snapshot_queued; /* its reads are sent again after a reconnect */
    bool opened;          /* open_cb has run */
    bool live;            /* and the open succeeded */
    cs_store_open_cb open_cb;
    void *open_arg;

    bool closing;
    bool close_deadline_passed;
    bool finishing;
    int handles_open;
    void (*closed_cb)(void *arg);
    void *closed_arg;
};

const struct cs_stmt_def cs_stmts[CS_STMT_COUNT] = {
    [CS_STMT_JOB_PUT] = {"job_put", cs_sql_job_put},
    [CS_STMT_JOB_DELETE] = {"job_delete", cs_sql_job_delete},
    [CS_STMT_JOB_ALL] = {"job_all", cs_sql_job_all},
    [CS_STMT_RUN_PUT] = {"run_put", cs_sql_run_put},
    [CS_STMT_ATTEMPT_PUT] = {"attempt_put", cs_sql_attempt_put},
    [CS_STMT_RUN_GET] = {"run_get", cs_sql_run_get},
    [CS_STMT_RUN_BY_KEY] = {"run_by_key", cs_sql_run_by_key},
    [CS_STMT_RUN_LIST] = {"run_list", cs_sql_run_list},
    [CS_STMT_RUN_LIST_JOB] = {"run_list_job", cs_sql_run_list_job},
    [CS_STMT_RUN_ACTIVE] = {"run_active", cs_sql_run_active},
    [CS_STMT_MAX_IDS] = {"max_ids", cs_sql_max_ids},
    [CS_STMT_EVENT_PUT] = {"event_put", cs_sql_event_put},
    [CS_STMT_EVENT_LIST] = {"event_list", cs_sql_event_list},
    [CS_STMT_EVENT_LIST_JOB] = {"event_list_job", cs_sql_event_list_job},
};

static void start_connect(struct cs_store *store);
static void conn_lost(struct cs_store *store, const char *why);
static void maybe_finish_close(struct cs_store *store);
static void on_poll(uv_poll_t *handle, int status, int events);

static void queue_push(struct op_queue *q, struct cs_store_op *op)
{
    op->next = NULL;
    if (q->tail != NULL)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
}

static struct cs_store_op *queue_pop(struct op_queue *q)
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

struct cs_store_op *cs_store_op_new(struct cs_store *store, enum cs_stmt stmt, bool is_write,
                                    cs_store_op_done_fn done, void (*cb)(void), void *arg)
{
    struct cs_store_op *op = cs_xcalloc(1, sizeof(*op));

    op->stmt = stmt;
    op->is_write = is_write;
    op->replay = is_write;
    op->done = done;
    op->cb = cb;
    op->arg = arg;
    op->store = store;
    return op;
}

static void op_finish(struct cs_store *store, struct cs_store_op *op, int status)
{
    if (op->is_write)
        store->n_writes--;
    if (op->done != NULL)
        op->done(op, status, status == 0 ? op->result : NULL);
    PQclear(op->result);
    cs_params_clear(&op->params);
    free(op);
}

void cs_store_write_done(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_done_cb cb = (cs_store_done_cb)op->cb;

    if (cb != NULL)
        cb(op->arg, status);
}

static void on_flush(uv_prepare_t *handle);

static void kick(struct cs_store *store)
{
    if (!store->finishing)
        uv_prepare_start(&store->flush_handle, on_flush);
}

void cs_store_op_submit(struct cs_store *store, struct cs_store_op *op)
{
    if (op->is_write)
        store->n_writes++;
    if (store->finishing) {
        op_finish(store, op, -ENOTCONN);
        return;
    }
    if (op->replay || store->state == CONN_READY)
        queue_push(&store->pending, op);
    else
        queue_push(&store->failed, op);
    kick(store);
}

bool cs_store_is_accepting(const struct cs_store *store)
{
    return store->state == CONN_READY && !store->closing &&
           store->n_writes < store->max_pending_writes;
}

static void poll_closed(uv_handle_t *handle)
{
    free(handle);
}

/* Watches the connection's socket for events. During connect the socket may
 * be closed and another opened under the same number, so a new poll handle
 * is made each time (renew); afterwards only the events change. */
static int watch(struct cs_store *store, int events, bool renew)
{
    int fd = PQsocket(store->conn);
    int rc;

    if (store->poll != NULL && renew) {
        uv_close((uv_handle_t *)store->poll, poll_closed);
        store->poll = NULL;
    }
    if (fd < 0)
        return -EBADF;
    if (store->poll == NULL) {
        store->poll = cs_xmalloc(sizeof(*store->poll));
        rc = uv_poll_init(store->loop, store->poll, fd);
        if (rc != 0) {
            free(store->poll);
            store->poll = NULL;
            return rc;
        }
        store->poll->data = store;
        store->poll_events = 0;
    }
    if (events != store->poll_events) {
        rc = uv_poll_start(store->poll, events, on_poll);
        if (rc != 0)
            return rc;
        store->poll_events = events;
    }
    return 0;
}

static void teardown_conn(struct cs_store *store)
{
    /* The poll handle must stop before libpq closes the socket. */
    if (store->poll != NULL) {
        uv_close((uv_handle_t *)store->poll, poll_closed);
        store->poll = NULL;
    }
    if (store->conn != NULL) {
        PQfinish(store->conn);
        store->conn = NULL;
    }
    uv_timer_stop(&store->retry_timer);
    store->state = CONN_IDLE;
}

/* Hands open_cb its answer, once. */
static void open_done(struct cs_store *store, int status, struct cs_store_snapshot *snapshot)
{
    cs_store_open_cb cb = store->open_cb;

    if (store->opened) {
        cs_store_snapshot_free(snapshot);
        return;
    }
    store->opened = true;
    store->open_cb = NULL;
    if (status != 0)
        teardown_conn(store); /* nothing further is tried; the caller closes */
    else
        store->live = true;
    if (cb != NULL)
        cb(store->open_arg, status, snapshot);
    else if (snapshot != NULL)
        cs_store_snapshot_free(snapshot);
}

void cs_store_snapshot_loaded(struct cs_store *store, int status,
                              struct cs_store_snapshot *snapshot)
{
    open_done(store, status, snapshot);
}

/* Sends queued operations as batches, then flushes the socket. */
static void send_pending(struct cs_store *store)
{
    while (store->pending.head != NULL && store->state == CONN_READY &&
           store->n_inflight < INFLIGHT_MAX_BATCHES) {
        struct batch *b = cs_xcalloc(1, sizeof(*b));
        size_t n = 0;

        while (n < BATCH_MAX_OPS && store->pending.head != NULL) {
            queue_push(&b->ops, queue_pop(&store->pending));
            n++;
        }
        b->cur = b->ops.head;
        if (store->inflight_tail != NULL)
            store->inflight_tail->next = b;
        else
            store->inflight_head = b;
        store->inflight_tail = b;
        store->n_inflight++;
        for (struct cs_store_op *op = b->ops.head; op != NULL; op = op->next) {
            const struct cs_params *p = &op->params;

            if (!PQsendQueryPrepared(store->conn, cs_stmts[op->stmt].name, p->n,
                                     (const char *const *)p->values, p->lengths, p->formats, 1)) {
                conn_lost(store, PQerrorMessage(store->conn));
                return;
            }
        }
        if (!PQpipelineSync(store->conn)) {
            conn_lost(store, PQerrorMessage(store->conn));
            return;
        }
    }
}

/* PQflush until done; while it has more to write, watch for writable too. */
static void flush_out(struct cs_store *store)
{
    int rc = PQflush(store->conn);

    if (rc < 0) {
        conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    rc = watch(store, UV_READABLE | (rc == 1 ? UV_WRITABLE : 0), false);
    if (rc != 0)
        conn_lost(store, uv_strerror(rc));
}

static void fail_queue(struct cs_store *store, struct op_queue *q, int status)
{
    struct cs_store_op *op;

    while ((op = queue_pop(q)) != NULL)
        op_finish(store, op, status);
}

static void on_flush(uv_prepare_t *handle)
{
    struct cs_store *store = handle->data;

    uv_prepare_stop(handle);
    fail_queue(store, &store->failed, -ENOTCONN);
    if (store->state == CONN_READY && store->pending.head != NULL) {
        send_pending(store);
        if (store->conn != NULL)
            flush_out(store);
    }
    maybe_finish_close(store);
}

/* Errors that mean the connection, not the batch, is at fault. */
static bool is_conn_error(const struct cs_store *store, const PGresult *res)
{
    const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

    if (PQstatus(store->conn) == CONNECTION_BAD || state == NULL)
        return true;
    return strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0;
}

static void setup_done(struct cs_store *store, bool failed);

static void batch_done(struct cs_store *store)
{
    struct batch *b = store->inflight_head;
    struct cs_store_op *op;

    store->inflight_head = b->next;
    if (store->inflight_head == NULL)
        store->inflight_tail = NULL;
    store->n_inflight--;
    while ((op = queue_pop(&b->ops)) != NULL)
        op_finish(store, op, b->failed ? -EIO : 0);
    if (b->setup)
        setup_done(store, b->failed);
    free(b);
    /* Room for the batches that waited. */
    if (store->pending.head != NULL)
        kick(store);
}

/* Records one statement's result (not NULL, not the sync) in batch b.
 * Returns false when the connection was lost. */
static bool take_result(struct cs_store *store, struct batch *b, PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    struct cs_store_op *op = b->cur;

    if (st == PGRES_FATAL_ERROR) {
        if (is_conn_error(store, res)) {
            char why[256];

            snprintf(why, sizeof(why), "%s", PQresultErrorMessage(res));
            PQclear(res);
            conn_lost(store, why);
            return false;
        }
        if (!b->failed) {
            char msg[512];

            cs_store_oneline(PQresultErrorMessage(res), msg, sizeof(msg));
            cs_log_error("statement %s failed: %s", op != NULL ? cs_stmts[op->stmt].name : "?",
                         msg);
        }
        b->failed = true;
        PQclear(res);
    } else if (op != NULL && op->result == NULL && st == PGRES_TUPLES_OK) {
        op->result = res;
    } else {
        PQclear(res);
    }
    return true;
}

static void read_results(struct cs_store *store)
{
    while (store->conn != NULL && store->inflight_head != NULL && !PQisBusy(store->conn)) {
        struct batch *b = store->inflight_head;
        PGresult *res = PQgetResult(store->conn);

        if (res == NULL) {
            if (b->cur == NULL)
                break;
            b->cur = b->cur->next;
            continue;
        }
        if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
            PQclear(res);
            batch_done(store);
            continue;
        }
        if (!take_result(store, b, res))
            return;
    }
    if (store->conn != NULL && PQstatus(store->conn) == CONNECTION_BAD)
        conn_lost(store, PQerrorMessage(store->conn));
}

/* Sends the prepares of every statement as the first batch of a new
 * connection. */
static void start_prepare(struct cs_store *store)
{
    struct batch *b = cs_xcalloc(1, sizeof(*b));

    if (!PQenterPipelineMode(store->conn)) {
        free(b);
        conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    b->setup = true;
    store->inflight_head = store->inflight_tail = b;
    store->n_inflight = 1;
    store->state = CONN_PREPARING;
    for (int i = 0; i < CS_STMT_COUNT; i++) {
        struct cs_store_op *op = cs_store_op_new(store, (enum cs_stmt)i, false, NULL, NULL, NULL);

        op->prepare = true;
        queue_push(&b->ops, op);
        if (!PQsendPrepare(store->conn, cs_stmts[i].name, cs_stmts[i].sql, 0, NULL)) {
            conn_lost(store, PQerrorMessage(store->conn));
            return;
        }
    }
    b->cur = b->ops.head;
    if (!PQpipelineSync(store->conn)) {
        conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    flush_out(store);
}

static void setup_done(struct cs_store *store, bool failed)
{
    if (failed) {
        /* A statement that does not prepare is a bug or a schema this
         * build does not match: retrying will not help. */
        if (!store->opened) {
            open_done(store, -EIO, NULL);
            return;
        }
        conn_lost(store, "preparing statements failed");
        return;
    }
    if (store->opened)
        cs_log_info("reconnected to the database; %zu writes to send", store->n_writes);
    store->state = CONN_READY;
    store->backoff_ms = BACKOFF_MIN_MS;
    if (!store->opened && !store->snapshot_queued) {
        store->snapshot_queued = true;
        cs_store_snapshot_load(store);
    }
    kick(store);
}

/* Sends the SQL of the current migration step (simple query protocol, so a
 * step may hold several statements). */
static void migrate_send(struct cs_store *store)
{
    char sql[128];
    char *owned = NULL;
    const char *text = sql;

    switch (store->migrate_step) {
    case MIGRATE_LOCK:
        snprintf(sql, sizeof(sql), "SELECT pg_advisory_lock(%lld)", (long long)CS_MIGRATE_LOCK_KEY);
        break;
    case MIGRATE_LIST:
        text = cs_migrate_list_sql;
        break;
    case MIGRATE_APPLY:
        cs_log_info("applying migrations %zu to %zu", store->migrate_first + 1,
                    cs_migrations_count);
        owned = cs_migrate_sql(cs_migrations, cs_migrations_count, store->migrate_first,
                               cs_now_unix_ms());
        text = owned;
        break;
    case MIGRATE_UNLOCK:
        snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%lld)",
                 (long long)CS_MIGRATE_LOCK_KEY);
        break;
    case MIGRATE_DONE:
        CS_ASSERT(!"no migration step left");
    }
    if (!PQsendQuery(store->conn, text)) {
        free(owned);
        conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    free(owned);
    flush_out(store);
}

/* Reads the applied versions and decides where to start. */
static void migrate_plan(struct cs_store *store, const PGresult *res)
{
    int n = PQntuples(res);
    int *applied = cs_xcalloc((size_t)n + 1, sizeof(*applied));
    int rc;

    for (int i = 0; i < n; i++)
        applied[i] = atoi(PQgetvalue(res, i, 0));
    rc = cs_migrate_plan(cs_migrations, cs_migrations_count, applied, (size_t)n,
                         &store->migrate_first);
    if (rc == -EPROTO)
        cs_log_error("the database has schema version %d, newer than this build knows (%zu): "
                     "run a newer cschedd",
                     applied[n - 1], cs_migrations_count);
    else if (rc != 0)
        cs_log_error("schema_migrations holds versions this build does not expect");
    free(applied);
    if (rc != 0)
        store->migrate_failed = true;
}

static void migrate_result(struct cs_store *store, PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);

    if (st == PGRES_FATAL_ERROR) {
        if (is_conn_error(store, res)) {
            char why[256];

            snprintf(why, sizeof(why), "%s", PQresultErrorMessage(res));
            PQclear(res);
            conn_lost(store, why);
            return;
        }
        char msg[512];

        cs_store_oneline(PQresultErrorMessage(res), msg, sizeof(msg));
        cs_log_error("migration step %d failed: %s", (int)store->migrate_step, msg);
        store->migrate_failed = true;
    } else if (st == PGRES_TUPLES_OK && store->migrate_step == MIGRATE_LIST) {
        migrate_plan(store, res);
    }
    PQclear(res);
}

static void migrate_next(struct cs_store *store)
{
    if (store->migrate_failed) {
        open_done(store, -EIO, NULL);
        return;
    }
    store->migrate_step++;
    if (store->migrate_step == MIGRATE_APPLY && store->migrate_first == cs_migrations_count)
        store->migrate_step++;
    if (store->migrate_step == MIGRATE_DONE) {
        store->migrated = true;
        start_prepare(store);
        return;
    }
    migrate_send(store);
}

static void migrate_read(struct cs_store *store)
{
    while (store->conn != NULL && store->state == CONN_MIGRATING && !PQisBusy(store->conn)) {
        PGresult *res = PQgetResult(store->conn);

        if (res == NULL) {
            migrate_next(store);
            return;
        }
        migrate_result(store, res);
    }
}

static void start_migrate(struct cs_store *store)
{
    store->state = CONN_MIGRATING;
    store->migrate_step = MIGRATE_LOCK;
    store->migrate_failed = false;
    migrate_send(store);
}

static void notice_cb(void *arg, const char *message)
{
    cs_log_debug("database notice: %s", message);
}

static void connected(struct cs_store *store)
{
    uv_timer_stop(&store->retry_timer);
    if (PQsetnonblocking(store->conn, 1) != 0) {
        conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    PQsetNoticeProcessor(store->conn, notice_cb, store);
    if (!store->migrated)
        start_migrate(store);
    else
        start_prepare(store);
}

static void connect_poll(struct cs_store *store)
{
    int rc;

    switch (PQconnectPoll(store->conn)) {
    case PGRES_POLLING_READING:
        rc = watch(store, UV_READABLE, true);
        break;
    case PGRES_POLLING_WRITING:
        rc = watch(store, UV_WRITABLE, true);
        break;
    case PGRES_POLLING_OK:
        rc = watch(store, UV_READABLE, true);
        if (rc == 0)
            connected(store);
        break;
    default:
        conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    if (rc != 0)
        conn_lost(store, uv_strerror(rc));
}

static void on_poll(uv_poll_t *handle, int status, int events)
{
    struct cs_store *store = handle->data;

    if (status < 0) {
        conn_lost(store, uv_strerror(status));
        return;
    }
    if (store->state == CONN_CONNECTING) {
        connect_poll(store);
        return;
    }
    if (!PQconsumeInput(store->conn)) {
        conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    if (store->state == CONN_MIGRATING)
        migrate_read(store);
    else
        read_results(store);
    if (store->conn != NULL)
        flush_out(store);
    maybe_finish_close(store);
}

static void on_connect_timeout(uv_timer_t *timer)
{
    conn_lost(timer->data, "timed out connecting");
}

static void connect_begin(struct cs_store *store)
{
    /* Keywords before dbname are defaults the URL may override; those after
     * it override the URL. Keepalives and tcp_user_timeout let a TCP
     * connection to a vanished server fail (and its batches be sent again
     * after reconnecting) instead of waiting forever; unix sockets ignore
     * them. */
    const char *keys[] = {"fallback_application_name",
                          "keepalives_idle",
                          "keepalives_interval",
                          "keepalives_count",
                          "tcp_user_timeout",
                          "dbname",
                          NULL,
                          NULL,
                          NULL};
    const char *values[] = {"cschedd", "10", "5", "3", "30000", store->conninfo, NULL, NULL, NULL};

    /* libpq tries each resolved address in turn, under the name given. */
    if (store->hostaddrs[0] != '\0') {
        keys[6] = "host";
        values[6] = store->hosts;
        keys[7] = "hostaddr";
        values[7] = store->hostaddrs;
    }
    store->conn = PQconnectStartParams(keys, values, 1);
    if (store->conn == NULL || PQstatus(store->conn) == CONNECTION_BAD) {
        conn_lost(store, store->conn != NULL ? PQerrorMessage(store->conn) : "out of memory");
        return;
    }
    store->state = CONN_CONNECTING;
    uv_timer_start(&store->retry_timer, on_connect_timeout, CONNECT_TIMEOUT_MS, 0);
    /* Until the first PQconnectPoll, libpq waits for the socket to be
     * writable. */
    if (watch(store, UV_WRITABLE, true) != 0)
        conn_lost(store, "cannot watch the database socket");
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct cs_store *store = req->data;
    size_t n = 0;

    free(req);
    store->resolve = NULL;
    if (status == 0)
        n = cs_store_addr_lists(res, store->host, store->hostaddrs, sizeof(store->hostaddrs),
                                store->hosts, sizeof(store->hosts));
    uv_freeaddrinfo(res);
    if (n > 0)
        cs_log_debug("database host %s is %s", store->host, store->hostaddrs);
    if (store->closing) {
        store->state = CONN_IDLE;
        maybe_finish_close(store);
        return;
    }
    if (n == 0) {
        char why[320];

        snprintf(why, sizeof(why), "cannot resolve %s: %s", store->host,
                 status != 0 ? uv_strerror(status) : "no address");
        conn_lost(store, why);
        return;
    }
    connect_begin(store);
}

static void start_connect(struct cs_store *store)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    int rc = cs_store_url_host(store->conninfo, store->host, sizeof(store->host));

    /* Resolved again at every connect: the name may point elsewhere now. */
    store->hostaddrs[0] = '\0';
    if (rc < 0) {
        open_done(store, rc, NULL);
        return;
    }
    if (rc == 0) {
        connect_begin(store);
        return;
    }
    store->state = CONN_STARTING;
    store->resolve = cs_xmalloc(sizeof(*store->resolve));
    store->resolve->data = store;
    rc = uv_getaddrinfo(store->loop, store->resolve, on_resolved, store->host, NULL, &hints);
    if (rc != 0) {
        free(store->resolve);
        store->resolve = NULL;
        conn_lost(store, uv_strerror(rc));
    }
}

static void on_retry(uv_timer_t *timer)
{
    start_connect(timer->data);
}

/* Moves what was in flight back to the queue: writes (and the snapshot)
 * are sent again, other reads fail. */
static void requeue_inflight(struct cs_store *store)
{
    struct op_queue again = {NULL, NULL};
    struct batch *b;
    struct cs_store_op *op;

    while ((b = store->inflight_head) != NULL) {
        store->inflight_head = b->next;
        while ((op = queue_pop(&b->ops)) != NULL) {
            PQclear(op->result);
            op->result = NULL;
            if (op->prepare) {
                cs_params_clear(&op->params);
                free(op);
            } else {
                queue_push(op->replay ? &again : &store->failed, op);
            }
        }
        free(b);
    }
    store->inflight_tail = NULL;
    store->n_inflight = 0;
    /* Reads queued but not sent fail too: the caller should not wait. */
    while ((op = queue_pop(&store->pending)) != NULL)
        queue_push(op->replay ? &again : &store->failed, op);
    store->pending = again;
}

static void conn_lost(struct cs_store *store, const char *why)
{
    char msg[512];

    cs_store_oneline(why, msg, sizeof(msg));
    cs_log_warn("database connection lost: %s (%zu writes waiting)", msg, store->n_writes);
    teardown_conn(store);
    requeue_inflight(store);
    kick(store);
    if (store->closing && store->close_deadline_passed)
        return;
    if (!store->opened && cs_now_mono_ns() > store->open_deadline_ns) {
        open_done(store, -ENOTCONN, NULL);
        return;
    }
    uv_timer_start(&store->retry_timer, on_retry, store->backoff_ms, 0);
    store->backoff_ms =
        store->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : store->backoff_ms * 2;
}

struct cs_store *cs_store_new(uv_loop_t *loop, const struct cs_store_config *config)
{
    struct cs_store *store = cs_xcalloc(1, sizeof(*store));

    store->loop = loop;
    if (config->database_url != NULL && config->database_url[0] != '\0')
        store->database_url = cs_xstrdup(config->database_url);
    if (config->embedded_dir != NULL && config->embedded_dir[0] != '\0')
        store->embedded_dir = cs_xstrdup(config->embedded_dir);
    store->max_pending_writes =
        config->max_pending_writes > 0 ? config->max_pending_writes : DEFAULT_MAX_PENDING_WRITES;
    store->backoff_ms = BACKOFF_MIN_MS;
    uv_prepare_init(loop, &store->flush_handle);
    uv_timer_init(loop, &store->retry_timer);
    uv_timer_init(loop, &store->close_timer);
    store->flush_handle.data = store->retry_timer.data = store->close_timer.data = store;
    store->handles_open = 3;
    return store;
}

static void embedded_start_work(uv_work_t *req)
{
    struct cs_store *store = req->data;

    store->work_status = cs_pg_embedded_start(store->embedded_dir, NULL, store->work_conninfo,
                                              sizeof(store->work_conninfo));
}

static void embedded_started(uv_work_t *req, int status)
{
    struct cs_store *store = req->data;

    store->work_busy = false;
    store->state = CONN_IDLE;
    if (status == 0)
        status = store->work_status;
    if (status == 0)
        store->pg_started = true;
    if (store->closing) {
        maybe_finish_close(store);
        return;
    }
    if (status != 0) {
        open_done(store, status, NULL);
        return;
    }
    store->conninfo = cs_xstrdup(store->work_conninfo);
    start_connect(store);
}

int cs_store_open(struct cs_store *store, cs_store_open_cb open_cb, void *arg)
{
    int rc;

    if (store->database_url == NULL && store->embedded_dir == NULL)
        return -EINVAL;
    store->open_cb = open_cb;
    store->open_arg = arg;
    store->open_deadline_ns = cs_now_mono_ns() + (int64_t)OPEN_TIMEOUT_MS * 1000000;
    if (store->database_url != NULL) {
        store->conninfo = cs_xstrdup(store->database_url);
        start_connect(store);
        return 0;
    }
    store->state = CONN_STARTING;
    store->work.data = store;
    rc = uv_queue_work(store->loop, &store->work, embedded_start_work, embedded_started);
    if (rc != 0)
        return rc;
    store->work_busy = true;
    return 0;
}

static void handle_closed(uv_handle_t *handle)
{
    struct cs_store *store = handle->data;
    void (*closed_cb)(void *arg) = store->closed_cb;
    void *closed_arg = store->closed_arg;

    if (--store->handles_open > 0)
        return;
    free(store->database_url);
    free(store->embedded_dir);
    free(store->conninfo);
    free(store);
    if (closed_cb != NULL)
        closed_cb(closed_arg);
}

static void close_handles(struct cs_store *store)
{
    uv_close((uv_handle_t *)&store->flush_handle, handle_closed);
    uv_close((uv_handle_t *)&store->retry_timer, handle_closed);
    uv_close((uv_handle_t *)&store->close_timer, handle_closed);
}

static void embedded_stop_work(uv_work_t *req)
{
    struct cs_store *store = req->data;

    store->work_status = cs_pg_embedded_stop(store->embedded_dir);
}

static void embedded_stopped(uv_work_t *req, int status)
{
    close_handles(req->data);
}

static void maybe_finish_close(struct cs_store *store)
{
    bool unfinished = store->pending.head != NULL || store->inflight_head != NULL;

    if (!store->closing || store->finishing || store->work_busy || store->resolve != NULL)
        return;
    /* Unfinished work waits for its commit, through reconnects, until the
     * deadline. */
    if (unfinished && store->live && !store->close_deadline_passed)
        return;
    store->finishing = true;
    teardown_conn(store);
    uv_prepare_stop(&store->flush_handle);
    uv_timer_stop(&store->close_timer);
    requeue_inflight(store);
    if (store->n_writes > 0)
        cs_log_warn("closing with %zu writes not committed", store->n_writes);
    fail_queue(store, &store->failed, -ENOTCONN);
    fail_queue(store, &store->pending, -ENOTCONN);
    open_done(store, -ECANCELED, NULL);
    if (store->pg_started &&
        uv_queue_work(store->loop, &store->work, embedded_stop_work, embedded_stopped) == 0)
        return;
    close_handles(store);
}

static void on_close_deadline(uv_timer_t *timer)
{
    struct cs_store *store = timer->data;

    store->close_deadline_passed = true;
    maybe_finish_close(store);
}

void cs_store_close(struct cs_store *store, void (*closed_cb)(void *arg), void *arg)
{
    store->closing = true;
    store->closed_cb = closed_cb;
    store->closed_arg = arg;
    uv_timer_start(&store->close_timer, on_close_deadline, CLOSE_TIMEOUT_MS, 0);
    kick(store);
}
