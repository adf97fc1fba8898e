/* Refused calls over TCP in the audit trail: a real cschedd serving TLS
 * with bearer tokens. A refusal for want of a role or of an identity names
 * the job its request names; a caller without an identity is named by its
 * address, without the port. A client that opens a new connection every few
 * calls with a wrong token, for seconds, writes at most the budget of one
 * caller a minute (before, each connection was a new caller with a budget
 * of its own: every call was a row), and what it left out is summarised
 * when the minute ends (by the timer) or when cschedd stops; over IPv4 and
 * over IPv6. */
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>
#include <grpc/status.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"
#include "testlib.h"
#include "tls_fixture.h"

#define VIEWER "viewer-token-aaaaaaaaaaaaaaaaaaaaaaaa"
#define ADMIN "admin-token-ccccccccccccccccccccccccccc"
#define WRONG "wrong-token-zzzzzzzzzzzzzzzzzzzzzzzzzzzz"
/* cschedd's budget: a caller's refusals recorded a minute, at most. */
#define PER_CALLER 60
/* A flood may span two minutes: their rows, and the first one's summary. */
#define FLOOD_ROWS_MAX (2 * PER_CALLER + 1)
#define CALLS_PER_CONNECTION 5
/* Four times the rows a flood may write: a few seconds of new connections
 * (about 100 a second here, 10 under the sanitizers on a loaded machine). */
#define FLOOD_CALLS 500
/* A minute, and time for its summary to commit. */
#define SUMMARY_TIMEOUT_MS 75000

static struct cs_tls_fixture fx;
static char tokens_path[PATH_MAX];
/* Refusals of callers without an identity made by this test, per address. */
static long unknown_v4, unknown_v6;

static int start(const char *listen)
{
    const char *extra[] = {"--tokens-file", tokens_path, "--listen", listen, NULL};
    return cs_tls_fixture_start(&fx, extra);
}

static int group_setup(void **state)
{
    char text[1024] = "";
    int rc = cs_tls_fixture_setup(&fx);

    if (rc != 0)
        return rc;
    cs_tls_token_line(text, sizeof(text), "viewer-bot", "viewer", VIEWER);
    cs_tls_token_line(text, sizeof(text), "root-bot", "admin", ADMIN);
    cs_tls_write(&fx, "tokens", text, 0600);
    cs_tls_path(&fx, "tokens", tokens_path);
    return start("127.0.0.1:0");
}

static int group_teardown(void **state)
{
    return cs_tls_fixture_teardown(&fx);
}

/* The one number sql (with $1 = param) selects. */
static long sql_number(const char *sql, const char *param)
{
    PGconn *conn = PQconnectdb(cs_testpg_url(fx.pg));
    const char *params[] = {param};
    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    PGresult *res = PQexecParams(conn, sql, param != NULL ? 1 : 0, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(conn));
    long n = strtol(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    PQfinish(conn);
    return n;
}

static long last_audit_id(void)
{
    return sql_number("SELECT coalesce(max(id), 0) FROM audit", NULL);
}

static long rows_since(long id)
{
    char text[32];
    snprintf(text, sizeof(text), "%ld", id);
    return sql_number("SELECT count(*) FROM audit WHERE id > $1::bigint", text);
}

/* The refusals of identity the trail accounts for: one per row, and the
 * count each summary row gives. */
static long accounted_for(const char *identity)
{
    return sql_number("SELECT count(*) FILTER (WHERE message NOT LIKE '% more refusals of %')"
                      " + coalesce(sum(split_part(message, ' ', 1)::bigint)"
                      "   FILTER (WHERE message LIKE '% more refusals of this caller%'), 0)"
                      " FROM audit WHERE identity = $1",
                      identity);
}

static const struct cs_call_opts opts = {.timeout_ms = CS_E2E_CALL_TIMEOUT_MS,
                                         .wait_for_ready = true};

/* TriggerJob of job, which must be refused with want. */
static void refused_trigger(struct cs_client *c, const char *job, int want)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    req.job_name = (char *)job;
    cs_e2e_assert_status(cs_scheduler_trigger_job(c, &req, &run, &opts, &st), &st, want, NULL);
}

/* The rows about job, newest first (caller frees). */
static Csched__V1__ListAuditResponse *audit_of_job(const char *job)
{
    struct cs_client *admin = cs_tls_client(&fx, "ca", NULL, ADMIN);
    Csched__V1__ListAuditRequest req = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    Csched__V1__ListAuditResponse *resp = NULL;
    struct cs_status st = {0};
    req.job_name = (char *)job;
    if (cs_scheduler_list_audit(admin, &req, &resp, &opts, &st) != 0)
        fail_msg("ListAudit: %s %s", cs_status_code_name(st.code), st.message);
    cs_client_free(admin);
    return resp;
}

static void assert_one_row(const char *job, const char *method, const char *identity, int code)
{
    Csched__V1__ListAuditResponse *audit = audit_of_job(job);
    if (audit->n_entries != 1)
        fail_msg("%zu rows name job %s, not one", audit->n_entries, job);
    assert_string_equal(audit->entries[0]->method, method);
    assert_string_equal(audit->entries[0]->identity, identity);
    assert_int_equal(audit->entries[0]->code, code);
    csched__v1__list_audit_response__free_unpacked(audit, NULL);
}

/* Refused before their requests were read, for want of a role, a good
 * token or any: each row names the job the request named, and a caller
 * without an identity is its address. */
static void test_refusals_name_their_target(void **state)
{
    struct cs_client *viewer = cs_tls_client(&fx, "ca", NULL, VIEWER);
    struct cs_client *wrong = cs_tls_client(&fx, "ca", NULL, WRONG);
    struct cs_client *none = cs_tls_client(&fx, "ca", NULL, NULL);
    Csched__V1__BackfillJobRequest backfill = CSCHED__V1__BACKFILL_JOB_REQUEST__INIT;
    Csched__V1__BackfillJobResponse *resp = NULL;
    struct cs_status st = {0};

    refused_trigger(viewer, "target-of-viewer", GRPC_STATUS_PERMISSION_DENIED);
    unknown_v4 += 2;
    refused_trigger(wrong, "target-of-wrong-token", GRPC_STATUS_UNAUTHENTICATED);
    backfill.name = "target-of-no-token";
    backfill.from_unix_ms = 1;
    backfill.to_unix_ms = 2;
    cs_e2e_assert_status(cs_scheduler_backfill_job(none, &backfill, &resp, &opts, &st), &st,
                         GRPC_STATUS_UNAUTHENTICATED, NULL);
    assert_one_row("target-of-viewer", "TriggerJob", "token:viewer-bot",
                   GRPC_STATUS_PERMISSION_DENIED);
    assert_one_row("target-of-wrong-token", "TriggerJob", "ipv4:127.0.0.1",
                   GRPC_STATUS_UNAUTHENTICATED);
    assert_one_row("target-of-no-token", "BackfillJob", "ipv4:127.0.0.1",
                   GRPC_STATUS_UNAUTHENTICATED);
    cs_client_free(none);
    cs_client_free(wrong);
    cs_client_free(viewer);
}

/* FLOOD_CALLS refused triggers with a wrong token, on a new connection every
 * few: how many calls were made. */
static long flood(void)
{
    long calls = 0;
    while (calls < FLOOD_CALLS) {
        struct cs_client *c = cs_tls_client(&fx, "ca", NULL, WRONG);
        for (int i = 0; i < CALLS_PER_CONNECTION; i++, calls++)
            refused_trigger(c, "flooded", GRPC_STATUS_UNAUTHENTICATED);
        cs_client_free(c);
    }
    return calls;
}

/* Rows written since id by a flood of calls, with the commit awaited. */
static void assert_flood_bounded(long since_id, long calls)
{
    cs_test_sleep_ms(500);
    long rows = rows_since(since_id);
    fprintf(stderr, "flood: %ld refused calls on new connections, %ld audit rows\n", calls, rows);
    if (rows > FLOOD_ROWS_MAX)
        fail_msg("%ld refused calls, each %d on a new connection, wrote %ld audit rows; at most "
                 "%d were to be",
                 calls, CALLS_PER_CONNECTION, rows, FLOOD_ROWS_MAX);
}

/* Over IPv4: bounded at once; the refusals left out are summarised when
 * their minute ends, with no call after them, so that the trail accounts
 * for every one. */
static void test_refusals_flood_ipv4(void **state)
{
    long before = last_audit_id(), calls = flood();
    unknown_v4 += calls;
    assert_flood_bounded(before, calls);

    int64_t deadline = cs_test_now_ms() + SUMMARY_TIMEOUT_MS;
    long seen;
    while ((seen = accounted_for("ipv4:127.0.0.1")) != unknown_v4) {
        if (cs_test_now_ms() > deadline)
            fail_msg("the trail accounts for %ld refusals of ipv4:127.0.0.1, not %ld", seen,
                     unknown_v4);
        cs_test_sleep_ms(500);
    }
}

/* Over IPv6, and summarised at a clean stop, before its minute ends. */
static void test_refusals_flood_ipv6(void **state)
{
    assert_int_equal(cs_testd_stop(fx.d), 0);
    fx.d = NULL;
    assert_int_equal(start("[::1]:0"), 0);
    long before = last_audit_id(), calls = flood();
    unknown_v6 += calls;
    assert_flood_bounded(before, calls);
    assert_int_equal(cs_testd_stop(fx.d), 0);
    fx.d = NULL;
    assert_int_equal(accounted_for("ipv6:[::1]"), unknown_v6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals_name_their_target),
        cmocka_unit_test(test_refusals_flood_ipv4),
        cmocka_unit_test(test_refusals_flood_ipv6),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
