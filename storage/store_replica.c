/* The replica: this store's membership among the cschedd replicas sharing
 * the database (docs/architecture.md, "Replicas").
 *
 * At the first connection, after the migrations, the replica joins
 * (csched_join, a simple query outside pipeline mode): it gets its epoch,
 * the fencing token every write batch then carries (store_batch.c puts
 * csched_fence first in each), and its role. From then on a timer renews its
 * lease every heartbeat (csched_renew, an ordinary operation of the queue).
 * The renewal's answer says whether the epoch is still ours (if not, the
 * store is fenced) and what a standby must know of the active replica: a
 * standby takes the active role when nobody has it, or when the active one's
 * lease has run out on the database's clock and its last renewal has not
 * changed for a whole lease on this replica's own clock, counted only
 * while this replica reached the database itself. The second condition
 * rides out a database that was away or frozen: a standby starts counting
 * again when its own renewals come back late, and one reconnecting waits a
 * reconnect backoff longer, the most the active replica may take to
 * reconnect too. Loop thread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_internal.h"

/* A lease lasts this many heartbeats; a replica starts nothing once its
 * last renewal was sent more than MAY_START_HALF_BEATS / 2 heartbeats ago
 * (one renewal missed), well before anyone may take its lease. */
#define LEASE_BEATS 2
#define MAY_START_HALF_BEATS 3

static const char join_sql[] =
    "SELECT epoch, state, prior, (SELECT key FROM cluster_key) FROM csched_join($1, $2, $3,"
    " $4::bigint, $5::bigint, $6::boolean)";

static int64_t lease_ms(const struct cs_store *store)
{
    return LEASE_BEATS * store->replica.heartbeat_ms;
}

static int64_t now_boot_ns(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The replica's commands (a standby's too: the active replica places
 * attempts on every machine) may live until the attempt lease after
 * sent_boot_ns, a moment before the database's now() that set
 * attempts_until. */
static void renewed(struct cs_store_replica *r, int64_t sent_mono_ns, int64_t sent_boot_ns)
{
    r->renewed_mono_ns = sent_mono_ns;
    if (r->renewed_cb != NULL)
        r->renewed_cb(r->renewed_arg, sent_boot_ns + r->attempt_lease_ms * 1000000);
}

int cs_store_join_start(struct cs_store *store, struct cs_store_err *err)
{
    struct cs_store_replica *r = &store->replica;
    char lease[CS_STORE_INT_TEXT], attempts[CS_STORE_INT_TEXT];
    const char *values[6] = {r->id, r->instance, r->version,
                             lease, attempts,    store->embedded_dir != NULL ? "true" : "false"};

    (void)snprintf(lease, sizeof(lease), "%lld", (long long)lease_ms(store));
    (void)snprintf(attempts, sizeof(attempts), "%lld", (long long)r->attempt_lease_ms);
    r->joining = true;
    r->join_sent_mono_ns = cs_store_now_mono_ns();
    r->join_sent_boot_ns = now_boot_ns();
    if (!PQsendQueryParams(store->conn, join_sql, 6, NULL, values, NULL, NULL, 0))
        return cs_store_err_set(err, -ENOTCONN, "%s", PQerrorMessage(store->conn));
    return cs_store_flush_out(store, err);
}

/* The join's one row: epoch, state, prior, the cluster's key. */
static int take_join(struct cs_store *store, const PGresult *res)
{
    struct cs_store_replica *r = &store->replica;
    const char *prior = PQgetvalue(res, 0, 2);

    if (strcmp(prior, "busy") == 0) {
        cs_store_log(&store->log, CS_STORE_LOG_ERROR,
                     "replica id \"%s\" is in use by another cschedd (another state directory) "
                     "whose lease has not run out: give each replica its own --replica-id",
                     r->id);
        return -EBUSY;
    }
    r->epoch = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    r->role =
        strcmp(PQgetvalue(res, 0, 1), "2") == 0 ? CS_STORE_ROLE_ACTIVE : CS_STORE_ROLE_STANDBY;
    r->replaced = strcmp(prior, "replaced") == 0;
    (void)snprintf(r->cluster_key, sizeof(r->cluster_key), "%s", PQgetvalue(res, 0, 3));
    renewed(r, r->join_sent_mono_ns, r->join_sent_boot_ns);
    cs_store_log(&store->log, CS_STORE_LOG_INFO, "replica %s joined with epoch %lld as %s (%s)",
                 r->id, (long long)r->epoch,
                 r->role == CS_STORE_ROLE_ACTIVE ? "the active replica" : "a standby", prior);
    return 0;
}

int cs_store_join_read(struct cs_store *store, bool *done, struct cs_store_err *err)
{
    int rc = 0;

    *done = false;
    while (store->replica.joining && !PQisBusy(store->conn)) {
        PGresult *res = PQgetResult(store->conn);
        char msg[512];

        if (res == NULL) {
            store->replica.joining = false;
            *done = rc == 0;
            return rc;
        }
        if (PQresultStatus(res) == PGRES_FATAL_ERROR && cs_store_is_conn_error(store, res)) {
            cs_store_err_set(err, -ENOTCONN, "%s", PQresultErrorMessage(res));
            PQclear(res);
            return -ENOTCONN;
        }
        if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
            cs_store_oneline(PQresultErrorMessage(res), msg, sizeof(msg));
            cs_store_log(&store->log, CS_STORE_LOG_ERROR, "joining the replicas failed: %s", msg);
            rc = -EIO;
        } else if (rc == 0) {
            rc = take_join(store, res);
        }
        PQclear(res);
    }
    return rc;
}

/* --- renewals -------------------------------------------------------------- */

static void renew_done_cb(struct cs_store_op *op, int status, const PGresult *res);
static void take_over_done_cb(struct cs_store_op *op, int status, const PGresult *res);

static void submit_own(struct cs_store *store, enum cs_store_stmt stmt, cs_store_op_done_cb done_cb)
{
    struct cs_store_op *op = cs_store_op_new(store, stmt, false, done_cb, NULL, store);
    struct cs_store_replica *r = &store->replica;

    cs_store_params_text(&op->params, r->id);
    cs_store_params_int(&op->params, r->epoch);
    if (stmt == CS_STORE_STMT_REPLICA_RENEW) {
        cs_store_params_int(&op->params, lease_ms(store));
        cs_store_params_int(&op->params, r->attempt_lease_ms);
        cs_store_params_int(&op->params, r->runs_held);
        cs_store_params_text(&op->params, r->address);
        cs_store_params_bool(&op->params, strcmp(r->address, r->address_told) != 0);
        cs_store_params_int(&op->params, r->max_running);
        (void)snprintf(r->address_sent, sizeof(r->address_sent), "%s", r->address);
    } else if (stmt == CS_STORE_STMT_REPLICA_TAKE_OVER) {
        cs_store_params_text(&op->params, r->seen_id[0] != '\0' ? r->seen_id : NULL);
        cs_store_params_int(&op->params, r->seen_epoch);
        cs_store_params_int(&op->params, r->attempt_lease_ms);
    }
    /* The minders' deadline counts from before the database's now(). */
    r->renew_sent_mono_ns = cs_store_now_mono_ns();
    r->renew_sent_boot_ns = now_boot_ns();
    r->asking = true;
    cs_store_op_submit(store, op);
}

/* Renews the lease (a standby: and looks at the active replica's). */
static void renew(struct cs_store *store)
{
    struct cs_store_replica *r = &store->replica;

    /* One question at a time; a connection not ready says nothing new. */
    if (r->asking || store->conn_state != CS_STORE_CONN_READY || cs_store_is_closing(store) ||
        store->state == CS_STORE_STATE_FENCED || r->left)
        return;
    submit_own(store, CS_STORE_STMT_REPLICA_RENEW, renew_done_cb);
}

static void beat_cb(uv_timer_t *timer)
{
    renew(timer->data);
}

bool cs_store_replica_listens(const struct cs_store *store)
{
    return store->embedded_dir == NULL && !store->replica.poll_only;
}

void cs_store_replica_woken(struct cs_store *store)
{
    int own = PQbackendPID(store->conn);
    bool woken = false;
    PGnotify *n;

    while ((n = PQnotifies(store->conn)) != NULL) {
        woken |= n->be_pid != own; /* this replica's own change wakes only the others */
        PQfreemem(n);
    }
    if (woken)
        renew(store);
}

void cs_store_replica_start_beats(struct cs_store *store)
{
    uint64_t ms = (uint64_t)store->replica.heartbeat_ms;

    /* After a reconnect the active replica may still be waiting for its
     * own. */
    if (store->replica.beats_started)
        store->replica.watch_from_mono_ns =
            cs_store_now_mono_ns() + (int64_t)CS_STORE_BACKOFF_MAX_MS * 1000000;
    store->replica.beats_started = true;
    /* At once, then every heartbeat: after a reconnect the lease is renewed
     * without waiting for the next beat. Neither fails: the callback is set
     * and the handle open. */
    (void)uv_timer_start(&store->replica.beat_timer, beat_cb, 0, ms);
}

/* A standby's look at the active replica, from a renewal's answer. */
static void observe(struct cs_store *store, const PGresult *res)
{
    struct cs_store_replica *r = &store->replica;
    int64_t now = cs_store_now_mono_ns();
    int64_t quiet_since;
    const char *active = PQgetvalue(res, 0, 2);
    int64_t epoch = cs_store_row_int(res, 0, 3);
    int64_t renewed_us = cs_store_row_int(res, 0, 4);
    bool expired = cs_store_row_bool(res, 0, 5);

    if (cs_store_row_is_null(res, 0, 2)) {
        r->seen_id[0] = '\0';
        r->seen_address[0] = '\0';
        r->seen_epoch = 0;
        submit_own(store, CS_STORE_STMT_REPLICA_TAKE_OVER, take_over_done_cb);
        return;
    }
    (void)snprintf(r->seen_address, sizeof(r->seen_address), "%s",
                   cs_store_row_is_null(res, 0, 7) ? "" : PQgetvalue(res, 0, 7));
    if (strcmp(active, r->seen_id) != 0 || epoch != r->seen_epoch ||
        renewed_us != r->seen_renewed_us) {
        (void)snprintf(r->seen_id, sizeof(r->seen_id), "%s", active);
        r->seen_epoch = epoch;
        r->seen_renewed_us = renewed_us;
        r->seen_since_mono_ns = now;
        return;
    }
    quiet_since = r->seen_since_mono_ns > r->watch_from_mono_ns ? r->seen_since_mono_ns
                                                                : r->watch_from_mono_ns;
    int64_t due_ns = quiet_since + lease_ms(store) * 1000000 - now;
    if (due_ns > 0 && due_ns < r->heartbeat_ms * 1000000) {
        /* Look again when the silence will have lasted a lease, not at the
         * next heartbeat: a takeover up to a heartbeat sooner. Neither
         * fails: the callback is set and the handle open. */
        (void)uv_timer_start(&r->beat_timer, beat_cb, (uint64_t)(due_ns / 1000000) + 1,
                             (uint64_t)r->heartbeat_ms);
        return;
    }
    if (expired && due_ns <= 0) {
        cs_store_log(&store->log, CS_STORE_LOG_WARN,
                     "the active replica %s (epoch %lld) has not renewed its lease for %lld ms: "
                     "taking its work over",
                     r->seen_id, (long long)r->seen_epoch,
                     (long long)((now - quiet_since) / 1000000));
        submit_own(store, CS_STORE_STMT_REPLICA_TAKE_OVER, take_over_done_cb);
    }
}

static void renew_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    struct cs_store *store = op->arg;
    struct cs_store_replica *r = &store->replica;

    r->asking = false;
    if (status != 0 || store->state == CS_STORE_STATE_FENCED)
        return; /* logged by the batch; the next beat asks again */
    if (!cs_store_row_bool(res, 0, 0)) {
        store->fence_cb(store, "a renewal found its lease taken over");
        return;
    }
    renewed(r, r->renew_sent_mono_ns, r->renew_sent_boot_ns);
    (void)snprintf(r->address_told, sizeof(r->address_told), "%s", r->address_sent);
    /* A renewal that took longer than a heartbeat met a database that was
     * not answering: the active replica could not renew either. */
    if (cs_store_now_mono_ns() - r->renew_sent_mono_ns > r->heartbeat_ms * 1000000)
        r->watch_from_mono_ns = cs_store_now_mono_ns();
    if (store->state == CS_STORE_STATE_STANDBY)
        observe(store, res);
}

static void take_over_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    struct cs_store *store = op->arg;
    struct cs_store_replica *r = &store->replica;

    r->asking = false;
    if (status != 0 || store->state != CS_STORE_STATE_STANDBY)
        return;
    if (!cs_store_row_bool(res, 0, 0)) {
        /* Another standby was first, the active one renewed after all, or,
         * with nobody active, a server from before replicas still runs. */
        if (r->seen_id[0] == '\0' && !r->told_legacy)
            cs_store_log(&store->log, CS_STORE_LOG_WARN,
                         "no replica is active, and none may be while a cschedd from before "
                         "replicas holds the database's server lock: stop it, and this replica "
                         "takes its work over");
        r->told_legacy |= r->seen_id[0] == '\0';
        r->seen_since_mono_ns = cs_store_now_mono_ns();
        return;
    }
    cs_store_log(
        &store->log, CS_STORE_LOG_INFO, "replica %s (epoch %lld) is now the active replica%s%s",
        r->id, (long long)r->epoch, r->seen_id[0] != '\0' ? ", taken over from " : "", r->seen_id);
    r->role = CS_STORE_ROLE_ACTIVE;
    renewed(r, r->renew_sent_mono_ns, r->renew_sent_boot_ns);
    r->promoted_cb(store);
}

static void leave_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    struct cs_store *store = op->arg;

    (void)res;
    if (status == 0)
        cs_store_log(&store->log, CS_STORE_LOG_INFO,
                     "replica %s left: its work may be taken over at once", store->replica.id);
}

void cs_store_replica_leave(struct cs_store *store)
{
    struct cs_store_replica *r = &store->replica;
    struct cs_store_op *op;

    if (r->epoch == 0 || r->left)
        return;
    r->left = true;
    (void)uv_timer_stop(&r->beat_timer);
    /* A write, so that the close waits for its commit. */
    op = cs_store_op_new(store, CS_STORE_STMT_REPLICA_LEAVE, true, leave_done_cb, NULL, store);
    cs_store_params_text(&op->params, r->id);
    cs_store_params_int(&op->params, r->epoch);
    cs_store_op_submit(store, op);
}

void cs_store_replica_drain(struct cs_store *store)
{
    struct cs_store_replica *r = &store->replica;
    struct cs_store_op *op;

    CS_STORE_ASSERT_LOOP(store);
    if (r->epoch == 0 || r->role != CS_STORE_ROLE_ACTIVE)
        return;
    op = cs_store_op_new(store, CS_STORE_STMT_REPLICA_DRAIN, true, NULL, NULL, store);
    cs_store_params_text(&op->params, r->id);
    cs_store_params_int(&op->params, r->epoch);
    cs_store_op_submit(store, op);
}

/* --- the public side ------------------------------------------------------- */

bool cs_store_is_active(const struct cs_store *store)
{
    return store->state == CS_STORE_STATE_LIVE && store->replica.role == CS_STORE_ROLE_ACTIVE;
}

bool cs_store_may_start(const struct cs_store *store)
{
    const struct cs_store_replica *r = &store->replica;
    int64_t fresh_ns = MAY_START_HALF_BEATS * r->heartbeat_ms * 1000000 / 2;

    return store->state == CS_STORE_STATE_LIVE && r->role == CS_STORE_ROLE_ACTIVE &&
           cs_store_now_mono_ns() - r->renewed_mono_ns < fresh_ns;
}

bool cs_store_may_run_placed(const struct cs_store *store)
{
    const struct cs_store_replica *r = &store->replica;
    int64_t fresh_ns = MAY_START_HALF_BEATS * r->heartbeat_ms * 1000000 / 2;

    return (store->state == CS_STORE_STATE_STANDBY || store->state == CS_STORE_STATE_LIVE) &&
           cs_store_now_mono_ns() - r->renewed_mono_ns < fresh_ns;
}

void cs_store_replica_set(struct cs_store *store, const char *address, int runs_held)
{
    CS_STORE_ASSERT_LOOP(store);
    if (address != NULL)
        (void)snprintf(store->replica.address, sizeof(store->replica.address), "%s", address);
    store->replica.runs_held = runs_held;
}

void cs_store_replica_set_max_running(struct cs_store *store, uint32_t max_running)
{
    CS_STORE_ASSERT_LOOP(store);
    store->replica.max_running = max_running;
}

void cs_store_replica_get(const struct cs_store *store, struct cs_store_replica_info *info)
{
    const struct cs_store_replica *r = &store->replica;

    info->id = r->id;
    info->epoch = r->epoch;
    info->active = r->role == CS_STORE_ROLE_ACTIVE;
    info->active_id = r->seen_id;
    info->active_address = r->seen_address;
    info->cluster_key = r->cluster_key;
    info->renewed_age_ms =
        r->renewed_mono_ns != 0 ? (cs_store_now_mono_ns() - r->renewed_mono_ns) / 1000000 : -1;
}
