/* Unit tests of cron: the grammar (every form it accepts, as bitsets, and
 * every error, word for word), cronie's wild/fixed classification, and the
 * next matching wall-clock time across month ends, year ends and leap years,
 * with L, W, # and classic cron's OR rule. Times here are civil seconds: no
 * zone (test_schedule.c has those). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "civil.h"
#include "cron.h"

#define T(y, mo, d, h, mi, s) cs_civil_join(y, mo, d, h, mi, s)

static struct cs_cron parse_ok(const char *text)
{
    struct cs_cron c;
    struct cs_err err = {0};
    int rc = cs_cron_parse(text, &c, &err);
    if (rc != 0)
        fail_msg("\"%s\": %s", text, err.msg);
    return c;
}

static uint64_t bits(const int *v, size_t n)
{
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        m |= 1ull << v[i];
    return m;
}
#define BITS(...) bits((const int[]){__VA_ARGS__}, sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static void test_cron_fields(void **state)
{
    struct cs_cron c = parse_ok("*/5 * * * *");
    assert_int_equal(c.min, BITS(0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55));
    assert_int_equal(c.hour, 0xffffff);
    assert_int_equal(c.mday, 0xfffffffe);
    assert_int_equal(c.month, 0x1ffe);
    assert_int_equal(c.wday, 0x7f);
    assert_int_equal(c.sec, 1);
    assert_int_equal(c.flags, CS_CRON_WILD | CS_CRON_DOM_STAR | CS_CRON_DOW_STAR);
    c = parse_ok("0 0 * 2 5#5");
    assert_false(c.flags & CS_CRON_NEVER);

    c = parse_ok("1-30/7 9-17 1,15,31 * MON-FRI");
    assert_int_equal(c.min, BITS(1, 8, 15, 22, 29));
    assert_int_equal(c.hour, BITS(9, 10, 11, 12, 13, 14, 15, 16, 17));
    assert_int_equal(c.mday, BITS(1, 15, 31));
    assert_int_equal(c.wday, BITS(1, 2, 3, 4, 5));
    assert_int_equal(c.flags, 0);

    c = parse_ok("0 0 1 jan,Jul,DEC *");
    assert_int_equal(c.month, BITS(1, 7, 12));
    c = parse_ok("0 0 * FEB-apr/2 sun");
    assert_int_equal(c.month, BITS(2, 4));
    assert_int_equal(c.wday, BITS(0));
    c = parse_ok("0 0 * * 7");
    assert_int_equal(c.wday, BITS(0));
    c = parse_ok("0 0 * * 5-7");
    assert_int_equal(c.wday, BITS(0, 5, 6));
    c = parse_ok("0 0 * * */2");
    assert_int_equal(c.wday, BITS(0, 2, 4, 6));
    c = parse_ok("0 0 * * 7/2");
    assert_int_equal(c.wday, BITS(0));
    c = parse_ok("10/20 0 * * *");
    assert_int_equal(c.min, BITS(10, 30, 50));
    c = parse_ok("  0\t12  ?  *  ?  ");
    assert_int_equal(c.hour, BITS(12));
    assert_int_equal(c.flags, CS_CRON_DOM_STAR | CS_CRON_DOW_STAR);
}

static void test_cron_seconds_field(void **state)
{
    struct cs_cron c = parse_ok("*/20 30 2 * * *");
    assert_int_equal(c.sec, BITS(0, 20, 40));
    assert_int_equal(c.min, BITS(30));
    assert_int_equal(c.hour, BITS(2));
    assert_false(cs_cron_is_wild(&c));
    c = parse_ok("0 * * * * *");
    assert_int_equal(c.sec, BITS(0));
    assert_true(cs_cron_is_wild(&c));
}

static void test_cron_day_forms(void **state)
{
    struct cs_cron c = parse_ok("0 0 L,L-3,15W,lw * *");
    assert_int_equal(c.mday_last, BITS(0, 3));
    assert_int_equal(c.mday_near, BITS(0, 15));
    assert_int_equal(c.mday, 0);
    c = parse_ok("0 0 * * 5L,FRI#2,0#5,sunL");
    assert_int_equal(c.wday_last, BITS(0, 5));
    assert_int_equal(c.wday_nth, (1ull << (7 * 1 + 5)) | (1ull << (7 * 4 + 0)));
    assert_int_equal(c.wday, 0);
}

/* cronie's MIN_STAR / HR_STAR: the first character of the minute or the
 * hour field, not what the field matches. */
static void test_cron_wild(void **state)
{
    static const struct {
        const char *text;
        bool wild;
    } cases[] = {
        {"* * * * *", true},    {"*/15 2 * * *", true}, {"0 * * * *", true},
        {"0-59 * * * *", true}, {"0 */2 * * *", true},  {"0-59 0-23 * * *", false},
        {"30 2 * * *", false},  {"@hourly", true},      {"@daily", false},
        {"@midnight", false},   {"@weekly", false},     {"@monthly", false},
        {"@yearly", false},     {"@annually", false},   {"* 30 2 * * *", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_cron c = parse_ok(cases[i].text);
        if (cs_cron_is_wild(&c) != cases[i].wild)
            fail_msg("\"%s\": wild %d, expected %d", cases[i].text, cs_cron_is_wild(&c),
                     cases[i].wild);
    }
}

static void test_cron_macros(void **state)
{
    static const char *const pairs[][2] = {
        {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"}, {" @DAILY ", "0 0 * * *"},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        struct cs_cron a = parse_ok(pairs[i][0]), b = parse_ok(pairs[i][1]);
        if (memcmp(&a, &b, sizeof(a)) != 0)
            fail_msg("%s differs from %s", pairs[i][0], pairs[i][1]);
    }
}

static void test_cron_errors(void **state)
{
    static const char *const cases[][2] = {
        {"0 0 32 * *", "field 3 (day of month): 32 is out of range 1-31"},
        {"60 * * * *", "field 1 (minute): 60 is out of range 0-59"},
        {"0 24 * * *", "field 2 (hour): 24 is out of range 0-23"},
        {"0 0 0 * *", "field 3 (day of month): 0 is out of range 1-31"},
        {"0 0 * 13 *", "field 4 (month): 13 is out of range 1-12"},
        {"0 0 * * 8", "field 5 (day of week): 8 is out of range 0-7"},
        {"60 0 0 * * *", "field 1 (second): 60 is out of range 0-59"},
        {"0 0 0 32 * *", "field 4 (day of month): 32 is out of range 1-31"},
        {"99999999999 * * * *", "field 1 (minute): 99999999999 is out of range 0-59"},
        {"0 0 * FOO *", "field 4 (month): \"FOO\" is not a number or a month name"},
        {"0 0 * * FRX", "field 5 (day of week): \"FRX\" is not a number or a day name"},
        {"0 0 * * MONDAY", "field 5 (day of week): \"MONDAY\" is not a number or a day name"},
        {"x * * * *", "field 1 (minute): \"x\" is not a number"},
        {"5-2 * * * *", "field 1 (minute): range 5-2 runs backwards"},
        {"*/0 * * * *", "field 1 (minute): step 0 is out of range 1-60"},
        {"*/61 * * * *", "field 1 (minute): step 61 is out of range 1-60"},
        {"0 */25 * * *", "field 2 (hour): step 25 is out of range 1-24"},
        {"*/x * * * *", "field 1 (minute): step \"x\" is not a number 1-60"},
        {"1,,2 * * * *", "field 1 (minute): empty list item"},
        {"1, * * * *", "field 1 (minute): empty list item"},
        {"1- * * * *", "field 1 (minute): \"\" is not a number"},
        {"? * * * *", "field 1 (minute): \"?\" is not a number"},
        {"L * * * *", "field 1 (minute): \"L\" is not a number"},
        {"0 0 15W,L-31 * *", "field 3 (day of month): L-31 is out of range L-0 to L-30"},
        {"0 0 L-x * *", "field 3 (day of month): \"L-x\" is not L-n with n a number 0-30"},
        {"0 0 32W * *", "field 3 (day of month): 32 is out of range 1-31"},
        {"0 0 * * L", "field 5 (day of week): L needs a day before it, as in 5L (the last Friday)"},
        {"0 0 * * FRI#6", "field 5 (day of week): #6 is out of range #1-#5"},
        {"0 0 * * 5#0", "field 5 (day of week): #0 is out of range #1-#5"},
        {"0 0 * * 5#", "field 5 (day of week): # is out of range #1-#5"},
        {"0 0 * * 9L", "field 5 (day of week): 9 is out of range 0-7"},
        {"0 0 * *", "expected 5 or 6 fields, got 4"},
        {"0 0 * * * * *", "expected 5 or 6 fields, got more than 6"},
        {"", "the expression is empty"},
        {"   ", "the expression is empty"},
        {"@reboot", "unknown macro \"@reboot\" (expected @yearly, @annually, @monthly, @weekly, "
                    "@daily, @midnight, @hourly or @every)"},
        {"@daily 5", "nothing may follow @daily"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_cron c;
        struct cs_err err = {0};
        int rc = cs_cron_parse(cases[i][0], &c, &err);
        if (rc != -EINVAL || strcmp(err.msg, cases[i][1]) != 0)
            fail_msg("\"%s\": rc %d, \"%s\", expected \"%s\"", cases[i][0], rc, err.msg,
                     cases[i][1]);
    }
}

static void test_cron_too_long(void **state)
{
    char text[CS_CRON_TEXT_MAX + 2];
    struct cs_cron c;
    struct cs_err err = {0};

    memset(text, ' ', sizeof(text) - 1);
    text[sizeof(text) - 1] = '\0';
    assert_int_equal(cs_cron_parse(text, &c, &err), -EINVAL);
    assert_string_equal(err.msg, "longer than 255 bytes");
}

struct next_case {
    const char *text;
    int64_t from, expected;
};

static void check_next(const struct next_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct cs_cron c = parse_ok(cases[i].text);
        int64_t got = 0;
        int rc = cs_cron_next(&c, cases[i].from, &got);
        struct cs_civil g, e;
        cs_civil_split(got, &g);
        cs_civil_split(cases[i].expected, &e);
        if (rc != 0 || got != cases[i].expected)
            fail_msg("\"%s\" case %zu: rc %d, got %04lld-%02d-%02d %02d:%02d:%02d, expected "
                     "%04lld-%02d-%02d %02d:%02d:%02d",
                     cases[i].text, i, rc, (long long)g.year, g.month, g.mday, g.hour, g.min, g.sec,
                     (long long)e.year, e.month, e.mday, e.hour, e.min, e.sec);
    }
}

static void test_cron_next_month_and_year_ends(void **state)
{
    const struct next_case cases[] = {
        {"0 0 1 * *", T(2026, 1, 31, 12, 0, 0), T(2026, 2, 1, 0, 0, 0)},
        {"0 12 31 * *", T(2026, 4, 1, 0, 0, 0), T(2026, 5, 31, 12, 0, 0)},
        {"0 12 31 * *", T(2026, 5, 31, 12, 0, 1), T(2026, 7, 31, 12, 0, 0)},
        {"0 0 1 1 *", T(2026, 12, 31, 23, 59, 59), T(2027, 1, 1, 0, 0, 0)},
        {"59 23 31 12 *", T(2026, 12, 31, 23, 59, 0), T(2026, 12, 31, 23, 59, 0)},
        {"59 23 31 12 *", T(2026, 12, 31, 23, 59, 1), T(2027, 12, 31, 23, 59, 0)},
        {"30 23 * * *", T(2026, 6, 30, 23, 30, 0), T(2026, 6, 30, 23, 30, 0)},
        {"30 23 * * *", T(2026, 6, 30, 23, 30, 1), T(2026, 7, 1, 23, 30, 0)},
        {"*/20 * * * * *", T(2026, 6, 30, 23, 59, 41), T(2026, 7, 1, 0, 0, 0)},
        {"15,45 */6 * * *", T(2026, 6, 30, 18, 46, 0), T(2026, 7, 1, 0, 15, 0)},
        {"@weekly", T(2026, 12, 28, 0, 0, 1), T(2027, 1, 3, 0, 0, 0)},
        {"@yearly", T(1999, 12, 31, 23, 59, 59), T(2000, 1, 1, 0, 0, 0)},
    };
    check_next(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_cron_next_leap_years(void **state)
{
    const struct next_case cases[] = {
        {"0 0 29 2 *", T(2026, 3, 1, 0, 0, 0), T(2028, 2, 29, 0, 0, 0)},
        {"0 0 29 2 *", T(2028, 2, 29, 0, 0, 1), T(2032, 2, 29, 0, 0, 0)},
        /* 2100 is not a leap year, 2000 and 2400 are. */
        {"0 0 29 2 *", T(2096, 3, 1, 0, 0, 0), T(2104, 2, 29, 0, 0, 0)},
        {"0 0 29 2 *", T(1999, 1, 1, 0, 0, 0), T(2000, 2, 29, 0, 0, 0)},
        {"0 0 L 2 *", T(2027, 1, 1, 0, 0, 0), T(2027, 2, 28, 0, 0, 0)},
        {"0 0 L 2 *", T(2028, 1, 1, 0, 0, 0), T(2028, 2, 29, 0, 0, 0)},
        /* The fifth Friday of February: a leap year whose February starts
         * on a Friday. */
        {"0 0 * 2 5#5", T(2026, 1, 1, 0, 0, 0), T(2036, 2, 29, 0, 0, 0)},
        {"0 0 * 2 5#5", T(2036, 3, 1, 0, 0, 0), T(2064, 2, 29, 0, 0, 0)},
    };
    check_next(cases, sizeof(cases) / sizeof(cases[0]));
}

/* August 2026 starts on a Saturday; May 2026 ends on a Sunday; February
 * 2026 ends on a Saturday; November 2026 starts on a Sunday. */
static void test_cron_next_last_and_nearest(void **state)
{
    const struct next_case cases[] = {
        {"0 0 L * *", T(2026, 4, 2, 0, 0, 0), T(2026, 4, 30, 0, 0, 0)},
        {"0 0 L-3 * *", T(2026, 2, 1, 0, 0, 0), T(2026, 2, 25, 0, 0, 0)},
        {"0 0 L-30 * *", T(2026, 2, 1, 0, 0, 0), T(2026, 3, 1, 0, 0, 0)},
        {"0 0 1W * *", T(2026, 7, 31, 0, 0, 0), T(2026, 8, 3, 0, 0, 0)},
        {"0 0 1W * *", T(2026, 10, 31, 0, 0, 0), T(2026, 11, 2, 0, 0, 0)},
        {"0 0 15W * *", T(2026, 8, 2, 0, 0, 0), T(2026, 8, 14, 0, 0, 0)},
        {"0 0 16W * *", T(2026, 8, 2, 0, 0, 0), T(2026, 8, 17, 0, 0, 0)},
        {"0 0 31W * *", T(2026, 5, 2, 0, 0, 0), T(2026, 5, 29, 0, 0, 0)},
        {"0 0 31W * *", T(2026, 8, 2, 0, 0, 0), T(2026, 8, 31, 0, 0, 0)},
        /* 31W in a 30-day month selects nothing: June is skipped. */
        {"0 0 31W * *", T(2026, 6, 1, 0, 0, 0), T(2026, 7, 31, 0, 0, 0)},
        {"0 0 LW * *", T(2026, 2, 1, 0, 0, 0), T(2026, 2, 27, 0, 0, 0)},
        {"0 0 LW * *", T(2026, 1, 1, 0, 0, 0), T(2026, 1, 30, 0, 0, 0)},
        {"0 0 * * FRI#2", T(2026, 8, 1, 0, 0, 0), T(2026, 8, 14, 0, 0, 0)},
        {"0 0 * * 1#1", T(2026, 8, 4, 0, 0, 0), T(2026, 9, 7, 0, 0, 0)},
        {"0 0 * * 5L", T(2026, 10, 1, 0, 0, 0), T(2026, 10, 30, 0, 0, 0)},
        {"0 0 * * 0L", T(2026, 5, 1, 0, 0, 0), T(2026, 5, 31, 0, 0, 0)},
    };
    check_next(cases, sizeof(cases) / sizeof(cases[0]));
}

/* May 2026: Fridays 1, 8, 15, 22, 29; the 13th a Wednesday. */
static void test_cron_next_or_rule(void **state)
{
    const struct next_case cases[] = {
        /* Both restricted: either fires. */
        {"0 0 13 * FRI", T(2026, 5, 9, 0, 0, 0), T(2026, 5, 13, 0, 0, 0)},
        {"0 0 13 * FRI", T(2026, 5, 13, 0, 0, 1), T(2026, 5, 15, 0, 0, 0)},
        {"0 0 L * 1#1", T(2026, 5, 5, 0, 0, 0), T(2026, 5, 31, 0, 0, 0)},
        /* A day field starting with * leaves the other to choose. */
        {"0 0 * * FRI", T(2026, 5, 9, 0, 0, 0), T(2026, 5, 15, 0, 0, 0)},
        {"0 0 */2 * FRI", T(2026, 5, 2, 0, 0, 0), T(2026, 5, 15, 0, 0, 0)},
        {"0 0 13 * ?", T(2026, 5, 9, 0, 0, 0), T(2026, 5, 13, 0, 0, 0)},
        {"0 0 1-7 * */7", T(2026, 5, 9, 0, 0, 0), T(2026, 6, 7, 0, 0, 0)},
    };
    check_next(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_cron_never(void **state)
{
    static const char *const never[] = {"0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 31W 2 *",
                                        "* * 30,31 FEB *"};
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
        struct cs_cron c = parse_ok(never[i]);
        int64_t got;
        if (cs_cron_next(&c, T(2026, 1, 1, 0, 0, 0), &got) != -ENOENT)
            fail_msg("\"%s\" fires", never[i]);
        assert_true(c.flags & CS_CRON_NEVER);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cron_fields),
        cmocka_unit_test(test_cron_seconds_field),
        cmocka_unit_test(test_cron_day_forms),
        cmocka_unit_test(test_cron_wild),
        cmocka_unit_test(test_cron_macros),
        cmocka_unit_test(test_cron_errors),
        cmocka_unit_test(test_cron_too_long),
        cmocka_unit_test(test_cron_next_month_and_year_ends),
        cmocka_unit_test(test_cron_next_leap_years),
        cmocka_unit_test(test_cron_next_last_and_nearest),
        cmocka_unit_test(test_cron_next_or_rule),
        cmocka_unit_test(test_cron_never),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
