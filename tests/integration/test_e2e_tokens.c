/* Bearer tokens over TLS, end to end, and the reload on SIGHUP: a real
 * cschedd with --tls-cert, --tls-key and --tokens-file (no client
 * certificates asked for). A token of each role gets its role; a call with
 * a wrong token or none gets UNAUTHENTICATED. A tokens file that does not
 * parse, or a key that others may read, stops the start; at a reload a bad
 * file leaves the files in use as they were. After the tokens file and the
 * certificate are replaced and SIGHUP sent, the old token is refused and the
 * new one taken, new handshakes see the new certificate (from another CA),
 * and a Watch stream opened before goes on over its connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>
#include <grpc/status.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"
#include "testlib.h"
#include "tls_fixture.h"

#define VIEWER "viewer-token-aaaaaaaaaaaaaaaaaaaaaaaa"
#define OPERATOR "operator-token-bbbbbbbbbbbbbbbbbbbbb"
#define ADMIN "admin-token-ccccccccccccccccccccccccccc"
#define FRESH "fresh-viewer-token-ddddddddddddddddd"
#define RELOAD_TIMEOUT_MS 10000

static struct cs_tls_fixture fx;

static void write_tokens(const char *viewer_name, const char *viewer)
{
    char text[1024] = "# name role sha256\n\n";

    cs_tls_token_line(text, sizeof(text), viewer_name, "viewer", viewer);
    cs_tls_token_line(text, sizeof(text), "deploy-bot", "operator", OPERATOR);
    cs_tls_token_line(text, sizeof(text), "root-bot", "admin", ADMIN);
    cs_tls_write(&fx, "tokens", text, 0600);
}

static int group_setup(void **state)
{
    char tokens[PATH_MAX];
    int rc = cs_tls_fixture_setup(&fx);

    if (rc != 0)
        return rc;
    write_tokens("viewer-bot", VIEWER);
    const char *extra[] = {"--tokens-file", cs_tls_path(&fx, "tokens", tokens), NULL};
    return cs_tls_fixture_start(&fx, extra);
}

static int group_teardown(void **state)
{
    return cs_tls_fixture_teardown(&fx);
}

static void test_no_token_unauthenticated(void **state)
{
    struct cs_client *c = cs_tls_client(&fx, "ca", NULL, NULL);
    struct cs_status st;
    int rc = cs_tls_list_jobs(c, &st);

    cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAUTHENTICATED, "Bearer");
    cs_client_free(c);
}

static void test_wrong_token_unauthenticated(void **state)
{
    struct cs_client *c = cs_tls_client(&fx, "ca", NULL, "no-such-token");
    struct cs_status st;
    int rc = cs_tls_list_jobs(c, &st);

    cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAUTHENTICATED, "token");
    cs_client_free(c);
}

static void test_each_role(void **state)
{
    struct cs_client *viewer = cs_tls_client(&fx, "ca", NULL, VIEWER);
    struct cs_client *operator= cs_tls_client(&fx, "ca", NULL, OPERATOR);
    struct cs_client *admin = cs_tls_client(&fx, "ca", NULL, ADMIN);
    struct cs_status st;
    int rc;

    assert_int_equal(cs_tls_list_jobs(viewer, &st), 0);
    rc = cs_tls_trigger(viewer, "no-such-job", &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_PERMISSION_DENIED, "operator");
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_PERMISSION_DENIED, "token:viewer-bot");

    rc = cs_tls_trigger(operator, "no-such-job", &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_NOT_FOUND, NULL);
    rc = cs_tls_create_job(operator, "tok-op", &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_PERMISSION_DENIED, "admin");

    assert_int_equal(cs_tls_create_job(admin, "tok-admin", &st), 0);
    cs_client_free(admin);
    cs_client_free(operator);
    cs_client_free(viewer);
}

/* Polls until the fresh token is taken over a connection to the new
 * certificate, or fails. */
static void wait_reloaded(void)
{
    int64_t deadline = cs_test_now_ms() + RELOAD_TIMEOUT_MS;
    struct cs_status st;

    for (;;) {
        struct cs_client *c = cs_tls_client(&fx, "ca2", NULL, FRESH);
        int rc = cs_tls_list_jobs(c, &st);

        cs_client_free(c);
        if (rc == 0)
            return;
        if (cs_test_now_ms() > deadline)
            fail_msg("no reload after SIGHUP: %s %s", cs_status_code_name(rc), st.message);
        cs_test_sleep_ms(100);
    }
}

/* Triggers job and reads the stream's next event, the run's first. */
static void trigger_and_watch(struct cs_client *c, const char *job, struct cs_test_events *events)
{
    const Csched__V1__Event *ev = NULL;
    struct cs_status st;
    int rc;

    assert_int_equal(cs_tls_trigger(c, job, &st), 0);
    rc = cs_test_next_event(events, &ev, &st);
    if (rc != 1)
        fail_msg("Watch: %d, %s %s", rc, cs_status_code_name(st.code), st.message);
    assert_string_equal(ev->job_name, job);
}

/* Waits for the daemon's log to hold line. */
static void wait_log(const char *line)
{
    int64_t deadline = cs_test_now_ms() + RELOAD_TIMEOUT_MS;
    char buf[1024];

    for (;;) {
        FILE *f = fopen(cs_testd_log_path(fx.d), "r");
        bool found = false;

        assert_non_null(f);
        while (!found && fgets(buf, sizeof(buf), f) != NULL)
            found = strstr(buf, line) != NULL;
        fclose(f);
        if (found)
            return;
        if (cs_test_now_ms() > deadline)
            fail_msg("the log never said \"%s\"", line);
        cs_test_sleep_ms(50);
    }
}

/* Sends SIGHUP, waits for the log to say logged, and makes a call with
 * token on a new connection: it must end with want (0: OK). */
static void reload_then_call(const char *logged, const char *token, int want)
{
    struct cs_client *c;
    struct cs_status st;
    int rc;

    assert_int_equal(kill(cs_testd_pid(fx.d), SIGHUP), 0);
    wait_log(logged);
    c = cs_tls_client(&fx, "ca", NULL, token);
    rc = cs_tls_list_jobs(c, &st);
    if (want == 0)
        assert_int_equal(rc, 0);
    else
        cs_e2e_assert_status(rc, &st, want, "token");
    cs_client_free(c);
}

/* A tokens file that no longer parses, or that others may read, and a
 * certificate that does not parse are logged, and the files in use stay. */
static void test_bad_reload_keeps_tokens(void **state)
{
    char text[1024] = "";

    cs_tls_write(&fx, "tokens", "viewer-bot boss 1234\n", 0600);
    reload_then_call("tokens:1: role \"boss\" must be viewer, operator or admin", VIEWER, 0);
    /* Readable by others: refused the same way. */
    cs_tls_token_line(text, sizeof(text), "other-bot", "viewer", FRESH);
    cs_tls_write(&fx, "tokens", text, 0644);
    reload_then_call("lets others read it", FRESH, GRPC_STATUS_UNAUTHENTICATED);
    write_tokens("viewer-bot", VIEWER);
    /* A certificate that does not parse: the one in use stays. */
    cs_tls_write(&fx, "server.pem", "not a certificate\n", 0644);
    reload_then_call("server.pem: not a PEM certificate", VIEWER, 0);
}

/* A bad tokens file stops the start, naming the file, the line and why.
 * server.pem no longer parses (above): this server uses server2.pem. */
static void test_bad_tokens_refuse_start(void **state)
{
    char bad[PATH_MAX], log[8192];
    const char *extra[] = {"--tokens-file", cs_tls_path(&fx, "bad-tokens", bad), NULL};

    cs_tls_write(&fx, "bad-tokens", "# ok\nname viewer not-a-hash\n", 0600);
    assert_true(cs_tls_fixture_refused(&fx, "server2", extra, log, sizeof(log)) > 0);
    if (strstr(log, "bad-tokens:2: the hash must be 64 hex digits") == NULL)
        fail_msg("the log does not name the line: %s", log);
}

/* A private key that others may read stops the start too. */
static void test_loose_key_refuses_start(void **state)
{
    char pem[PATH_MAX], key[PATH_MAX], loose_pem[PATH_MAX], loose_key[PATH_MAX];
    char cmd[5 * PATH_MAX], log[8192];

    snprintf(cmd, sizeof(cmd), "cp %s %s && cp %s %s && chmod 644 %s",
             cs_tls_path(&fx, "server2.pem", pem), cs_tls_path(&fx, "loose.pem", loose_pem),
             cs_tls_path(&fx, "server2.key", key), cs_tls_path(&fx, "loose.key", loose_key),
             loose_key);
    assert_int_equal(system(cmd), 0);
    assert_true(cs_tls_fixture_refused(&fx, "loose", NULL, log, sizeof(log)) > 0);
    if (strstr(log, "loose.key: mode 0644 lets others read it") == NULL)
        fail_msg("the log does not say why: %s", log);
}

static void test_sighup_reload(void **state)
{
    struct cs_client *old = cs_tls_client(&fx, "ca", NULL, ADMIN);
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_call_opts opts = {.timeout_ms = 60000};
    struct cs_test_events events = {0};
    struct cs_stream *stream = NULL;
    char pem[PATH_MAX], key[PATH_MAX], pem2[PATH_MAX], key2[PATH_MAX], cmd[5 * PATH_MAX];
    struct cs_status st;
    int rc;

    assert_int_equal(cs_tls_create_job(old, "tok-watched", &st), 0);
    req.job_name = "tok-watched";
    assert_int_equal(cs_scheduler_watch(old, &req, &stream, &opts, &st), 0);
    events.stream = stream;
    trigger_and_watch(old, "tok-watched", &events);

    write_tokens("fresh-bot", FRESH);
    snprintf(cmd, sizeof(cmd), "cp %s %s && cp %s %s", cs_tls_path(&fx, "server2.pem", pem2),
             cs_tls_path(&fx, "server.pem", pem), cs_tls_path(&fx, "server2.key", key2),
             cs_tls_path(&fx, "server.key", key));
    assert_int_equal(system(cmd), 0);
    assert_int_equal(kill(cs_testd_pid(fx.d), SIGHUP), 0);
    wait_reloaded();

    struct cs_client *c = cs_tls_client(&fx, "ca2", NULL, VIEWER);
    rc = cs_tls_list_jobs(c, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAUTHENTICATED, "token");
    cs_client_free(c);
    /* A new handshake trusting only the old CA meets the new certificate. */
    c = cs_tls_client(&fx, "ca", NULL, ADMIN);
    rc = cs_tls_list_jobs(c, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAVAILABLE, NULL);
    cs_client_free(c);

    /* The connection made before the reload is still up, stream and all. */
    trigger_and_watch(old, "tok-watched", &events);
    cs_test_events_done(&events);
    cs_stream_free(stream);
    cs_client_free(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_token_unauthenticated),
        cmocka_unit_test(test_wrong_token_unauthenticated),
        cmocka_unit_test(test_each_role),
        cmocka_unit_test(test_bad_reload_keeps_tokens),
        cmocka_unit_test(test_bad_tokens_refuse_start),
        cmocka_unit_test(test_loose_key_refuses_start),
        cmocka_unit_test(test_sighup_reload),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
