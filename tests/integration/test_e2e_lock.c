/* End-to-end tests of one server per state dir and one per replica id: a
 * second cschedd on the first one's state dir (its embedded PostgreSQL), or
 * on its database under the same replica id from another state dir, exits
 * non-zero naming the first, before it binds a port or touches the first
 * one's files, and the first goes on serving and writing; after the first
 * stops, or is killed with SIGKILL, a new one starts on the same state dir
 * and database (the flock ends with its holder, and a restart's state dir
 * is the replica's own); and a server whose lease another replica took is
 * fenced and starts again as a new process with a new epoch. */
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    char log[REFUSED_LOG_BYTES], first[256], host[128];

    /* Another state dir, the same database and (by default, the host name)
     * the same replica id. */
    start_second_refused(e, &opts, log);
    assert_int_equal(gethostname(host, sizeof(host)), 0);
    snprintf(first, sizeof(first), "replica id \"%s\" is in use by another cschedd", host);
    assert_non_null(strstr(log, first));
    assert_non_null(strstr(log, "give each replica its own --replica-id"));
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

static void admin_ok(PGconn *admin, const char *sql)
{
    PGresult *res = PQexec(admin, sql);

    if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(admin));
    PQclear(res);
}

static int64_t admin_int(PGconn *admin, const char *sql)
{
    PGresult *res = PQexec(admin, sql);

    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
        fail_msg("%s: %s", sql, PQerrorMessage(admin));
    int64_t v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return v;
}

/* Another replica takes this one's lease over (as csched_take_over does:
 * a new epoch on its row, state fenced): the server's next renewal finds
 * its epoch gone, and it starts again as a new process (the same pid,
 * execv) that joins with a new epoch, takes the free active role, and
 * serves again. */
static void test_e2e_lock_fenced_server_starts_again(void **state)
{
    struct cs_e2e *e = *state;
    PGconn *admin = PQconnectdb(cs_testpg_url(e->pg));
    pid_t pid = cs_testd_pid(e->d);
    int serving = -1;

    assert_int_equal(PQstatus(admin), CONNECTION_OK);
    assert_still_serving(e);
    admin_ok(admin, "UPDATE replicas SET epoch = nextval('replica_epochs'), state = 5");
    int64_t fenced_epoch = admin_int(admin, "SELECT max(epoch) FROM replicas");
    int64_t deadline = cs_test_now_ms() + 20000;
    while (admin_int(admin, "SELECT max(epoch) FROM replicas") == fenced_epoch &&
           cs_test_now_ms() < deadline)
        cs_test_sleep_ms(20);
    assert_true(admin_int(admin, "SELECT max(epoch) FROM replicas") > fenced_epoch);
    deadline = cs_test_now_ms() + 20000;
    while ((cs_e2e_health_check(e, "", &serving) != 0 ||
            serving != GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING) &&
           cs_test_now_ms() < deadline)
        cs_test_sleep_ms(50);
    assert_int_equal(admin_int(admin, "SELECT count(*) FROM replicas WHERE state = 2"), 1);
    assert_int_equal(cs_testd_pid(e->d), pid);
    assert_still_serving(e);
    PQfinish(admin);
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
    const struct CMUnitTest fenced[] = {
        cmocka_unit_test(test_e2e_lock_fenced_server_starts_again),
    };
    int failed = cmocka_run_group_tests(database, cs_e2e_setup, cs_e2e_teardown);

    failed += cmocka_run_group_tests(state_dir, cs_e2e_setup_embedded, cs_e2e_teardown);
    return failed + cmocka_run_group_tests(fenced, cs_e2e_setup, cs_e2e_teardown);
}
