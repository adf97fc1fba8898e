/* The replicas fixture (see replicas_fixture.h): testpg's cluster, a
 * csched-test-proxy and a testd daemon per replica, an admin connection,
 * the faults and the waits. Test's main thread. */
#include "replicas_fixture.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum {
    START_TIMEOUT_MS = 120000,
    POLL_MS = 20,
    HEALTH_CALL_MS = 1000,
    MAX_ARGS = 24,
};

/* What every replica is started with, kept for restarts. */
struct replica_args {
    const char *argv[MAX_ARGS + 1];
};

struct cs_e2e *cs_replicas_e2e(struct cs_replicas *rs, unsigned i)
{
    return &rs->r[i].e;
}

static int build_args(const struct cs_replicas_options *o, const char *id, struct replica_args *a)
{
    const char *flags[][2] = {{"--replica-id", id},
                              {"--heartbeat", o->heartbeat},
                              {"--attempt-lease", o->attempt_lease},
                              {"--drain-timeout", o->drain_timeout}};
    size_t n = 0;

    for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
        if (flags[f][1] == NULL)
            continue;
        a->argv[n++] = flags[f][0];
        a->argv[n++] = flags[f][1];
    }
    for (size_t k = 0; o->extra_args != NULL && o->extra_args[k] != NULL; k++) {
        if (n == MAX_ARGS) {
            fprintf(stderr, "replicas: more than %d cschedd arguments\n", MAX_ARGS);
            return -E2BIG;
        }
        a->argv[n++] = o->extra_args[k];
    }
    a->argv[n] = NULL;
    return 0;
}

/* start_replica makes replica i's proxy, spawns its daemon (testd copies
 * the options) and makes its client. */
static int start_replica(struct cs_replicas *rs, unsigned i, const struct cs_replicas_options *o)
{
    struct cs_replica *r = &rs->r[i];
    struct replica_args a;
    int rc;

    snprintf(r->id, sizeof(r->id), "r%u", i);
    r->e.pg = rs->pg;
    if ((rc = build_args(o, r->id, &a)) != 0)
        return rc;
    if ((rc = cs_testproxy_start_pg(cs_testpg_url(rs->pg), &r->proxy)) != 0)
        return rc;
    struct cs_testd_options d = {
        .database_url = cs_testproxy_conninfo(r->proxy),
        .max_running = o->max_running != 0 ? o->max_running : CS_E2E_MAX_RUNNING,
        .extra_args = a.argv,
        .no_wait = true,
        .bin_dir = o->bin_dir,
    };
    if ((rc = cs_testd_start(&d, &r->e.d)) != 0)
        return rc;
    return cs_client_new(cs_testd_target(r->e.d), &r->e.client);
}

/* wait_for waits for replica i as wait says. */
static int wait_for(struct cs_replicas *rs, unsigned i, enum cs_replicas_wait wait)
{
    switch (wait) {
    case CS_REPLICAS_WAIT_READY:
        return cs_replicas_wait_ready(rs, i, START_TIMEOUT_MS);
    case CS_REPLICAS_WAIT_UP:
        return cs_replicas_wait_up(rs, i, START_TIMEOUT_MS);
    case CS_REPLICAS_WAIT_NONE:
        break;
    }
    return 0;
}

int cs_replicas_start(const struct cs_replicas_options *opts, struct cs_replicas **out)
{
    struct cs_replicas *rs;
    int rc;

    if (opts->n < 1 || opts->n > CS_REPLICAS_MAX)
        return -EINVAL;
    if ((rs = calloc(1, sizeof(*rs))) == NULL)
        return -ENOMEM;
    if ((rc = cs_testpg_start(&rs->pg)) != 0)
        goto err_stop;
    for (rs->n = 0; rs->n < opts->n; rs->n++)
        if ((rc = start_replica(rs, rs->n, opts)) != 0)
            goto err_stop_last;
    for (unsigned i = 0; i < rs->n; i++)
        if ((rc = wait_for(rs, i, opts->wait)) != 0)
            goto err_stop;
    *out = rs;
    return 0;

err_stop_last:
    rs->n++; /* what the failed start made is stopped with the rest */
err_stop:
    fprintf(stderr, "replicas: start failed: %s\n", strerror(-rc));
    (void)cs_replicas_stop(rs); /* already failing; its status adds nothing */
    return rc;
}

int cs_replicas_stop(struct cs_replicas *rs)
{
    int result = 0;

    if (rs == NULL)
        return 0;
    for (unsigned i = 0; i < rs->n; i++) {
        struct cs_replica *r = &rs->r[i];
        if (r->e.d == NULL)
            continue;
        /* A frozen daemon never sees SIGTERM, and one without its database
         * cannot finish its writes. */
        if (r->stopped)
            (void)cs_replicas_sigcont(rs, i);
        if (r->proxy != NULL)
            (void)cs_testproxy_restore(r->proxy);
    }
    for (unsigned i = 0; i < rs->n; i++) {
        struct cs_replica *r = &rs->r[i];
        cs_client_free(r->e.client);
        if (r->e.d != NULL) {
            int status = cs_testd_stop(r->e.d);
            if (!r->killed && status != 0) {
                fprintf(stderr, "replicas: %s ended with status %d\n", r->id, status);
                if (result == 0)
                    result = status;
            }
        }
        cs_testproxy_stop(r->proxy);
    }
    if (rs->admin != NULL)
        PQfinish(rs->admin);
    cs_testpg_stop(rs->pg);
    free(rs);
    return result;
}

int cs_replicas_kill9(struct cs_replicas *rs, unsigned i)
{
    struct cs_replica *r = &rs->r[i];
    int rc = cs_testd_kill(r->e.d);

    if (rc == 0) {
        r->killed = true;
        r->stopped = false;
    }
    return rc;
}

static int signal_replica(struct cs_replicas *rs, unsigned i, int sig)
{
    pid_t pid = cs_testd_pid(rs->r[i].e.d);

    if (pid <= 0)
        return -ESRCH;
    return kill(pid, sig) == 0 ? 0 : -errno;
}

int cs_replicas_sigstop(struct cs_replicas *rs, unsigned i)
{
    int rc = signal_replica(rs, i, SIGSTOP);

    rs->r[i].stopped |= rc == 0;
    return rc;
}

int cs_replicas_sigcont(struct cs_replicas *rs, unsigned i)
{
    int rc = signal_replica(rs, i, SIGCONT);

    if (rc == 0)
        rs->r[i].stopped = false;
    return rc;
}

int cs_replicas_sigterm(struct cs_replicas *rs, unsigned i)
{
    return signal_replica(rs, i, SIGTERM);
}

int cs_replicas_restart(struct cs_replicas *rs, unsigned i, enum cs_replicas_wait wait)
{
    struct cs_replica *r = &rs->r[i];
    int rc;

    if (r->stopped)
        (void)cs_replicas_sigcont(rs, i);
    struct cs_replica_row row;
    r->epoch_before = cs_replicas_row(rs, i, &row) == 0 ? row.epoch : 0;
    rc = cs_testd_restart(r->e.d);
    if (rc < 0)
        return rc;
    if (rc != 0)
        fprintf(stderr, "replicas: %s ended with status %d before its restart\n", r->id, rc);
    r->killed = false;
    /* A new channel connects at once; the old one would wait out its
     * reconnection backoff. Made before the old is freed, which would
     * otherwise shut gRPC down. */
    struct cs_client *old = r->e.client;
    if ((rc = cs_client_new(cs_testd_target(r->e.d), &r->e.client)) != 0)
        return rc;
    cs_client_free(old);
    return wait_for(rs, i, wait);
}

int cs_replicas_upgrade(struct cs_replicas *rs, unsigned i, const char *bin_dir,
                        enum cs_replicas_wait wait)
{
    int rc = cs_testd_set_bin_dir(rs->r[i].e.d, bin_dir);

    return rc != 0 ? rc : cs_replicas_restart(rs, i, wait);
}

int cs_replicas_cut(struct cs_replicas *rs, unsigned i, enum cs_testproxy_cut mode)
{
    return cs_testproxy_cut(rs->r[i].proxy, mode);
}

int cs_replicas_restore(struct cs_replicas *rs, unsigned i)
{
    return cs_testproxy_restore(rs->r[i].proxy);
}

int cs_replicas_pg_restart(struct cs_replicas *rs)
{
    if (rs->admin != NULL) {
        PQfinish(rs->admin);
        rs->admin = NULL;
    }
    cs_testpg_halt(rs->pg);
    return cs_testpg_resume(rs->pg);
}

PGconn *cs_replicas_admin(struct cs_replicas *rs)
{
    if (rs->admin != NULL && PQstatus(rs->admin) == CONNECTION_OK)
        return rs->admin;
    if (rs->admin != NULL)
        PQfinish(rs->admin);
    rs->admin = PQconnectdb(cs_testpg_url(rs->pg));
    if (PQstatus(rs->admin) == CONNECTION_OK)
        return rs->admin;
    PQfinish(rs->admin);
    rs->admin = NULL;
    return NULL;
}

/* query runs sql with up to one parameter on the admin connection. */
static PGresult *query(struct cs_replicas *rs, const char *sql, const char *param)
{
    PGconn *admin = cs_replicas_admin(rs);

    if (admin == NULL)
        return NULL;
    return PQexecParams(admin, sql, param != NULL, NULL, &param, NULL, NULL, 0);
}

int cs_replicas_sql(struct cs_replicas *rs, const char *sql, char *buf, size_t cap, bool quiet)
{
    PGresult *res = query(rs, sql, NULL);
    int rc = 0;

    buf[0] = '\0';
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        if (!quiet)
            fprintf(stderr, "replicas: %s: %s\n", sql,
                    rs->admin != NULL ? PQerrorMessage(rs->admin) : "no database");
        rc = -EIO;
    } else if (PQntuples(res) == 0) {
        rc = -ENOENT;
    } else {
        snprintf(buf, cap, "%s", PQgetvalue(res, 0, 0));
    }
    PQclear(res);
    return rc;
}

int cs_replicas_row(struct cs_replicas *rs, unsigned i, struct cs_replica_row *row)
{
    PGresult *res = query(rs,
                          "SELECT r.epoch, s.name, r.lease_until > now() FROM replicas r"
                          " JOIN replica_states s USING (state) WHERE r.id = $1",
                          rs->r[i].id);
    int rc = 0;

    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        rc = -EIO;
    } else if (PQntuples(res) == 0) {
        rc = -ENOENT;
    } else {
        row->epoch = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        snprintf(row->state, sizeof(row->state), "%s", PQgetvalue(res, 0, 1));
        row->lease_valid = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
    }
    PQclear(res);
    return rc;
}

int cs_replicas_wait_until(cs_replicas_cond_cb cond_cb, void *arg, int64_t timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms;

    for (;;) {
        if (cond_cb(arg))
            return 0;
        if (cs_test_now_ms() > deadline)
            return -ETIMEDOUT;
        cs_test_sleep_ms(POLL_MS);
    }
}

int cs_replicas_wait_ready(struct cs_replicas *rs, unsigned i, int64_t timeout_ms)
{
    return cs_testd_wait_ready(rs->r[i].e.d, timeout_ms);
}

struct up_wait {
    struct cs_replicas *rs;
    unsigned i;
    bool exited;
};

static bool is_up(void *arg)
{
    struct up_wait *w = arg;
    struct cs_replica_row row;

    if (cs_testd_reap(w->rs->r[w->i].e.d) != -EBUSY) {
        w->exited = true;
        return true;
    }
    /* Before its migrations have run there is no table, and before its
     * join its row is the one of before its restart: not yet. */
    return cs_replicas_row(w->rs, w->i, &row) == 0 && row.epoch > w->rs->r[w->i].epoch_before;
}

int cs_replicas_wait_up(struct cs_replicas *rs, unsigned i, int64_t timeout_ms)
{
    struct up_wait w = {rs, i, false};
    int rc = cs_replicas_wait_until(is_up, &w, timeout_ms);

    if (w.exited) {
        fprintf(stderr, "replicas: %s exited with status %d before it was up\n", rs->r[i].id,
                cs_testd_reap(rs->r[i].e.d));
        return -ECHILD;
    }
    if (rc != 0)
        fprintf(stderr, "replicas: %s runs but has no row in replicas after %lld ms\n", rs->r[i].id,
                (long long)timeout_ms);
    return rc;
}

struct sql_wait {
    struct cs_replicas *rs;
    const char *sql, *want;
    char seen[256];
};

static bool sql_gives(void *arg)
{
    struct sql_wait *w = arg;
    int rc = cs_replicas_sql(w->rs, w->sql, w->seen, sizeof(w->seen), true);

    if (rc == -ENOENT)
        snprintf(w->seen, sizeof(w->seen), "(no row)");
    return rc == 0 && strcmp(w->seen, w->want) == 0;
}

int cs_replicas_wait_sql(struct cs_replicas *rs, const char *sql, const char *want,
                         int64_t timeout_ms)
{
    struct sql_wait w = {.rs = rs, .sql = sql, .want = want};
    int rc = cs_replicas_wait_until(sql_gives, &w, timeout_ms);

    if (rc != 0)
        fprintf(stderr, "replicas: %s gave \"%s\", not \"%s\", for %lld ms\n", sql, w.seen, want,
                (long long)timeout_ms);
    return rc;
}

struct health_wait {
    struct cs_client *client;
    int want, seen;
};

static bool health_is(void *arg)
{
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    Grpc__Health__V1__HealthCheckResponse *resp = NULL;
    struct cs_call_opts opts = {.timeout_ms = HEALTH_CALL_MS};
    struct health_wait *w = arg;

    req.service = "";
    w->seen = -1;
    if (cs_health_check(w->client, &req, &resp, &opts, NULL) != 0)
        return false;
    w->seen = (int)resp->status;
    grpc__health__v1__health_check_response__free_unpacked(resp, NULL);
    return w->seen == w->want;
}

int64_t cs_replicas_wait_health(struct cs_replicas *rs, unsigned i, int want, int64_t timeout_ms)
{
    struct health_wait w = {.client = rs->r[i].e.client, .want = want};
    int64_t t0 = cs_test_now_ms();
    int rc = cs_replicas_wait_until(health_is, &w, timeout_ms);

    if (rc != 0) {
        fprintf(stderr, "replicas: %s health %d (-1: no answer), not %d, for %lld ms\n",
                rs->r[i].id, w.seen, want, (long long)timeout_ms);
        return rc;
    }
    return cs_test_now_ms() - t0;
}

int cs_replicas_active(struct cs_replicas *rs)
{
    char id[32];
    int rc = cs_replicas_sql(rs, "SELECT id FROM replicas WHERE state = 2", id, sizeof(id), true);

    if (rc != 0)
        return rc;
    for (unsigned i = 0; i < rs->n; i++)
        if (strcmp(rs->r[i].id, id) == 0)
            return (int)i;
    return -ENOENT;
}

int cs_replicas_reconnect(struct cs_replicas *rs, unsigned i)
{
    struct cs_replica *r = &rs->r[i];
    struct cs_client *old = r->e.client;
    int rc = cs_client_new(cs_testd_target(r->e.d), &r->e.client);

    /* As in restart: the new one first, so gRPC is not shut down between. */
    if (rc != 0)
        return rc;
    cs_client_free(old);
    return 0;
}

long cs_replicas_log_count(struct cs_replicas *rs, unsigned i, const char *needle)
{
    FILE *f = fopen(cs_testd_log_path(rs->r[i].e.d), "re");
    char line[4096];
    long n = 0;

    if (f == NULL)
        return -errno;
    while (fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

struct active_wait {
    struct cs_replicas *rs;
    int not_i, seen;
};

static bool other_active(void *arg)
{
    struct active_wait *w = arg;

    w->seen = cs_replicas_active(w->rs);
    return w->seen >= 0 && w->seen != w->not_i;
}

int cs_replicas_wait_active(struct cs_replicas *rs, int not_i, int64_t timeout_ms, int64_t *row_ms)
{
    struct active_wait w = {.rs = rs, .not_i = not_i, .seen = -1};
    int64_t t0 = cs_test_now_ms();
    int rc = cs_replicas_wait_until(other_active, &w, timeout_ms);

    if (rc != 0) {
        fprintf(stderr, "replicas: no replica but %d active after %lld ms (last seen: %d)\n", not_i,
                (long long)timeout_ms, w.seen);
        return rc;
    }
    if (row_ms != NULL)
        *row_ms = cs_test_now_ms() - t0;
    unsigned i = (unsigned)w.seen;
    int64_t left = timeout_ms - (cs_test_now_ms() - t0);
    if ((rc = cs_replicas_wait_ready(rs, i, left > 0 ? left : 1)) != 0 ||
        (rc = cs_replicas_reconnect(rs, i)) != 0)
        return rc;
    return (int)i;
}
