/* End-to-end test of a database that goes away under a running cschedd:
 * calls that must write answer UNAVAILABLE with a message instead of hanging
 * or killing the server, reads served from the server's memory may still
 * answer, health is NOT_SERVING, and the server still shuts down cleanly. It has its
 * own executable because it stops the fixture's PostgreSQL for good. */
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
#include "testlib.h"

static void test_e2e_dbdown_unavailable(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__TriggerJobRequest trig = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__CreateJobRequest create = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__PauseJobRequest pause = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Job *got = NULL;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    char name[64];
    int64_t t0;
    int rc;

    cs_e2e_name(name, sizeof(name), "dbdown");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);

    cs_testpg_stop(e->pg);
    e->pg = NULL;

    t0 = cs_test_now_ms();
    pause.name = name;
    cs_e2e_assert_status(cs_scheduler_pause_job(e->client, &pause, &got, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_UNAVAILABLE, NULL);
    assert_null(got);
    /* The job is as it was: the pause refused changed nothing. */
    get.name = name;
    rc = cs_scheduler_get_job(e->client, &get, &got, cs_e2e_opts(), &st);
    if (rc == 0) {
        assert_false(got->paused);
        csched__v1__job__free_unpacked(got, NULL);
    } else {
        cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAVAILABLE, NULL);
    }
    got = NULL;
    trig.job_name = name;
    cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &trig, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_UNAVAILABLE, NULL);
    assert_null(run);
    job.name = "made-while-down";
    job.shell = "true";
    create.job = &job;
    cs_e2e_assert_status(cs_scheduler_create_job(e->client, &create, &got, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_UNAVAILABLE, NULL);
    assert_null(got);
    /* UNAVAILABLE comes well before the client's deadline. */
    if (cs_test_now_ms() - t0 > CS_E2E_CALL_TIMEOUT_MS / 2)
        fail_msg("four calls with the database down took %lld ms",
                 (long long)(cs_test_now_ms() - t0));
    /* As for a full database (test_e2e_diskfull.c). */
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING,
                       CS_E2E_CALL_TIMEOUT_MS);
    assert_int_equal(kill(cs_testd_pid(e->d), 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_dbdown_unavailable),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
