/* A standby forwarding over TLS with client certificates, end to end: the
 * active replica (the fixture's cschedd, replica "a") requires client
 * certificates; a standby (replica "b") with a certificate good for both
 * ends, trusting the CA by --peer-ca, takes a local client's calls on its
 * socket and forwards them over TLS: the job it creates is the active
 * replica's, made by the caller through the standby. A standby that trusts only the
 * system's roots cannot reach the active replica, and says where the call
 * went. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>
#include <grpc/status.h>
#include <stdio.h>
#include <string.h>

#include "e2e.h"
#include "tls_fixture.h"

static struct cs_tls_fixture fx;

static int group_setup(void **state)
{
    char roles[PATH_MAX], ca[PATH_MAX];
    int rc = cs_tls_fixture_setup(&fx);

    if (rc != 0)
        return rc;
    cs_tls_write(&fx, "roles", "CN=admin-bot admin\n", 0644);
    const char *extra[] = {"--tls-client-ca",
                           cs_tls_path(&fx, "ca.pem", ca),
                           "--tls-client-roles",
                           cs_tls_path(&fx, "roles", roles),
                           "--replica-id",
                           "a",
                           NULL};
    return cs_tls_fixture_start(&fx, extra);
}

static int group_teardown(void **state)
{
    return cs_tls_fixture_teardown(&fx);
}

/* Starts standby b with the peer certificate, trusting --peer-ca peer_ca
 * (NULL: the system's roots); a client of its unix socket into *client. */
static struct cs_testd *start_standby(const char *peer_ca, struct cs_client **client)
{
    char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX], roles[PATH_MAX], pca[PATH_MAX];
    const char *args[20] = {"--listen",
                            "127.0.0.1:0",
                            "--tls-cert",
                            cs_tls_path(&fx, "peer.pem", cert),
                            "--tls-key",
                            cs_tls_path(&fx, "peer.key", key),
                            "--tls-client-ca",
                            cs_tls_path(&fx, "ca.pem", ca),
                            "--tls-client-roles",
                            cs_tls_path(&fx, "roles", roles),
                            "--replica-id",
                            "b",
                            NULL};
    if (peer_ca != NULL) {
        args[12] = "--peer-ca";
        args[13] = cs_tls_path(&fx, peer_ca, pca);
    }
    struct cs_testd_options opts = {.database_url = cs_testpg_url(fx.pg),
                                    .extra_args = args,
                                    .client = &fx.health,
                                    .no_wait = true};
    struct cs_testd *d = NULL;
    assert_int_equal(cs_testd_start(&opts, &d), 0);
    assert_int_equal(cs_client_new(cs_testd_target(d), client), 0);
    return d;
}

/* ListJobs through c until the standby serves and knows the active
 * replica (before, UNAVAILABLE: no socket yet, or naming itself a standby
 * for a heartbeat or two): the first answer that went to the active one. */
static int first_answer(struct cs_client *c, struct cs_status *st)
{
    int64_t deadline = cs_test_now_ms() + 20000;
    int rc;

    while ((rc = cs_tls_list_jobs(c, st)) == GRPC_STATUS_UNAVAILABLE &&
           strstr(st->message, "forwarded to") == NULL && cs_test_now_ms() < deadline)
        cs_test_sleep_ms(20);
    return rc;
}

static void test_forward_over_mtls(void **state)
{
    struct cs_client *via_b = NULL;
    struct cs_testd *b = start_standby("ca.pem", &via_b);
    struct cs_status st = {0};

    assert_int_equal(first_answer(via_b, &st), 0);
    assert_int_equal(cs_tls_create_job(via_b, "made-via-b", &st), 0);
    /* The active replica has it, made by the caller through b. */
    struct cs_client *direct = cs_tls_client(&fx, "ca", "admin", NULL);
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL;
    req.name = "made-via-b";
    assert_int_equal(cs_scheduler_get_job(direct, &req, &job, cs_e2e_opts(), &st), 0);
    fprintf(stderr, "forward_tls: created by \"%s\"\n", job->created_by);
    assert_non_null(strstr(job->created_by, "unix:uid=0"));
    assert_non_null(strstr(job->created_by, "via b"));
    csched__v1__job__free_unpacked(job, NULL);
    cs_client_free(direct);
    cs_client_free(via_b);
    assert_int_equal(cs_testd_stop(b), 0);
}

static void test_forward_untrusted_peer(void **state)
{
    struct cs_client *via_b = NULL;
    struct cs_testd *b = start_standby(NULL, &via_b);
    struct cs_status st = {0};

    assert_int_equal(first_answer(via_b, &st), GRPC_STATUS_UNAVAILABLE);
    fprintf(stderr, "forward_tls: %s\n", st.message);
    assert_non_null(strstr(st.message, "forwarded to the active replica at 127.0.0.1:"));
    cs_client_free(via_b);
    assert_int_equal(cs_testd_stop(b), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_over_mtls),
        cmocka_unit_test(test_forward_untrusted_peer),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
