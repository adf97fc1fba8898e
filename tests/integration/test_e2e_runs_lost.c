/* End-to-end tests of the server's backstop for a minder that fails, through
 * libcsched against a real cschedd, real minders and the real clock: a
 * minder killed outright, or stopped past its job's deadline, leaves its
 * attempt LOST, the command's process group is stopped by the server, and
 * the run goes on to its next attempt. One server serves every test of
 * this file. */
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

#include "e2e.h"
#include "runs_fixture.h"
#include "testlib.h"

/* A minder killed outright leaves no status note: its attempt is LOST with a
 * message saying so, the command it left behind is stopped, and the run goes
 * on to its next attempt. */
static void test_e2e_runs_killed_minder_is_lost_then_retried(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct group_run g;
    Csched__V1__Run *run;

    job.max_attempts = 2;
    start_group_run(e, "minderkill", "[ \"$CSCHED_ATTEMPT\" = 2 ] && exit 0; ", &job, &g);
    run = cs_e2e_wait_state(e, g.id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_int_equal(run->n_attempts, 1);
    assert_true(run->attempts[0]->minder_pid > 0);
    assert_int_equal(kill(run->attempts[0]->minder_pid, SIGKILL), 0);
    csched__v1__run__free_unpacked(run, NULL);

    run = cs_e2e_wait_end(e, g.id);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->n_attempts, 2);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
    if (strstr(run->attempts[0]->message, "status note") == NULL)
        fail_msg("LOST attempt message \"%s\" does not say the note is missing",
                 run->attempts[0]->message);
    assert_int_equal(run->attempts[1]->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    /* The server stopped the command the killed minder left behind. */
    cs_e2e_assert_group_gone(g.pgid, 2000);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(g.dir), 0);
}

/* A minder that cannot enforce its job's timeout (here: stopped) is killed
 * by the server once the timeout, the kill grace (10 s), the drain (1 s) and
 * a margin (5 s) have passed: the attempt is LOST, saying so, and the
 * command's group is stopped. */
static void test_e2e_runs_stopped_minder_is_killed_after_its_deadline(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct group_run g;
    Csched__V1__Run *run;
    int64_t t0;
    pid_t minder;

    job.timeout_seconds = 1;
    start_group_run(e, "minderstop", "", &job, &g);
    run = cs_e2e_wait_state(e, g.id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    minder = run->attempts[0]->minder_pid;
    assert_true(minder > 0);
    assert_int_equal(kill(minder, SIGSTOP), 0);
    t0 = cs_test_now_ms();
    csched__v1__run__free_unpacked(run, NULL);

    run = cs_e2e_wait_state(e, g.id, CSCHED__V1__RUN_STATE__RUN_STATE_LOST, 30000);
    int64_t took_ms = cs_test_now_ms() - t0;
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
    if (strstr(run->attempts[0]->message, "cschedd killed it") == NULL)
        fail_msg("LOST attempt message \"%s\" does not say the server killed the minder",
                 run->attempts[0]->message);
    /* Not before the minder had all its time: 1 s + 10 s + 1 s + 5 s from
     * its start, of which at most the run's start-up had passed at t0. */
    if (took_ms < 15000)
        fail_msg("the minder was killed %lld ms after it was stopped, before its deadline",
                 (long long)took_ms);
    cs_e2e_assert_group_gone(g.pgid, 2000);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(g.dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_runs_killed_minder_is_lost_then_retried),
        cmocka_unit_test(test_e2e_runs_stopped_minder_is_killed_after_its_deadline),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
