/* The store's life: made, opened (the embedded server started on libuv's
 * pool, then connected, migrated, prepared, the snapshot loaded), the
 * end-of-turn flush of the queue, and closed (pending writes committed or
 * the close deadline passed, the embedded server stopped, handles closed).
 * Each phase is a state of the life's table (store_state.c); the actions
 * are here. Loop thread: the one that made the store, which every entry
 * point asserts. The store is freed in the last handle's close callback. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "store_internal.h"

#define DEFAULT_MAX_PENDING_WRITES 100000
/* How long open keeps trying to reach the database before it fails. */
#define OPEN_TIMEOUT_MS 30000
/* How long close waits for unfinished writes. */
#define CLOSE_TIMEOUT_MS 10000
/* The replica's settings when the config leaves them 0 (cschedd's own
 * defaults are in its config). */
#define DEFAULT_HEARTBEAT_MS 2000
#define DEFAULT_ATTEMPT_LEASE_MS 60000

/* Hands open_cb its answer, once. */
static void open_done(struct cs_store *store, int status, struct cs_store_snapshot *snapshot)
{
    cs_store_open_cb cb = store->open_cb;

    if (cb == NULL) {
        cs_store_snapshot_free(snapshot);
        return;
    }
    store->open_cb = NULL;
    cs_store_step(store, status == 0 ? CS_STORE_EV_LOADED : CS_STORE_EV_OPEN_FAILED);
    if (status != 0)
        cs_store_conn_teardown(store); /* nothing further is tried; the caller closes */
    cb(store->open_arg, status, snapshot);
}

static void snapshot_cb(struct cs_store *store, int status, struct cs_store_snapshot *snapshot)
{
    open_done(store, status, snapshot);
}

/* The connection is READY: at open, the active replica reads the snapshot
 * first (once: its reads are sent again after a reconnect); a standby
 * waits for the active role. */
static void conn_ready_cb(struct cs_store *store)
{
    enum cs_store_state from;

    if (store->state == CS_STORE_STATE_OPENING && store->replica.role == CS_STORE_ROLE_STANDBY) {
        cs_store_step(store, CS_STORE_EV_WAIT);
        return;
    }
    from = cs_store_step(store, CS_STORE_EV_READY);
    if (from == CS_STORE_STATE_OPENING || from == CS_STORE_STATE_CANCELLING)
        cs_store_snapshot_load(store, snapshot_cb);
}

/* The standby took the active role: now it loads the snapshot. */
static void replica_promoted_cb(struct cs_store *store)
{
    cs_store_step(store, CS_STORE_EV_PROMOTE);
    cs_store_snapshot_load(store, snapshot_cb);
}

static void conn_failed_cb(struct cs_store *store, int status)
{
    open_done(store, status, NULL);
}

/* Another replica took this one's lease over: nothing more goes out, so a
 * close need not wait for writes that can never commit. */
static void conn_fenced_cb(struct cs_store *store)
{
    cs_store_step(store, CS_STORE_EV_FENCE);
    if (store->fenced_cb != NULL)
        store->fenced_cb(store->fenced_arg);
}

/* "cschedd pid N.K on HOST", the Kth store of process N, which a refusal
 * shows another server: unique to this store, so that only its own lost
 * sessions are told apart in pg_stat_activity; within PostgreSQL's 63
 * bytes, so that the name it keeps is the name shown. */
static void name_sessions(struct cs_store *store)
{
    static unsigned stores_made;
    unsigned k = __atomic_add_fetch(&stores_made, 1, __ATOMIC_RELAXED);
    char host[256];

    if (gethostname(host, sizeof(host)) != 0)
        (void)snprintf(host, sizeof(host), "unknown host");
    host[sizeof(host) - 1] = '\0';
    (void)snprintf(store->application_name, sizeof(store->application_name),
                   "cschedd pid %d.%u on %.25s", (int)getpid(), k, host);
}

static void handle_closed_cb(uv_handle_t *handle)
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
    uv_close((uv_handle_t *)&store->flush_handle, handle_closed_cb);
    uv_close((uv_handle_t *)&store->retry_timer, handle_closed_cb);
    uv_close((uv_handle_t *)&store->close_timer, handle_closed_cb);
    uv_close((uv_handle_t *)&store->answer_timer, handle_closed_cb);
    uv_close((uv_handle_t *)&store->replica.beat_timer, handle_closed_cb);
}

static void embedded_stopped_cb(uv_work_t *req, int status)
{
    close_handles(req->data);
}

/* Whether the open started the embedded server, which the close stops:
 * without a URL, conninfo is set once it has started. */
static bool embedded_started(const struct cs_store *store)
{
    return store->database_url == NULL && store->conninfo != NULL;
}

const char *cs_store_conninfo(const struct cs_store *store)
{
    return store->conninfo;
}

/* Ends a close once nothing is left to wait for. */
static void maybe_finish_close(struct cs_store *store)
{
    bool unfinished = store->pending.head != NULL || store->inflight_head != NULL;

    if (!cs_store_is_closing(store) || store->state == CS_STORE_STATE_FINISHING ||
        cs_store_conn_on_pool(store))
        return;
    /* Unfinished work waits for its commit, through reconnects, until the
     * deadline. */
    if (unfinished && store->state == CS_STORE_STATE_DRAINING)
        return;
    cs_store_step(store, CS_STORE_EV_FINISH);
    cs_store_conn_teardown(store);
    /* Neither stop can fail. */
    (void)uv_prepare_stop(&store->flush_handle);
    (void)uv_timer_stop(&store->close_timer);
    cs_store_requeue_inflight(store);
    if (store->n_writes > 0)
        cs_store_log(&store->log, CS_STORE_LOG_WARN, "closing with %zu writes not committed",
                     store->n_writes);
    cs_store_fail_queue(store, &store->failed, -ENOTCONN);
    cs_store_fail_queue(store, &store->pending, -ENOTCONN);
    open_done(store, -ECANCELED, NULL);
    if (embedded_started(store) &&
        uv_queue_work(store->loop, &store->work, cs_store_embedded_stop_work,
                      embedded_stopped_cb) == 0)
        return;
    close_handles(store);
}

/* The end of a loop turn: what the turn queued goes out as batches. */
static void turn_end_cb(uv_prepare_t *handle)
{
    struct cs_store *store = handle->data;
    struct cs_store_err err;

    /* uv_prepare_stop cannot fail. */
    (void)uv_prepare_stop(handle);
    cs_store_fail_queue(store, &store->failed, -ENOTCONN);
    if (store->conn_state == CS_STORE_CONN_READY && store->pending.head != NULL) {
        if (cs_store_send_pending(store, &err) != 0 || cs_store_flush_out(store, &err) != 0)
            cs_store_conn_lost(store, err.msg);
    }
    maybe_finish_close(store);
}

static void embedded_restarted_cb(uv_work_t *req, int status)
{
    struct cs_store *store = req->data;

    cs_store_conn_step(store, CS_STORE_CONN_EV_STARTED);
    if (cs_store_is_closing(store)) {
        maybe_finish_close(store);
        return;
    }
    if (status == 0)
        status = store->work_status;
    if (status != 0) {
        cs_store_conn_lost(store, "the embedded PostgreSQL could not be started again");
        return;
    }
    cs_store_conn_start(store);
}

/* Before each reconnect, the embedded server is started again if it no
 * longer runs: no one else would, since cschedd is the only one that knows
 * it (a kill -9 of its postmaster left the store retrying forever). */
static void conn_retry_cb(struct cs_store *store)
{
    if (store->embedded_dir == NULL ||
        uv_queue_work(store->loop, &store->work, cs_store_embedded_restart_work,
                      embedded_restarted_cb) != 0) {
        cs_store_conn_start(store);
        return;
    }
    cs_store_conn_step(store, CS_STORE_CONN_EV_START);
}

static void init_replica(struct cs_store_replica *r, const struct cs_store_config *config)
{
    (void)snprintf(r->id, sizeof(r->id), "%s", config->replica_id);
    (void)snprintf(r->instance, sizeof(r->instance), "%s",
                   config->replica_instance != NULL ? config->replica_instance : "");
    (void)snprintf(r->version, sizeof(r->version), "%s",
                   config->replica_version != NULL ? config->replica_version : "");
    r->heartbeat_ms = config->heartbeat_ms > 0 ? config->heartbeat_ms : DEFAULT_HEARTBEAT_MS;
    r->attempt_lease_ms =
        config->attempt_lease_ms > 0 ? config->attempt_lease_ms : DEFAULT_ATTEMPT_LEASE_MS;
    r->max_running = config->replica_max_running;
    r->poll_only = config->poll_only;
    r->renewed_cb = config->renewed_cb;
    r->renewed_arg = config->renewed_arg;
}

struct cs_store *cs_store_new(uv_loop_t *loop, const struct cs_store_config *config)
{
    static const struct cs_store_conn_cbs conn_cbs = {conn_ready_cb, conn_failed_cb, conn_fenced_cb,
                                                      conn_retry_cb};
    struct cs_store *store = cs_store_xcalloc(1, sizeof(*store));

    store->loop = loop;
    store->loop_thread = pthread_self();
    store->log = (struct cs_store_logger){config->log_cb, config->log_arg};
    store->fenced_cb = config->fenced_cb;
    store->fenced_arg = config->fenced_arg;
    store->backend_nice = config->backend_nice;
    init_replica(&store->replica, config);
    store->replica.promoted_cb = replica_promoted_cb;
    name_sessions(store);
    if (config->database_url != NULL && config->database_url[0] != '\0')
        store->database_url = cs_store_xstrdup(config->database_url);
    if (config->embedded_dir != NULL && config->embedded_dir[0] != '\0')
        store->embedded_dir = cs_store_xstrdup(config->embedded_dir);
    store->max_pending_writes =
        config->max_pending_writes > 0 ? config->max_pending_writes : DEFAULT_MAX_PENDING_WRITES;
    /* On Unix these only fill in the handle: they cannot fail. */
    (void)uv_prepare_init(loop, &store->flush_handle);
    (void)uv_timer_init(loop, &store->retry_timer);
    (void)uv_timer_init(loop, &store->close_timer);
    (void)uv_timer_init(loop, &store->answer_timer);
    store->flush_handle.data = store->retry_timer.data = store->close_timer.data = store;
    (void)uv_timer_init(loop, &store->replica.beat_timer);
    store->answer_timer.data = store->replica.beat_timer.data = store;
    store->handles_open = 5;
    store->flush_cb = turn_end_cb;
    cs_store_conn_init(store, &conn_cbs);
    return store;
}

static void embedded_started_cb(uv_work_t *req, int status)
{
    struct cs_store *store = req->data;

    cs_store_conn_step(store, CS_STORE_CONN_EV_STARTED);
    if (status == 0)
        status = store->work_status;
    if (status == 0)
        store->conninfo = cs_store_xstrdup(store->work_conninfo);
    if (cs_store_is_closing(store)) {
        maybe_finish_close(store);
        return;
    }
    if (status != 0) {
        open_done(store, status, NULL);
        return;
    }
    cs_store_conn_start(store);
}

int cs_store_open(struct cs_store *store, cs_store_open_cb open_cb, void *arg)
{
    int rc;

    CS_STORE_ASSERT_LOOP(store);
    if ((store->database_url == NULL && store->embedded_dir == NULL) || open_cb == NULL ||
        store->replica.id[0] == '\0')
        return -EINVAL;
    cs_store_step(store, CS_STORE_EV_OPEN);
    store->open_cb = open_cb;
    store->open_arg = arg;
    store->open_deadline_ns = cs_store_now_mono_ns() + (int64_t)OPEN_TIMEOUT_MS * 1000000;
    if (store->database_url != NULL) {
        store->conninfo = cs_store_xstrdup(store->database_url);
        cs_store_conn_start(store);
        return 0;
    }
    store->work.data = store;
    rc =
        uv_queue_work(store->loop, &store->work, cs_store_embedded_start_work, embedded_started_cb);
    if (rc != 0)
        return rc;
    cs_store_conn_step(store, CS_STORE_CONN_EV_START);
    return 0;
}

static void close_deadline_cb(uv_timer_t *timer)
{
    struct cs_store *store = timer->data;

    cs_store_step(store, CS_STORE_EV_DEADLINE);
    maybe_finish_close(store);
}

void cs_store_close(struct cs_store *store, void (*closed_cb)(void *arg), void *arg)
{
    int rc;

    CS_STORE_ASSERT_LOOP(store);
    cs_store_step(store, CS_STORE_EV_CLOSE);
    (void)uv_timer_stop(&store->replica.beat_timer);
    store->closed_cb = closed_cb;
    store->closed_arg = arg;
    /* Fails only for a closing handle, and the timer closes after this. */
    rc = uv_timer_start(&store->close_timer, close_deadline_cb, CLOSE_TIMEOUT_MS, 0);
    CS_STORE_ASSERT(rc == 0);
    cs_store_kick(store);
}

bool cs_store_is_accepting(const struct cs_store *store)
{
    CS_STORE_ASSERT_LOOP(store);
    return store->conn_state == CS_STORE_CONN_READY && !cs_store_is_closing(store) &&
           store->n_writes < store->max_pending_writes;
}

bool cs_store_is_out_of_space(const struct cs_store *store)
{
    CS_STORE_ASSERT_LOOP(store);
    return store->out_of_space_ns != 0 && cs_store_now_mono_ns() - store->out_of_space_ns <
                                              (int64_t)CS_STORE_OUT_OF_SPACE_HOLD_MS * 1000000;
}
