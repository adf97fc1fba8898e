/* Three replicas and a schedule that fires every second, while the active
 * replica is lost in turn for a minute: killed with kill -9 or stopped
 * with SIGTERM (a drain), restarted as a standby each time, so that every
 * replica holds the schedule in its turn. Afterwards every second of the
 * window has exactly one slot row (the misfire policy, RUN_ALL, fires the
 * seconds a takeover missed), every started slot has its own run, and the
 * oracles saw each slot's command executed once: twice only for a run
 * whose first attempt was LOST with its replica (it may have run; the
 * retry is the at-least-once the loss of a machine leaves), and never two
 * attempts of one run at once. The takeovers and the slots are printed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "replicas_runs.h"

#define CHURN_MS 60000
/* Slots the new active replica must fire after a takeover before the next
 * loss: the schedule is seen moving on each holder. */
#define SLOTS_PER_TURN 3
#define SLOT_WAIT_MS 15000
#define COMMAND_BYTES 4096

static int group_setup(void **state)
{
    return cs_rruns_setup(state, 3, "10s");
}

/* The job: the oracles' `true` every second, catching up every missed
 * second, one attempt more for a run lost with its replica. */
static void create_every_second(struct cs_rruns_suite *f, unsigned i, char *name, size_t size)
{
    char command[COMMAND_BYTES];

    cs_e2e_name(name, size, "churn");
    assert_int_equal(cs_oracle_command(&f->oracle, name, 2, "true", command, sizeof(command)), 0);
    Csched__V1__Job *job = cs_e2e_scheduled_job(name, "* * * * * *", "");
    free(job->shell);
    job->shell = strdup(command);
    job->max_running = 2;
    job->max_attempts = CS_RRUNS_MAX_ATTEMPTS;
    job->kill_grace_seconds = CS_RRUNS_KILL_GRACE_S;
    job->schedule->misfire = CSCHED__V1__MISFIRE__MISFIRE_RUN_ALL;
    job->schedule->max_catchup = 60;
    csched__v1__job__free_unpacked(cs_e2e_create_job(cs_replicas_e2e(f->rs, i), job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
}

static long slot_count(struct cs_rruns_suite *f, const char *job)
{
    char sql[256], buf[32];

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM slots WHERE job_name = '%s'", job);
    assert_int_equal(cs_replicas_sql(f->rs, sql, buf, sizeof(buf), false), 0);
    return atol(buf);
}

struct slots_past {
    struct cs_rruns_suite *f;
    const char *job;
    long want;
};

static bool slots_reached(void *arg)
{
    struct slots_past *w = arg;

    return slot_count(w->f, w->job) >= w->want;
}

/* Waits until the schedule has fired n more slots. */
static void wait_slots(struct cs_rruns_suite *f, const char *job, long n)
{
    long before = slot_count(f, job);
    struct slots_past w = {f, job, before + n};

    if (cs_replicas_wait_until(slots_reached, &w, SLOT_WAIT_MS) != 0)
        fail_msg("the schedule fired %ld slots in %d ms, want %ld", slot_count(f, job) - before,
                 SLOT_WAIT_MS, n);
}

/* Loses the active replica a (kill -9 on even turns, a drain on odd
 * ones), waits for another to take over, restarts a as a standby; returns
 * the new active one. */
static unsigned lose_active(struct cs_rruns_suite *f, unsigned a, unsigned turn)
{
    int64_t t0 = cs_test_now_ms(), row_ms;

    if (turn % 2 == 0) {
        assert_int_equal(cs_replicas_kill9(f->rs, a), 0);
    } else {
        assert_int_equal(cs_replicas_sigterm(f->rs, a), 0);
    }
    unsigned b = cs_rruns_active(f, (int)a, &row_ms);
    fprintf(stderr, "turn %u: %s of %s, %s active after %lld ms (row), serving after %lld ms\n",
            turn, turn % 2 == 0 ? "kill -9" : "SIGTERM", f->rs->r[a].id, f->rs->r[b].id,
            (long long)row_ms, (long long)(cs_test_now_ms() - t0));
    assert_int_equal(cs_replicas_restart(f->rs, a, CS_REPLICAS_WAIT_UP), 0);
    return b;
}

/* Pauses the job, so that no slot comes after the window. */
static void pause_job(struct cs_rruns_suite *f, unsigned i, const char *name)
{
    Csched__V1__PauseJobRequest req = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL;
    struct cs_status st = {0};

    req.name = (char *)name;
    if (cs_scheduler_pause_job(cs_replicas_e2e(f->rs, i)->client, &req, &job, cs_e2e_opts(), &st) !=
        0)
        fail_msg("PauseJob: %s \"%s\"", cs_status_code_name(st.code), st.message);
    csched__v1__job__free_unpacked(job, NULL);
}

/* Every second between the first slot and the last has one row. */
static void assert_slots_contiguous(struct cs_rruns_suite *f, const char *job)
{
    char sql[512], buf[64];

    snprintf(sql, sizeof(sql),
             "SELECT count(*) || ' ' || ((max(slot_unix_ms) - min(slot_unix_ms)) / 1000 + 1)"
             " || ' ' || count(*) FILTER (WHERE outcome = 1)"
             " || ' ' || count(DISTINCT run_id) FILTER (WHERE outcome = 1)"
             " FROM slots WHERE job_name = '%s'",
             job);
    assert_int_equal(cs_replicas_sql(f->rs, sql, buf, sizeof(buf), false), 0);
    long rows, seconds, started, runs;
    assert_int_equal(sscanf(buf, "%ld %ld %ld %ld", &rows, &seconds, &started, &runs), 4);
    fprintf(stderr, "%ld slot rows over %ld seconds, %ld started with %ld runs\n", rows, seconds,
            started, runs);
    assert_int_equal(rows, seconds);
    assert_int_equal(started, runs);
    assert_true(started >= CHURN_MS / 1000 / 2);
}

/* The started slots' run ids, oldest first; *n gets their number. */
static int64_t *started_runs(struct cs_rruns_suite *f, const char *job, size_t *n)
{
    char sql[256];

    snprintf(sql, sizeof(sql),
             "SELECT run_id FROM slots WHERE job_name = '%s' AND outcome = 1 ORDER BY slot_unix_ms",
             job);
    PGresult *res = PQexec(cs_replicas_admin(f->rs), sql);
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    *n = (size_t)PQntuples(res);
    int64_t *ids = calloc(*n + 1, sizeof(*ids));
    assert_non_null(ids);
    for (size_t k = 0; k < *n; k++)
        ids[k] = strtoll(PQgetvalue(res, (int)k, 0), NULL, 10);
    PQclear(res);
    return ids;
}

/* Waits for the runs of the started slots to end: a pause takes back a
 * launch held for its due time, and its slot becomes skipped (PAUSED) as
 * its run ends, after the pause's reply. */
static void wait_runs_ended(struct cs_rruns_suite *f, unsigned i, const char *job)
{
    size_t n;
    int64_t *ids = started_runs(f, job, &n);

    for (size_t k = 0; k < n; k++)
        csched__v1__run__free_unpacked(cs_rruns_wait_end(f->rs, i, ids[k], CS_RRUNS_END_MS), NULL);
    free(ids);
}

static size_t lost_attempts(const Csched__V1__Run *run)
{
    size_t n = 0;

    for (size_t k = 0; k < run->n_attempts; k++)
        n += run->attempts[k]->state == CSCHED__V1__RUN_STATE__RUN_STATE_LOST;
    return n;
}

/* Each started slot's run ended, and its command ran once (or, after a
 * lost attempt, at most max_attempts times), never twice at once. */
static void assert_each_ran_once(struct cs_rruns_suite *f, unsigned i, const char *job)
{
    size_t n, retried = 0;
    int64_t *ids = started_runs(f, job, &n);

    for (size_t k = 0; k < n; k++) {
        Csched__V1__Run *run = cs_rruns_wait_end(f->rs, i, ids[k], CS_RRUNS_END_MS);
        struct cs_oracle_run seen;
        size_t lost = lost_attempts(run);

        assert_int_equal(cs_oracle_run(&f->oracle, ids[k], &seen), 0);
        if (seen.overlap)
            fail_msg("run %lld: %s", (long long)ids[k], seen.why);
        if (lost == 0 && seen.executions != 1)
            fail_msg("run %lld (%s, no attempt lost) executed %u times", (long long)ids[k],
                     csched__v1__run_state__descriptor.values[run->state].name, seen.executions);
        if (lost > 0) {
            retried++;
            assert_in_range(seen.executions, 1, CS_RRUNS_MAX_ATTEMPTS);
            assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        }
        csched__v1__run__free_unpacked(run, NULL);
    }
    fprintf(stderr, "%zu runs ended; %zu had an attempt lost with its replica and ran again\n", n,
            retried);
    free(ids);
}

static void test_replicas_churn_per_second(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL), turn = 0;
    char job[64];

    create_every_second(f, a, job, sizeof(job));
    wait_slots(f, job, SLOTS_PER_TURN);
    for (int64_t end = cs_test_now_ms() + CHURN_MS; cs_test_now_ms() < end; turn++) {
        a = lose_active(f, a, turn);
        wait_slots(f, job, SLOTS_PER_TURN);
    }
    pause_job(f, a, job);
    wait_runs_ended(f, a, job);
    assert_slots_contiguous(f, job);
    assert_each_ran_once(f, a, job);
    cs_rruns_assert_no_excess(&f->oracle);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_churn_per_second),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
