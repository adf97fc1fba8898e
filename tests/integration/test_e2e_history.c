/* History retention in the database (--retention-days, server/host/
 * history.c): runs, their attempts, slots and events that ended before the
 * cutoff are deleted after a restart (the first batch runs shortly after
 * start), aged by SQL here forty days into the past. What must stay stays:
 * a run not ended however old, the latest run of each outcome per job,
 * each job's latest slot, the latest event, and everything younger than
 * the cutoff. GetRun of a deleted run says NOT_FOUND, and a Watch resumed
 * from a seq older than what is kept fails OUT_OF_RANGE naming the oldest
 * seq kept, from which it resumes gap-free. */
#include <errno.h>
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>
#include <dirent.h>

#include "e2e.h"

#define DAY_MS (24LL * 60 * 60 * 1000)
#define AGE_MS (40 * DAY_MS)
#define PURGE_WAIT_MS 30000

static int setup(void **state)
{
    /* A window of an hour: a cause waits that long, and one decided is
     * past it once aged by SQL. */
    static const char *const args[] = {"--retention-days", "30", "--after-window-seconds", "3600",
                                       NULL};

    return cs_e2e_start(state, args);
}

static PGconn *admin(struct cs_e2e *e)
{
    PGconn *conn = PQconnectdb(cs_testpg_url(e->pg));

    if (PQstatus(conn) != CONNECTION_OK)
        fail_msg("connect: %s", PQerrorMessage(conn));
    return conn;
}

static void sql(PGconn *conn, const char *query)
{
    PGresult *res = PQexec(conn, query);
    ExecStatusType st = PQresultStatus(res);

    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        fail_msg("%s: %s", query, PQresultErrorMessage(res));
    PQclear(res);
}

static long long sql_int(PGconn *conn, const char *query)
{
    PGresult *res = PQexec(conn, query);

    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
        fail_msg("%s: %s", query, PQresultErrorMessage(res));
    long long v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return v;
}

static void run_n(struct cs_e2e *e, const char *job, int n, int64_t *ids)
{
    for (int i = 0; i < n; i++) {
        ids[i] = cs_e2e_trigger(e, job);
        csched__v1__run__free_unpacked(cs_e2e_wait_end(e, ids[i]), NULL);
    }
}

static void assert_run_gone(struct cs_e2e *e, int64_t id)
{
    Csched__V1__GetRunRequest req = CSCHED__V1__GET_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};

    req.run_id = id;
    cs_e2e_assert_status(cs_scheduler_get_run(e->client, &req, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, "");
}

/* The first event a Watch after after_seq gives, or the status it ended
 * with in *code. */
static int64_t first_watched(struct cs_e2e *e, int64_t after_seq, int *code, char *why, size_t cap)
{
    struct cs_call_opts opts = {.timeout_ms = 5000};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    Csched__V1__WatchResponse *batch = NULL;
    struct cs_stream *s = NULL;
    struct cs_status st = {0};
    int64_t seq = 0;

    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = after_seq;
    *code = cs_scheduler_watch(e->client, &req, &s, &opts, &st);
    if (*code == 0) {
        if (cs_scheduler_watch_next(s, &batch, &st) == 1) {
            seq = batch->events[0]->seq;
            csched__v1__watch_response__free_unpacked(batch, NULL);
        } else {
            *code = (int)st.code;
        }
        cs_stream_free(s);
    }
    (void)snprintf(why, cap, "%s", st.message);
    return seq;
}

static void cancel(struct cs_e2e *e, int64_t id)
{
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};

    req.run_id = id;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &req, &run, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, id), NULL);
}

struct purged {
    PGconn *conn;
};

static bool runs_purged(void *arg)
{
    struct purged *p = arg;

    return sql_int(p->conn, "SELECT count(*) FROM runs WHERE job_name = 'hist-ok'") == 1;
}

static void test_e2e_history_purge(void **state)
{
    struct cs_e2e *e = *state;
    int64_t ok[4], bad[2], young[1];
    PGconn *conn = admin(e);

    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "hist-ok", "true"), NULL);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "hist-bad", "exit 3"), NULL);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "hist-long", "sleep 600"), NULL);
    run_n(e, "hist-ok", 4, ok);
    run_n(e, "hist-bad", 2, bad);
    int64_t running = cs_e2e_trigger(e, "hist-long");
    csched__v1__run__free_unpacked(cs_e2e_wait_state(e, running,
                                                     CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING,
                                                     CS_E2E_RUN_TIMEOUT_MS),
                                   NULL);
    /* Everything so far ended forty days ago; the running one was made
     * then; the last two events stay young. Then one run ends now. */
    char q[512];
    (void)snprintf(q, sizeof(q),
                   "UPDATE runs SET created_unix_ms = created_unix_ms - %lld,"
                   " ended_unix_ms = CASE WHEN ended_unix_ms > 0 THEN ended_unix_ms - %lld"
                   " ELSE 0 END",
                   AGE_MS, AGE_MS);
    sql(conn, q);
    (void)snprintf(q, sizeof(q),
                   "UPDATE events SET at_unix_ms = at_unix_ms - %lld"
                   " WHERE seq < (SELECT max(seq) - 1 FROM events)",
                   AGE_MS);
    sql(conn, q);
    (void)snprintf(q, sizeof(q),
                   "INSERT INTO slots (job_name, slot_unix_ms, outcome, skip_reason, due_unix_ms,"
                   " decided_unix_ms) SELECT 'hist-ok', t, 2, 1, t, t FROM (VALUES"
                   " ((extract(epoch FROM now()) * 1000)::bigint - %lld),"
                   " ((extract(epoch FROM now()) * 1000)::bigint - %lld)) AS v(t)",
                   AGE_MS, AGE_MS - DAY_MS);
    sql(conn, q);
    run_n(e, "hist-ok", 1, young);
    long long events_before = sql_int(conn, "SELECT count(*) FROM events");

    /* The first batch runs shortly after the start. */
    assert_int_equal(cs_testd_restart(e->d), 0);
    struct purged p = {conn};
    int64_t t0 = cs_test_now_ms();
    while (!runs_purged(&p)) {
        if (cs_test_now_ms() - t0 > PURGE_WAIT_MS)
            fail_msg("hist-ok still has %lld runs %d ms after the restart",
                     sql_int(conn, "SELECT count(*) FROM runs WHERE job_name = 'hist-ok'"),
                     PURGE_WAIT_MS);
        cs_test_sleep_ms(50);
    }

    /* hist-ok: every old run went, the last of them too, since the young
     * one is its latest SUCCEEDED now. */
    (void)snprintf(q, sizeof(q), "SELECT count(*) FROM runs WHERE id IN (%lld, %lld, %lld, %lld)",
                   (long long)ok[0], (long long)ok[1], (long long)ok[2], (long long)ok[3]);
    assert_int_equal(sql_int(conn, q), 0);
    /* hist-bad: its latest FAILED run stays, however old. */
    (void)snprintf(q, sizeof(q), "SELECT count(*) FROM runs WHERE id = %lld", (long long)bad[1]);
    assert_int_equal(sql_int(conn, q), 1);
    (void)snprintf(q, sizeof(q), "SELECT count(*) FROM runs WHERE id = %lld", (long long)bad[0]);
    assert_int_equal(sql_int(conn, q), 0);
    (void)snprintf(q, sizeof(q), "SELECT count(*) FROM attempts WHERE run_id = %lld",
                   (long long)bad[0]);
    assert_int_equal(sql_int(conn, q), 0);
    /* Not ended: stays however old. Young: stays. */
    (void)snprintf(q, sizeof(q), "SELECT count(*) FROM runs WHERE id IN (%lld, %lld)",
                   (long long)running, (long long)young[0]);
    assert_int_equal(sql_int(conn, q), 2);
    /* The job's latest slot stays. */
    assert_int_equal(sql_int(conn, "SELECT count(*) FROM slots WHERE job_name = 'hist-ok'"), 1);
    long long oldest = sql_int(conn, "SELECT min(seq) FROM events");
    fprintf(stderr, "events: %lld before, %lld kept from seq %lld\n", events_before,
            sql_int(conn, "SELECT count(*) FROM events"), oldest);
    assert_true(oldest > 1);

    assert_run_gone(e, ok[0]);
    assert_run_gone(e, bad[0]);
    Csched__V1__Run *kept = cs_e2e_get_run(e, bad[1]);
    assert_int_equal(kept->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    csched__v1__run__free_unpacked(kept, NULL);

    int code;
    char why[600];
    assert_int_equal(first_watched(e, 0, &code, why, sizeof(why)), 0);
    assert_int_equal(code, GRPC_STATUS_OUT_OF_RANGE);
    char want[64];
    (void)snprintf(want, sizeof(want), "after_seq=%lld", oldest - 1);
    if (strstr(why, want) == NULL)
        fail_msg("Watch from 0: \"%s\", want it to name %s", why, want);
    assert_int_equal(first_watched(e, oldest - 1, &code, why, sizeof(why)), oldest);
    cancel(e, running);
    PQfinish(conn);
}

/* A backfill of slots older than the history kept would make their runs
 * again: refused, naming where the history starts. */
static void test_e2e_history_backfill_past_retention(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job = cs_e2e_scheduled_job("hist-daily", "@daily", "");
    Csched__V1__BackfillJobRequest req = CSCHED__V1__BACKFILL_JOB_REQUEST__INIT;
    Csched__V1__BackfillJobResponse *resp = NULL;
    struct cs_status st = {0};
    int64_t now = (int64_t)time(NULL) * 1000;

    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    req.name = "hist-daily";
    req.from_unix_ms = now - AGE_MS;
    req.to_unix_ms = now - 20 * DAY_MS;
    cs_e2e_assert_status(cs_scheduler_backfill_job(e->client, &req, &resp, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_OUT_OF_RANGE, "--retention-days 30");
    req.from_unix_ms = now - 20 * DAY_MS;
    req.to_unix_ms = now - 19 * DAY_MS;
    assert_int_equal(cs_scheduler_backfill_job(e->client, &req, &resp, cs_e2e_opts(), &st), 0);
    csched__v1__backfill_job_response__free_unpacked(resp, NULL);
}

/* A job with limits of its own (csched.v1.History). */
static void create_limited(struct cs_e2e *e, const char *name, const char *shell,
                           uint32_t keep_succeeded, uint32_t keep_failed, uint32_t ttl_s)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__History history = CSCHED__V1__HISTORY__INIT;

    job.name = (char *)name;
    job.shell = (char *)shell;
    history.keep_succeeded = keep_succeeded;
    history.keep_failed = keep_failed;
    history.ttl_seconds_after_finished = ttl_s;
    job.history = &history;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
}

static long long runs_of(PGconn *conn, const char *job)
{
    char q[160];

    (void)snprintf(q, sizeof(q), "SELECT count(*) FROM runs WHERE job_name = '%s'", job);
    return sql_int(conn, q);
}

struct job_runs {
    PGconn *conn;
    const char *job;
    long long want;
};

static bool job_runs_are(void *arg)
{
    struct job_runs *w = arg;

    return runs_of(w->conn, w->job) == w->want;
}

static void wait_job_runs(PGconn *conn, const char *job, long long want)
{
    struct job_runs w = {conn, job, want};
    int64_t t0 = cs_test_now_ms();

    while (!job_runs_are(&w)) {
        if (cs_test_now_ms() - t0 > PURGE_WAIT_MS)
            fail_msg("%s has %lld runs, want %lld", job, runs_of(conn, job), want);
        cs_test_sleep_ms(50);
    }
}

/* Each job's own limits: the newest N SUCCEEDED, the newest M of the
 * other outcomes, none older than its TTL but the latest of each outcome;
 * a job without limits keeps all its young runs. */
static void test_e2e_history_job_limits(void **state)
{
    struct cs_e2e *e = *state;
    int64_t ok[5], bad[3], ttl[3], free_runs[3];
    PGconn *conn = admin(e);
    char q[200];

    create_limited(e, "keep-ok", "true", 2, 0, 0);
    create_limited(e, "keep-bad", "exit 4", 0, 1, 0);
    create_limited(e, "keep-ttl", "true", 0, 0, 1);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "keep-all", "true"), NULL);
    run_n(e, "keep-ok", 5, ok);
    run_n(e, "keep-bad", 3, bad);
    run_n(e, "keep-ttl", 3, ttl);
    run_n(e, "keep-all", 3, free_runs);

    /* The first round comes shortly after the start. */
    assert_int_equal(cs_testd_restart(e->d), 0);
    wait_job_runs(conn, "keep-ok", 2);
    wait_job_runs(conn, "keep-bad", 1);
    wait_job_runs(conn, "keep-ttl", 1);
    (void)snprintf(q, sizeof(q), "SELECT count(*) FROM runs WHERE id IN (%lld, %lld, %lld, %lld)",
                   (long long)ok[3], (long long)ok[4], (long long)bad[2], (long long)ttl[2]);
    assert_int_equal(sql_int(conn, q), 4);
    assert_int_equal(runs_of(conn, "keep-all"), 3);
    assert_run_gone(e, ok[0]);
    assert_run_gone(e, bad[1]);
    assert_run_gone(e, ttl[0]);
    PQfinish(conn);
}

/* A job with limits of its own, after up (on), with a command hook on
 * its runs' success (hook_shell, NULL for none). */
static void create_after(struct cs_e2e *e, const char *name, const char *up,
                         Csched__V1__DependencyOn on, uint32_t keep_succeeded,
                         const char *hook_shell)
{
    static const Csched__V1__HookEvent succeeded[] = {CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED};
    Csched__V1__Job *job = cs_e2e_hook_job(name, "true", "cmd", succeeded, 1);
    Csched__V1__History history = CSCHED__V1__HISTORY__INIT;
    Csched__V1__Dependency dep = CSCHED__V1__DEPENDENCY__INIT, *deps[] = {&dep};

    if (hook_shell != NULL) {
        job->hooks[0]->shell = strdup(hook_shell);
        job->hooks[0]->max_attempts = 100;
    } else {
        job->n_hooks = 0;
    }
    dep.job = (char *)up;
    dep.on = on;
    if (up != NULL) {
        job->after = deps;
        job->n_after = 1;
    }
    history.keep_succeeded = keep_succeeded;
    job->history = keep_succeeded > 0 ? &history : NULL;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    job->after = NULL;
    job->n_after = 0;
    job->history = NULL;
    if (hook_shell == NULL)
        job->n_hooks = 1;
    csched__v1__job__free_unpacked(job, NULL);
}

static void wait_sql(PGconn *conn, const char *query, long long want)
{
    int64_t t0 = cs_test_now_ms();

    while (sql_int(conn, query) != want) {
        if (cs_test_now_ms() - t0 > PURGE_WAIT_MS)
            fail_msg("%s gives %lld, want %lld", query, sql_int(conn, query), want);
        cs_test_sleep_ms(50);
    }
}

/* sql_int of a query made by printf into buf. */
#define SQL_INTF(conn, buf, ...) ((void)snprintf(buf, sizeof(buf), __VA_ARGS__), sql_int(conn, buf))

/* The directories of delivery id's attempts in STATE_DIR/hooks. */
static int hook_dirs_of(struct cs_e2e *e, long long id)
{
    char path[4200], prefix[64];
    int n = 0;

    (void)snprintf(path, sizeof(path), "%s/hooks", cs_testd_state_dir(e->d));
    (void)snprintf(prefix, sizeof(prefix), "%lld-", id);
    DIR *dir = opendir(path);
    if (dir == NULL)
        return 0;
    for (struct dirent *d; (d = readdir(dir)) != NULL;)
        n += strncmp(d->d_name, prefix, strlen(prefix)) == 0;
    (void)closedir(dir);
    return n;
}

#define CAUSE_OF                                                                                   \
    "SELECT count(*) FROM dependency_causes WHERE job_name = '%s' AND cause = 'run:%lld'"

/* Dependency causes and command hooks' directories go with the rest of a
 * job's history: a cause with the run it made (down: past its limit of
 * one), a cause that made none with an upstream run it records (down-fail,
 * when up's runs go past up's limit), a cause by age (down2's first), a
 * cause whose run went while it was within the window, found by the walk
 * (down2's second, its run deleted by SQL); never a cause still waiting
 * (fan, after up and never, which never runs), nor one decided within the
 * window of --after-window-seconds (down's second), nor one that made a
 * run still kept. The decided causes are aged past the window by SQL. A delivery's directory goes
 * with its row, deleted with its run; a run whose delivery is still pending (pend's, its command
 * failing and retried) stays, and so do the delivery and its directory. */
static void test_e2e_history_causes_and_hook_dirs(void **state)
{
    struct cs_e2e *e = *state;
    PGconn *conn = admin(e);
    int64_t up[3], pend[2];
    char q[400];
    long long down_runs[3], deliveries[3];

    create_after(e, "up", NULL, 0, 1, NULL);
    create_after(e, "down", "up", CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED, 1, "true");
    create_after(e, "down-fail", "up", CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_FAILED, 0, NULL);
    create_after(e, "down2", "up", CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED, 0, NULL);
    create_after(e, "never", NULL, 0, 0, NULL);
    Csched__V1__Job fan = CSCHED__V1__JOB__INIT;
    Csched__V1__Dependency d1 = CSCHED__V1__DEPENDENCY__INIT, d2 = CSCHED__V1__DEPENDENCY__INIT;
    Csched__V1__Dependency *fan_deps[] = {&d1, &d2};
    d1.job = "up";
    d2.job = "never";
    fan.name = "fan";
    fan.shell = "true";
    fan.after = fan_deps;
    fan.n_after = 2;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &fan), NULL);
    create_after(e, "pend", NULL, 0, 1, "exit 1");

    for (int i = 0; i < 3; i++) {
        run_n(e, "up", 1, &up[i]);
        (void)snprintf(q, sizeof(q),
                       "SELECT count(*) FROM hook_deliveries h JOIN dependency_causes c"
                       " ON c.run_id = h.run_id WHERE c.job_name = 'down' AND c.cause = 'run:%lld'"
                       " AND h.status = 2",
                       (long long)up[i]);
        wait_sql(conn, q, 1);
        (void)snprintf(
            q, sizeof(q),
            "SELECT count(*) FROM runs r JOIN dependency_causes c ON c.run_id = r.id"
            " WHERE c.job_name = 'down2' AND c.cause = 'run:%lld' AND r.ended_unix_ms > 0",
            (long long)up[i]);
        wait_sql(conn, q, 1);
        down_runs[i] = SQL_INTF(conn, q,
                                "SELECT run_id FROM dependency_causes WHERE job_name = 'down'"
                                " AND cause = 'run:%lld'",
                                (long long)up[i]);
        deliveries[i] =
            SQL_INTF(conn, q, "SELECT id FROM hook_deliveries WHERE run_id = %lld", down_runs[i]);
        assert_int_equal(hook_dirs_of(e, deliveries[i]), 1);
    }
    wait_sql(conn,
             "SELECT count(*) FROM dependency_causes WHERE outcome = 3"
             " AND job_name = 'down-fail'",
             3);
    assert_int_equal(sql_int(conn, "SELECT count(*) FROM dependency_causes WHERE outcome = 1"
                                   " AND job_name = 'fan'"),
                     3);
    run_n(e, "pend", 2, pend);
    long long pend_delivery =
        SQL_INTF(conn, q, "SELECT id FROM hook_deliveries WHERE run_id = %lld", (long long)pend[0]);
    /* The job's deliveries go in order: the first one's command fails
     * again and again, and the second waits behind it. */
    (void)snprintf(q, sizeof(q),
                   "SELECT count(*) FROM hook_deliveries WHERE id = %lld AND attempts > 0",
                   pend_delivery);
    wait_sql(conn, q, 1);
    assert_true(hook_dirs_of(e, pend_delivery) >= 1);

    /* Every decided cause past the window but down's of up[1]; down2's
     * first past --retention-days too, and its second's run gone while
     * the cause was within the window. */
    (void)snprintf(q, sizeof(q),
                   "UPDATE dependency_causes SET decided_unix_ms = decided_unix_ms - %lld"
                   " WHERE outcome <> 1 AND NOT (job_name = 'down' AND cause = 'run:%lld')",
                   2 * 3600 * 1000LL, (long long)up[1]);
    sql(conn, q);
    (void)snprintf(q, sizeof(q),
                   "UPDATE dependency_causes SET decided_unix_ms = decided_unix_ms - %lld"
                   " WHERE job_name = 'down2' AND cause = 'run:%lld'",
                   AGE_MS, (long long)up[0]);
    sql(conn, q);
    (void)snprintf(q, sizeof(q),
                   "DELETE FROM runs WHERE id = (SELECT run_id FROM dependency_causes"
                   " WHERE job_name = 'down2' AND cause = 'run:%lld')",
                   (long long)up[1]);
    sql(conn, q);

    assert_int_equal(cs_testd_restart(e->d), 0);
    wait_job_runs(conn, "down", 1);
    wait_job_runs(conn, "up", 1);
    wait_sql(conn, "SELECT count(*) FROM dependency_causes WHERE job_name = 'down2'", 1);

    /* down: the causes and directories of its two runs deleted went, but
     * the cause still within the window. */
    for (int i = 0; i < 3; i++) {
        long long want = i == 2;
        assert_int_equal(
            SQL_INTF(conn, q, "SELECT count(*) FROM runs WHERE id = %lld", down_runs[i]), want);
        (void)snprintf(q, sizeof(q), CAUSE_OF, "down", (long long)up[i]);
        wait_sql(conn, q, want || i == 1);
        (void)snprintf(q, sizeof(q), CAUSE_OF, "down-fail", (long long)up[i]);
        wait_sql(conn, q, want);
        (void)snprintf(q, sizeof(q), CAUSE_OF, "fan", (long long)up[i]);
        assert_int_equal(sql_int(conn, q), 1);
        (void)snprintf(q, sizeof(q), "SELECT count(*) FROM hook_deliveries WHERE id = %lld",
                       deliveries[i]);
        assert_int_equal(sql_int(conn, q), want);
        int64_t t0 = cs_test_now_ms();
        while (hook_dirs_of(e, deliveries[i]) != want) {
            if (cs_test_now_ms() - t0 > PURGE_WAIT_MS)
                fail_msg("delivery %lld has %d directories, want %lld", deliveries[i],
                         hook_dirs_of(e, deliveries[i]), want);
            cs_test_sleep_ms(50);
        }
    }
    /* down2: the cause whose run is kept stays. */
    (void)snprintf(q, sizeof(q), CAUSE_OF, "down2", (long long)up[2]);
    assert_int_equal(sql_int(conn, q), 1);
    /* pend: both runs, the pending delivery and its directory stay. */
    assert_int_equal(runs_of(conn, "pend"), 2);
    assert_int_equal(
        SQL_INTF(conn, q, "SELECT count(*) FROM hook_deliveries WHERE id = %lld", pend_delivery),
        1);
    assert_true(hook_dirs_of(e, pend_delivery) >= 1);
    PQfinish(conn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_history_purge),
        cmocka_unit_test(test_e2e_history_backfill_past_retention),
        cmocka_unit_test(test_e2e_history_job_limits),
        cmocka_unit_test(test_e2e_history_causes_and_hook_dirs),
    };

    return cmocka_run_group_tests(tests, setup, cs_e2e_teardown);
}
