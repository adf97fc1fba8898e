/* cschedd: wiring. Parses the config, locks and prepares the state dir,
 * opens the store (which locks the database), resumes the runs it left, and
 * serves gRPC until SIGTERM or SIGINT; then stops in the reverse order so
 * that nothing is left behind. Running minders are left running: the next
 * start adopts them. main's thread is the loop thread; the ready file is
 * written on the pool (ready.c). */
#define CS_LOG_COMPONENT "cschedd"
#include <errno.h>
#include <grpc/grpc.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "after.h"
#include "api.h"
#include "audit.h"
#include "auth.h"
#include "config.h"
#include "dir_check.h"
#include "dispatch.h"
#include "env.h"
#include "grpc_locks.h"
#include "history.h"
#include "hook_defaults.h"
#include "hooks.h"
#include "http.h"
#include "job.h"
#include "job_table.h"
#include "launcher.h"
#include "lease_file.h"
#include "limits_probe.h"
#include "local_listen.h"
#include "log.h"
#include "metrics.h"
#include "metrics_http.h"
#include "metrics_sched.h"
#include "placement.h"
#include "priority.h"
#include "pump.h"
#include "ready.h"
#include "remote_attempt.h"
#include "retention.h"
#include "rpc.h"
#include "sched_state.h"
#include "state_instance.h"
#include "state_lock.h"
#include "state_path.h"
#include "store.h"
#include "util.h"
#include "worker.h"
#include "zone_load.h"

extern char **environ;

struct server {
    uv_loop_t *loop;
    struct cs_config config;
    char limits_mechanism[1200]; /* the jobs' limits on this host (limits_probe.h) */
    struct cs_sched sched;
    struct cs_rpc_server *rpc;
    struct cs_local_listen local;
    struct cs_identity_source sources[2]; /* the unix socket's peers, then TCP's */
    uv_signal_t sigterm, sigint;
    uv_timer_t drain_timer;    /* while draining: looks for the last attempt's end */
    int64_t drain_deadline_ms; /* monotonic; 0 while not draining */
    struct cs_ready ready;
    struct cs_retention retention;
    struct cs_history history;
    struct cs_hooks hooks;
    struct cs_after after;
    Csched__V1__Job *default_hooks; /* --default-hooks; NULL: none */
    struct cs_audit_expiry audit_expiry;
    struct cs_audit_refusals audit_refusals;
    struct cs_state_lock state_lock; /* held until release() */
    struct cs_lease_file lease;      /* the minders' deadline; with a shared database only */
    struct cs_dir_check dir_check;
    struct cs_auth auth;
    struct cs_zone_reload zone_reload;
    struct cs_store_snapshot *snap;       /* the store's, held while the jobs' zones are read */
    struct cs_metrics_http *metrics_http; /* NULL without --metrics-listen */
    struct cs_http_config http_config;
    struct cs_http *http; /* NULL without --http-listen */
    char minder_path[PATH_MAX];
    char state_dir[PATH_MAX]; /* config.state_dir resolved: config points here then */
    char embedded_dir[PATH_MAX];
    char instance[CS_STATE_INSTANCE_SIZE]; /* the state dir's id, the replica joins with */
    bool fenced;                           /* another replica took the lease: start again */
    bool stopping;
    int exit_code;
};

static void begin_shutdown(struct server *srv, int exit_code);

/* --- start --------------------------------------------------------------- */

static int make_dir(const char *path)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        int rc = -errno;
        cs_log_error("mkdir(%s) failed: %s", path, strerror(-rc));
        return rc;
    }
    return 0;
}

/* The state dir, made if missing, then resolved once (state_path.h): from
 * here on cschedd uses the resolved path, which no other user can change. */
static int make_state_dir(struct server *srv)
{
    struct cs_err err = {0};
    int rc = make_dir(srv->config.state_dir);

    if (rc == 0 && (rc = cs_state_path_resolve(srv->config.state_dir, srv->state_dir,
                                               sizeof(srv->state_dir), &err)) != 0)
        cs_log_error("%s", err.msg);
    if (rc == 0)
        srv->config.state_dir = srv->state_dir;
    return rc;
}

static int find_minder(struct server *srv)
{
    if (srv->config.minder_path != NULL) {
        (void)snprintf(srv->minder_path, sizeof(srv->minder_path), "%s", srv->config.minder_path);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0) {
            int rc = -errno;
            cs_log_error("readlink(/proc/self/exe) failed: %s", strerror(-rc));
            return rc;
        }
        self[n] = '\0';
        const char *dir = dirname(self);
        (void)snprintf(srv->minder_path, sizeof(srv->minder_path), "%s/csched-minder", dir);
        if (access(srv->minder_path, X_OK) != 0)
            (void)snprintf(srv->minder_path, sizeof(srv->minder_path),
                           "%s/../libexec/csched/csched-minder", dir);
    }
    if (access(srv->minder_path, X_OK) != 0) {
        cs_log_error("csched-minder not found or not executable at %s: pass --minder PATH",
                     srv->minder_path);
        return -ENOENT;
    }
    return 0;
}

/* The attempts this machine runs that this replica placed itself: none
 * before its state is loaded, and none once dispatch has closed. */
static uint32_t placed_here(const struct server *srv)
{
    return srv->sched.n_rooms > 0 ? srv->sched.rooms[0]->placed : 0;
}

/* The attempts this machine runs: the active replica's own (those it
 * placed elsewhere are asked for by whoever is active), or those placed
 * here whose end the active replica has not been told. */
static uint32_t running_here(const struct server *srv)
{
    return srv->sched.loaded ? placed_here(srv) : cs_worker_held(&srv->sched);
}

/* Draining ends once no attempt of this replica runs, or at the deadline. */
static void drain_check_cb(uv_timer_t *timer)
{
    struct server *srv = timer->data;
    uint32_t running = running_here(srv);
    if (running > 0 && cs_now_mono_ns() / 1000000 < srv->drain_deadline_ms)
        return;
    (void)uv_timer_stop(timer);
    if (running > 0)
        cs_log_warn("drained for %lld ms: %u attempts still run; their minders stop them at "
                    "their lease's deadline, and the replica taking over retries them",
                    (long long)srv->config.drain_timeout_ms, running);
    else
        cs_log_info("drained: no attempt runs");
    begin_shutdown(srv, 0);
}

/* A replica on a database other replicas share drains before it stops:
 * it starts nothing more, and waits up to --drain-timeout for the attempts
 * its machine runs to end (and, on a standby, for the active replica to be
 * told their ends); then it leaves, and another replica takes over at once.
 * The active replica's health says NOT_SERVING and its row draining; a
 * standby's row says it takes no more attempts (max_running 0). */
static bool begin_drain(struct server *srv)
{
    struct cs_store_replica_info info;
    if (srv->sched.lease_path == NULL || srv->config.drain_timeout_ms == 0 ||
        srv->sched.store == NULL || srv->drain_deadline_ms != 0 || srv->sched.launcher == NULL)
        return false;
    cs_store_replica_get(srv->sched.store, &info);
    if (!info.active && cs_worker_held(&srv->sched) == 0)
        return false;
    srv->drain_deadline_ms = cs_now_mono_ns() / 1000000 + srv->config.drain_timeout_ms;
    srv->sched.draining = true;
    cs_store_replica_drain(srv->sched.store);
    cs_store_replica_set_max_running(srv->sched.store, 0);
    cs_log_info("draining: %u attempts run here; waiting up to %lld ms for them (SIGTERM again "
                "stops at once)",
                running_here(srv), (long long)srv->config.drain_timeout_ms);
    /* Cannot fail: the handle is open and the callback set. */
    (void)uv_timer_start(&srv->drain_timer, drain_check_cb, 0, 100);
    return true;
}

static void signal_cb(uv_signal_t *handle, int signum)
{
    struct server *srv = handle->data;
    if (begin_drain(srv))
        return;
    cs_log_info("received %s: shutting down", strsignal(signum));
    begin_shutdown(srv, 0);
}

/* The address clients are to use: TCP when asked for, else the unix
 * socket. */
static void served_address(const struct server *srv, char *buf, size_t cap)
{
    int port = cs_rpc_server_port(srv->rpc);
    if (port > 0) {
        const char *tcp = srv->config.listen, *colon = strrchr(tcp, ':');
        int host_len = colon != NULL ? (int)(colon - tcp) : (int)strlen(tcp);
        (void)snprintf(buf, cap, "%.*s:%d", host_len, tcp, port);
    } else {
        (void)snprintf(buf, cap, "unix:%s", srv->local.path);
    }
}

/* --cluster-max-running's seed has committed, or found a value someone set. */
static void cluster_limit_seeded_cb(void *arg, int status, int64_t max_running)
{
    struct server *srv = arg;

    if (status != 0) {
        cs_log_warn("--cluster-max-running %u was not stored: %s; the cluster's limit stays %u",
                    srv->config.cluster_max_running, strerror(-status),
                    srv->sched.cluster_max_running);
        return;
    }
    if ((uint32_t)max_running != srv->config.cluster_max_running)
        cs_log_info("the cluster's max running is %lld, as set at run time; "
                    "--cluster-max-running %u only seeds a value never set",
                    (long long)max_running, srv->config.cluster_max_running);
    cs_pump_set_cluster_limit(&srv->sched, (uint32_t)max_running);
}

static void load_snapshot(struct server *srv, struct cs_store_snapshot *snap)
{
    struct cs_sched *s = &srv->sched;
    /* What the replica active before placed here is this one's own now: the
     * snapshot has it, on this machine, and it is adopted as after a
     * restart. */
    cs_worker_stop(s);
    cs_api_jobs_restore(s, snap->jobs, snap->job_last_ended, snap->n_jobs);
    s->next_run_id = snap->max_run_id + 1;
    s->next_seq = snap->max_event_seq + 1;
    s->next_audit_id = snap->max_audit_id + 1;
    s->last_published_seq = snap->max_event_seq;
    s->purged_event_seq = snap->purged_event_seq;
    cs_pump_set_cluster_limit(s, snap->cluster_max_running);
    if (srv->config.cluster_max_running_set)
        cs_store_cluster_max_running_set(s->store, srv->config.cluster_max_running,
                                         cs_now_unix_ms(), "--cluster-max-running", true,
                                         cluster_limit_seeded_cb, srv);
    /* Both lists are in run id order. */
    size_t r = 0;
    for (size_t i = 0; i < snap->n_active_runs; i++) {
        const Csched__V1__Run *run = snap->active_runs[i];
        while (r < snap->n_remote_attempts && snap->remote_attempts[r].run_id < run->id)
            r++;
        const struct cs_store_remote_attempt *remote =
            r < snap->n_remote_attempts && snap->remote_attempts[r].run_id == run->id
                ? &snap->remote_attempts[r]
                : NULL;
        cs_dispatch_resume(s, (Csched__V1__Run *)cs_message_copy(&run->base),
                           snap->active_attempt_dirs[i], remote);
    }
    cs_log_info("loaded %zu jobs and %zu unfinished runs", snap->n_jobs, snap->n_active_runs);
}

/* The zones of the stored jobs are read: the jobs and runs come back, and
 * the server starts serving. */
static void zones_read_cb(void *arg, int status, const struct cs_err *err)
{
    struct server *srv = arg;
    struct cs_sched *s = &srv->sched;
    struct cs_store_snapshot *snap = srv->snap;

    srv->snap = NULL;
    if (status != 0) {
        cs_store_snapshot_free(snap);
        return; /* stopping */
    }
    load_snapshot(srv, snap);
    cs_store_snapshot_free(snap);
    if (cs_zone_reload_start(&srv->zone_reload, s) != 0)
        cs_log_warn("watching SIGHUP for the time zones failed: a tzdata update applies at the "
                    "next start");
    cs_retention_start(&srv->retention, s, srv->config.retention_days);
    s->retention_days = srv->config.retention_days;
    cs_history_start(&srv->history, s, srv->config.retention_days);
    cs_audit_expiry_start(&srv->audit_expiry, s, srv->config.audit_retention_days);
    cs_audit_refusals_record(&srv->audit_refusals);
    /* Without its thread no hook is sent; they stay queued for the next
     * start or another replica. */
    (void)cs_hooks_start(&srv->hooks);
    cs_after_start(&srv->after);

    srv->sched.loaded = true;
    char address[300];
    served_address(srv, address, sizeof(address));
    cs_log_info("serving on %s socket=%s max_running=%u state_dir=%s", address, srv->local.path,
                s->max_running, s->state_dir);
    cs_store_replica_set(s->store, NULL, (int)placed_here(srv));
    if (srv->config.ready_file != NULL)
        cs_ready_start(&srv->ready, srv->loop, srv->config.ready_file, address);
}

static void store_open_cb(void *arg, int status, struct cs_store_snapshot *snap)
{
    struct server *srv = arg;
    struct cs_sched *s = &srv->sched;
    if (status != 0) {
        cs_log_error("the store (the database) could not be opened: %s", strerror(-status));
        begin_shutdown(srv, 1);
        return;
    }
    if (srv->stopping) {
        cs_store_snapshot_free(snap);
        return;
    }
    /* The embedded database's address is known once it has started. */
    if (srv->http != NULL && srv->config.database_url == NULL)
        cs_http_sessions_keep_in(srv->http, cs_store_conninfo(s->store));
    /* Reading a zone's file may wait for the disk: on the pool, first. */
    srv->snap = snap;
    cs_zone_load_start(s, snap->jobs, snap->n_jobs, zones_read_cb, srv);
}

/* Until this replica is the active one with its state loaded it answers
 * health (NOT_SERVING), reflection and ListReplicas itself; a standby
 * forwards every other call to the active replica it last saw, and without
 * one, or while it starts, the call is UNAVAILABLE, which a client retries. */
static int gate_cb(void *arg, const char *path, char *why, size_t cap)
{
    struct server *srv = arg;
    struct cs_store_replica_info info;
    if (srv->sched.loaded || strncmp(path, "/grpc.", 6) == 0 ||
        strncmp(path, "/csched.v1.Worker/", 18) == 0 ||
        strcmp(path, "/csched.v1.Scheduler/ListReplicas") == 0)
        return 0;
    cs_store_replica_get(srv->sched.store, &info);
    bool standby = info.epoch != 0 && !info.active;
    if (standby && info.active_address[0] != '\0' && info.cluster_key[0] != '\0' &&
        strlen(info.active_address) < cap) {
        (void)snprintf(why, cap, "%s", info.active_address);
        return CS_RPC_GATE_FORWARD;
    }
    (void)snprintf(why, cap,
                   standby ? "replica %s is a standby and knows of no active replica serving "
                             "yet: try again in a heartbeat"
                           : "replica %s is starting: its state is still being loaded",
                   info.id);
    return -ENOTCONN;
}

/* The active replica's calls to the others' Worker service. */
static struct cs_unary *remote_call_cb(void *ctx, const char *target, const char *method,
                                       const ProtobufCMessage *request, int64_t timeout_ms,
                                       cs_remote_done_cb done_cb, void *arg)
{
    struct server *srv = ctx;
    return srv->rpc != NULL
               ? cs_rpc_unary(srv->rpc, target, method, request, timeout_ms, done_cb, arg)
               : NULL;
}

/* A client's call handed to another replica's Worker service. */
static void relay_cb(void *ctx, struct cs_call *call, const char *target, const char *method,
                     const ProtobufCMessage *request)
{
    struct server *srv = ctx;
    if (srv->rpc != NULL)
        cs_rpc_relay(srv->rpc, call, target, method, request);
    else
        cs_call_fail(call, -ENOTCONN, "this replica is stopping");
}

/* The key forwarded calls carry: the store's, read at its join. */
static const char *cluster_key_cb(void *arg)
{
    struct server *srv = arg;
    struct cs_store_replica_info info;
    if (srv->sched.store == NULL)
        return "";
    cs_store_replica_get(srv->sched.store, &info);
    return info.cluster_key;
}

/* --- stop ---------------------------------------------------------------- */

static void store_closed_cb(void *arg)
{
    struct server *srv = arg;
    cs_job_free_all(&srv->sched);
    uv_close((uv_handle_t *)&srv->sigterm, NULL);
    uv_close((uv_handle_t *)&srv->sigint, NULL);
    uv_close((uv_handle_t *)&srv->drain_timer, NULL);
    cs_auth_stop(&srv->auth);
}

static void launcher_stopped_cb(void *arg)
{
    struct server *srv = arg;
    struct cs_sched *s = &srv->sched;
    cs_dispatch_close(s);
    cs_probe_stop(&s->probe);
    cs_metrics_stop();
    cs_retention_stop(&srv->retention);
    cs_history_stop(&srv->history);
    cs_hooks_stop(&srv->hooks);
    cs_after_stop(&srv->after);
    cs_audit_expiry_stop(&srv->audit_expiry);
    cs_zone_reload_stop(&srv->zone_reload);
    cs_audit_refusals_stop(&srv->audit_refusals);
    cs_slots_stop(s);
    cs_dir_check_stop(&srv->dir_check);
    cs_ready_stop(&srv->ready);
    /* Its work may be taken over at once; its minders keep their deadline. */
    cs_store_replica_leave(s->store);
    cs_store_close(s->store, store_closed_cb, srv);
}

static void rpc_stopped_cb(void *arg)
{
    struct server *srv = arg;
    srv->rpc = NULL;
    cs_local_listen_close(&srv->local);
    if (srv->sched.launcher != NULL)
        cs_launcher_stop(srv->sched.launcher, launcher_stopped_cb, srv);
    else
        launcher_stopped_cb(srv);
}

static void begin_shutdown(struct server *srv, int exit_code)
{
    if (srv->stopping)
        return;
    srv->stopping = true;
    srv->exit_code = exit_code;
    (void)uv_timer_stop(&srv->drain_timer);
    srv->sched.stopping = true;
    cs_worker_stop(&srv->sched);
    cs_api_watch_close_all(&srv->sched);
    cs_api_health_close_all(&srv->sched);
    /* No connection may reach gRPC once its shutdown has begun. */
    cs_local_listen_stop(&srv->local);
    if (srv->rpc != NULL)
        cs_rpc_server_shutdown(srv->rpc, rpc_stopped_cb, srv);
    else
        rpc_stopped_cb(srv);
}

/* --- main ---------------------------------------------------------------- */

static void dir_checked_cb(void *arg, int status)
{
    struct cs_sched *s = arg;
    s->state_dir_status = status;
}

static int sched_init(struct server *srv)
{
    struct cs_sched *s = &srv->sched;
    memset(s, 0, sizeof(*s));
    s->loop = srv->loop;
    s->state_dir = srv->config.state_dir;
    s->minder_path = srv->minder_path;
    s->job_user = srv->config.job_user;
    s->replica_id = srv->config.replica_id;
    s->zones.dir = srv->config.zoneinfo;
    s->max_running = srv->config.max_running;
    s->machine_max_running = srv->config.max_running;
    s->attempt_lease_ms = srv->config.attempt_lease_ms;
    s->lease_path = srv->config.database_url != NULL ? srv->lease.path : NULL;
    /* Blocking file work, once, before the loop runs. */
    cs_limits_probe(&s->cgroups, srv->limits_mechanism, sizeof(srv->limits_mechanism));
    s->limits_mechanism = srv->limits_mechanism;
    s->limits_strict = !srv->config.limits_warn;
    cs_log_info("resource limits: %s; --limits-enforcement %s", s->limits_mechanism,
                s->limits_strict ? "strict" : "warn");
    s->max_streams = srv->config.max_streams;
    s->next_run_id = 1;
    s->next_seq = 1;
    s->next_audit_id = 1;
    s->started_mono_ns = cs_now_mono_ns();
    /* Commands get the server's environment less its settings and database
     * credentials (see cs_env_base_for_jobs). */
    s->base_env = cs_env_base_for_jobs(environ);
    s->server_env = cs_env_copy(environ);
    cs_api_watch_init(s);
    int rc = cs_api_health_init(s, srv->config.max_health_watches);
    if (rc == 0)
        rc = cs_dispatch_init(s, &cs_dispatch_cschedd_ops);
    /* Every replica runs the attempts the active one places on it
     * (docs/design/0036), a standby too: its launch threads start now. */
    if (rc == 0) {
        s->launcher = cs_launcher_start(srv->loop, srv->minder_path, srv->config.launch_threads,
                                        cs_dispatch_launch_done_cb, s);
        rc = s->launcher != NULL ? cs_worker_start(s) : -ENOMEM;
    }
    if (rc == 0 && srv->config.metrics_listen != NULL)
        rc = cs_metrics_start(srv->loop, cs_metrics_sched_gauges_cb, s);
    if (rc == 0)
        rc = cs_dir_check_start(&srv->dir_check, srv->loop, s->state_dir, dir_checked_cb, s);
    return rc;
}

/* The state dir, locked before anything in it is touched (so a second
 * server never reaches the first one's attempts or embedded PostgreSQL),
 * its attempts/ folder, and the minder to run: 0 or a negative errno,
 * logged. */
static int prepare_files(struct server *srv)
{
    char attempts[PATH_MAX];
    struct cs_err err = {0};
    int rc = make_state_dir(srv);
    if (rc == 0 && (snprintf(attempts, sizeof(attempts), "%s/attempts", srv->config.state_dir) >=
                        (int)sizeof(attempts) ||
                    snprintf(srv->embedded_dir, sizeof(srv->embedded_dir), "%s/pg",
                             srv->config.state_dir) >= (int)sizeof(srv->embedded_dir))) {
        cs_log_error("the state dir %s: path too long", srv->config.state_dir);
        rc = -ENAMETOOLONG;
    }
    if (rc == 0 && (rc = cs_state_lock_take(&srv->state_lock, srv->config.state_dir, &err)) != 0)
        cs_log_error("%s", err.msg);
    if (rc == 0 && (rc = cs_state_instance_get(srv->config.state_dir, srv->instance, &err)) != 0)
        cs_log_error("%s", err.msg);
    /* Another replica may take a shared database's work over: the minders
     * then stop at the lease's deadline (docs/operations.md, "Replicas"). */
    if (rc == 0 && srv->config.database_url != NULL &&
        (rc = cs_lease_file_open(&srv->lease, srv->config.state_dir, &err)) != 0)
        cs_log_error("%s", err.msg);
    if (rc == 0)
        rc = make_dir(attempts);
    if (rc == 0)
        rc = find_minder(srv);
    return rc;
}

/* SIGTERM and SIGINT begin the shutdown. 0 or a negative errno from libuv;
 * on failure main returns before the loop runs, so nothing is closed. */
static int watch_signals(struct server *srv)
{
    int rc = uv_signal_init(srv->loop, &srv->sigterm);
    if (rc == 0)
        rc = uv_signal_init(srv->loop, &srv->sigint);
    if (rc == 0)
        rc = uv_timer_init(srv->loop, &srv->drain_timer);
    srv->sigterm.data = srv->sigint.data = srv->drain_timer.data = srv;
    if (rc == 0)
        rc = uv_signal_start(&srv->sigterm, signal_cb, SIGTERM);
    if (rc == 0)
        rc = uv_signal_start(&srv->sigint, signal_cb, SIGINT);
    return rc;
}

/* gRPC, the loop and the scheduler's state on it, and the signals: 0 or a
 * negative errno, logged. */
static int start_loop(struct server *srv)
{
    cs_grpc_locks_unchecked();
    grpc_init();
    srv->loop = uv_default_loop();
    if (srv->loop == NULL) {
        cs_log_error("uv_default_loop() failed");
        return -ENOMEM;
    }
    int rc = sched_init(srv);
    if (rc != 0) {
        cs_log_error("initialising the loop failed: %s", uv_strerror(rc));
        return rc;
    }
    rc = watch_signals(srv);
    if (rc != 0)
        cs_log_error("watching SIGTERM and SIGINT failed: %s", uv_strerror(rc));
    return rc;
}

static void local_handoff_cb(void *ctx, int fd)
{
    struct server *srv = ctx;
    cs_rpc_server_add_fd(srv->rpc, fd);
}

/* The HTTP API's connection: its calls are known by their tokens alone. */
static void http_connect_cb(void *arg, int fd)
{
    struct server *srv = arg;
    cs_auth_http_peer(&srv->auth, fd);
    cs_rpc_server_add_fd(srv->rpc, fd);
}

/* Auth has reread the TLS files: the HTTP API serves the new certificate. */
static void tls_reloaded_cb(void *arg)
{
    struct server *srv = arg;
    cs_http_tls_changed(srv->http);
}

static int start_http(struct server *srv, struct cs_err *err)
{
    const struct cs_config *c = &srv->config;
    srv->http_config = (struct cs_http_config){.listen = c->http_listen,
                                               .loopback = c->http_loopback,
                                               .insecure_tcp = c->insecure_tcp,
                                               .auth = &c->auth,
                                               .console_dir = c->console_dir,
                                               .methods = cs_api_methods,
                                               .n_methods = cs_api_n_methods};
    int rc = cs_http_start(&srv->http_config, http_connect_cb, srv, &srv->http, err);
    /* Every replica of a shared database keeps the sessions there. */
    if (rc == 0 && c->database_url != NULL)
        cs_http_sessions_keep_in(srv->http, c->database_url);
    if (rc == 0) {
        srv->auth.reloaded_cb = tls_reloaded_cb;
        srv->auth.reloaded_arg = srv;
    }
    return rc;
}

/* The unix socket and the gRPC server, bound before the loop runs and the
 * probe starts: making a gRPC server takes tens of milliseconds, which the
 * probe would count against the loop. It serves only once the store is
 * open. 0, or a negative errno once logged (-EADDRNOTAVAIL: gRPC could not
 * bind, and says no more than that). */
static int listen_all(struct server *srv)
{
    const struct cs_config *c = &srv->config;
    struct cs_local_roles roles;
    struct cs_err err = {0};
    int rc = cs_local_roles_init(&roles, c->admin_group, c->operator_group, c->viewer_group, &err);
    if (rc == 0)
        rc = cs_local_listen_open(&srv->local, c->socket_path, &roles, &err);
    if (rc != 0) {
        cs_log_error("%s", err.msg);
        return rc;
    }
    /* Read before the loop runs: gRPC needs the first certificate to bind. */
    rc = cs_auth_start(&srv->auth, srv->loop, &c->auth, &err);
    if (rc != 0) {
        cs_log_error("%s", err.msg);
        goto err_stop_local;
    }
    srv->sources[0] = (struct cs_identity_source){cs_local_listen_identify_cb, &srv->local};
    srv->sources[1] = (struct cs_identity_source){cs_auth_identify_cb, &srv->auth};
    if (c->insecure_tcp && c->listen != NULL)
        cs_log_warn("--insecure-tcp: %s serves without TLS or authentication; anyone who "
                    "reaches it is admin and can run any command as cschedd's user",
                    c->listen);
    struct cs_rpc_listen listen = {
        .tcp_addr = c->listen,
        .tcp_creds = cs_auth_server_credentials(&srv->auth),
        .insecure_tcp = c->insecure_tcp,
        .sources = srv->sources,
        .n_sources = CS_ARRAY_LEN(srv->sources),
    };
    srv->rpc = cs_rpc_server_new(srv->loop, &listen, cs_api_methods, cs_api_n_methods, &srv->sched);
    if (listen.tcp_creds != NULL)
        grpc_server_credentials_release(listen.tcp_creds);
    if (srv->rpc == NULL || cs_rpc_server_port(srv->rpc) == 0) {
        cs_log_error("cannot listen on %s", c->listen != NULL ? c->listen : c->socket_path);
        rc = -EADDRNOTAVAIL;
        goto err_stop_local;
    }
    cs_rpc_server_peers(srv->rpc, c->replica_id, cs_auth_peer_credentials(&srv->auth),
                        cluster_key_cb, srv);
    struct cs_metrics_http_config metrics = {.listen = c->metrics_listen,
                                             .loopback = c->metrics_loopback,
                                             .insecure_tcp = c->insecure_tcp,
                                             .auth = &c->auth};
    if (c->metrics_listen != NULL) {
        rc = cs_metrics_http_start(&metrics, &srv->metrics_http, &err);
        if (rc != 0) {
            cs_log_error("%s", err.msg);
            goto err_stop_local;
        }
    }
    if (c->http_listen != NULL && (rc = start_http(srv, &err)) != 0) {
        cs_log_error("%s", err.msg);
        goto err_stop_local;
    }
    rc = cs_local_listen_start(&srv->local, local_handoff_cb, srv);
    if (rc != 0) {
        cs_log_error("starting the accept thread of %s failed: %s", c->socket_path,
                     uv_strerror(rc));
        goto err_stop_local;
    }
    return 0;

err_stop_local:
    cs_local_listen_stop(&srv->local); /* the socket file goes too */
    return rc;
}

/* Once the loop has stopped: what outlives it, last of all gRPC. The state
 * dir is unlocked once the embedded PostgreSQL has stopped. */
static void release(struct server *srv)
{
    cs_env_free(srv->sched.base_env);
    cs_env_free(srv->sched.server_env);
    if (srv->default_hooks != NULL)
        protobuf_c_message_free_unpacked(&srv->default_hooks->base, NULL);
    cs_state_lock_release(&srv->state_lock);
    cs_lease_file_close(&srv->lease);
    int rc = uv_loop_close(srv->loop);
    if (rc != 0)
        cs_log_warn("stopping: closing the loop failed: %s (handles still open)", uv_strerror(rc));
    cs_metrics_http_stop(srv->metrics_http);
    cs_http_stop(srv->http);
    grpc_shutdown_blocking();
    cs_auth_free(&srv->auth);
    cs_log_info("stopped");
}

/* The embedded database is cschedd's own: libpq and the PostgreSQL programs
 * it runs must take nothing from the caller's PG* variables, and no
 * conninfo overrides some of them (PGSERVICE looks a service up; PGTZ,
 * PGDATESTYLE and PGGEQO become the session's settings; postgres itself
 * reads PGDATESTYLE). So they leave the environment, before any thread
 * starts: unsetenv is not safe beside a getenv. No job is given them
 * anyway (cs_env_base_for_jobs). */
static void drop_libpq_vars(void)
{
    char dropped[512] = "";
    size_t len = 0;

    for (size_t i = 0; environ[i] != NULL;) {
        if (strncmp(environ[i], "PG", 2) != 0) {
            i++;
            continue;
        }
        char *name = cs_xstrdup(environ[i]);
        name[strcspn(name, "=")] = '\0';
        if (len < sizeof(dropped))
            len += (size_t)snprintf(dropped + len, sizeof(dropped) - len, "%s%s",
                                    len > 0 ? " " : "", name);
        /* It fails only for a name with '=' or none: not one of environ's. */
        if (unsetenv(name) != 0)
            i++;
        free(name);
    }
    if (dropped[0] != '\0')
        cs_log_info("the embedded database ignores these variables of cschedd's environment: %s",
                    dropped);
}

/* Puts cschedd ahead of its jobs where it can; it runs either way. Returns
 * the nice value its session has now, for its database backend to share. */
static int set_priority(int nice)
{
    struct cs_err err = {0};
    int rc = cs_priority_set_session_nice(nice, &err);
    if (rc == 0) {
        if (nice != 0)
            cs_log_info("session nice %d: ahead of the jobs' sessions at 0", nice);
        return nice;
    }
    if (rc == -ENOTTY)
        cs_log_info("%s", err.msg);
    else
        cs_log_warn("%s", err.msg);
    return 0;
}

/* The store's log lines join cschedd's, under the component it names. */
static void store_log_cb(void *arg, enum cs_store_log_level level, const char *component,
                         const char *msg)
{
    static const enum cs_log_level levels[] = {
        [CS_STORE_LOG_ERROR] = CS_LOG_ERROR,
        [CS_STORE_LOG_WARN] = CS_LOG_WARN,
        [CS_STORE_LOG_INFO] = CS_LOG_INFO,
        [CS_STORE_LOG_DEBUG] = CS_LOG_DEBUG,
    };

    cs_log_write(levels[level], component, "%s", msg);
}

/* The lease was renewed: the runs held go into the next renewal, and a
 * pump that stopped for a late renewal may start runs again. */
/* The replicas' rows, read by the active replica at each renewal: where
 * attempts may be placed, and which of those placed are lost. */
static void replicas_read_cb(void *arg, int status, Csched__V1__Replica **replicas, size_t n)
{
    struct server *srv = arg;
    if (status == 0 && srv->sched.loaded && !srv->stopping) {
        cs_placement_update(&srv->sched, replicas, n);
        cs_remote_check_lost(&srv->sched);
        cs_pump_kick(&srv->sched);
    }
    cs_store_replicas_free(replicas, n);
}

static void store_renewed_cb(void *arg, int64_t deadline_boot_ns)
{
    struct server *srv = arg;
    if (srv->sched.lease_path != NULL)
        cs_lease_file_set(&srv->lease, deadline_boot_ns);
    if (srv->sched.lease_path != NULL && srv->sched.loaded)
        cs_store_replica_list(srv->sched.store, replicas_read_cb, srv);
    cs_store_replica_set(srv->sched.store, NULL,
                         (int)(placed_here(srv) + cs_worker_held(&srv->sched)));
    cs_pump_kick(&srv->sched);
}

/* Another replica took this one's lease over: nothing it does can be
 * recorded any more, and what it holds in memory is stale. It stops
 * serving (health is NOT_SERVING from now on) and starts again as a new
 * process, which joins with a new epoch. Its minders stop at their lease's
 * deadline, which nothing renews now. */
static void store_fenced_cb(void *arg)
{
    struct server *srv = arg;
    if (srv->stopping || srv->drain_deadline_ms != 0) {
        /* Asked to stop: its work is another replica's already. */
        cs_log_warn("replica %s was fenced while stopping: another replica took its work over",
                    srv->config.replica_id);
        begin_shutdown(srv, 0);
        return;
    }
    cs_log_error("replica %s was fenced (another replica took its lease over): starting again "
                 "with a new epoch",
                 srv->config.replica_id);
    srv->fenced = true;
    begin_shutdown(srv, 1);
}

int main(int argc, char **argv)
{
    /* First of all: main's thread runs the loop, and everything below may
     * reach code that asserts it is on the loop thread. */
    cs_loop_thread_mark();
    /* Before anything secret is read: a process with cschedd's uid (a job
     * run as that user) must not read its environ, memory or fds through
     * /proc or ptrace. The launch thread's minders are exec'd and get their
     * own flag. A failure is only possible on a kernel without prctl. */
    if (prctl(PR_SET_DUMPABLE, 0) != 0) {
        fprintf(stderr, "cschedd: prctl(PR_SET_DUMPABLE, 0): %s\n", strerror(errno));
        return 1;
    }
    /* The process's one server, for its whole life: a start refused after
     * the loop was set up returns with its parts still held, reachable. */
    static struct server srv;
    struct cs_err err = {0};
    if (cs_config_parse(argc, argv, &srv.config, &err) != 0) {
        fprintf(stderr, "cschedd: %s\n", err.msg);
        return 100;
    }
    if (srv.config.help) {
        cs_config_usage(argv[0]);
        return 0;
    }
    cs_log_set_level(srv.config.log_level);
    cs_log_configure(srv.config.log_format, srv.config.log_runs);
    if (srv.config.database_url == NULL)
        drop_libpq_vars();
    /* A client that goes away must not kill the server; SIG_ERR is only for
     * a signal number that does not exist. */
    (void)signal(SIGPIPE, SIG_IGN);
    int session_nice = set_priority(srv.config.nice);
    if (prepare_files(&srv) != 0 || start_loop(&srv) != 0 || cs_log_start() != 0)
        return 1;

    struct cs_store_config store_config = {
        .database_url = srv.config.database_url,
        .embedded_dir = srv.config.database_url == NULL ? srv.embedded_dir : NULL,
        .max_pending_writes = 100000,
        .log_cb = store_log_cb,
        .fenced_cb = store_fenced_cb,
        .fenced_arg = &srv,
        .backend_nice = session_nice,
        .replica_id = srv.config.replica_id,
        .replica_instance = srv.instance,
        .replica_version = CS_VERSION,
        .heartbeat_ms = srv.config.heartbeat_ms,
        .attempt_lease_ms = srv.config.attempt_lease_ms,
        .replica_max_running = srv.config.max_running,
        .poll_only = srv.config.poll_only,
        .renewed_cb = store_renewed_cb,
        .renewed_arg = &srv,
    };
    if (listen_all(&srv) != 0)
        return 1;
    srv.sched.remote_call_cb = remote_call_cb;
    srv.sched.remote_abandon_cb = cs_rpc_unary_abandon;
    srv.sched.relay_cb = relay_cb;
    srv.sched.remote_call_ctx = &srv;
    cs_audit_refusals_start(&srv.audit_refusals, &srv.sched);
    cs_rpc_server_on_refused(srv.rpc, cs_audit_refused_cb, &srv.audit_refusals);
    srv.sched.store = cs_store_new(srv.loop, &store_config);
    if (srv.sched.store == NULL) {
        cs_log_error("the store could not be started");
        return 1;
    }
    struct cs_err hooks_err = {0};
    if (srv.config.default_hooks != NULL &&
        cs_hook_defaults_load(srv.config.default_hooks, &srv.default_hooks, &hooks_err) != 0) {
        cs_log_error("%s", hooks_err.msg);
        return 1;
    }
    struct cs_hooks_config hooks_config = {
        .console_url = srv.config.console_url,
        .retry_base_ms = srv.config.hook_retry_base_ms,
        .user_agent = "csched/" CS_VERSION,
        .defaults = srv.default_hooks,
        .command = {srv.sched.state_dir, srv.sched.minder_path, srv.sched.lease_path,
                    srv.sched.job_user, &srv.sched.cgroups, srv.sched.base_env,
                    srv.sched.server_env},
    };
    if (cs_hooks_init(&srv.hooks, srv.loop, srv.sched.store, &hooks_config, srv.sched.server_env) !=
        0) {
        cs_log_error("the hooks could not be set up");
        return 1;
    }
    srv.sched.run_hook_cb = cs_hooks_run_cb;
    srv.sched.run_hook_ctx = &srv.hooks;
    if (cs_after_init(&srv.after, &srv.sched, (int64_t)srv.config.after_window_s * 1000) != 0) {
        cs_log_error("the dependencies between jobs could not be set up");
        return 1;
    }
    /* Where standbys forward the calls they cannot answer: the first
     * renewal tells them. */
    char address[300];
    served_address(&srv, address, sizeof(address));
    cs_store_replica_set(srv.sched.store,
                         srv.config.advertise != NULL ? srv.config.advertise : address, 0);
    if (cs_store_open(srv.sched.store, store_open_cb, &srv) != 0) {
        cs_log_error("the store could not be started");
        return 1;
    }
    /* Health and the replicas' list are answered from now on, a standby's
     * too; the rest once the state is loaded (gate_cb). */
    cs_rpc_server_gate(srv.rpc, gate_cb, &srv);
    if (cs_rpc_server_serve(srv.rpc) != 0) {
        cs_log_error("cannot serve on %s", srv.local.path);
        return 1;
    }
    /* Started last, just before the loop runs: its first tick must not
     * count the start-up above (the gRPC server, tens of milliseconds, more
     * under the sanitizers) as a stall of the loop. */
    if (cs_probe_start(srv.loop, &srv.sched.probe) != 0) {
        cs_log_error("the loop-lag probe could not be started");
        return 1;
    }

    /* It returns once no handle is left open; uv_loop_close says if one is. */
    (void)uv_run(srv.loop, UV_RUN_DEFAULT);
    release(&srv);
    if (srv.fenced) {
        /* A new process: nothing of the fenced one's memory survives, and
         * no atexit runs, so the log's last lines are written first. */
        cs_log_stop();
        execv("/proc/self/exe", argv);
        cs_log_error("starting again failed: %s", strerror(errno));
    }
    return srv.exit_code;
}
