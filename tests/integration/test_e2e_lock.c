/* End-to-end tests of one server per state dir and per database: a second
 * cschedd on the first one's state dir (its embedded PostgreSQL) or on its
 * database exits non-zero naming the first, before it binds a port or
 * touches the first one's files, and the first goes on serving and writing;
 * after the first stops, or is killed with SIGKILL, a new one starts on the
 * same state dir and database (a flock and a session's advisory lock both
 * end with their holder). */
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
#include "testlib.h"

/* Enough of a refused daemon's log for its few lines. */
#define REFUSED_LOG_BYTES 8192

/* The first server still answers SERVING and still commits: a new run of
 * a new job succeeds. */
static void assert_still_serving(struct cs_e2e *e)
{
    Csched__V1__Run *run;
    char name[64];
    int serving = -1;

    assert_int_equal(cs_e2e_health_check(e, "", &serving), 0);
    assert_int_equal(serving, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
    cs_e2e_name(name, sizeof(name), "lock");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
}

/* A second cschedd started with opts while the first serves must exit
 * with status 1; its log goes into log and to stderr. */
static void start_second_refused(struct cs_e2e *e, const struct cs_testd_options *opts,
                                 char log[REFUSED_LOG_BYTES])
{
    assert_still_serving(e);
    assert_int_equal(cs_testd_start_refused(opts, log, REFUSED_LOG_BYTES), 1);
    fprintf(stderr, "refused cschedd's log:\n%s", log);
}

static void test_e2e_lock_same_database_refused(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_testd_options opts = {.database_url = cs_testpg_url(e->pg)};
    char log[REFUSED_LOG_BYTES], first[64];

    /* Another state dir, the same database. */
    start_second_refused(e, &opts, log);
    assert_non_null(strstr(log, "the database is in use by another cschedd"));
    snprintf(first, sizeof(first), "application_name \"cschedd pid %d.", (int)cs_testd_pid(e->d));
    assert_non_null(strstr(log, first));
    assert_null(strstr(log, "serving on"));
    assert_still_serving(e);
}

/* Stopped with SIGTERM, then killed with SIGKILL: each time a new server
 * starts at once on the same state dir and database. */
static void test_e2e_lock_free_after_stop_and_kill(void **state)
{
    struct cs_e2e *e = *state;

    assert_int_equal(cs_testd_restart(e->d), 0);
    assert_still_serving(e);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
    assert_still_serving(e);
}

/* The fixture of the state-dir test: a server with its embedded
 * PostgreSQL, no shared cluster. */
static int embedded_setup(void **state)
{
    struct cs_e2e *e = calloc(1, sizeof(*e));
    int rc;

    if (e == NULL)
        return -1;
    rc = cs_testd_start(NULL, &e->d);
    if (rc == 0)
        rc = cs_client_new(cs_testd_target(e->d), &e->client);
    if (rc != 0) {
        (void)cs_testd_stop(e->d); /* Already failing; its status adds nothing. */
        free(e);
        return rc;
    }
    *state = e;
    return 0;
}

static void test_e2e_lock_same_state_dir_refused(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_testd_options opts = {.state_dir = cs_testd_state_dir(e->d)};
    char log[REFUSED_LOG_BYTES], want[512];

    start_second_refused(e, &opts, log);
    snprintf(want, sizeof(want), "state dir %s is in use by another cschedd (pid %d)",
             cs_testd_state_dir(e->d), (int)cs_testd_pid(e->d));
    assert_non_null(strstr(log, want));
    assert_non_null(strstr(log, "stop it or use another --state-dir"));
    /* Refused before the embedded PostgreSQL or a port. */
    assert_null(strstr(log, "embedded PostgreSQL"));
    assert_null(strstr(log, "serving on"));
    /* The first one's database was left alone: it still commits. */
    assert_still_serving(e);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
    assert_still_serving(e);
}

int main(void)
{
    const struct CMUnitTest database[] = {
        cmocka_unit_test(test_e2e_lock_same_database_refused),
        cmocka_unit_test(test_e2e_lock_free_after_stop_and_kill),
    };
    const struct CMUnitTest state_dir[] = {
        cmocka_unit_test(test_e2e_lock_same_state_dir_refused),
    };
    int failed = cmocka_run_group_tests(database, cs_e2e_setup, cs_e2e_teardown);

    return failed + cmocka_run_group_tests(state_dir, embedded_setup, cs_e2e_teardown);
}
