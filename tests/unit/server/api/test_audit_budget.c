/* Unit tests of audit_budget: a caller's refusals recorded up to the
 * budget of a minute and the rest summarised once when it ends; callers
 * without an identity bounded all together, however many addresses, with
 * one summary for them all; callers who lose their place keep their count;
 * and when the summaries are due. The time is given: no sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "audit_budget.h"

#define MINUTE CS_AUDIT_BUDGET_MINUTE_MS
/* A time well inside a minute, as the loop's clock might read. */
#define T0 (1000 * (uint64_t)MINUTE + 5)

/* What the summaries said. */
struct said {
    size_t n;
    struct {
        char identity[CS_IDENTITY_NAME_MAX];
        char method[CS_AUDIT_BUDGET_METHOD_MAX];
        char last_unknown[CS_IDENTITY_NAME_MAX];
        int code;
        uint64_t left_out;
    } rows[300];
};

static void said_cb(void *arg, const struct cs_audit_summary *s)
{
    struct said *said = arg;
    assert_true(said->n < sizeof(said->rows) / sizeof(said->rows[0]));
    snprintf(said->rows[said->n].identity, CS_IDENTITY_NAME_MAX, "%s", s->identity);
    snprintf(said->rows[said->n].method, CS_AUDIT_BUDGET_METHOD_MAX, "%s", s->method);
    snprintf(said->rows[said->n].last_unknown, CS_IDENTITY_NAME_MAX, "%s",
             s->last_unknown != NULL ? s->last_unknown : "");
    said->rows[said->n].code = s->code;
    said->rows[said->n].left_out = s->left_out;
    said->n++;
}

/* n refusals of identity at now_ms: how many are to be recorded. */
static size_t refuse(struct cs_audit_budget *b, struct said *said, const char *identity, bool known,
                     size_t n, uint64_t now_ms)
{
    struct cs_audit_refusal r = {identity, known, "TriggerJob", 16};
    size_t recorded = 0;
    for (size_t i = 0; i < n; i++)
        recorded += cs_audit_budget_take(b, &r, now_ms, said_cb, said);
    return recorded;
}

/* 61 refusals in a minute: 60 recorded, and one summary when it ends,
 * counting the one left out, with the method and code it had. */
static void test_audit_budget_per_caller(void **state)
{
    static struct cs_audit_budget b;
    static struct said said;
    cs_audit_budget_init(&b, T0);
    assert_int_equal(refuse(&b, &said, "unix:uid=65534(nobody)", true, 61, T0), 60);
    assert_int_equal(said.n, 0);
    cs_audit_budget_roll(&b, T0 + MINUTE - 6, said_cb, &said); /* the same minute */
    assert_int_equal(said.n, 0);
    cs_audit_budget_roll(&b, T0 + MINUTE, said_cb, &said);
    assert_int_equal(said.n, 1);
    assert_string_equal(said.rows[0].identity, "unix:uid=65534(nobody)");
    assert_string_equal(said.rows[0].method, "TriggerJob");
    assert_int_equal(said.rows[0].code, 16);
    assert_int_equal(said.rows[0].left_out, 1);
    assert_string_equal(said.rows[0].last_unknown, "");
    /* A new minute, a new budget, and nothing more to say. */
    assert_int_equal(refuse(&b, &said, "unix:uid=65534(nobody)", true, 60, T0 + MINUTE), 60);
    cs_audit_budget_roll(&b, T0 + 3 * MINUTE, said_cb, &said);
    assert_int_equal(said.n, 1);
}

/* One address, many refusals: as one caller, its own summary. */
static void test_audit_budget_one_address(void **state)
{
    static struct cs_audit_budget b;
    static struct said said;
    cs_audit_budget_init(&b, T0);
    assert_int_equal(refuse(&b, &said, "ipv4:192.0.2.1", false, 100, T0), 60);
    cs_audit_budget_roll(&b, T0 + MINUTE, said_cb, &said);
    assert_int_equal(said.n, 1);
    assert_string_equal(said.rows[0].identity, "ipv4:192.0.2.1");
    assert_int_equal(said.rows[0].left_out, 40);
}

/* 500 addresses of 5 refusals each in a minute: at most the budget of all
 * unknown callers is recorded, summaries included, and one row more says
 * how many of theirs were left out. */
static void test_audit_budget_many_addresses(void **state)
{
    static struct cs_audit_budget b;
    static struct said said;
    char addr[64];
    size_t recorded = 0;
    cs_audit_budget_init(&b, T0);
    for (int i = 0; i < 500; i++) {
        snprintf(addr, sizeof(addr), "ipv6:[2001:db8::%x]", i);
        recorded += refuse(&b, &said, addr, false, 5, T0 + (uint64_t)i);
    }
    assert_int_equal(recorded, CS_AUDIT_BUDGET_UNKNOWN);
    /* Known callers are not held by the unknown ones' budget. */
    assert_int_equal(refuse(&b, &said, "token:deploy-bot", true, 3, T0 + 600), 3);
    assert_int_equal(said.n, 0);
    cs_audit_budget_roll(&b, T0 + MINUTE, said_cb, &said);
    assert_int_equal(said.n, 1);
    assert_string_equal(said.rows[0].identity, CS_AUDIT_BUDGET_ALL_UNKNOWN);
    assert_int_equal(said.rows[0].left_out, 500 * 5 - CS_AUDIT_BUDGET_UNKNOWN);
    assert_string_equal(said.rows[0].last_unknown, "ipv6:[2001:db8::1f3]");
}

/* Two addresses over their own budget fill that of all unknown callers:
 * their summaries, past it, go into the summary of all. */
static void test_audit_budget_summaries_within_budget(void **state)
{
    static struct cs_audit_budget b;
    static struct said said;
    cs_audit_budget_init(&b, T0);
    assert_int_equal(refuse(&b, &said, "ipv4:192.0.2.1", false, 61, T0), 60);
    assert_int_equal(refuse(&b, &said, "ipv4:192.0.2.2", false, 59, T0), 59);
    cs_audit_budget_roll(&b, T0 + MINUTE, said_cb, &said);
    /* 119 recorded: the first's summary is the 120th, and nothing is left
     * out of the second. */
    assert_int_equal(said.n, 1);
    assert_string_equal(said.rows[0].identity, "ipv4:192.0.2.1");
    assert_int_equal(said.rows[0].left_out, 1);

    said.n = 0;
    assert_int_equal(refuse(&b, &said, "ipv4:192.0.2.1", false, 70, T0 + MINUTE), 60);
    assert_int_equal(refuse(&b, &said, "ipv4:192.0.2.2", false, 70, T0 + MINUTE), 60);
    cs_audit_budget_roll(&b, T0 + 2 * MINUTE, said_cb, &said);
    assert_int_equal(said.n, 1);
    assert_string_equal(said.rows[0].identity, CS_AUDIT_BUDGET_ALL_UNKNOWN);
    assert_int_equal(said.rows[0].left_out, 20);
}

/* A caller that loses its place to a newer one keeps what it left out: a
 * known one's summary is said at once, an unknown one's goes into the
 * summary of all. */
static void test_audit_budget_places(void **state)
{
    static struct cs_audit_budget b;
    static struct said said;
    char name[64];
    cs_audit_budget_init(&b, T0);
    assert_int_equal(refuse(&b, &said, "x509:CN=first", true, 62, T0), 60);
    assert_int_equal(refuse(&b, &said, "ipv4:192.0.2.1", false, 62, T0), 60);
    for (int i = 0; i < CS_AUDIT_BUDGET_CALLERS - 1; i++) {
        snprintf(name, sizeof(name), "x509:CN=other-%d", i);
        refuse(&b, &said, name, true, 1, T0 + 1);
        snprintf(name, sizeof(name), "ipv4:198.51.100.%d", i);
        refuse(&b, &said, name, false, 1, T0 + 1);
    }
    assert_int_equal(said.n, 0);
    refuse(&b, &said, "x509:CN=newest", true, 1, T0 + 2);
    assert_int_equal(said.n, 1);
    assert_string_equal(said.rows[0].identity, "x509:CN=first");
    assert_int_equal(said.rows[0].left_out, 2);
    refuse(&b, &said, "ipv4:203.0.113.9", false, 1, T0 + 2);
    assert_int_equal(said.n, 1);
    cs_audit_budget_roll(&b, T0 + MINUTE, said_cb, &said);
    assert_int_equal(said.n, 2);
    assert_string_equal(said.rows[1].identity, CS_AUDIT_BUDGET_ALL_UNKNOWN);
    /* The 2 of the one that lost its place, and 4 past the budget of all:
     * 60 of the first and 60 of the others were recorded of 124. */
    assert_int_equal(said.rows[1].left_out, 2 + 4);
}

/* Summaries are due at the end of the minute they are about, and only
 * when something was left out; ending a minute early says them at once. */
static void test_audit_budget_due(void **state)
{
    static struct cs_audit_budget b;
    static struct said said;
    uint64_t minute_start = T0 / MINUTE * MINUTE;
    cs_audit_budget_init(&b, T0);
    assert_int_equal(cs_audit_budget_due_ms(&b), 0);
    refuse(&b, &said, "ipv4:192.0.2.1", false, 60, T0);
    assert_int_equal(cs_audit_budget_due_ms(&b), 0);
    refuse(&b, &said, "ipv4:192.0.2.1", false, 1, T0);
    assert_int_equal(cs_audit_budget_due_ms(&b), minute_start + MINUTE);
    cs_audit_budget_end(&b, said_cb, &said);
    assert_int_equal(said.n, 1);
    assert_int_equal(cs_audit_budget_due_ms(&b), 0);
    /* The last millisecond of a minute and the first of the next. */
    cs_audit_budget_init(&b, minute_start);
    assert_int_equal(refuse(&b, &said, "ipv4:192.0.2.1", false, 61, minute_start + MINUTE - 1), 60);
    assert_int_equal(refuse(&b, &said, "ipv4:192.0.2.1", false, 1, minute_start + MINUTE), 1);
    assert_int_equal(said.n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_audit_budget_per_caller),
        cmocka_unit_test(test_audit_budget_one_address),
        cmocka_unit_test(test_audit_budget_many_addresses),
        cmocka_unit_test(test_audit_budget_summaries_within_budget),
        cmocka_unit_test(test_audit_budget_places),
        cmocka_unit_test(test_audit_budget_due),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
