/* The metrics endpoint beyond loopback follows the gRPC API's rules: a
 * --metrics-listen on 0.0.0.0 without TLS is refused at start (exit 100), and
 * so is one with TLS but no tokens; with --tls-cert and --tokens-file it
 * serves HTTPS, where a scrape without a token or with a wrong one gets 401,
 * a viewer's token 200, and plain HTTP no answer. Refusals are counted. */
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
#include "metrics_fixture.h"
#include "testlib.h"
#include "tls_fixture.h"

#define VIEWER "metrics-viewer-token-aaaaaaaaaaaaaaaa"

static struct cs_tls_fixture fx;
static int metrics_port;
static char url[64], ca_path[PATH_MAX];

static int group_setup(void **state)
{
    char tokens[PATH_MAX], text[512] = "";
    static char listen[64];
    int rc = cs_tls_fixture_setup(&fx);
    if (rc != 0)
        return rc;
    cs_tls_token_line(text, sizeof(text), "scraper", "viewer", VIEWER);
    cs_tls_write(&fx, "tokens", text, 0600);
    metrics_port = cs_metrics_free_port();
    (void)snprintf(listen, sizeof(listen), "0.0.0.0:%d", metrics_port);
    (void)snprintf(url, sizeof(url), "https://127.0.0.1:%d/metrics", metrics_port);
    cs_tls_path(&fx, "ca.pem", ca_path);
    const char *extra[] = {"--tokens-file", cs_tls_path(&fx, "tokens", tokens), "--metrics-listen",
                           listen, NULL};
    return cs_tls_fixture_start(&fx, extra);
}

static int group_teardown(void **state)
{
    return cs_tls_fixture_teardown(&fx);
}

static void test_beyond_loopback_plain_refused(void **state)
{
    char listen[64], log[4096];
    (void)snprintf(listen, sizeof(listen), "0.0.0.0:%d", cs_metrics_free_port());
    const char *extra[] = {"--metrics-listen", listen, NULL};
    struct cs_testd_options opts = {.database_url = cs_testpg_url(fx.pg), .extra_args = extra};
    assert_int_equal(cs_testd_start_refused(&opts, log, sizeof(log)), 100);
    if (strstr(log, "beyond loopback") == NULL || strstr(log, "--tls-cert") == NULL)
        fail_msg("the refusal does not say why: %s", log);
}

static void test_beyond_loopback_tls_without_tokens_refused(void **state)
{
    char listen[64], log[4096];
    (void)snprintf(listen, sizeof(listen), "0.0.0.0:%d", cs_metrics_free_port());
    const char *extra[] = {"--metrics-listen", listen, NULL};
    assert_int_equal(cs_tls_fixture_refused(&fx, "server", extra, log, sizeof(log)), 100);
    if (strstr(log, "--tokens-file") == NULL)
        fail_msg("the refusal does not name --tokens-file: %s", log);
}

/* A scrape over HTTPS, with "Authorization: Bearer token" unless token is
 * NULL. */
static char *scrape_with(const char *token, int *status)
{
    char header[128] = "";
    if (token != NULL)
        (void)snprintf(header, sizeof(header), "Authorization: Bearer %s", token);
    const char *args[] = {"--cacert", ca_path, token != NULL ? "-H" : NULL, header, NULL};
    return cs_metrics_curl(url, args, status);
}

static void test_no_token_unauthorized(void **state)
{
    int status;
    char *body = scrape_with(NULL, &status);
    assert_int_equal(status, 401);
    assert_non_null(strstr(body, "Bearer"));
    free(body);
}

static void test_wrong_token_unauthorized(void **state)
{
    int status;
    free(scrape_with("not-a-token-of-the-file", &status));
    assert_int_equal(status, 401);
}

static void test_plain_http_gets_no_scrape(void **state)
{
    int status;
    char *body = cs_metrics_http(metrics_port, "GET", "/metrics", &status);
    assert_int_not_equal(status, 200);
    assert_null(strstr(body, "csched_"));
    free(body);
}

static void test_viewer_token_scrapes(void **state)
{
    int status;
    char *body = scrape_with(VIEWER, &status);
    assert_int_equal(status, 200);
    cs_metrics_promtool_ok(body);
    double refused;
    assert_true(cs_metrics_value(
        body, "csched_metrics_scrapes_refused_total{reason=\"unauthenticated\"}", &refused));
    assert_true(refused >= 2);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_beyond_loopback_plain_refused),
        cmocka_unit_test(test_beyond_loopback_tls_without_tokens_refused),
        cmocka_unit_test(test_no_token_unauthorized),
        cmocka_unit_test(test_wrong_token_unauthorized),
        cmocka_unit_test(test_plain_http_gets_no_scrape),
        cmocka_unit_test(test_viewer_token_scrapes),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
