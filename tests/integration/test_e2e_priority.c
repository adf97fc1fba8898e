/* cschedd's priority against its jobs (docs/design/0014-session-nice.md
 * and 0016-the-database-backends-nice.md): its session's nice value is
 * shared by the PostgreSQL backend that makes its commits, a session of its
 * own, while a job's session stays at 0. Read from /proc/PID/autogroup of
 * the real processes: cschedd, its backend (found in pg_stat_activity by
 * the application name cschedd gives it), and a job that prints its own. */
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

/* The pid of the backend serving cschedd's store ("cschedd pid N.K on
 * HOST"), or 0. */
static int backend_pid(struct cs_e2e *e)
{
    char sql[160];
    int pid = 0;
    PGconn *admin = PQconnectdb(cs_testpg_url(e->pg));

    assert_int_equal(PQstatus(admin), CONNECTION_OK);
    snprintf(sql, sizeof(sql),
             "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'cschedd pid %d.%%'",
             (int)cs_testd_pid(e->d));
    PGresult *res = PQexec(admin, sql);
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    if (PQntuples(res) == 1)
        pid = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    PQfinish(admin);
    return pid;
}

static void test_e2e_priority_backend_shares_cschedd_nice(void **state)
{
    struct cs_e2e *e = *state;
    int server_nice = cs_test_session_nice(cs_testd_pid(e->d));
    char name[64];

    if (server_nice == CS_TEST_NO_AUTOGROUP || server_nice == 0) {
        fprintf(stderr,
                "cschedd's session is at nice %d here (no autogroup scheduling, or no "
                "CAP_SYS_NICE): nothing to share\n",
                server_nice);
        skip();
    }
    int backend = backend_pid(e);
    if (backend == 0)
        fail_msg("no backend of cschedd pid %d in pg_stat_activity", (int)cs_testd_pid(e->d));
    if (cs_test_session_nice(backend) != server_nice)
        fail_msg("the database backend %d is at session nice %d, cschedd at %d", backend,
                 cs_test_session_nice(backend), server_nice);

    cs_e2e_name(name, sizeof(name), "priority");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "cat /proc/self/autogroup"),
                                   NULL);
    int64_t id = cs_e2e_trigger(e, name);
    Csched__V1__Run *run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
    size_t len = 0;
    char *out = cs_e2e_read_logs(e, id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    if (strstr(out, " nice 0") == NULL)
        fail_msg("a job's session should stay at nice 0; it printed \"%s\"", out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_priority_backend_shares_cschedd_nice),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
