/* Two replicas, and the active one's database link cut (blackhole: no
 * byte either way, nothing closed). A cut of one heartbeat moves nothing:
 * the same active replica with the same epoch, no attempt lost, the runs
 * go on. A cut longer than the attempt lease: the standby takes over, the
 * cut-off one is fenced and, once its link is back, finds out, starts
 * again and rejoins as a standby; its running attempts, stopped by their
 * minders at its deadline, end LOST and run again, never two at once. */
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

#define HEARTBEAT_MS CS_RRUNS_HEARTBEAT_MS

/* The active replica's row and epoch stay the same for this long after a
 * short cut: several leases. */
#define STEADY_MS (5 * 2 * HEARTBEAT_MS)

static int group_setup(void **state)
{
    return cs_rruns_setup(state, 2, NULL);
}

static void test_replicas_partition_short_cut(void **state)
{
    struct cs_rruns_suite *f = *state;
    struct cs_rruns_run runs[3] = {0};
    int64_t ids[3];
    char job[64];
    unsigned a = cs_rruns_active(f, -1, NULL);

    cs_rruns_job(f->rs, a, &f->oracle, "short-cut", "sleep 1", 3, 1, job, sizeof(job));
    cs_rruns_trigger(f->rs, a, job, 3, ids);
    for (size_t k = 0; k < 3; k++) {
        runs[k].id = ids[k];
        cs_rruns_wait_started(&f->oracle, ids[k], CS_E2E_RUN_TIMEOUT_MS);
    }
    int64_t epoch = cs_rruns_epoch(f, a, "active");
    assert_int_equal(cs_replicas_cut(f->rs, a, CS_TESTPROXY_BLACKHOLE), 0);
    cs_test_sleep_ms(HEARTBEAT_MS); /* the length of the cut is the point */
    assert_int_equal(cs_replicas_restore(f->rs, a), 0);
    int64_t until = cs_test_now_ms() + STEADY_MS;
    while (cs_test_now_ms() < until) {
        assert_int_equal(cs_replicas_active(f->rs), (int)a);
        assert_int_equal(cs_rruns_epoch(f, a, "active"), epoch);
        cs_test_sleep_ms(20);
    }
    /* Each in one attempt (max_attempts 1: a lost one would fail). */
    for (size_t k = 0; k < 3; k++) {
        Csched__V1__Run *run = cs_rruns_wait_end(f->rs, a, ids[k], CS_RRUNS_END_MS);
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED || run->n_attempts != 1)
            fail_msg("run %lld ended %s after %zu attempts, want SUCCEEDED in 1", (long long)ids[k],
                     cs_test_run_state_name(run->state), run->n_attempts);
        csched__v1__run__free_unpacked(run, NULL);
    }
    cs_rruns_assert_outcomes(f, a, runs, 3, f->rs->r[a].id);
}

static void test_replicas_partition_long_cut(void **state)
{
    struct cs_rruns_suite *f = *state;
    struct cs_rruns_run runs[2] = {0};
    int64_t ids[2], row_ms;
    char job[64];
    unsigned a = cs_rruns_active(f, -1, NULL);

    cs_rruns_job(f->rs, a, &f->oracle, "long-cut", CS_RRUNS_LONG_FIRST, 2, CS_RRUNS_MAX_ATTEMPTS,
                 job, sizeof(job));
    cs_rruns_trigger(f->rs, a, job, 2, ids);
    for (size_t k = 0; k < 2; k++) {
        runs[k] = (struct cs_rruns_run){ids[k], true};
        cs_rruns_wait_started(&f->oracle, ids[k], CS_E2E_RUN_TIMEOUT_MS);
    }

    int64_t epoch = cs_rruns_epoch(f, a, "active");
    long fenced_logs = cs_replicas_log_count(f->rs, a, "was fenced");
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(cs_replicas_cut(f->rs, a, CS_TESTPROXY_BLACKHOLE), 0);
    unsigned b = cs_rruns_active(f, (int)a, &row_ms);
    /* A run placed on the standby's machine goes on there: cancelled. */
    size_t n_cut = cs_rruns_split(f, b, runs, 2, f->rs->r[a].id);
    int64_t fenced_epoch = cs_rruns_epoch(f, a, "fenced");
    assert_true(fenced_epoch > epoch);
    int64_t lost_ms = cs_rruns_wait_lost(f, b, runs[0].id, f->rs->r[a].id, t0);
    fprintf(stderr,
            "failover: takeover after %lld ms (heartbeat %d ms), attempts retried after "
            "%lld ms (attempt lease %d ms) [partition]\n",
            (long long)row_ms, HEARTBEAT_MS, (long long)lost_ms, CS_RRUNS_ATTEMPT_LEASE_MS);
    /* Healed past the attempt lease: the cut-off one finds its fence. */
    assert_int_equal(cs_replicas_restore(f->rs, a), 0);
    int64_t deadline = cs_test_now_ms() + 20000;
    while (cs_replicas_log_count(f->rs, a, "was fenced") <= fenced_logs) {
        if (cs_test_now_ms() > deadline)
            fail_msg("%s, its link restored, never logged \"was fenced\" within 20 s",
                     f->rs->r[a].id);
        cs_test_sleep_ms(20);
    }
    cs_rruns_wait_rejoined(f, a, fenced_epoch);
    assert_int_equal(cs_testd_reap(f->rs->r[a].e.d), -EBUSY);
    assert_int_equal(cs_replicas_active(f->rs), (int)b);
    cs_rruns_assert_outcomes(f, b, runs, n_cut, f->rs->r[a].id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_partition_short_cut),
        cmocka_unit_test(test_replicas_partition_long_cut),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
