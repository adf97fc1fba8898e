/* Two replicas, and the database restarted under them (every session
 * ended, every lease looking run out once it is back), or frozen for four
 * leases, while a `sleep 3` runs and the active replica's link is held a
 * heartbeat longer: the active replica renews before any standby has
 * watched it stand still for a lease it could watch, so no
 * standby takes over (the same active replica, the same epoch), and the run
 * succeeds in one attempt, nothing lost, run once. */
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

/* Steady for this long after the restart: several leases. */
#define STEADY_MS (10 * CS_RRUNS_HEARTBEAT_MS)
/* Frozen for four leases, well inside the attempt lease. */
#define FREEZE_MS (8 * CS_RRUNS_HEARTBEAT_MS)

static int restart_db(struct cs_replicas *rs)
{
    return cs_replicas_pg_restart(rs);
}

static int freeze_db(struct cs_replicas *rs)
{
    pid_t pid = cs_testpg_pid(rs->pg);
    int rc = cs_test_signal_tree(pid, SIGSTOP);

    cs_test_sleep_ms(FREEZE_MS);
    return cs_test_signal_tree(pid, SIGCONT) != 0 ? -ESRCH : rc;
}

/* The active replica's link is held through the trouble and a heartbeat
 * after it, so that the standby is the first to see the database again:
 * the active replica's lease has run out by the database's clock, its
 * renewal is older than a lease, and only what the standby could watch
 * itself may count. */
static int disturb_db(struct cs_replicas *rs, unsigned active,
                      int (*trouble)(struct cs_replicas *rs))
{
    int rc = cs_replicas_cut(rs, active, CS_TESTPROXY_BLACKHOLE);

    if (rc == 0)
        rc = trouble(rs);
    cs_test_sleep_ms(CS_RRUNS_HEARTBEAT_MS);
    return cs_replicas_restore(rs, active) != 0 ? -EIO : rc;
}

static int setup(void **state)
{
    return cs_rruns_setup(state, 2, NULL);
}

static void no_takeover(void **state, const char *name, int (*trouble)(struct cs_replicas *rs))
{
    struct cs_rruns_suite *f = *state;
    struct cs_rruns_run run = {0};
    char job[64];
    unsigned a = cs_rruns_active(f, -1, NULL);

    cs_rruns_job(f->rs, a, &f->oracle, name, "sleep 3", 1, CS_RRUNS_MAX_ATTEMPTS, job, sizeof(job));
    cs_rruns_trigger(f->rs, a, job, 1, &run.id);
    cs_rruns_wait_started(&f->oracle, run.id, CS_E2E_RUN_TIMEOUT_MS);
    int64_t epoch = cs_rruns_epoch(f, a, "active");
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(disturb_db(f->rs, a, trouble), 0);
    fprintf(stderr, "%s: the database back after %lld ms\n", name,
            (long long)(cs_test_now_ms() - t0));
    int64_t until = cs_test_now_ms() + STEADY_MS;
    while (cs_test_now_ms() < until) {
        int now = cs_replicas_active(f->rs);
        /* Between the restart and the first renewal no row may be active
         * by the database's clock yet; another one never. */
        if (now >= 0 && now != (int)a)
            fail_msg("%s took over from %s after %s", f->rs->r[now].id, f->rs->r[a].id, name);
        cs_test_sleep_ms(20);
    }
    assert_int_equal(cs_rruns_epoch(f, a, "active"), epoch);
    Csched__V1__Run *r = cs_rruns_wait_end(f->rs, a, run.id, CS_RRUNS_END_MS);
    if (r->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED || r->n_attempts != 1)
        fail_msg("run %lld ended %s after %zu attempts (the first \"%s\"), want SUCCEEDED in 1",
                 (long long)run.id, cs_test_run_state_name(r->state), r->n_attempts,
                 r->n_attempts > 0 ? r->attempts[0]->message : "");
    csched__v1__run__free_unpacked(r, NULL);
    cs_rruns_assert_outcomes(f, a, &run, 1, f->rs->r[a].id);
    struct cs_oracle_run seen;
    assert_int_equal(cs_oracle_run(&f->oracle, run.id, &seen), 0);
    assert_int_equal(seen.executions, 1);
    assert_int_equal(cs_rruns_epoch(f, a, "active"), epoch);
}

static void test_replicas_pgrestart_no_takeover(void **state)
{
    no_takeover(state, "pgrestart", restart_db);
}

static void test_replicas_pgfreeze_no_takeover(void **state)
{
    no_takeover(state, "pgfreeze", freeze_db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replicas_pgrestart_no_takeover, setup,
                                        cs_rruns_teardown),
        cmocka_unit_test_setup_teardown(test_replicas_pgfreeze_no_takeover, setup,
                                        cs_rruns_teardown),
    };

    /* Each case on replicas of its own: the first's takeover, if it
     * happened, must not hide the second's. */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
