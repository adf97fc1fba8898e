/* Unit tests of label selectors: every operator on labels that have the
 * key, lack it or have another value; blanks; the terms refused, each named
 * in the error with the field. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "label_selector.h"

/* The labels env=prod, tier=web, zone=eu-1 and x.io/team=core. */
static struct cs_kv kv[] = {
    {.key = "env", .value = "prod"},
    {.key = "tier", .value = "web"},
    {.key = "zone", .value = "eu-1"},
    {.key = "x.io/team", .value = "core"},
};
static struct cs_kv *const labels[] = {&kv[0], &kv[1], &kv[2], &kv[3]};

/* Whether text parses and matches the labels above (n of them). */
static bool matches_n(const char *text, size_t n)
{
    struct cs_label_selector sel;
    struct cs_err err = {0};
    int rc = cs_label_selector_parse(&sel, text, "label_selector", &err);
    if (rc != 0)
        fail_msg("'%s' refused: %s", text, err.msg);
    bool m = cs_label_selector_matches(&sel, labels, n);
    cs_label_selector_free(&sel);
    return m;
}

static bool matches(const char *text)
{
    return matches_n(text, 4);
}

static void test_label_selector_operators(void **state)
{
    (void)state;
    assert_true(matches(""));
    assert_true(matches("  "));
    assert_true(matches("env=prod"));
    assert_true(matches("env==prod"));
    assert_false(matches("env=dev"));
    assert_false(matches("env!=prod"));
    assert_true(matches("env!=dev"));
    assert_true(matches("missing!=x"));
    assert_true(matches("zone in (eu-1,us-2)"));
    assert_false(matches("zone in (us-2)"));
    assert_false(matches("missing in (a)"));
    assert_true(matches("zone notin (us-2, us-3)"));
    assert_false(matches("zone notin (eu-1)"));
    assert_true(matches("missing notin (a)"));
    assert_true(matches("tier"));
    assert_false(matches("missing"));
    assert_true(matches("!missing"));
    assert_false(matches("!tier"));
    assert_true(matches("x.io/team=core"));
    assert_true(matches("env=prod,tier=web, zone in(eu-1) ,!missing"));
    assert_false(matches("env=prod,tier=db"));
    /* A job without labels. */
    assert_true(matches_n("env!=prod,!env,env notin (prod)", 0));
    assert_false(matches_n("env", 0));
    /* in and notin are keys too when no set follows. */
    assert_false(matches("in"));
    assert_true(matches("env = prod"));
    assert_false(matches("env="));
}

/* Each refused selector, and the term its error names. */
static void test_label_selector_refused(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"env=prod,,tier", "''"},
        {"env=prod,", "''"},
        {"=prod", "'=prod'"},
        {"env=a b", "'env=a b'"},
        {"env=a(b", "'env=a(b'"},
        {"env===a", "'env===a'"},
        {"env in a", "'env in a'"},
        {"x, env in (a", "' env in (a'"},
        {"env in (a,,b)", "'env in (a,,b)'"},
        {"env in ()", "'env in ()'"},
        {"env notin (a) b", "'env notin (a) b'"},
        {"!env=prod", "'!env=prod'"},
        {"!", "'!'"},
        {"env like a", "'env like a'"},
        {"a,env < 3", "'env < 3'"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cs_label_selector sel;
        struct cs_err err = {0};
        int rc = cs_label_selector_parse(&sel, bad[i][0], "label_selector", &err);
        cs_label_selector_free(&sel);
        if (rc != -EINVAL || strcmp(err.field, "label_selector") != 0 ||
            strstr(err.msg, bad[i][1]) == NULL)
            fail_msg("'%s': rc %d, field '%s', message '%s'; want -EINVAL naming %s", bad[i][0], rc,
                     err.field, err.msg, bad[i][1]);
    }
}

static void test_label_selector_limits(void **state)
{
    (void)state;
    char text[CS_LABEL_SELECTOR_BYTES_MAX + 2];
    struct cs_label_selector sel;
    struct cs_err err = {0};

    memset(text, 'k', sizeof(text) - 1);
    text[sizeof(text) - 1] = '\0';
    assert_int_equal(cs_label_selector_parse(&sel, text, "label_selector", &err), -EINVAL);
    assert_string_equal(err.field, "label_selector");
    cs_label_selector_free(&sel);
    /* A key longer than any job's label key. */
    text[64] = '\0';
    assert_int_equal(cs_label_selector_parse(&sel, text, "label_selector", &err), -EINVAL);
    cs_label_selector_free(&sel);
    text[63] = '\0';
    assert_int_equal(cs_label_selector_parse(&sel, text, "label_selector", &err), 0);
    cs_label_selector_free(&sel);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_selector_operators),
        cmocka_unit_test(test_label_selector_refused),
        cmocka_unit_test(test_label_selector_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
