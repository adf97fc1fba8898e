/* End-to-end tests of how a run ends, through libcsched against a real
 * cschedd, real minders and the real clock: an exit code of 0 succeeds,
 * another or a signal fails, each with its attempt recorded, and a failed
 * attempt is retried until one succeeds or max_attempts is spent. One server
 * serves every test of this file. */
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

static void test_e2e_runs_exit_zero_succeeds(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "exit0", "exit 0");

    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_int_equal(run->exit_code, 0);
    assert_int_equal(run->n_attempts, 1);
    assert_int_equal(run->attempts[0]->number, 1);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->attempts[0]->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE);
    assert_int_equal(run->attempts[0]->exit_code, 0);
    assert_true(run->attempts[0]->minder_pid > 0);
    assert_true(run->created_unix_ms > 0);
    assert_true(run->started_unix_ms >= run->created_unix_ms);
    assert_true(run->ended_unix_ms >= run->started_unix_ms);
    assert_true(run->attempts[0]->started_unix_ms > 0);
    assert_true(run->attempts[0]->ended_unix_ms >= run->attempts[0]->started_unix_ms);
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_e2e_runs_exit_three_fails(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "exit3", "exit 3");

    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_int_equal(run->exit_code, 3);
    assert_int_equal(run->n_attempts, 1);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->attempts[0]->exit_code, 3);
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_e2e_runs_killed_by_signal_fails(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "sig", "kill -KILL $$");

    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL);
    assert_int_equal(run->term_signal, SIGKILL);
    assert_int_equal(run->attempts[0]->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL);
    assert_int_equal(run->attempts[0]->term_signal, SIGKILL);
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_e2e_runs_retries_until_success(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64];
    Csched__V1__Run *run;

    /* Fails twice, then succeeds. */
    cs_e2e_create_counter_job(e, "retry", "[ $n -ge 3 ]", 3, name, sizeof(name), dir);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->n_attempts, 3);
    for (size_t i = 0; i < 3; i++) {
        Csched__V1__Attempt *a = run->attempts[i];

        assert_int_equal(a->number, i + 1);
        assert_int_equal(a->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE);
        assert_int_equal(a->exit_code, i < 2 ? 1 : 0);
        assert_int_equal(a->state, i < 2 ? CSCHED__V1__RUN_STATE__RUN_STATE_FAILED
                                         : CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    }
    assert_int_equal(run->exit_code, 0);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(dir), 0);
}
static void test_e2e_runs_retries_exhausted(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run;
    char name[64];

    cs_e2e_name(name, sizeof(name), "retryfail");
    job.name = name;
    job.shell = "exit 7";
    job.max_attempts = 2;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->n_attempts, 2);
    assert_int_equal(run->attempts[0]->number, 1);
    assert_int_equal(run->attempts[1]->number, 2);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->attempts[1]->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_int_equal(run->exit_code, 7);
    csched__v1__run__free_unpacked(run, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_runs_exit_zero_succeeds),
        cmocka_unit_test(test_e2e_runs_exit_three_fails),
        cmocka_unit_test(test_e2e_runs_killed_by_signal_fails),
        cmocka_unit_test(test_e2e_runs_retries_until_success),
        cmocka_unit_test(test_e2e_runs_retries_exhausted),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
