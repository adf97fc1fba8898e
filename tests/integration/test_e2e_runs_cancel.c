/* End-to-end tests of runs stopped before their command ends, through
 * libcsched against a real cschedd, real minders and the real clock: a
 * timeout, CancelRun of a running and of a queued run, neither retried, and
 * a timed-out attempt retried after its backoff. Each stops the command's
 * whole process group. One server serves every test of this file. */
#include <setjmp.h>
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

static void test_e2e_runs_timeout(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct group_run g;
    int64_t t0, took_ms;
    Csched__V1__Run *run;

    job.timeout_seconds = 1;
    t0 = cs_test_now_ms();
    start_group_run(e, "timeout", "", &job, &g);
    run = cs_e2e_wait_end(e, g.id);
    took_ms = cs_test_now_ms() - t0;
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    if (took_ms < 900 || took_ms > 4000)
        fail_msg("timeout_seconds 1 ended the run after %lld ms", (long long)took_ms);
    cs_e2e_assert_group_gone(g.pgid, 1000);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(g.dir), 0);
}

static Csched__V1__Run *cancel_run(struct cs_e2e *e, int64_t id, int want)
{
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    int rc;

    req.run_id = id;
    rc = cs_scheduler_cancel_run(e->client, &req, &run, cs_e2e_opts(), &st);
    if (want == 0 && rc != 0)
        fail_msg("CancelRun(%lld): %s \"%s\"", (long long)id, cs_status_code_name(rc), st.message);
    if (want != 0) {
        cs_e2e_assert_status(rc, &st, want, NULL);
        assert_null(run);
    }
    return run;
}

/* CancelRun of a running attempt stops its whole process group quickly. */
static void test_e2e_runs_cancel_running(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct group_run g;
    Csched__V1__Run *run;
    int64_t id, t0, took_ms;

    start_group_run(e, "cancel", "", &job, &g);
    id = g.id;
    run = cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);

    t0 = cs_test_now_ms();
    run = cancel_run(e, id, 0);
    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED && !run->cancel_requested)
        fail_msg("CancelRun answered %s without cancel_requested",
                 cs_test_run_state_name(run->state));
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, id);
    took_ms = cs_test_now_ms() - t0;
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(run->n_attempts, 1);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    if (took_ms > 3000)
        fail_msg("cancel took %lld ms", (long long)took_ms);
    cs_e2e_assert_group_gone(g.pgid, 1000);
    csched__v1__run__free_unpacked(run, NULL);

    /* A finished run cannot be cancelled. */
    cancel_run(e, id, GRPC_STATUS_FAILED_PRECONDITION);
    assert_int_equal(cs_test_rmtree(g.dir), 0);
}

/* A cancelled attempt is never retried, whatever max_attempts allows. */
static void test_e2e_runs_cancel_not_retried(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    bool still_requested;
    Csched__V1__Run *run;
    size_t attempts;
    char name[64];
    int64_t id;

    cs_e2e_name(name, sizeof(name), "cancelretry");
    job.name = name;
    job.shell = "sleep 30";
    job.max_attempts = 3;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    id = cs_e2e_trigger(e, name);
    run = cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);
    csched__v1__run__free_unpacked(cancel_run(e, id, 0), NULL);
    run = cs_e2e_wait_end(e, id);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    attempts = run->n_attempts;
    still_requested = run->cancel_requested;
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(attempts, 1);
    /* docs/configuration.md: cancel_requested shows until the attempt has
     * ended. */
    assert_false(still_requested);
}

/* A run queued behind its job's limit is cancelled at once, without an
 * attempt. */
static void test_e2e_runs_cancel_queued(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run;
    int64_t blocker, queued;
    char name[64];

    cs_e2e_name(name, sizeof(name), "cancelq");
    csched__v1__job__free_unpacked(cs_e2e_create_serial_job(e, name, "sleep 30"), NULL);
    blocker = cs_e2e_trigger(e, name);
    run = cs_e2e_wait_state(e, blocker, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);

    queued = cs_e2e_trigger(e, name);
    run = cs_e2e_get_run(e, queued);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    csched__v1__run__free_unpacked(run, NULL);
    run = cancel_run(e, queued, 0);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(run->n_attempts, 0);
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_get_run(e, queued);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    csched__v1__run__free_unpacked(run, NULL);
    cancel_run(e, queued, GRPC_STATUS_FAILED_PRECONDITION);

    csched__v1__run__free_unpacked(cancel_run(e, blocker, 0), NULL);
    run = cs_e2e_wait_end(e, blocker);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    csched__v1__run__free_unpacked(run, NULL);
}

/* A timed-out attempt is retried too, after retry_backoff_ms. */
static void test_e2e_runs_timeout_retried_after_backoff(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run;
    int64_t gap_ms;
    char name[64];

    cs_e2e_name(name, sizeof(name), "timeoutretry");
    job.name = name;
    job.shell = "sleep 30";
    job.timeout_seconds = 1;
    job.max_attempts = 2;
    job.retry_backoff_ms = 500;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    assert_int_equal(run->n_attempts, 2);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    assert_int_equal(run->attempts[1]->state, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    gap_ms = run->attempts[1]->started_unix_ms - run->attempts[0]->ended_unix_ms;
    if (gap_ms < 490)
        fail_msg("retry started %lld ms after the first attempt ended, backoff is 500 ms",
                 (long long)gap_ms);
    csched__v1__run__free_unpacked(run, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_runs_timeout),
        cmocka_unit_test(test_e2e_runs_cancel_running),
        cmocka_unit_test(test_e2e_runs_cancel_not_retried),
        cmocka_unit_test(test_e2e_runs_cancel_queued),
        cmocka_unit_test(test_e2e_runs_timeout_retried_after_backoff),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
