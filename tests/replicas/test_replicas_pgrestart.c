/* Two replicas, and the database restarted under them (every session
 * ended, every lease looking run out once it is back) while a `sleep 3`
 * runs: the active replica renews first, so no standby takes over (the
 * same active replica, the same epoch), and the run succeeds in one
 * attempt, nothing lost, run once. */
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

/* Steady for this long after the restart: several leases. */
#define STEADY_MS (10 * CS_RRUNS_HEARTBEAT_MS)

static int group_setup(void **state)
{
    return cs_rruns_setup(state, 2, NULL);
}

static void test_replicas_pgrestart_no_takeover(void **state)
{
    struct cs_rruns_suite *f = *state;
    struct cs_rruns_run run = {0};
    char job[64];
    unsigned a = cs_rruns_active(f, -1, NULL);

    cs_rruns_job(f->rs, a, &f->oracle, "pgrestart", "sleep 3", 1, CS_RRUNS_MAX_ATTEMPTS, job,
                 sizeof(job));
    cs_rruns_trigger(f->rs, a, job, 1, &run.id);
    cs_rruns_wait_started(&f->oracle, run.id, CS_E2E_RUN_TIMEOUT_MS);
    int64_t epoch = cs_rruns_epoch(f, a, "active");
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(cs_replicas_pg_restart(f->rs), 0);
    fprintf(stderr, "pgrestart: the database back after %lld ms\n",
            (long long)(cs_test_now_ms() - t0));
    int64_t until = cs_test_now_ms() + STEADY_MS;
    while (cs_test_now_ms() < until) {
        int now = cs_replicas_active(f->rs);
        /* Between the restart and the first renewal no row may be active
         * by the database's clock yet; another one never. */
        if (now >= 0 && now != (int)a)
            fail_msg("%s took over from %s after the database's restart", f->rs->r[now].id,
                     f->rs->r[a].id);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_pgrestart_no_takeover),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
