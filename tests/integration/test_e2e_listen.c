/* End-to-end tests of what cschedd listens on: the unix socket alone by
 * default; --listen without TLS or authentication refused at start (exit
 * code and message) unless --insecure-tcp is given, and then served with a
 * loud warning in the log, the unix socket still served beside it; a
 * second server on a socket in use refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define LOG_BYTES 8192

/* ListJobs through a fresh client of target: the status code. */
static int list_jobs(const char *target, struct cs_status *st)
{
    Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    Csched__V1__ListJobsResponse *resp = NULL;
    const struct cs_call_opts opts = {.timeout_ms = CS_E2E_CALL_TIMEOUT_MS, .wait_for_ready = true};
    struct cs_client *client = cs_test_client_new(target);
    int rc = cs_scheduler_list_jobs(client, &req, &resp, &opts, st);
    if (resp != NULL)
        csched__v1__list_jobs_response__free_unpacked(resp, NULL);
    cs_client_free(client);
    return rc;
}

/* The fixture's server has no TCP port: its target is its socket, mode
 * 0666, and it answers there. */
static void test_e2e_listen_unix_socket_by_default(void **state)
{
    struct cs_e2e *e = *state;
    const char *target = cs_testd_target(e->d);
    struct stat st;
    struct cs_status status;

    assert_int_equal(strncmp(target, "unix:/", 6), 0);
    assert_int_equal(stat(target + 5, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0666);
    assert_int_equal(list_jobs(target, &status), 0);
}

static void test_e2e_listen_plain_tcp_refused(void **state)
{
    struct cs_e2e *e = *state;
    static const char *const args[] = {"--listen", "127.0.0.1:0", NULL};
    struct cs_testd_options opts = {.database_url = cs_testpg_url(e->pg), .extra_args = args};
    char log[LOG_BYTES];

    assert_int_equal(cs_testd_start_refused(&opts, log, sizeof(log)), 100);
    if (strstr(log, "cschedd: --listen 127.0.0.1:0 would serve TCP without TLS or "
                    "authentication") == NULL ||
        strstr(log, "pass --insecure-tcp to accept that") == NULL)
        fail_msg("the refusal does not say why: \"%s\"", log);
}

/* With --insecure-tcp, TCP serves (every caller there is admin) and the log
 * warns; the unix socket serves too. */
static void test_e2e_listen_insecure_tcp_warns(void **state)
{
    struct cs_e2e *e = *state;
    static const char *const args[] = {"--listen", "127.0.0.1:0", "--insecure-tcp", NULL};
    struct cs_testd_options opts = {.database_url = cs_testpg_url(e->pg), .extra_args = args};
    struct cs_testd *d = NULL;
    struct cs_status status;
    char log_path[512], line[1024], sock[300];
    int warned = 0;

    /* The fixture's server holds the database: this one runs on its own. */
    opts.database_url = NULL;
    assert_int_equal(cs_testd_start(&opts, &d), 0);
    assert_int_equal(strncmp(cs_testd_target(d), "127.0.0.1:", 10), 0);
    assert_int_equal(list_jobs(cs_testd_target(d), &status), 0);
    (void)snprintf(sock, sizeof(sock), "unix:%.*s/csched.sock",
                   (int)(strrchr(cs_testd_state_dir(d), '/') - cs_testd_state_dir(d)),
                   cs_testd_state_dir(d));
    assert_int_equal(list_jobs(sock, &status), 0);
    (void)snprintf(log_path, sizeof(log_path), "%.*s/cschedd.log",
                   (int)(strrchr(cs_testd_state_dir(d), '/') - cs_testd_state_dir(d)),
                   cs_testd_state_dir(d));
    FILE *f = fopen(log_path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL)
        warned += strstr(line, " warn cschedd: --insecure-tcp: 127.0.0.1:0 serves without TLS or "
                               "authentication; anyone who reaches it is admin") != NULL;
    fclose(f);
    assert_int_equal(cs_testd_stop(d), 0);
    assert_int_equal(warned, 1);
}

/* A second server given the first one's socket does not take it over. */
static void test_e2e_listen_socket_in_use_refused(void **state)
{
    struct cs_e2e *e = *state;
    const char *args[] = {"--socket", cs_testd_target(e->d) + 5, NULL};
    struct cs_testd_options opts = {.database_url = cs_testpg_url(e->pg), .extra_args = args};
    struct cs_status status;
    char log[LOG_BYTES], want[300];

    assert_int_equal(cs_testd_start_refused(&opts, log, sizeof(log)), 1);
    (void)snprintf(want, sizeof(want), "another server is listening on %s", args[1]);
    if (strstr(log, want) == NULL)
        fail_msg("expected \"%s\" in the log: \"%s\"", want, log);
    assert_int_equal(list_jobs(cs_testd_target(e->d), &status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_listen_unix_socket_by_default),
        cmocka_unit_test(test_e2e_listen_plain_tcp_refused),
        cmocka_unit_test(test_e2e_listen_insecure_tcp_warns),
        cmocka_unit_test(test_e2e_listen_socket_in_use_refused),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
