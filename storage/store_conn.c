/* The store's connection: one libpq connection driven by a uv_poll on its
 * socket, never blocking the loop, and the store's life (open, close, the
 * embedded server).
 *
 * Life of a connection: (embedded server started on the pool) -> host name
 * resolved with uv_getaddrinfo when the URL has one -> PQconnectStartParams
 * and PQconnectPoll -> migrations (first connection only, simple queries
 * outside pipeline mode) -> pipeline mode, every statement prepared -> READY,
 * when store_batch.c sends what is queued. When the connection breaks, it is
 * rebuilt after a backoff (100 ms doubling to 5 s). */
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

#define DEFAULT_MAX_PENDING_WRITES 100000
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define CONNECT_TIMEOUT_MS 10000
/* How long open keeps trying to reach the database before it fails. */
#define OPEN_TIMEOUT_MS 30000
/* How long close waits for unfinished writes. */
#define CLOSE_TIMEOUT_MS 10000

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
static void on_poll(uv_poll_t *handle, int status, int events);

static void poll_closed(uv_handle_t *handle)
{
    free(handle);
}

/* Watches the connection's socket for events. During connect the socket may
 * be closed and another opened under the same number, so a new poll handle
 * is made each time (renew); afterwards only the events change. */
int cs_store_watch(struct cs_store *store, int events, bool renew)
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

/* Sends the prepares of every statement as the first batch of a new
 * connection. */
static void start_prepare(struct cs_store *store)
{
    struct cs_store_batch *b = cs_xcalloc(1, sizeof(*b));

    if (!PQenterPipelineMode(store->conn)) {
        cs_store_batch_free(b);
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    b->setup = true;
    store->inflight_head = store->inflight_tail = b;
    store->n_inflight = 1;
    store->state = CONN_PREPARING;
    for (int i = 0; i < CS_STMT_COUNT; i++) {
        if (!PQsendPrepare(store->conn, cs_stmts[i].name, cs_stmts[i].sql, 0, NULL)) {
            cs_store_conn_lost(store, PQerrorMessage(store->conn));
            return;
        }
        cs_store_batch_sent(b, (enum cs_stmt)i, NULL);
    }
    if (!PQpipelineSync(store->conn)) {
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    cs_store_flush_out(store);
}

void cs_store_setup_done(struct cs_store *store, bool failed)
{
    if (failed) {
        /* A statement that does not prepare is a bug or a schema this
         * build does not match: retrying will not help. */
        if (!store->opened) {
            open_done(store, -EIO, NULL);
            return;
        }
        cs_store_conn_lost(store, "preparing statements failed");
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
    cs_store_kick(store);
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
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    free(owned);
    cs_store_flush_out(store);
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
        if (cs_store_is_conn_error(store, res)) {
            char why[256];

            snprintf(why, sizeof(why), "%s", PQresultErrorMessage(res));
            PQclear(res);
            cs_store_conn_lost(store, why);
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
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
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
        rc = cs_store_watch(store, UV_READABLE, true);
        break;
    case PGRES_POLLING_WRITING:
        rc = cs_store_watch(store, UV_WRITABLE, true);
        break;
    case PGRES_POLLING_OK:
        rc = cs_store_watch(store, UV_READABLE, true);
        if (rc == 0)
            connected(store);
        break;
    default:
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    if (rc != 0)
        cs_store_conn_lost(store, uv_strerror(rc));
}

static void on_poll(uv_poll_t *handle, int status, int events)
{
    struct cs_store *store = handle->data;

    if (status < 0) {
        cs_store_conn_lost(store, uv_strerror(status));
        return;
    }
    if (store->state == CONN_CONNECTING) {
        connect_poll(store);
        return;
    }
    if (!PQconsumeInput(store->conn)) {
        cs_store_conn_lost(store, PQerrorMessage(store->conn));
        return;
    }
    if (store->state == CONN_MIGRATING)
        migrate_read(store);
    else
        cs_store_read_results(store);
    if (store->conn != NULL)
        cs_store_flush_out(store);
    cs_store_maybe_finish_close(store);
}

static void on_connect_timeout(uv_timer_t *timer)
{
    cs_store_conn_lost(timer->data, "timed out connecting");
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
        cs_store_conn_lost(store,
                           store->conn != NULL ? PQerrorMessage(store->conn) : "out of memory");
        return;
    }
    store->state = CONN_CONNECTING;
    uv_timer_start(&store->retry_timer, on_connect_timeout, CONNECT_TIMEOUT_MS, 0);
    /* Until the first PQconnectPoll, libpq waits for the socket to be
     * writable. */
    if (cs_store_watch(store, UV_WRITABLE, true) != 0)
        cs_store_conn_lost(store, "cannot watch the database socket");
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
        cs_store_maybe_finish_close(store);
        return;
    }
    if (n == 0) {
        char why[320];

        snprintf(why, sizeof(why), "cannot resolve %s: %s", store->host,
                 status != 0 ? uv_strerror(status) : "no address");
        cs_store_conn_lost(store, why);
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
        cs_store_conn_lost(store, uv_strerror(rc));
    }
}

static void on_retry(uv_timer_t *timer)
{
    start_connect(timer->data);
}

void cs_store_conn_lost(struct cs_store *store, const char *why)
{
    char msg[512];

    cs_store_oneline(why, msg, sizeof(msg));
    cs_log_warn("database connection lost: %s (%zu writes waiting)", msg, store->n_writes);
    teardown_conn(store);
    cs_store_requeue_inflight(store);
    cs_store_kick(store);
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
        cs_store_maybe_finish_close(store);
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

void cs_store_maybe_finish_close(struct cs_store *store)
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
    cs_store_requeue_inflight(store);
    if (store->n_writes > 0)
        cs_log_warn("closing with %zu writes not committed", store->n_writes);
    cs_store_fail_queue(store, &store->failed, -ENOTCONN);
    cs_store_fail_queue(store, &store->pending, -ENOTCONN);
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
    cs_store_maybe_finish_close(store);
}

void cs_store_close(struct cs_store *store, void (*closed_cb)(void *arg), void *arg)
{
    store->closing = true;
    store->closed_cb = closed_cb;
    store->closed_arg = arg;
    uv_timer_start(&store->close_timer, on_close_deadline, CLOSE_TIMEOUT_MS, 0);
    cs_store_kick(store);
}
