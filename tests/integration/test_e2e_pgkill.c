/* End-to-end test of cschedd's embedded PostgreSQL killed under it (kill -9
 * of its postmaster, as the OOM killer or an operator would): cschedd starts
 * it again by itself: health goes NOT_SERVING and back to SERVING, the
 * run that was running when it died ends as it should, and a new trigger
 * commits. The server and its database are the test's own. */
#include <errno.h>
#include <limits.h>
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

/* How long cschedd may take to have its database back. */
#define BACK_WITHIN_MS 20000

static void test_e2e_pgkill_postmaster(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run;

    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "slow", "sleep 2"), NULL);
    int64_t running = cs_e2e_trigger(e, "slow");
    csched__v1__run__free_unpacked(
        cs_e2e_wait_state(e, running, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 10000), NULL);
    pid_t first = cs_e2e_embedded_postmaster(e);
    assert_int_equal(kill(first, SIGKILL), 0);

    /* The server sees its database gone, then has it back by itself. */
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING,
                       10000);
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING,
                       BACK_WITHIN_MS);
    assert_true(cs_e2e_embedded_postmaster(e) != first);
    int64_t after = cs_e2e_trigger(e, "slow");
    run = cs_e2e_wait_end(e, running);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, after);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_pgkill_postmaster),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup_embedded, cs_e2e_teardown);
}
