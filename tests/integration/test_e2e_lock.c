/* End-to-end tests of one server per state dir and per database: a second
 * cschedd on the first one's state dir (its embedded PostgreSQL) or on its
 * database exits non-zero naming the first, before it binds a port or
 * touches the first one's files, and the first goes on serving and writing;
 * after the first stops, or is killed with SIGKILL, a new one starts on the
 * same state dir and database (a flock and a session's advisory lock both
 * end with their holder); and a server whose database another took while
 * it was reconnecting stops, with status 1. */
#include <libpq-fe.h>
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

/* The server lock's key, "cschedd" in ASCII (docs/operations.md). */
#define SERVER_LOCK_KEY 0x63736368656464LL

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

/* Waits until pid, a child of this process, has exited (a zombie, not yet
 * reaped). */
static void wait_exited(pid_t pid, int64_t timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms;
    char path[64], buf[512];

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    while (cs_test_now_ms() < deadline) {
        FILE *f = fopen(path, "r");
        size_t n = f != NULL ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        char *paren;

        if (f != NULL)
            fclose(f);
        buf[n] = '\0';
        paren = strrchr(buf, ')');
        if (paren != NULL && paren[1] == ' ' && paren[2] == 'Z')
            return;
        cs_test_sleep_ms(20);
    }
    fail_msg("cschedd %d still running after %lld ms", (int)pid, (long long)timeout_ms);
}

/* The server's connection is ended, and another session takes the server
 * lock before the server is back: the server stops with status 1. */
static void test_e2e_lock_taken_meanwhile_stops_server(void **state)
{
    struct cs_e2e *e = *state;
    PGconn *admin = PQconnectdb(cs_testpg_url(e->pg));
    pid_t pid = cs_testd_pid(e->d);
    char sql[256];

    assert_int_equal(PQstatus(admin), CONNECTION_OK);
    assert_still_serving(e);
    admin_ok(admin, "SET application_name = 'other cschedd'");
    snprintf(sql, sizeof(sql),
             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
             " WHERE application_name LIKE 'cschedd pid %d.%%'",
             (int)pid);
    admin_ok(admin, sql);
    /* Waits for the ended session's lock, which the server, 100 ms from
     * reconnecting, cannot take back first. */
    snprintf(sql, sizeof(sql), "SELECT pg_advisory_lock(%lld)", SERVER_LOCK_KEY);
    admin_ok(admin, sql);
    wait_exited(pid, 20000);
    assert_int_equal(cs_testd_stop(e->d), 1);
    e->d = NULL;
    PQfinish(admin);
}

/* The teardown of a group whose test stopped the server itself. */
static int stopped_teardown(void **state)
{
    struct cs_e2e *e = *state;

    cs_client_free(e->client);
    (void)cs_testd_stop(e->d); /* NULL unless the test failed first */
    cs_testpg_stop(e->pg);
    free(e);
    return 0;
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
        cmocka_unit_test(test_e2e_lock_taken_meanwhile_stops_server),
    };
    int failed = cmocka_run_group_tests(database, cs_e2e_setup, cs_e2e_teardown);

    failed += cmocka_run_group_tests(state_dir, cs_e2e_setup_embedded, cs_e2e_teardown);
    return failed + cmocka_run_group_tests(fenced, cs_e2e_setup, stopped_teardown);
}
