/* Unit tests of the time zone module: POSIX TZ strings (tz_rule), TZif
 * files (tzif) built byte by byte here, including broken and truncated
 * ones, the zone table made from both (tz: the footer carried on to 2400,
 * changes of the DST flag alone, a daylight saving time that never ends)
 * and zones read by name from a tz database directory (tzdb): the names it
 * refuses, the files it refuses, the version it reports, and the system's
 * own zones that ICU 72 lacked. test_tz_system compares every zone of the
 * system with Python's zoneinfo. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "civil.h"
#include "tz.h"
#include "tz_rule.h"
#include "tzdb.h"
#include "tzif.h"

#define T(y, mo, d, h, mi, s) cs_civil_join(y, mo, d, h, mi, s)

/* --- POSIX TZ strings ----------------------------------------------------- */

static struct cs_tz_rule parse_rule(const char *text)
{
    struct cs_tz_rule r;
    struct cs_err err = {0};
    if (cs_tz_rule_parse(text, &r, &err) != 0)
        fail_msg("\"%s\": %s", text, err.msg);
    return r;
}

static void test_tz_rule_forms(void **state)
{
    struct cs_tz_rule r = parse_rule("CET-1CEST,M3.5.0,M10.5.0/3");
    assert_int_equal(r.std_offset_s, 3600);
    assert_int_equal(r.dst_offset_s, 7200);
    assert_true(r.has_dst);
    assert_int_equal(r.start.kind, CS_TZ_RULE_MONTH_WEEK_DAY);
    assert_int_equal(r.start.month, 3);
    assert_int_equal(r.start.week, 5);
    assert_int_equal(r.start.day, 0);
    assert_int_equal(r.start.time_s, 7200);
    assert_int_equal(r.end.time_s, 3 * 3600);

    /* The quoted form, a zone with no daylight saving time. */
    r = parse_rule("<+05>-5");
    assert_int_equal(r.std_offset_s, 5 * 3600);
    assert_false(r.has_dst);
    r = parse_rule("<+0330>-3:30");
    assert_int_equal(r.std_offset_s, 3 * 3600 + 1800);
    r = parse_rule("<-0930>9:30");
    assert_int_equal(r.std_offset_s, -(9 * 3600 + 1800));
    r = parse_rule("HST10");
    assert_int_equal(r.std_offset_s, -36000);

    /* Negative transition times (America/Nuuk since 2023). */
    r = parse_rule("<-02>2<-01>,M3.5.0/-1,M10.5.0/0");
    assert_int_equal(r.std_offset_s, -7200);
    assert_int_equal(r.dst_offset_s, -3600);
    assert_int_equal(r.start.time_s, -3600);
    assert_int_equal(r.end.time_s, 0);
    /* Past 24 hours (Asia/Jerusalem), and up to RFC 8536's 167. */
    r = parse_rule("IST-2IDT,M3.4.4/26,M10.5.0");
    assert_int_equal(r.start.time_s, 26 * 3600);
    assert_int_equal(r.end.time_s, 7200);
    r = parse_rule("AAA3BBB,M3.2.0/-167,M11.1.0/167:59:59");
    assert_int_equal(r.start.time_s, -167 * 3600);
    assert_int_equal(r.end.time_s, 167 * 3600 + 59 * 60 + 59);
    /* A daylight saving time offset of its own (Lord Howe: half an hour). */
    r = parse_rule("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0");
    assert_int_equal(r.std_offset_s, 37800);
    assert_int_equal(r.dst_offset_s, 39600);
    /* Julian days, both ways, and seconds in offsets. */
    r = parse_rule("XXX-1:30:15YYY-2:30:15,J60/2,60/2:30");
    assert_int_equal(r.std_offset_s, 5415);
    assert_int_equal(r.dst_offset_s, 9015);
    assert_int_equal(r.start.kind, CS_TZ_RULE_JULIAN_1);
    assert_int_equal(r.start.day, 60);
    assert_int_equal(r.end.kind, CS_TZ_RULE_JULIAN_0);
    assert_int_equal(r.end.day, 60);
    assert_int_equal(r.end.time_s, 9000);
    r = parse_rule("EST5EDT,0/0,J365/25");
    assert_int_equal(r.start.day, 0);
    assert_int_equal(r.end.time_s, 25 * 3600);
}

static void test_tz_rule_refused(void **state)
{
    static const char *const bad[] = {
        "",
        "AB-1",                         /* an abbreviation of two letters */
        "<+5>-5",                       /* and quoted */
        "<+05-5",                       /* an unterminated quote */
        "CET",                          /* no offset */
        "CET-25",                       /* an offset past 24 hours */
        "CET-1:60",                     /* minutes past 59 */
        "CET-1:30:",                    /* seconds missing */
        "EST5EDT",                      /* DST without its rule */
        "EST5EDT4",                     /* the same */
        "CET-1CEST,M3.5.0",             /* no end */
        "CET-1CEST,M13.5.0,M10.5.0",    /* month 13 */
        "CET-1CEST,M3.6.0,M10.5.0",     /* week 6 */
        "CET-1CEST,M3.5.7,M10.5.0",     /* weekday 7 */
        "CET-1CEST,M3.5,M10.5.0",       /* a short Mm.w.d */
        "CET-1CEST,J0,J365",            /* Jn starts at 1 */
        "CET-1CEST,J1,366",             /* n ends at 365 */
        "CET-1CEST,M3.5.0/168,M10.5.0", /* a time past 167 hours */
        "CET-1CEST,M3.5.0/,M10.5.0",    /* a slash without a time */
        "CET-1 ",                       /* trailing bytes */
        "CET-1CEST,M3.5.0,M10.5.0x",
        "CET-0001", /* an hour of four digits */
    };
    for (size_t i = 0; i < CS_ARRAY_LEN(bad); i++) {
        struct cs_tz_rule r;
        struct cs_err err = {0};
        if (cs_tz_rule_parse(bad[i], &r, &err) != -EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
        if (strstr(err.msg, "TZ string \"") != err.msg || strstr(err.msg, "expected") == NULL)
            fail_msg("\"%s\": %s", bad[i], err.msg);
    }
}

static void check_year(const char *text, int64_t year, int64_t want_start, int64_t want_end)
{
    struct cs_tz_rule r = parse_rule(text);
    int64_t start, end;
    cs_tz_rule_year(&r, year, &start, &end);
    if (start != want_start || end != want_end)
        fail_msg("\"%s\" in %lld: start %lld end %lld, expected %lld and %lld", text,
                 (long long)year, (long long)start, (long long)end, (long long)want_start,
                 (long long)want_end);
}

static void test_tz_rule_dates(void **state)
{
    /* Berlin: the last Sundays of March and October, 01:00 UTC both. */
    check_year("CET-1CEST,M3.5.0,M10.5.0/3", 2026, T(2026, 3, 29, 1, 0, 0),
               T(2026, 10, 25, 1, 0, 0));
    /* Nuuk: 01:00 UTC too, at -01:00 standard and 00:00 daylight time. */
    check_year("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", 2026, T(2026, 3, 29, 1, 0, 0),
               T(2026, 10, 25, 1, 0, 0));
    /* Jerusalem: the Friday after the fourth Thursday of March, 02:00. */
    check_year("IST-2IDT,M3.4.4/26,M10.5.0", 2026, T(2026, 3, 27, 0, 0, 0),
               T(2026, 10, 24, 23, 0, 0));
    /* Santiago, south: the first Saturdays of September and April, at 24:00. */
    check_year("<-04>4<-03>,M9.1.6/24,M4.1.6/24", 2026, T(2026, 9, 6, 4, 0, 0),
               T(2026, 4, 5, 3, 0, 0));
    /* Week 5 is the last: February 2026 has four Sundays, the last the 22nd. */
    check_year("AAA3BBB,M2.5.0,M11.1.0", 2026, T(2026, 2, 22, 5, 0, 0), T(2026, 11, 1, 4, 0, 0));
    /* J60 is March 1 in every year; 60 is March 1 in a leap year, March 2 otherwise. */
    check_year("AAA3BBB,J60/2,60/2", 2027, T(2027, 3, 1, 5, 0, 0), T(2027, 3, 2, 4, 0, 0));
    check_year("AAA3BBB,J60/2,60/2", 2028, T(2028, 3, 1, 5, 0, 0), T(2028, 3, 1, 4, 0, 0));
    check_year("AAA3BBB,J365/0,365/0", 2028, T(2028, 12, 31, 3, 0, 0), T(2028, 12, 31, 2, 0, 0));
}

/* --- TZif files, made here ------------------------------------------------ */

struct tzif_spec {
    char version; /* '\0' (1), '2', '3' */
    size_t timecnt;
    const int64_t *times;
    const uint8_t *indexes;
    size_t typecnt;
    const int32_t *utoff;
    const uint8_t *isdst;
    uint32_t leapcnt;
    const char *footer; /* for version 2 and later */
};

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return p + 4;
}

static uint8_t *put_header(uint8_t *p, char version, uint32_t leapcnt, uint32_t timecnt,
                           uint32_t typecnt)
{
    memcpy(p, "TZif", 4);
    p[4] = (uint8_t)version;
    memset(p + 5, 0, 15);
    p += 20;
    p = put32(p, 0); /* isutcnt */
    p = put32(p, 0); /* isstdcnt */
    p = put32(p, leapcnt);
    p = put32(p, timecnt);
    p = put32(p, typecnt);
    return put32(p, 4); /* charcnt: "LMT\0" */
}

/* A data block with times of time_size bytes. */
static uint8_t *put_data(uint8_t *p, const struct tzif_spec *s, size_t time_size)
{
    for (size_t i = 0; i < s->timecnt; i++) {
        if (time_size == 8)
            p = put32(p, (uint32_t)((uint64_t)s->times[i] >> 32));
        p = put32(p, (uint32_t)s->times[i]);
    }
    for (size_t i = 0; i < s->timecnt; i++)
        *p++ = s->indexes[i];
    for (size_t t = 0; t < s->typecnt; t++) {
        p = put32(p, (uint32_t)s->utoff[t]);
        *p++ = s->isdst[t];
        *p++ = 0;
    }
    memcpy(p, "LMT", 4);
    p += 4;
    memset(p, 0, s->leapcnt * (time_size + 4));
    return p + s->leapcnt * (time_size + 4);
}

/* Writes the file s describes into buf; its length. Version 2 and later
 * get a minimal version 1 block first, as zic's slim files have. */
static size_t build(const struct tzif_spec *s, uint8_t *buf)
{
    static const int32_t zero_off[] = {0};
    static const uint8_t zero_dst[] = {0};
    uint8_t *p = buf;

    if (s->version == '\0') {
        p = put_header(p, '\0', s->leapcnt, (uint32_t)s->timecnt, (uint32_t)s->typecnt);
        return (size_t)(put_data(p, s, 4) - buf);
    }
    struct tzif_spec v1 = {.typecnt = 1, .utoff = zero_off, .isdst = zero_dst};
    p = put_header(p, s->version, 0, 0, 1);
    p = put_data(p, &v1, 4);
    p = put_header(p, s->version, s->leapcnt, (uint32_t)s->timecnt, (uint32_t)s->typecnt);
    p = put_data(p, s, 8);
    p += sprintf((char *)p, "\n%s\n", s->footer);
    return (size_t)(p - buf);
}

static const int32_t berlin_off[] = {3208, 3600};
static const uint8_t berlin_dst[] = {0, 0};
static const int64_t berlin_times[] = {-2422054408LL};
static const uint8_t berlin_idx[] = {1};
/* A Berlin of one transition (1893) and the footer for every change since. */
static const struct tzif_spec slim_berlin = {
    '2', 1, berlin_times, berlin_idx, 2, berlin_off, berlin_dst, 0, "CET-1CEST,M3.5.0,M10.5.0/3"};

static struct cs_tz *new_zone(const char *name, const struct tzif_spec *s)
{
    uint8_t buf[4096];
    struct cs_tz *tz = NULL;
    struct cs_err err = {0};
    size_t len = build(s, buf);
    if (cs_tz_new(name, buf, len, &tz, &err) != 0)
        fail_msg("%s: %s", name, err.msg);
    return tz;
}

static void assert_local(const struct cs_tz *tz, int64_t at, int32_t offset, bool is_dst)
{
    struct cs_tz_local l = cs_tz_local_at(tz, at);
    if (l.offset_s != offset || l.is_dst != is_dst)
        fail_msg("%s at %lld: offset %d dst %d, expected %d %d", cs_tz_name(tz), (long long)at,
                 l.offset_s, l.is_dst, offset, is_dst);
}

static void test_tzif_parse(void **state)
{
    static const int64_t times[] = {-5000000000LL, 0, 5000000000LL};
    static const uint8_t idx[] = {1, 2, 1};
    static const int32_t off[] = {100, -18000, -14400};
    static const uint8_t dst[] = {0, 0, 1};
    struct tzif_spec s = {'3', 3, times, idx, 3, off, dst, 0, "EST5EDT,M3.2.0,M11.1.0"};
    uint8_t buf[4096];
    struct cs_tzif f;
    struct cs_err err = {0};
    size_t len = build(&s, buf);

    assert_int_equal(cs_tzif_parse(buf, len, &f, &err), 0);
    assert_int_equal(f.version, 3);
    assert_int_equal(f.timecnt, 3);
    assert_int_equal(f.typecnt, 3);
    assert_int_equal(cs_tzif_time(&f, 0), -5000000000LL);
    assert_int_equal(cs_tzif_time(&f, 2), 5000000000LL);
    assert_int_equal(cs_tzif_type_after(&f, 0).utoff_s, -18000);
    assert_int_equal(cs_tzif_type_after(&f, 1).utoff_s, -14400);
    assert_true(cs_tzif_type_after(&f, 1).is_dst);
    assert_false(cs_tzif_type_after(&f, 2).is_dst);
    assert_int_equal(cs_tzif_type(&f, 0).utoff_s, 100);
    assert_string_equal(f.footer, "EST5EDT,M3.2.0,M11.1.0");

    /* Version 1: 32-bit times, a negative one among them, and no footer. */
    static const int64_t times1[] = {-2147483648LL, 1000};
    s = (struct tzif_spec){'\0', 2, times1, idx, 3, off, dst, 0, NULL};
    len = build(&s, buf);
    assert_int_equal(cs_tzif_parse(buf, len, &f, &err), 0);
    assert_int_equal(f.version, 1);
    assert_int_equal(cs_tzif_time(&f, 0), -2147483648LL);
    assert_int_equal(cs_tzif_time(&f, 1), 1000);
    assert_string_equal(f.footer, "");

    /* An empty footer: no rule after the last transition. */
    s = (struct tzif_spec){'2', 3, times, idx, 3, off, dst, 0, ""};
    len = build(&s, buf);
    assert_int_equal(cs_tzif_parse(buf, len, &f, &err), 0);
    assert_string_equal(f.footer, "");
}

/* Every prefix of a valid file is refused, and read no further than it
 * ends (the ASan build would see it). */
static void test_tzif_truncated(void **state)
{
    uint8_t buf[4096];
    size_t len = build(&slim_berlin, buf);
    for (size_t n = 0; n < len; n++) {
        uint8_t *copy = malloc(n > 0 ? n : 1);
        struct cs_tzif f;
        struct cs_err err = {0};
        memcpy(copy, buf, n);
        if (cs_tzif_parse(copy, n, &f, &err) != -EINVAL)
            fail_msg("the first %zu of %zu bytes were accepted", n, len);
        free(copy);
    }
}

static void expect_refused(const uint8_t *buf, size_t len, const char *why)
{
    struct cs_tzif f;
    struct cs_err err = {0};
    if (cs_tzif_parse(buf, len, &f, &err) != -EINVAL || strstr(err.msg, why) == NULL)
        fail_msg("expected \"%s\", got \"%s\"", why, err.msg);
}

static void test_tzif_refused(void **state)
{
    static const int64_t times[] = {10, 10};
    static const uint8_t idx[] = {0, 0}, bad_idx[] = {0, 5}, two[] = {2};
    static const int32_t off[] = {0}, far[] = {26 * 3600};
    static const uint8_t dst[] = {0};
    uint8_t buf[4096];
    size_t len;

    len = build(&slim_berlin, buf);
    buf[0] = 'X';
    expect_refused(buf, len, "not a TZif file");
    buf[0] = 'T';
    buf[4] = '1';
    expect_refused(buf, len, "version byte");

    struct tzif_spec s = {'2', 2, times, idx, 1, off, dst, 0, ""};
    len = build(&s, buf);
    expect_refused(buf, len, "not after the one before");
    s.times = (const int64_t[]){1, 2};
    s.indexes = bad_idx;
    len = build(&s, buf);
    expect_refused(buf, len, "names local time type 5");
    s = (struct tzif_spec){'2', 0, NULL, NULL, 1, far, dst, 0, ""};
    len = build(&s, buf);
    expect_refused(buf, len, "local time type 0 is malformed");
    s = (struct tzif_spec){'2', 0, NULL, NULL, 1, off, two, 0, ""};
    len = build(&s, buf);
    expect_refused(buf, len, "local time type 0 is malformed");
    s = (struct tzif_spec){'2', 0, NULL, NULL, 0, off, dst, 0, ""};
    len = build(&s, buf);
    expect_refused(buf, len, "counts break");

    /* A footer without its closing newline, or too long. */
    len = build(&slim_berlin, buf);
    expect_refused(buf, len - 1, "footer is missing or unterminated");
    char footer[CS_TZ_RULE_TEXT_MAX + 2];
    memset(footer, 'A', sizeof(footer) - 1);
    footer[sizeof(footer) - 1] = '\0';
    s = (struct tzif_spec){'2', 0, NULL, NULL, 1, off, dst, 0, footer};
    len = build(&s, buf);
    expect_refused(buf, len, "footer is longer");
}

/* --- zone tables ---------------------------------------------------------- */

static void test_tz_footer_carried_on(void **state)
{
    struct cs_tz *tz = new_zone("Test/Berlin", &slim_berlin);
    struct cs_tz_span sp;
    int64_t changes[8];

    assert_string_equal(cs_tz_name(tz), "Test/Berlin");
    assert_local(tz, T(1890, 1, 1, 0, 0, 0), 3208, false);
    assert_local(tz, T(1950, 7, 1, 0, 0, 0), 7200, true); /* the rule, back to 1893 */
    assert_local(tz, T(2026, 3, 29, 0, 59, 59), 3600, false);
    assert_local(tz, T(2026, 3, 29, 1, 0, 0), 7200, true);
    assert_local(tz, T(2026, 10, 25, 0, 59, 59), 7200, true);
    assert_local(tz, T(2026, 10, 25, 1, 0, 0), 3600, false);
    assert_local(tz, T(2399, 7, 1, 0, 0, 0), 7200, true);
    assert_local(tz, T(2399, 12, 1, 0, 0, 0), 3600, false);
    assert_int_equal(cs_tz_changes(tz, T(2030, 1, 1, 0, 0, 0), T(2031, 1, 1, 0, 0, 0), changes, 8),
                     2);
    assert_int_equal(changes[0], T(2030, 3, 31, 1, 0, 0));
    assert_int_equal(changes[1], T(2030, 10, 27, 1, 0, 0));
    cs_tz_span(tz, T(2030, 6, 1, 0, 0, 0), &sp);
    assert_int_equal(sp.start_s, T(2030, 3, 31, 1, 0, 0));
    assert_int_equal(sp.end_s, T(2030, 10, 27, 1, 0, 0));
    assert_int_equal(sp.offset_before_s, 3600);
    assert_int_equal(sp.offset_after_s, 3600);
    cs_tz_free(tz);
}

/* A change of the DST flag alone is a change of local time, not of the
 * span: Moscow's 2011 "permanent standard time" at the summer offset. */
static void test_tz_dst_flag_alone(void **state)
{
    const int64_t times[] = {T(2011, 3, 26, 23, 0, 0), T(2011, 10, 30, 0, 0, 0),
                             T(2014, 10, 25, 22, 0, 0)};
    static const uint8_t idx[] = {1, 2, 0};
    static const int32_t off[] = {10800, 14400, 14400};
    static const uint8_t dst[] = {0, 1, 0};
    struct tzif_spec s = {'2', 3, times, idx, 3, off, dst, 0, "MSK-3"};
    struct cs_tz *tz = new_zone("Test/Moscow", &s);
    struct cs_tz_span sp;

    assert_local(tz, T(2011, 6, 1, 0, 0, 0), 14400, true);
    assert_local(tz, T(2012, 6, 1, 0, 0, 0), 14400, false);
    cs_tz_span(tz, T(2012, 6, 1, 0, 0, 0), &sp);
    assert_int_equal(sp.start_s, times[0]);
    assert_int_equal(sp.end_s, times[2]);
    assert_int_equal(sp.offset_s, 14400);
    assert_int_equal(sp.offset_before_s, 10800);
    assert_int_equal(sp.offset_after_s, 10800);
    cs_tz_span(tz, T(2020, 6, 1, 0, 0, 0), &sp);
    assert_true(sp.start_s == times[2] && sp.end_s == INT64_MAX);
    cs_tz_free(tz);
}

static void test_tz_footer_alone(void **state)
{
    static const int32_t est[] = {-18000}, plus4[] = {-14400};
    static const uint8_t std[] = {0};
    /* No transitions: the footer tells all of time (RFC 8536 3.2). A
     * daylight saving time that starts on January 1 at 00:00 and ends
     * after December 31 24:00 is in force all year. */
    struct tzif_spec s = {'2', 0, NULL, NULL, 1, est, std, 0, "EST5EDT,0/0,J365/25"};
    struct cs_tz *tz = new_zone("Test/AllYear", &s);
    struct cs_tz_span sp;

    assert_local(tz, T(2030, 1, 1, 12, 0, 0), -14400, true);
    assert_local(tz, T(2030, 7, 1, 0, 0, 0), -14400, true);
    assert_local(tz, T(2030, 12, 31, 23, 59, 59), -14400, true);
    cs_tz_span(tz, T(2200, 1, 1, 0, 0, 0), &sp);
    assert_true(sp.end_s == INT64_MAX && sp.start_s < CS_TZ_BEGIN_S);
    cs_tz_free(tz);

    /* South of the equator the year begins in daylight saving time. */
    s = (struct tzif_spec){'2', 0, NULL, NULL, 1, plus4, std, 0, "<-04>4<-03>,M9.1.6/24,M4.1.6/24"};
    tz = new_zone("Test/Santiago", &s);
    assert_local(tz, T(1900, 1, 1, 0, 0, 0), -10800, true);
    assert_local(tz, T(2026, 4, 5, 2, 59, 59), -10800, true);
    assert_local(tz, T(2026, 4, 5, 3, 0, 0), -14400, false);
    assert_local(tz, T(2026, 9, 6, 4, 0, 0), -10800, true);
    cs_tz_free(tz);

    /* A version 1 file: the last type holds for ever. */
    s = (struct tzif_spec){'\0', 1, berlin_times, berlin_idx, 2, berlin_off, berlin_dst, 0, NULL};
    tz = new_zone("Test/V1", &s);
    assert_local(tz, T(2300, 7, 1, 0, 0, 0), 3600, false);
    assert_local(NULL, T(2300, 7, 1, 0, 0, 0), 0, false);
    cs_tz_free(tz);
}

/* Transitions past zic's bound of time (2^59 s either way) are not kept
 * as such, so that no instant plus an offset overflows: one before it sets
 * the local time from the start, one after it keeps the footer out. */
static void test_tz_far_transitions(void **state)
{
    static const int64_t times[] = {INT64_MIN + 1, 0, INT64_MAX - 1};
    static const uint8_t idx[] = {1, 2, 0};
    static const int32_t off[] = {100, 200, 300};
    static const uint8_t dst[] = {0, 0, 0};
    struct tzif_spec s = {'2', 3, times, idx, 3, off, dst, 0, "CET-1CEST,M3.5.0,M10.5.0/3"};
    struct cs_tz *tz = new_zone("Test/Far", &s);
    struct cs_tz_span sp;

    assert_local(tz, INT64_MIN, 200, false);
    assert_local(tz, -1, 200, false);
    assert_local(tz, 0, 300, false);
    assert_local(tz, T(2300, 7, 1, 0, 0, 0), 300, false);
    cs_tz_span(tz, T(2300, 7, 1, 0, 0, 0), &sp);
    assert_true(sp.start_s == 0 && sp.end_s == INT64_MAX);
    cs_tz_span(tz, -1, &sp);
    assert_true(sp.start_s == INT64_MIN && sp.end_s == 0);
    cs_tz_free(tz);
}

static void test_tz_refused(void **state)
{
    static const int32_t off[] = {0};
    static const uint8_t dst[] = {0};
    struct tzif_spec s = {'2', 0, NULL, NULL, 1, off, dst, 1, "UTC0"};
    uint8_t buf[4096];
    size_t len = build(&s, buf);
    struct cs_tz *tz = NULL;
    struct cs_err err = {0};

    /* Leap seconds, as right/ zones have. */
    assert_int_equal(cs_tz_new("right/UTC", buf, len, &tz, &err), -EINVAL);
    assert_string_equal(err.msg, "time zone \"right/UTC\" counts leap seconds, which the system "
                                 "clock does not: use the zone's name without right/");
    assert_null(tz);
    /* A footer that is no TZ string. */
    s = (struct tzif_spec){'2', 0, NULL, NULL, 1, off, dst, 0, "EST5EDT"};
    len = build(&s, buf);
    assert_int_equal(cs_tz_new("Test/Bad", buf, len, &tz, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "time zone \"Test/Bad\": its file's footer: TZ string"));
    /* Bytes that are no TZif. */
    assert_int_equal(cs_tz_new("Test/Text", (const uint8_t *)"# tzdata", 8, &tz, &err), -EINVAL);
    assert_string_equal(err.msg, "time zone \"Test/Text\": its file is not valid TZif: not a TZif "
                                 "file");
}

/* --- zones by name from a directory ---------------------------------------- */

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

static void write_text(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
}

/* A tz database of a few files in a temp dir; its path in dir. */
static void make_db(char *dir, size_t cap)
{
    const char *base = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    char path[512];
    uint8_t buf[4096];
    size_t len = build(&slim_berlin, buf);

    assert_true(snprintf(dir, cap, "%s/test_tz-XXXXXX", base) < (int)cap);
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/Good", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/Good/Zone", dir);
    write_file(path, buf, len);
    snprintf(path, sizeof(path), "%s/zone.tab", dir);
    write_text(path, "# tz zone descriptions\n");
    snprintf(path, sizeof(path), "%s/Fifo", dir);
    assert_int_equal(mkfifo(path, 0644), 0);
    /* A file too big to be a zone's, though its start is one. */
    uint8_t *big = calloc(1, CS_TZDB_FILE_MAX + 1);
    memcpy(big, buf, len);
    snprintf(path, sizeof(path), "%s/Big", dir);
    write_file(path, big, CS_TZDB_FILE_MAX + 1);
    free(big);
}

static void remove_db(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void expect_open(const char *dir, const char *name, int rc, const char *msg)
{
    struct cs_tz *tz = NULL;
    struct cs_err err = {0};
    int got = cs_tzdb_open(dir, name, &tz, &err);
    if (got != rc || (msg != NULL && strcmp(err.msg, msg) != 0))
        fail_msg("\"%s\": rc %d \"%s\", expected %d \"%s\"", name, got, err.msg, rc,
                 msg != NULL ? msg : "");
    assert_true((rc == 0) == (tz != NULL));
    if (tz != NULL)
        assert_string_equal(cs_tz_name(tz), name);
    cs_tz_free(tz);
}

static void test_tzdb_names(void **state)
{
    static const char *const not_names[] = {
        "",
        "/etc/localtime",
        "../Good/Zone",
        "Good/../Good/Zone",
        "./Good/Zone",
        "Good/./Zone",
        "Good//Zone",
        "Good/Zone/",
        "Good/..",
        "..",
        "Good Zone",
        "Good/Zone\n",
        "Good\\Zone",
        "Good/Zone;rm",
        "Good/%s",
    };
    char dir[512], msg[1024];

    make_db(dir, sizeof(dir));
    expect_open(dir, "Good/Zone", 0, NULL);
    for (size_t i = 0; i < CS_ARRAY_LEN(not_names); i++) {
        snprintf(msg, sizeof(msg),
                 "time zone \"%s\" is not a zone name: use a name of the tz database such as "
                 "Europe/Berlin or UTC",
                 not_names[i]);
        expect_open(dir, not_names[i], -EINVAL, msg);
    }
    char long_name[CS_TZ_NAME_MAX + 2];
    memset(long_name, 'A', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    expect_open(dir, long_name, -EINVAL, NULL);
    expect_open(dir, "Good/Zonee", -EINVAL, "unknown time zone \"Good/Zonee\"");
    expect_open(dir, "Good", -EINVAL, "unknown time zone \"Good\"");
    expect_open(dir, "Good/Zone/More", -EINVAL, "unknown time zone \"Good/Zone/More\"");
    /* A FIFO is no zone, and opening it must not wait for a writer. */
    expect_open(dir, "Fifo", -EINVAL, "unknown time zone \"Fifo\"");
    snprintf(msg, sizeof(msg),
             "time zone \"zone.tab\": its file is not valid TZif: not a TZif file");
    expect_open(dir, "zone.tab", -EINVAL, msg);
    snprintf(msg, sizeof(msg), "time zone \"Big\": %s/Big is not a zone's file", dir);
    expect_open(dir, "Big", -EINVAL, msg);
    remove_db(dir);
}

static void test_tzdb_version(void **state)
{
    char dir[512], path[600], version[CS_TZDB_VERSION_MAX];

    make_db(dir, sizeof(dir));
    cs_tzdb_version(dir, version, sizeof(version));
    assert_string_equal(version, "unknown");
    snprintf(path, sizeof(path), "%s/tzdata.zi", dir);
    write_text(path, "# version 2099z\n# ddeps\nR d 1916 o - May 14 23 1 S\n");
    cs_tzdb_version(dir, version, sizeof(version));
    assert_string_equal(version, "2099z");
    /* +VERSION, newer tzdata's own file, wins. */
    snprintf(path, sizeof(path), "%s/+VERSION", dir);
    write_text(path, "2100a\n");
    cs_tzdb_version(dir, version, sizeof(version));
    assert_string_equal(version, "2100a");
    /* What no version looks like is not passed on (it ends up in a label). */
    write_text(path, "2100a\"}\n");
    snprintf(path, sizeof(path), "%s/tzdata.zi", dir);
    write_text(path, "# version 2099z x\n");
    cs_tzdb_version(dir, version, sizeof(version));
    assert_string_equal(version, "unknown");
    remove_db(dir);
}

/* The system's own data: names ICU 72 did not know, links, and what
 * changed since its copy (Asia/Almaty moved to +05:00 on 2024-03-01). */
static void test_tzdb_system(void **state)
{
    static const char *const names[] = {
        "America/Ciudad_Juarez",           "America/Coyhaique", "US/Eastern", "UTC", "Etc/GMT-14",
        "America/Argentina/ComodRivadavia"};
    struct cs_tz *tz = NULL;
    struct cs_err err = {0};
    char version[CS_TZDB_VERSION_MAX];

    for (size_t i = 0; i < CS_ARRAY_LEN(names); i++)
        expect_open(CS_TZDB_DIR_DEFAULT, names[i], 0, NULL);
    expect_open(CS_TZDB_DIR_DEFAULT, "Europe/Berln", -EINVAL, "unknown time zone \"Europe/Berln\"");
    expect_open(CS_TZDB_DIR_DEFAULT, "GMT+3", -EINVAL, "unknown time zone \"GMT+3\"");
    assert_int_equal(cs_tzdb_open(CS_TZDB_DIR_DEFAULT, "Asia/Almaty", &tz, &err), 0);
    assert_local(tz, T(2024, 2, 29, 17, 59, 59), 21600, false);
    assert_local(tz, T(2024, 2, 29, 18, 0, 0), 18000, false);
    assert_local(tz, T(2030, 1, 1, 0, 0, 0), 18000, false);
    cs_tz_free(tz);
    if (access(CS_TZDB_DIR_DEFAULT "/right/UTC", F_OK) == 0)
        expect_open(CS_TZDB_DIR_DEFAULT, "right/UTC", -EINVAL,
                    "time zone \"right/UTC\" counts leap seconds, which the system clock does "
                    "not: use the zone's name without right/");
    cs_tzdb_version(CS_TZDB_DIR_DEFAULT, version, sizeof(version));
    assert_string_not_equal(version, "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tz_rule_forms),        cmocka_unit_test(test_tz_rule_refused),
        cmocka_unit_test(test_tz_rule_dates),        cmocka_unit_test(test_tzif_parse),
        cmocka_unit_test(test_tzif_truncated),       cmocka_unit_test(test_tzif_refused),
        cmocka_unit_test(test_tz_footer_carried_on), cmocka_unit_test(test_tz_dst_flag_alone),
        cmocka_unit_test(test_tz_footer_alone),      cmocka_unit_test(test_tz_far_transitions),
        cmocka_unit_test(test_tz_refused),           cmocka_unit_test(test_tzdb_names),
        cmocka_unit_test(test_tzdb_version),         cmocka_unit_test(test_tzdb_system),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
