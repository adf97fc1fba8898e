/* The store's connection: one libpq connection driven by a uv_poll on its
 * socket, never blocking the loop.
 *
 * Life of a connection: host name resolved_cb (store_resolve.c) when the URL
 * has one -> PQconnectStartParams and PQconnectPoll -> migrations (first
 * connection only, store_migrate.c) -> the replica's join (first connection
 * only, store_replica.c) -> pipeline mode, the session's replica setting and
 * every statement prepared as the first batch -> READY, when the batch layer
 * sends what is queued. When the connection breaks it is
 * rebuilt after a backoff (100 ms doubling to CS_STORE_BACKOFF_MAX_MS). A batch in flight that
 * gets no answer for CS_STORE_ANSWER_TIMEOUT_MS (a frozen server, whose
 * connection looks healthy) breaks the connection the same way: its writes
 * are sent again on the next one, and until then the store is not accepting.
 * A replica id in use by another state directory fails the open. Loop
 * thread. Each step is a state of the connection's table
 * (store_state.c), moved by an event here or, for the embedded server's
 * start, in store.c. What the store's life must know (ready, the open
 * cannot succeed, fenced) goes up through the callbacks given at init. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_backend.h"
#include "store_internal.h"

#define BACKOFF_MIN_MS 100
#define CONNECT_TIMEOUT_MS 10000

static void socket_cb(uv_poll_t *handle, int status, int events);
static void answer_timeout_cb(uv_timer_t *timer);
static void fence(struct cs_store *store, const char *why);

void cs_store_conn_init(struct cs_store *store, const struct cs_store_conn_cbs *cbs)
{
    store->conn_cbs = *cbs;
    store->fence_cb = fence;
    store->poll_cb = socket_cb;
    store->answer_cb = answer_timeout_cb;
    store->backoff_ms = BACKOFF_MIN_MS;
}

/* uv_timer_start fails only for a closing handle or a NULL callback, and
 * the retry timer closes only after the connection is gone for good. */
static void retry_timer_start(struct cs_store *store, uv_timer_cb timer_cb, unsigned ms)
{
    int rc = uv_timer_start(&store->retry_timer, timer_cb, ms, 0);

    CS_STORE_ASSERT(rc == 0);
}

void cs_store_conn_teardown(struct cs_store *store)
{
    cs_store_unwatch(store);
    if (store->conn != NULL) {
        PQfinish(store->conn);
        store->conn = NULL;
    }
    /* uv_timer_stop cannot fail. */
    (void)uv_timer_stop(&store->retry_timer);
    (void)uv_timer_stop(&store->answer_timer);
    cs_store_conn_step(store, CS_STORE_CONN_EV_DROP);
}

/* Seconds since the database last answered, once the watchdog has fired. */
static int64_t unanswered_s(const struct cs_store *store)
{
    return (cs_store_now_mono_ns() - store->unanswered_since_ns) / 1000000000 +
           CS_STORE_ANSWER_TIMEOUT_MS / 1000;
}

/* The done callback of the batch of prepares. */
static void setup_done_cb(struct cs_store *store, int status)
{
    if (status != 0) {
        /* A statement that does not prepare is a bug or a schema this
         * build does not match: retrying will not help. */
        if (!cs_store_is_live(store)) {
            store->conn_cbs.failed_cb(store, -EIO);
            return;
        }
        cs_store_conn_lost(store, "preparing statements failed");
        return;
    }
    if (store->unanswered_since_ns != 0)
        cs_store_log(&store->log, CS_STORE_LOG_INFO,
                     "the database answers again after %lld s; %zu writes to send",
                     (long long)unanswered_s(store), store->n_writes);
    else if (cs_store_is_live(store))
        cs_store_log(&store->log, CS_STORE_LOG_INFO,
                     "reconnected to the database; %zu writes to send", store->n_writes);
    store->unanswered_since_ns = 0;
    store->stats.reconnects += cs_store_is_live(store);
    cs_store_conn_step(store, CS_STORE_CONN_EV_PREPARED);
    if (!store->replica.left && store->state != CS_STORE_STATE_FENCED)
        cs_store_replica_start_beats(store);
    store->backoff_ms = BACKOFF_MIN_MS;
    store->conn_cbs.ready_cb(store);
    cs_store_kick(store);
}

/* Sends the prepares of every statement as the first batch of a new
 * connection. */
static void start_prepare(struct cs_store *store)
{
    struct cs_store_batch *b;
    struct cs_store_err err;

    if (!PQenterPipelineMode(store->conn)) {
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    b = cs_store_xcalloc(1, sizeof(*b));
    b->done_cb = setup_done_cb;
    cs_store_batch_start_setup(store, b);
    cs_store_conn_step(store, CS_STORE_CONN_EV_PREPARE);
    /* The attempt rows this connection inserts name this replica (0010_replicas.sql). */
    const char *id = store->replica.id;
    if (!PQsendQueryParams(store->conn, "SELECT set_config('csched.replica', $1, false)", 1, NULL,
                           &id, NULL, NULL, 0)) {
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    cs_store_batch_sent(b, CS_STORE_STMT_PING, NULL);
    if (cs_store_replica_listens(store)) {
        if (!PQsendQueryParams(store->conn, "LISTEN " CS_STORE_WAKE_CHANNEL, 0, NULL, NULL, NULL,
                               NULL, 0)) {
            cs_store_conn_lost(store, PQerrorMessage(store->conn));
            return;
        }
        cs_store_batch_sent(b, CS_STORE_STMT_PING, NULL);
    }
    for (int i = 0; i < CS_STORE_STMT_COUNT; i++) {
        if (!PQsendPrepare(store->conn, cs_store_stmts[i].name, cs_store_stmts[i].sql, 0, NULL)) {
            cs_store_conn_lost(store, PQerrorMessage(store->conn));
            return;
        }
        cs_store_batch_sent(b, (enum cs_store_stmt)i, NULL);
    }
    if (!PQpipelineSync(store->conn)) {
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    if (cs_store_flush_out(store, &err) != 0)
        cs_store_conn_lost(store, err.msg);
}

static void notice_cb(void *arg, const char *message)
{
    struct cs_store *store = arg;

    cs_store_log(&store->log, CS_STORE_LOG_DEBUG, "database notice: %s", message);
}

/* The backend that will make every commit gets cschedd's priority, where
 * it is a process of this machine (store_backend.h). */
static void prioritize_backend(struct cs_store *store)
{
    pid_t backend = PQbackendPID(store->conn);
    int rc = cs_store_backend_nice(PQsocket(store->conn), backend, store->backend_nice);

    if (rc == 0)
        cs_store_log(&store->log, CS_STORE_LOG_DEBUG, "database backend %d: session nice %d",
                     (int)backend, store->backend_nice);
    else if (rc == -EREMOTE || rc == -ESRCH)
        cs_store_log(&store->log, CS_STORE_LOG_DEBUG,
                     "database backend %d is not a process of this machine: its priority is "
                     "its server's",
                     (int)backend);
    else
        cs_store_log(&store->log, CS_STORE_LOG_INFO,
                     "cannot give database backend %d the session nice %d (%s): under load "
                     "from the jobs its commits wait for the CPU like a job",
                     (int)backend, store->backend_nice, strerror(-rc));
}

/* Another replica took this one's lease over: nothing is sent again, ever,
 * as it would interleave with the new holder's writes. */
static void fence(struct cs_store *store, const char *why)
{
    const struct cs_store_replica *r = &store->replica;

    cs_store_log(&store->log, CS_STORE_LOG_ERROR,
                 "replica %s is fenced: epoch %lld is no longer its own (%s); it writes nothing "
                 "more (%zu writes lost)",
                 r->id, (long long)r->epoch, why, store->n_writes);
    (void)uv_timer_stop(&store->replica.beat_timer);
    cs_store_conn_teardown(store);
    store->conn_cbs.fenced_cb(store);
}

/* What a new connection does before its prepares: the migrations, then the
 * join, each on the first connection only. */
static void next_step(struct cs_store *store)
{
    struct cs_store_err err;
    int rc;

    if (store->migrate_step != CS_STORE_MIGRATE_DONE) {
        cs_store_conn_step(store, CS_STORE_CONN_EV_MIGRATE);
        rc = cs_store_migrate_start(store, &err);
    } else if (store->replica.epoch == 0) {
        cs_store_conn_step(store, CS_STORE_CONN_EV_JOIN);
        rc = cs_store_join_start(store, &err);
    } else {
        start_prepare(store);
        return;
    }
    if (rc != 0)
        cs_store_conn_lost(store, err.msg);
}

static void connected(struct cs_store *store)
{
    /* uv_timer_stop cannot fail. */
    (void)uv_timer_stop(&store->retry_timer);
    if (PQsetnonblocking(store->conn, 1) != 0) {
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    PQsetNoticeProcessor(store->conn, notice_cb, store);
    if (store->backend_nice != 0)
        prioritize_backend(store);
    next_step(store);
}

static void connect_poll(struct cs_store *store)
{
    struct cs_store_err err;
    int rc;

    switch (PQconnectPoll(store->conn)) {
    case PGRES_POLLING_READING:
        rc = cs_store_watch(store, UV_READABLE, true, &err);
        break;
    case PGRES_POLLING_WRITING:
        rc = cs_store_watch(store, UV_WRITABLE, true, &err);
        break;
    case PGRES_POLLING_OK:
        rc = cs_store_watch(store, UV_READABLE, true, &err);
        if (rc == 0)
            connected(store);
        break;
    default:
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    if (rc != 0)
        cs_store_conn_lost(store, err.msg);
}

/* The join's answer. A database that refuses it, or an id that is another
 * state directory's, fails the open. */
static int read_join(struct cs_store *store, struct cs_store_err *err)
{
    bool done;
    int rc = cs_store_join_read(store, &done, err);

    if (rc == -EIO || rc == -EBUSY) {
        store->conn_cbs.failed_cb(store, rc);
        return 0;
    }
    if (rc == 0 && done)
        start_prepare(store);
    return rc;
}

static int read_migrate(struct cs_store *store, struct cs_store_err *err)
{
    int rc = cs_store_migrate_read(store, err);

    if (rc == -EIO) {
        store->conn_cbs.failed_cb(store, -EIO);
        return 0;
    }
    if (rc == 0 && store->migrate_step == CS_STORE_MIGRATE_DONE)
        next_step(store);
    return rc;
}

/* Takes what arrived on a connected socket: the migrations' or the join's
 * results, or batch results. 0 or -ENOTCONN (err says why). */
static int read_input(struct cs_store *store, struct cs_store_err *err)
{
    if (!PQconsumeInput(store->conn))
        return cs_store_err_set(err, -ENOTCONN, "%s", PQerrorMessage(store->conn));
    if (store->conn_state == CS_STORE_CONN_JOINING)
        return read_join(store, err);
    if (store->conn_state == CS_STORE_CONN_MIGRATING)
        return read_migrate(store, err);
    int rc = cs_store_read_results(store, err);
    if (rc == 0 && store->conn != NULL)
        cs_store_replica_woken(store);
    return rc;
}

static void socket_cb(uv_poll_t *handle, int status, int events)
{
    struct cs_store *store = handle->data;
    struct cs_store_err err;

    if (status < 0) {
        cs_store_conn_lost(store, uv_strerror(status));
        return;
    }
    if (store->conn_state == CS_STORE_CONN_CONNECTING) {
        connect_poll(store);
        return;
    }
    /* The server sent something: it is not frozen, however long its
     * statement takes. */
    if (events & UV_READABLE)
        cs_store_answer_wait(store);
    if (read_input(store, &err) != 0 ||
        (store->conn != NULL && cs_store_flush_out(store, &err) != 0)) {
        cs_store_conn_lost(store, err.msg);
        return;
    }
    /* A close waiting for the last batch looks again at the end of the
     * turn. */
    if (cs_store_is_closing(store))
        cs_store_kick(store);
}

static void connect_timeout_cb(uv_timer_t *timer)
{
    cs_store_conn_lost(timer->data, "timed out connecting");
}

static void connect_begin(struct cs_store *store)
{
    /* Keywords before dbname are defaults the URL may override; those after
     * it override the URL. Keepalives and tcp_user_timeout let a TCP
     * connection to a vanished server fail (and its batches be sent again
     * after reconnecting) instead of waiting forever; unix sockets ignore
     * them. application_name names this process in pg_stat_activity. */
    const char *keys[] = {"keepalives_idle",
                          "keepalives_interval",
                          "keepalives_count",
                          "tcp_user_timeout",
                          "dbname",
                          "application_name",
                          NULL,
                          NULL,
                          NULL};
    const char *values[] = {"10", "5",  "3", "30000", store->conninfo, store->application_name,
                            NULL, NULL, NULL};
    struct cs_store_err err;

    /* libpq tries each resolved_cb address in turn, under the name given. */
    if (store->hostaddrs[0] != '\0') {
        keys[6] = "host";
        values[6] = store->hosts;
        keys[7] = "hostaddr";
        values[7] = store->hostaddrs;
    }
    store->conn = PQconnectStartParams(keys, values, 1);
    if (store->conn == NULL || PQstatus(store->conn) == CONNECTION_BAD) {
        cs_store_conn_lost(store,
                           store->conn != NULL ? PQerrorMessage(store->conn) : "out of memory");
        return;
    }
    cs_store_conn_step(store, CS_STORE_CONN_EV_CONNECT);
    retry_timer_start(store, connect_timeout_cb, CONNECT_TIMEOUT_MS);
    /* Until the first PQconnectPoll, libpq waits for the socket to be
     * writable. */
    if (cs_store_watch(store, UV_WRITABLE, true, &err) != 0)
        cs_store_conn_lost(store, err.msg);
}

static void resolved_cb(struct cs_store *store, int status, const struct cs_store_err *err)
{
    cs_store_conn_step(store, CS_STORE_CONN_EV_RESOLVED);
    if (cs_store_is_closing(store)) {
        cs_store_kick(store);
        return;
    }
    if (status != 0) {
        cs_store_conn_lost(store, err->msg);
        return;
    }
    connect_begin(store);
}

void cs_store_conn_start(struct cs_store *store)
{
    struct cs_store_err err;
    int rc = cs_store_url_host(store->conninfo, store->host, sizeof(store->host), &err);

    /* Resolved again at every connect: the name may point elsewhere now. */
    store->hostaddrs[0] = '\0';
    if (rc != 0) {
        cs_store_log(&store->log, CS_STORE_LOG_ERROR, "%s", err.msg);
        store->conn_cbs.failed_cb(store, rc);
        return;
    }
    if (store->host[0] == '\0') {
        connect_begin(store);
        return;
    }
    rc = cs_store_resolve(store, resolved_cb);
    if (rc != 0) {
        cs_store_conn_lost(store, uv_strerror(rc));
        return;
    }
    cs_store_conn_step(store, CS_STORE_CONN_EV_RESOLVE);
}

static void retry_cb(uv_timer_t *timer)
{
    ((struct cs_store *)timer->data)->conn_cbs.retry_cb(timer->data);
}

/* The watchdog. Idle, it pings. Otherwise the server is frozen: the batch
 * in flight has had no answer for the whole timeout. Logged here once; while it stays frozen, each
 * failed reconnect logs one line (at most one per connect timeout) that says for how long. */
static void answer_timeout_cb(uv_timer_t *timer)
{
    struct cs_store *store = timer->data;

    if (store->inflight_head == NULL) {
        /* Idle: ask for an answer, which this timer then waits for. */
        if (store->conn_state == CS_STORE_CONN_READY && !cs_store_is_closing(store))
            cs_store_ping(store);
        return;
    }
    if (store->unanswered_since_ns == 0)
        store->unanswered_since_ns = cs_store_now_mono_ns();
    cs_store_conn_lost(store, "the database did not answer within the watchdog's limit");
}

void cs_store_conn_lost(struct cs_store *store, const char *why)
{
    char msg[512];

    cs_store_oneline(why, msg, sizeof(msg));
    if (store->unanswered_since_ns != 0)
        cs_store_log(&store->log, CS_STORE_LOG_WARN,
                     "database connection lost: %s; it has not answered for %lld s (%zu writes "
                     "waiting)",
                     msg, (long long)unanswered_s(store), store->n_writes);
    else
        cs_store_log(&store->log, CS_STORE_LOG_WARN,
                     "database connection lost: %s (%zu writes waiting)", msg, store->n_writes);
    cs_store_conn_teardown(store);
    cs_store_requeue_inflight(store);
    cs_store_kick(store);
    /* A close that waits for no write finishes at the end of the turn. */
    if (store->state == CS_STORE_STATE_CLOSING)
        return;
    if (!cs_store_is_live(store) && cs_store_now_mono_ns() > store->open_deadline_ns) {
        store->conn_cbs.failed_cb(store, -ENOTCONN);
        return;
    }
    retry_timer_start(store, retry_cb, store->backoff_ms);
    store->backoff_ms = store->backoff_ms * 2 > CS_STORE_BACKOFF_MAX_MS ? CS_STORE_BACKOFF_MAX_MS
                                                                        : store->backoff_ms * 2;
}
