/* Three replicas, and the active one lost: (a) killed with kill -9 while
 * runs are running and a burst is queued, (b) restarted, (c) frozen with
 * SIGSTOP past its lease and thawed. A standby takes over within a few
 * heartbeats, fences the old one, starts the queued runs; the attempts
 * that ran on the old one's machine hold their slots until its attempts'
 * deadline and a margin, while its minders stop their commands at that
 * deadline, then end LOST with the lost replica's message and are retried
 * (those placed on the other machines go on, and are cancelled). The
 * oracles check
 * that every run ran at most max_attempts times, never two attempts at
 * once, and no limit was exceeded; the old replica rejoins as a standby
 * with a new epoch. The times are printed. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "replicas_runs.h"

/* The lease runs out after 2 heartbeats, a standby watches it stand still
 * for a lease and asks at its next heartbeat: 3 heartbeats, and slack for a
 * loaded machine. */
#define TAKEOVER_ROW_MS (3 * HEARTBEAT_MS + 1000)
#define HEARTBEAT_MS CS_RRUNS_HEARTBEAT_MS
#define ATTEMPT_LEASE_MS CS_RRUNS_ATTEMPT_LEASE_MS
#define MAX_ATTEMPTS CS_RRUNS_MAX_ATTEMPTS

#define N_LONG 2  /* running at the kill, stopped by their minders */
#define N_SHORT 2 /* `sleep 2`, running at the kill */
#define N_BURST 12

/* (a) kill -9 of the active replica, then (b) its restart. */
static void test_replicas_failover_kill9(void **state)
{
    struct cs_rruns_suite *f = *state;
    struct cs_rruns_run runs[N_LONG + N_SHORT + N_BURST] = {0};
    int64_t ids[N_BURST], row_ms;
    char longj[64], shortj[64], burstj[64];
    unsigned a = cs_rruns_active(f, -1, NULL);
    size_t n = 0;

    cs_rruns_job(f->rs, a, &f->oracle, "long", CS_RRUNS_LONG_FIRST, N_LONG, MAX_ATTEMPTS, longj,
                 sizeof(longj));
    cs_rruns_job(f->rs, a, &f->oracle, "short", "sleep 2", N_SHORT, MAX_ATTEMPTS, shortj,
                 sizeof(shortj));
    cs_rruns_job(f->rs, a, &f->oracle, "burst", "sleep 0.3", 2, MAX_ATTEMPTS, burstj,
                 sizeof(burstj));
    cs_rruns_trigger(f->rs, a, longj, N_LONG, ids);
    for (size_t k = 0; k < N_LONG; k++)
        runs[n++] = (struct cs_rruns_run){ids[k], true};
    cs_rruns_trigger(f->rs, a, shortj, N_SHORT, ids);
    for (size_t k = 0; k < N_SHORT; k++)
        runs[n++] = (struct cs_rruns_run){ids[k], false};
    for (size_t k = 0; k < n; k++)
        cs_rruns_wait_started(&f->oracle, runs[k].id, CS_E2E_RUN_TIMEOUT_MS);
    /* The burst, queued behind its job's limit of 2. */
    cs_rruns_trigger(f->rs, a, burstj, N_BURST, ids);
    for (size_t k = 0; k < N_BURST; k++)
        runs[n++] = (struct cs_rruns_run){ids[k], false};

    int64_t epoch = cs_rruns_epoch(f, a, "active");
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(cs_replicas_kill9(f->rs, a), 0);
    unsigned b = cs_rruns_active(f, (int)a, &row_ms);
    int64_t serving_ms = cs_test_now_ms() - t0;
    /* The long runs the active one placed on the others' machines go on
     * there: cancelled, they are not this test's. */
    size_t n_long = cs_rruns_split(f, b, runs, N_LONG, f->rs->r[a].id);
    assert_true(n_long > 0);
    fprintf(stderr,
            "failover: kill -9 of %s: %s active by its row after %lld ms, serving after "
            "%lld ms\n",
            f->rs->r[a].id, f->rs->r[b].id, (long long)row_ms, (long long)serving_ms);
    if (row_ms > TAKEOVER_ROW_MS)
        fail_msg("%s took over %lld ms after the kill, want at most %d (3 heartbeats + slack)",
                 f->rs->r[b].id, (long long)row_ms, TAKEOVER_ROW_MS);
    /* The old one fenced: a new epoch on its row, marked fenced. */
    assert_true(cs_rruns_epoch(f, a, "fenced") > epoch);

    /* Its running attempts end LOST only past their deadline, once their
     * minders have stopped the commands. */
    int64_t lost_ms = cs_rruns_wait_lost(f, b, runs[0].id, f->rs->r[a].id, t0);
    fprintf(stderr,
            "failover: takeover after %lld ms (heartbeat %d ms), attempts retried after "
            "%lld ms (attempt lease %d ms)\n",
            (long long)row_ms, HEARTBEAT_MS, (long long)lost_ms, ATTEMPT_LEASE_MS);
    if (lost_ms < ATTEMPT_LEASE_MS - HEARTBEAT_MS)
        fail_msg("attempts of %s LOST %lld ms after its kill, before their deadline (%d ms)",
                 f->rs->r[a].id, (long long)lost_ms, ATTEMPT_LEASE_MS);
    for (size_t k = 0; k < n_long; k++) {
        pid_t pid;
        int64_t ns;
        struct cs_oracle_run seen;
        assert_int_equal(cs_rruns_first_start(&f->oracle, runs[k].id, &pid, &ns), 0);
        assert_int_equal(cs_oracle_run(&f->oracle, runs[k].id, &seen), 0);
        /* Stopped by its minder (no end mark), before the retry began. */
        if (kill(pid, 0) == 0 || seen.ended >= seen.executions)
            fail_msg("run %lld: its first command (pid %d) %s after its replica's deadline",
                     (long long)runs[k].id, (int)pid, kill(pid, 0) == 0 ? "still runs" : "ended");
    }
    cs_rruns_assert_outcomes(f, b, runs, n_long, f->rs->r[a].id);
    cs_rruns_assert_outcomes(f, b, runs + N_LONG, n - N_LONG, f->rs->r[a].id);
    /* The burst queued at the kill ran on a machine still there, and so
     * did the attempts lost with the killed one. */
    for (size_t k = N_LONG + N_SHORT; k < n; k++)
        cs_rruns_ran_elsewhere(f, runs[k].id, a);

    /* (b) Restarted, it rejoins as a standby with a new epoch. */
    int64_t fenced_epoch = cs_rruns_epoch(f, a, "fenced");
    assert_int_equal(cs_replicas_restart(f->rs, a, CS_REPLICAS_WAIT_UP), 0);
    cs_rruns_wait_rejoined(f, a, fenced_epoch);
    assert_int_equal(cs_replicas_active(f->rs), (int)b);
}

/* (c) The active replica frozen past its lease, then thawed. */
static void test_replicas_failover_sigstop(void **state)
{
    struct cs_rruns_suite *f = *state;
    struct cs_rruns_run runs[6] = {0};
    int64_t ids[6], row_ms;
    char job[64];
    unsigned a = cs_rruns_active(f, -1, NULL);

    /* Running through the freeze: on its machine a run goes on if the
     * thawed replica renews its lease before its commands' deadline (and is
     * adopted), or ends LOST and runs again; never both. */
    cs_rruns_job(f->rs, a, &f->oracle, "frozen", "sleep 2", 2, MAX_ATTEMPTS, job, sizeof(job));
    cs_rruns_trigger(f->rs, a, job, 2, ids);
    for (size_t k = 0; k < 2; k++) {
        runs[k] = (struct cs_rruns_run){ids[k], false};
        cs_rruns_wait_started(&f->oracle, ids[k], CS_E2E_RUN_TIMEOUT_MS);
    }
    cs_rruns_job(f->rs, a, &f->oracle, "thawed", "sleep 0.3", 2, MAX_ATTEMPTS, job, sizeof(job));
    cs_rruns_trigger(f->rs, a, job, 4, ids);
    for (size_t k = 0; k < 4; k++)
        runs[2 + k] = (struct cs_rruns_run){ids[k], false};

    int64_t epoch = cs_rruns_epoch(f, a, "active");
    long fenced_logs = cs_replicas_log_count(f->rs, a, "was fenced");
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(cs_replicas_sigstop(f->rs, a), 0);
    unsigned b = cs_rruns_active(f, (int)a, &row_ms);
    fprintf(stderr,
            "failover: SIGSTOP of %s: %s active by its row after %lld ms, serving after "
            "%lld ms\n",
            f->rs->r[a].id, f->rs->r[b].id, (long long)row_ms, (long long)(cs_test_now_ms() - t0));
    if (row_ms > TAKEOVER_ROW_MS)
        fail_msg("%s took over %lld ms after the freeze, want at most %d", f->rs->r[b].id,
                 (long long)row_ms, TAKEOVER_ROW_MS);
    /* Frozen for 6 heartbeats in all, then thawed: it commits nothing more. */
    int64_t left = 6 * HEARTBEAT_MS - (cs_test_now_ms() - t0);
    if (left > 0)
        cs_test_sleep_ms(left);
    int64_t fenced_epoch = cs_rruns_epoch(f, a, "fenced");
    assert_true(fenced_epoch > epoch);
    assert_int_equal(cs_replicas_sigcont(f->rs, a), 0);
    int64_t deadline = cs_test_now_ms() + 10000;
    while (cs_replicas_log_count(f->rs, a, "was fenced") <= fenced_logs) {
        if (cs_test_now_ms() > deadline)
            fail_msg("%s, thawed, never logged \"was fenced\" within 10 s", f->rs->r[a].id);
        cs_test_sleep_ms(20);
    }
    /* The same process (execv) joins again: a standby with a newer epoch. */
    cs_rruns_wait_rejoined(f, a, fenced_epoch);
    assert_int_equal(cs_testd_reap(f->rs->r[a].e.d), -EBUSY);
    assert_int_equal(cs_replicas_active(f->rs), (int)b);
    cs_rruns_assert_outcomes(f, b, runs, 6, f->rs->r[a].id);
}

static int group_setup(void **state)
{
    return cs_rruns_setup(state, 3, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_failover_kill9),
        cmocka_unit_test(test_replicas_failover_sigstop),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
