/* TLS with client certificates (mTLS), end to end: a real cschedd started
 * with --tls-cert, --tls-key, --tls-client-ca, --tls-client-roles and
 * --tokens-file, and libcsched clients over loopback. A certificate gets the
 * role its subject or CN maps to; one without a role gets PERMISSION_DENIED,
 * and a token sent over it wins; a client without a certificate, with one
 * from another CA, or in plaintext fails the handshake; the health service
 * stays open to any certificate. */
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

#define VIEWER_TOKEN "tls-test-viewer-token-0123456789"

static struct cs_tls_fixture fx;

static int group_setup(void **state)
{
    char tokens[512] = "# the token of a viewer\n";
    char roles[PATH_MAX], tokens_path[PATH_MAX], ca[PATH_MAX];
    int rc = cs_tls_fixture_setup(&fx);

    if (rc != 0)
        return rc;
    cs_tls_token_line(tokens, sizeof(tokens), "viewer-bot", "viewer", VIEWER_TOKEN);
    cs_tls_write(&fx, "tokens", tokens, 0600);
    cs_tls_write(&fx, "roles",
                 "# by whole subject, and by common name\n"
                 "CN=ops-bot,O=csched-test operator\n"
                 "CN=admin-bot admin\n",
                 0644);
    const char *extra[] = {"--tls-client-ca",
                           cs_tls_path(&fx, "ca.pem", ca),
                           "--tls-client-roles",
                           cs_tls_path(&fx, "roles", roles),
                           "--tokens-file",
                           cs_tls_path(&fx, "tokens", tokens_path),
                           NULL};
    return cs_tls_fixture_start(&fx, extra);
}

static int group_teardown(void **state)
{
    return cs_tls_fixture_teardown(&fx);
}

static void test_admin_certificate_creates(void **state)
{
    struct cs_client *c = cs_tls_client(&fx, "ca", "admin", NULL);
    struct cs_status st;

    assert_int_equal(cs_tls_create_job(c, "tls-admin", &st), 0);
    assert_int_equal(cs_tls_list_jobs(c, &st), 0);
    cs_client_free(c);
}

static void test_operator_certificate_by_subject(void **state)
{
    struct cs_client *c = cs_tls_client(&fx, "ca", "ops", NULL);
    struct cs_status st;
    int rc = cs_tls_list_jobs(c, &st);

    if (rc != 0)
        fail_msg("ListJobs: %s", st.message);
    /* Past the role check: the job is unknown. */
    rc = cs_tls_trigger(c, "no-such-job", &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_NOT_FOUND, NULL);
    rc = cs_tls_create_job(c, "tls-ops", &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_PERMISSION_DENIED, "admin");
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_PERMISSION_DENIED, "x509:CN=ops-bot,O=csched-test");
    cs_client_free(c);
}

static void test_unmapped_certificate_denied(void **state)
{
    struct cs_client *c = cs_tls_client(&fx, "ca", "nobody", NULL);
    struct cs_status st;
    int serving = 0;
    struct cs_e2e e = {.client = c};
    int rc = cs_tls_list_jobs(c, &st);

    cs_e2e_assert_status(rc, &st, GRPC_STATUS_PERMISSION_DENIED, "--tls-client-roles");
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_PERMISSION_DENIED, "CN=nobody-bot");
    /* The health service asks for no role. */
    assert_int_equal(cs_e2e_health_check(&e, "", &serving), 0);
    cs_client_free(c);
}

static void test_token_wins_over_certificate(void **state)
{
    struct cs_client *c = cs_tls_client(&fx, "ca", "nobody", VIEWER_TOKEN);
    struct cs_status st;
    int rc;

    assert_int_equal(cs_tls_list_jobs(c, &st), 0);
    rc = cs_tls_trigger(c, "no-such-job", &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_PERMISSION_DENIED, "token:viewer-bot");
    cs_client_free(c);
    /* A wrong token is refused, good certificate or not. */
    c = cs_tls_client(&fx, "ca", "admin", "not-a-token-of-this-server");
    rc = cs_tls_list_jobs(c, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAUTHENTICATED, "token");
    cs_client_free(c);
}

/* The handshake fails: the call gets UNAVAILABLE without reaching the server. */
static void assert_refused(struct cs_client *c)
{
    struct cs_status st;
    int rc = cs_tls_list_jobs(c, &st);

    cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAVAILABLE, NULL);
    cs_client_free(c);
}

static void test_no_certificate_refused(void **state)
{
    assert_refused(cs_tls_client(&fx, "ca", NULL, NULL));
}

static void test_other_ca_refused(void **state)
{
    assert_refused(cs_tls_client(&fx, "ca", "stranger", NULL));
}

static void test_plaintext_refused(void **state)
{
    assert_refused(cs_tls_client(&fx, NULL, NULL, NULL));
}

static void test_wrong_server_ca_refused(void **state)
{
    assert_refused(cs_tls_client(&fx, "ca2", "admin", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admin_certificate_creates),
        cmocka_unit_test(test_operator_certificate_by_subject),
        cmocka_unit_test(test_unmapped_certificate_denied),
        cmocka_unit_test(test_token_wins_over_certificate),
        cmocka_unit_test(test_no_certificate_refused),
        cmocka_unit_test(test_other_ca_refused),
        cmocka_unit_test(test_plaintext_refused),
        cmocka_unit_test(test_wrong_server_ca_refused),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
