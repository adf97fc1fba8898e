/* End-to-end tests of libpq's environment and cschedd's database. With its
 * embedded PostgreSQL, cschedd started with hostile PG* variables (a
 * service that does not exist, a 1 ms statement_timeout, another host,
 * address, port, user and database, SSL, GSS and channel binding required,
 * a time zone and date style PostgreSQL refuses...) serves and runs a job:
 * its connection and the PostgreSQL programs it runs are its own, and no
 * job sees the variables.
 * With an external --database-url, libpq's variables fill in what the URL
 * leaves out, as libpq documents. */
#include <limits.h>
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

/* Most of these alone break today's embedded connection or a program it
 * runs, or would send it somewhere else. */
static const char *const hostile[] = {
    "PGSERVICE=csched-test-no-such-service",
    "PGSERVICEFILE=/nonexistent/csched-test/pg_service.conf",
    "PGSYSCONFDIR=/nonexistent/csched-test",
    "PGOPTIONS=-c statement_timeout=1",
    "PGHOST=/nonexistent/csched-test",
    "PGHOSTADDR=192.0.2.1",
    "PGPORT=1",
    "PGDATABASE=csched_test_no_such_db",
    "PGUSER=csched_test_no_such_user",
    "PGPASSWORD=csched-test-wrong",
    "PGPASSFILE=/nonexistent/csched-test/pgpass",
    "PGSSLMODE=verify-full",
    "PGGSSENCMODE=require",
    "PGCHANNELBINDING=require",
    "PGREQUIREPEER=csched_test_nobody",
    "PGTARGETSESSIONATTRS=standby",
    "PGCONNECT_TIMEOUT=1",
    "PGCLIENTENCODING=csched_test_no_such_encoding",
    "PGAPPNAME=csched-test-app",
    "PGTZ=Csched/Nowhere",
    "PGDATESTYLE=csched-test",
    "PGGEQO=csched-test",
    "PGDATA=/nonexistent/csched-test",
    NULL,
};

/* Sets (or unsets) each NAME=VALUE of vars (NULL-terminated). */
static void set_vars(const char *const *vars, bool on)
{
    for (const char *const *v = vars; *v != NULL; v++) {
        char name[64];
        size_t n = strcspn(*v, "=");

        assert_true(n < sizeof(name));
        memcpy(name, *v, n);
        name[n] = '\0';
        assert_int_equal(on ? setenv(name, *v + n + 1, 1) : unsetenv(name), 0);
    }
}

/* Starts cschedd with opts and vars (NAME=VALUE, NULL-terminated) in its
 * environment, gone from this process's once it has started, and a client
 * for it, into e. */
static void start(struct cs_e2e *e, const struct cs_testd_options *opts, const char *const *vars)
{
    int rc;

    set_vars(vars, true);
    rc = cs_testd_start(opts, &e->d);
    set_vars(vars, false);
    if (rc != 0)
        fail_msg("cschedd did not start and serve: %s (its log is above)", strerror(-rc));
    assert_int_equal(cs_client_new(cs_testd_target(e->d), &e->client), 0);
}

/* The group teardown's checks for one test: the loop's lateness, a clean
 * exit, the database stopped. */
static void stop(struct cs_e2e *e)
{
    void *state = e;

    assert_int_equal(cs_e2e_teardown(&state), 0);
}

/* Runs a shell job to its end and returns its stdout (caller frees). */
static char *run_job(struct cs_e2e *e, Csched__V1__Job *job)
{
    size_t len;

    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    int64_t run_id = cs_e2e_trigger(e, job->name);
    Csched__V1__Run *run = cs_e2e_wait_end(e, run_id);
    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED)
        fail_msg("run %lld ended %s: %s", (long long)run_id, cs_test_run_state_name(run->state),
                 run->message);
    csched__v1__run__free_unpacked(run, NULL);
    return cs_e2e_read_logs(e, run_id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
}

static void test_e2e_pgenv_embedded_ignores_callers_pg_vars(void **state)
{
    struct cs_e2e *e = calloc(1, sizeof(*e));
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64];

    assert_non_null(e);
    start(e, NULL, hostile);

    cs_e2e_name(name, sizeof(name), "pgenv");
    job.name = name;
    job.shell = "env | grep -c '^PG' || :";
    char *out = run_job(e, &job);
    assert_string_equal(out, "0\n");
    free(out);
    stop(e);
}

/* The test cluster's socket directory, from its conninfo "host=DIR ...". */
static void cluster_host(const struct cs_testpg *pg, char *dir, size_t cap)
{
    const char *url = cs_testpg_url(pg);
    size_t n = strcspn(url + strlen("host="), " ");

    assert_true(strncmp(url, "host=", 5) == 0 && n < cap);
    memcpy(dir, url + 5, n);
    dir[n] = '\0';
}

static void test_e2e_pgenv_external_url_takes_libpq_vars(void **state)
{
    struct cs_e2e *e = calloc(1, sizeof(*e));
    struct cs_testd_options opts = {.database_url = "dbname=postgres",
                                    .max_running = CS_E2E_MAX_RUNNING};
    char host[PATH_MAX], name[64];

    assert_non_null(e);
    assert_int_equal(cs_testpg_start(&e->pg), 0);
    cluster_host(e->pg, host, sizeof(host));
    /* The URL names only the database: where and as whom come from libpq's
     * variables. */
    char pghost[PATH_MAX + 8];
    snprintf(pghost, sizeof(pghost), "PGHOST=%s", host);
    const char *const libpq_vars[] = {pghost, "PGPORT=5432", "PGUSER=postgres", NULL};
    start(e, &opts, libpq_vars);

    cs_e2e_name(name, sizeof(name), "pgurl");
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    job.name = name;
    job.shell = "echo ok";
    char *out = run_job(e, &job);
    assert_string_equal(out, "ok\n");
    free(out);
    stop(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_pgenv_embedded_ignores_callers_pg_vars),
        cmocka_unit_test(test_e2e_pgenv_external_url_takes_libpq_vars),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
