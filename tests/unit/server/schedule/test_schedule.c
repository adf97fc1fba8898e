/* Unit tests of schedule and tz: zones read from the system's tz database
 * (tzdb.h; test_tz.c tests the reading itself) and their spans,
 * the text of intervals and their anchors, jitter, and the next fire times
 * through real DST changes of the tz database with cronie's rule: Berlin
 * and New York both ways, Lord Howe's half hour, Moscow's changes for good
 * (2011, 2014) and Apia's skipped day (2011-12-30). Each case gives the
 * expression, the zone, the instant after which to look, and each expected
 * fire as UTC and local time with its DST flag (test_schedule_cronie.c
 * holds the rule as a whole against cronie's own loop). */
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
#include "schedule.h"
#include "tzdb.h"

#define T(y, mo, d, h, mi, s) cs_civil_join(y, mo, d, h, mi, s)

static struct cs_tz *open_zone(const char *name)
{
    struct cs_tz *tz = NULL;
    struct cs_err err = {0};
    if (cs_tzdb_open(CS_TZDB_DIR_DEFAULT, name, &tz, &err) != 0)
        fail_msg("%s: %s", name, err.msg);
    return tz;
}

static void test_tz_spans(void **state)
{
    struct cs_tz *berlin = open_zone("Europe/Berlin"), *utc = open_zone("UTC");
    struct cs_tz_span sp;

    assert_string_equal(cs_tz_name(berlin), "Europe/Berlin");
    assert_string_equal(cs_tz_name(NULL), "UTC");
    cs_tz_span(berlin, T(2026, 3, 29, 0, 59, 59), &sp);
    assert_int_equal(sp.offset_s, 3600);
    assert_int_equal(sp.end_s, T(2026, 3, 29, 1, 0, 0));
    assert_int_equal(sp.offset_after_s, 7200);
    cs_tz_span(berlin, T(2026, 3, 29, 1, 0, 0), &sp);
    assert_int_equal(sp.offset_s, 7200);
    assert_int_equal(sp.offset_before_s, 3600);
    assert_int_equal(sp.start_s, T(2026, 3, 29, 1, 0, 0));
    assert_int_equal(sp.end_s, T(2026, 10, 25, 1, 0, 0));
    /* The rule holds to the end of the table. */
    cs_tz_span(berlin, T(2399, 7, 1, 0, 0, 0), &sp);
    assert_int_equal(sp.offset_s, 7200);
    cs_tz_span(utc, T(2026, 3, 29, 1, 0, 0), &sp);
    assert_int_equal(sp.offset_s, 0);
    assert_true(sp.start_s == INT64_MIN && sp.end_s == INT64_MAX);
    cs_tz_free(berlin);
    cs_tz_free(utc);
}

/* An expected fire: UTC and local wall clock, and the flag. */
struct fire {
    int64_t utc, local;
    unsigned flags;
};

static void check_fires(const char *text, const char *zone, int64_t after, const struct fire *want,
                        size_t n)
{
    struct cs_tz *tz = open_zone(zone);
    struct cs_schedule s;
    struct cs_err err = {0};
    struct cs_fire got[16];

    if (cs_schedule_parse(text, tz, &s, &err) != 0)
        fail_msg("\"%s\": %s", text, err.msg);
    assert_true(n <= 16);
    size_t found = cs_schedule_next_n(&s, after, got, n);
    assert_int_equal(found, n);
    for (size_t i = 0; i < n; i++) {
        struct cs_civil gu, gl, wu, wl;
        cs_civil_split(got[i].at_s, &gu);
        cs_civil_split(got[i].local_s, &gl);
        cs_civil_split(want[i].utc, &wu);
        cs_civil_split(want[i].local, &wl);
        if (got[i].at_s != want[i].utc || got[i].local_s != want[i].local ||
            got[i].flags != want[i].flags)
            fail_msg("\"%s\" in %s, fire %zu: got %04lld-%02d-%02d %02d:%02d:%02dZ (local "
                     "%02d-%02d %02d:%02d) flags %u, expected %04lld-%02d-%02d "
                     "%02d:%02d:%02dZ (local %02d-%02d %02d:%02d) flags %u",
                     text, zone, i, (long long)gu.year, gu.month, gu.mday, gu.hour, gu.min, gu.sec,
                     gl.month, gl.mday, gl.hour, gl.min, got[i].flags, (long long)wu.year, wu.month,
                     wu.mday, wu.hour, wu.min, wu.sec, wl.month, wl.mday, wl.hour, wl.min,
                     want[i].flags);
        if (got[i].local_s - got[i].at_s != got[i].offset_s &&
            !(got[i].flags & CS_FIRE_DST_SKIPPED))
            fail_msg("\"%s\" in %s, fire %zu: offset %d does not join UTC and local", text, zone, i,
                     got[i].offset_s);
    }
    cs_tz_free(tz);
}
#define CHECK_FIRES(text, zone, after, ...)                                                        \
    do {                                                                                           \
        const struct fire want_[] = {__VA_ARGS__};                                                 \
        check_fires(text, zone, after, want_, sizeof(want_) / sizeof(want_[0]));                   \
    } while (0)

enum { SKIPPED = CS_FIRE_DST_SKIPPED, ONCE = CS_FIRE_DST_ONCE, REPEAT = CS_FIRE_DST_REPEAT };

/* 2026-03-29 02:00 CET becomes 03:00 CEST (01:00 UTC); 2026-10-25 03:00
 * CEST becomes 02:00 CET (01:00 UTC). */
static void test_schedule_berlin_fixed(void **state)
{
    CHECK_FIRES("30 2 * * *", "Europe/Berlin", T(2026, 3, 27, 12, 0, 0),
                {T(2026, 3, 28, 1, 30, 0), T(2026, 3, 28, 2, 30, 0), 0},
                {T(2026, 3, 29, 1, 0, 0), T(2026, 3, 29, 2, 30, 0), SKIPPED},
                {T(2026, 3, 30, 0, 30, 0), T(2026, 3, 30, 2, 30, 0), 0});
    /* Two local times in the skipped hour: one fire at the jump. */
    CHECK_FIRES("0,30 2 * * *", "Europe/Berlin", T(2026, 3, 28, 12, 0, 0),
                {T(2026, 3, 29, 1, 0, 0), T(2026, 3, 29, 2, 0, 0), SKIPPED},
                {T(2026, 3, 30, 0, 0, 0), T(2026, 3, 30, 2, 0, 0), 0});
    /* A time just after the skipped hour is no DST case; one in it and one
     * after it, both due at the jump, are one fire. */
    CHECK_FIRES("0 3 * * *", "Europe/Berlin", T(2026, 3, 28, 12, 0, 0),
                {T(2026, 3, 29, 1, 0, 0), T(2026, 3, 29, 3, 0, 0), 0});
    CHECK_FIRES("0 2,3 * * *", "Europe/Berlin", T(2026, 3, 28, 12, 0, 0),
                {T(2026, 3, 29, 1, 0, 0), T(2026, 3, 29, 2, 0, 0), SKIPPED},
                {T(2026, 3, 30, 0, 0, 0), T(2026, 3, 30, 2, 0, 0), 0});
    /* Looking from just before the jump, and from the jump itself. */
    CHECK_FIRES("30 2 * * *", "Europe/Berlin", T(2026, 3, 29, 0, 59, 59),
                {T(2026, 3, 29, 1, 0, 0), T(2026, 3, 29, 2, 30, 0), SKIPPED});
    CHECK_FIRES("30 2 * * *", "Europe/Berlin", T(2026, 3, 29, 1, 0, 0),
                {T(2026, 3, 30, 0, 30, 0), T(2026, 3, 30, 2, 30, 0), 0});
    CHECK_FIRES("30 2 * * *", "Europe/Berlin", T(2026, 10, 24, 12, 0, 0),
                {T(2026, 10, 25, 0, 30, 0), T(2026, 10, 25, 2, 30, 0), ONCE},
                {T(2026, 10, 26, 1, 30, 0), T(2026, 10, 26, 2, 30, 0), 0});
    /* Looking from inside the repeated hour's second pass. */
    CHECK_FIRES("30 2 * * *", "Europe/Berlin", T(2026, 10, 25, 1, 10, 0),
                {T(2026, 10, 26, 1, 30, 0), T(2026, 10, 26, 2, 30, 0), 0});
    CHECK_FIRES("@daily", "Europe/Berlin", T(2026, 10, 24, 12, 0, 0),
                {T(2026, 10, 24, 22, 0, 0), T(2026, 10, 25, 0, 0, 0), 0},
                {T(2026, 10, 25, 23, 0, 0), T(2026, 10, 26, 0, 0, 0), 0});
}

static void test_schedule_berlin_wild(void **state)
{
    CHECK_FIRES("*/30 * * * *", "Europe/Berlin", T(2026, 3, 29, 0, 15, 0),
                {T(2026, 3, 29, 0, 30, 0), T(2026, 3, 29, 1, 30, 0), 0},
                {T(2026, 3, 29, 1, 0, 0), T(2026, 3, 29, 3, 0, 0), 0},
                {T(2026, 3, 29, 1, 30, 0), T(2026, 3, 29, 3, 30, 0), 0});
    CHECK_FIRES("*/30 * * * *", "Europe/Berlin", T(2026, 10, 24, 23, 45, 0),
                {T(2026, 10, 25, 0, 0, 0), T(2026, 10, 25, 2, 0, 0), 0},
                {T(2026, 10, 25, 0, 30, 0), T(2026, 10, 25, 2, 30, 0), 0},
                {T(2026, 10, 25, 1, 0, 0), T(2026, 10, 25, 2, 0, 0), REPEAT},
                {T(2026, 10, 25, 1, 30, 0), T(2026, 10, 25, 2, 30, 0), REPEAT},
                {T(2026, 10, 25, 2, 0, 0), T(2026, 10, 25, 3, 0, 0), 0});
    CHECK_FIRES("@hourly", "Europe/Berlin", T(2026, 10, 24, 23, 30, 0),
                {T(2026, 10, 25, 0, 0, 0), T(2026, 10, 25, 2, 0, 0), 0},
                {T(2026, 10, 25, 1, 0, 0), T(2026, 10, 25, 2, 0, 0), REPEAT},
                {T(2026, 10, 25, 2, 0, 0), T(2026, 10, 25, 3, 0, 0), 0});
    /* Wild by its minute field, though it names hour 2. */
    CHECK_FIRES("*/20 2 * * *", "Europe/Berlin", T(2026, 3, 28, 12, 0, 0),
                {T(2026, 3, 30, 0, 0, 0), T(2026, 3, 30, 2, 0, 0), 0});
    /* A seconds field on the real clock. */
    CHECK_FIRES("*/20 * * * * *", "Europe/Berlin", T(2026, 3, 29, 0, 59, 30),
                {T(2026, 3, 29, 0, 59, 40), T(2026, 3, 29, 1, 59, 40), 0},
                {T(2026, 3, 29, 1, 0, 0), T(2026, 3, 29, 3, 0, 0), 0});
}

/* Zones the tz database changed after ICU 72's copy (2022e): Almaty moved
 * to +05:00 on 2024-03-01; Mexico City keeps standard time in 2027;
 * Ciudad Juarez is a zone of its own since 2022g; Nuuk's daylight saving
 * time starts at -01:00, so 23:00-23:59 of the Saturday is skipped. */
static void test_schedule_updated_zones(void **state)
{
    CHECK_FIRES("0 12 * * *", "Asia/Almaty", T(2026, 12, 6, 8, 0, 0),
                {T(2026, 12, 7, 7, 0, 0), T(2026, 12, 7, 12, 0, 0), 0});
    CHECK_FIRES("0 12 * * *", "America/Mexico_City", T(2027, 4, 4, 20, 0, 0),
                {T(2027, 4, 5, 18, 0, 0), T(2027, 4, 5, 12, 0, 0), 0});
    CHECK_FIRES("0 12 * * *", "America/Ciudad_Juarez", T(2026, 12, 6, 20, 0, 0),
                {T(2026, 12, 7, 19, 0, 0), T(2026, 12, 7, 12, 0, 0), 0});
    CHECK_FIRES("30 23 * * *", "America/Nuuk", T(2027, 3, 26, 12, 0, 0),
                {T(2027, 3, 27, 1, 30, 0), T(2027, 3, 26, 23, 30, 0), 0},
                {T(2027, 3, 28, 1, 0, 0), T(2027, 3, 27, 23, 30, 0), SKIPPED},
                {T(2027, 3, 29, 0, 30, 0), T(2027, 3, 28, 23, 30, 0), 0});
}

/* 2026-03-08 02:00 EST becomes 03:00 EDT (07:00 UTC); 2026-11-01 02:00 EDT
 * becomes 01:00 EST (06:00 UTC). */
static void test_schedule_new_york(void **state)
{
    CHECK_FIRES("30 2 * * *", "America/New_York", T(2026, 3, 7, 12, 0, 0),
                {T(2026, 3, 8, 7, 0, 0), T(2026, 3, 8, 2, 30, 0), SKIPPED},
                {T(2026, 3, 9, 6, 30, 0), T(2026, 3, 9, 2, 30, 0), 0});
    CHECK_FIRES("30 1 * * *", "America/New_York", T(2026, 10, 31, 12, 0, 0),
                {T(2026, 11, 1, 5, 30, 0), T(2026, 11, 1, 1, 30, 0), ONCE},
                {T(2026, 11, 2, 6, 30, 0), T(2026, 11, 2, 1, 30, 0), 0});
    CHECK_FIRES("30 * * * *", "America/New_York", T(2026, 11, 1, 5, 0, 0),
                {T(2026, 11, 1, 5, 30, 0), T(2026, 11, 1, 1, 30, 0), 0},
                {T(2026, 11, 1, 6, 30, 0), T(2026, 11, 1, 1, 30, 0), REPEAT},
                {T(2026, 11, 1, 7, 30, 0), T(2026, 11, 1, 2, 30, 0), 0});
}

/* Lord Howe moves by half an hour: 2026-04-05 02:00 (+11) becomes 01:30
 * (+10:30) at 15:00 UTC the day before; 2026-10-04 02:00 (+10:30) becomes
 * 02:30 (+11) at 15:30 UTC the day before. */
static void test_schedule_lord_howe(void **state)
{
    CHECK_FIRES("15 2 * * *", "Australia/Lord_Howe", T(2026, 10, 3, 12, 0, 0),
                {T(2026, 10, 3, 15, 30, 0), T(2026, 10, 4, 2, 15, 0), SKIPPED},
                {T(2026, 10, 4, 15, 15, 0), T(2026, 10, 5, 2, 15, 0), 0});
    CHECK_FIRES("45 1 * * *", "Australia/Lord_Howe", T(2026, 4, 4, 12, 0, 0),
                {T(2026, 4, 4, 14, 45, 0), T(2026, 4, 5, 1, 45, 0), ONCE},
                {T(2026, 4, 5, 15, 15, 0), T(2026, 4, 6, 1, 45, 0), 0});
    CHECK_FIRES("*/15 * * * *", "Australia/Lord_Howe", T(2026, 4, 4, 14, 40, 0),
                {T(2026, 4, 4, 14, 45, 0), T(2026, 4, 5, 1, 45, 0), 0},
                {T(2026, 4, 4, 15, 0, 0), T(2026, 4, 5, 1, 30, 0), REPEAT},
                {T(2026, 4, 4, 15, 15, 0), T(2026, 4, 5, 1, 45, 0), REPEAT},
                {T(2026, 4, 4, 15, 30, 0), T(2026, 4, 5, 2, 0, 0), 0});
}

/* Moscow: 2011-03-27 02:00 (+3) became 03:00 (+4) and stayed there until
 * 2014-10-26 02:00 (+4) became 01:00 (+3) for good. Apia skipped
 * 2011-12-30 whole: 23:59:59 (-10) on the 29th was followed by 00:00 (+14)
 * on the 31st, at 10:00 UTC on the 30th. */
static void test_schedule_changes_for_good(void **state)
{
    CHECK_FIRES("30 2 * * *", "Europe/Moscow", T(2011, 3, 26, 12, 0, 0),
                {T(2011, 3, 26, 23, 0, 0), T(2011, 3, 27, 2, 30, 0), SKIPPED},
                {T(2011, 3, 27, 22, 30, 0), T(2011, 3, 28, 2, 30, 0), 0});
    /* No change back that autumn. */
    CHECK_FIRES("30 2 * * *", "Europe/Moscow", T(2011, 10, 29, 12, 0, 0),
                {T(2011, 10, 29, 22, 30, 0), T(2011, 10, 30, 2, 30, 0), 0},
                {T(2011, 10, 30, 22, 30, 0), T(2011, 10, 31, 2, 30, 0), 0});
    CHECK_FIRES("30 1 * * *", "Europe/Moscow", T(2014, 10, 25, 12, 0, 0),
                {T(2014, 10, 25, 21, 30, 0), T(2014, 10, 26, 1, 30, 0), ONCE},
                {T(2014, 10, 26, 22, 30, 0), T(2014, 10, 27, 1, 30, 0), 0});
    CHECK_FIRES("0 12 * * *", "Pacific/Apia", T(2011, 12, 29, 12, 0, 0),
                {T(2011, 12, 29, 22, 0, 0), T(2011, 12, 29, 12, 0, 0), 0},
                {T(2011, 12, 30, 10, 0, 0), T(2011, 12, 30, 12, 0, 0), SKIPPED},
                {T(2011, 12, 30, 22, 0, 0), T(2011, 12, 31, 12, 0, 0), 0});
    CHECK_FIRES("0 */6 * * *", "Pacific/Apia", T(2011, 12, 30, 0, 0, 0),
                {T(2011, 12, 30, 4, 0, 0), T(2011, 12, 29, 18, 0, 0), 0},
                {T(2011, 12, 30, 10, 0, 0), T(2011, 12, 31, 0, 0, 0), 0});
}

static void test_schedule_leap_day_in_zone(void **state)
{
    CHECK_FIRES("0 9 29 2 *", "America/New_York", T(2026, 1, 1, 0, 0, 0),
                {T(2028, 2, 29, 14, 0, 0), T(2028, 2, 29, 9, 0, 0), 0},
                {T(2032, 2, 29, 14, 0, 0), T(2032, 2, 29, 9, 0, 0), 0});
}

static void test_schedule_never_and_range(void **state)
{
    struct cs_schedule s;
    struct cs_fire f;

    assert_int_equal(cs_schedule_parse("0 0 30 2 *", NULL, &s, NULL), 0);
    assert_int_equal(cs_schedule_next(&s, T(2026, 1, 1, 0, 0, 0), &f), -ENOENT);
    assert_int_equal(cs_schedule_next_n(&s, T(2026, 1, 1, 0, 0, 0), &f, 1), 0);
    assert_int_equal(cs_schedule_parse("0 0 29 2 *", NULL, &s, NULL), 0);
    /* The last 29th of February before the end of the table, then none. */
    assert_int_equal(cs_schedule_next(&s, T(2396, 1, 1, 0, 0, 0), &f), 0);
    assert_int_equal(f.at_s, T(2396, 2, 29, 0, 0, 0));
    assert_int_equal(cs_schedule_next(&s, T(2396, 2, 29, 0, 0, 0), &f), -ENOENT);
    assert_int_equal(cs_schedule_next(&s, CS_TZ_END_S, &f), -ERANGE);
    assert_int_equal(cs_schedule_next(&s, CS_TZ_BEGIN_S - 1, &f), -ERANGE);
}

static void test_schedule_intervals(void **state)
{
    CHECK_FIRES("@every 90s", "UTC", T(2026, 1, 1, 0, 0, 0),
                {T(2026, 1, 1, 0, 1, 30), T(2026, 1, 1, 0, 1, 30), 0},
                {T(2026, 1, 1, 0, 3, 0), T(2026, 1, 1, 0, 3, 0), 0});
    CHECK_FIRES("@every 15m from :05", "UTC", T(2026, 1, 1, 12, 7, 0),
                {T(2026, 1, 1, 12, 20, 0), T(2026, 1, 1, 12, 20, 0), 0},
                {T(2026, 1, 1, 12, 35, 0), T(2026, 1, 1, 12, 35, 0), 0},
                {T(2026, 1, 1, 12, 50, 0), T(2026, 1, 1, 12, 50, 0), 0},
                {T(2026, 1, 1, 13, 5, 0), T(2026, 1, 1, 13, 5, 0), 0});
    CHECK_FIRES("@every 1h30m from 00:10:30", "UTC", T(2026, 1, 1, 0, 10, 30),
                {T(2026, 1, 1, 1, 40, 30), T(2026, 1, 1, 1, 40, 30), 0});
    CHECK_FIRES("@EVERY 7d from 2026-01-05T06:00:00Z", "UTC", T(2026, 1, 1, 0, 0, 0),
                {T(2026, 1, 5, 6, 0, 0), T(2026, 1, 5, 6, 0, 0), 0},
                {T(2026, 1, 12, 6, 0, 0), T(2026, 1, 12, 6, 0, 0), 0});
    /* Intervals run on the real clock: DST moves only their local reading. */
    CHECK_FIRES("@every 1h", "Europe/Berlin", T(2026, 10, 24, 23, 30, 0),
                {T(2026, 10, 25, 0, 0, 0), T(2026, 10, 25, 2, 0, 0), 0},
                {T(2026, 10, 25, 1, 0, 0), T(2026, 10, 25, 2, 0, 0), 0},
                {T(2026, 10, 25, 2, 0, 0), T(2026, 10, 25, 3, 0, 0), 0});
    /* Before the anchor and before the epoch alike. */
    CHECK_FIRES("@every 1d from 2000-01-01T12:00:00Z", "UTC", T(1960, 1, 1, 13, 0, 0),
                {T(1960, 1, 2, 12, 0, 0), T(1960, 1, 2, 12, 0, 0), 0});
}

static void test_schedule_parse_errors(void **state)
{
    static const char *const cases[][2] = {
        {"@every", "@every: expected \"@every DURATION\" or \"@every DURATION from ANCHOR\""},
        {"@every 1m at :05",
         "@every: expected \"@every DURATION\" or \"@every DURATION from ANCHOR\""},
        {"@every 0s", "@every: duration \"0s\" is out of range 1s-366d"},
        {"@every 367d", "@every: duration \"367d\" is out of range 1s-366d"},
        {"@every 99999999999999999999s",
         "@every: duration \"99999999999999999999s\" is out of range 1s-366d"},
        {"@every 500ms", "@every: \"500ms\": durations are whole seconds"},
        {"@every 90",
         "@every: \"90\" is not a duration (numbers with units d h m s, largest first, as in "
         "90s or 1h30m)"},
        {"@every 30m1h", "@every: \"30m1h\" is not a duration (numbers with units d h m s, largest "
                         "first, as in 90s or 1h30m)"},
        {"@every 1m from :60", "@every: anchor \":60\" is not :MM, :MM:SS, HH:MM, HH:MM:SS or "
                               "YYYY-MM-DDTHH:MM:SSZ (UTC)"},
        {"@every 1m from 24:00", "@every: anchor \"24:00\" is not :MM, :MM:SS, HH:MM, HH:MM:SS or "
                                 "YYYY-MM-DDTHH:MM:SSZ (UTC)"},
        {"@every 1m from 2026-02-29T00:00:00Z",
         "@every: anchor \"2026-02-29T00:00:00Z\" is not :MM, "
         ":MM:SS, HH:MM, HH:MM:SS or "
         "YYYY-MM-DDTHH:MM:SSZ (UTC)"},
        {"0 0 32 * *", "cron field 3 (day of month): 32 is out of range 1-31"},
        {"0 0 * *", "cron: expected 5 or 6 fields, got 4"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_schedule s;
        struct cs_err err = {0};
        int rc = cs_schedule_parse(cases[i][0], NULL, &s, &err);
        if (rc != -EINVAL || strcmp(err.msg, cases[i][1]) != 0)
            fail_msg("\"%s\": rc %d, \"%s\", expected \"%s\"", cases[i][0], rc, err.msg,
                     cases[i][1]);
    }
}

static void test_schedule_durations(void **state)
{
    static const struct {
        const char *text;
        int64_t seconds;
    } cases[] = {
        {"90s", 90}, {"1h30m", 5400}, {"1d2h3m4s", 93784}, {"2H", 7200}, {"366d", 31622400}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t got = 0;
        assert_int_equal(cs_duration_parse(cases[i].text, &got, NULL), 0);
        assert_int_equal(got, cases[i].seconds);
    }
}

static void test_schedule_jitter(void **state)
{
    int64_t slot = T(2026, 1, 1, 0, 0, 0);
    int64_t first = cs_schedule_jitter_s(42, slot, 300);
    int differ = 0;

    assert_int_equal(cs_schedule_jitter_s(42, slot, 300), first);
    assert_int_equal(cs_schedule_jitter_s(42, slot, 0), 0);
    for (int i = 0; i < 1000; i++) {
        int64_t j = cs_schedule_jitter_s(42, slot + 60 * i, 300);
        assert_true(j >= 0 && j <= 300);
        differ += j != first;
        assert_int_equal(cs_schedule_jitter_s(42, slot + 60 * i, 300), j);
    }
    assert_true(differ > 900);
    assert_int_not_equal(cs_schedule_jitter_s(43, slot, 1000000),
                         cs_schedule_jitter_s(42, slot, 1000000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tz_spans),
        cmocka_unit_test(test_schedule_berlin_fixed),
        cmocka_unit_test(test_schedule_updated_zones),
        cmocka_unit_test(test_schedule_berlin_wild),
        cmocka_unit_test(test_schedule_new_york),
        cmocka_unit_test(test_schedule_lord_howe),
        cmocka_unit_test(test_schedule_changes_for_good),
        cmocka_unit_test(test_schedule_leap_day_in_zone),
        cmocka_unit_test(test_schedule_never_and_range),
        cmocka_unit_test(test_schedule_intervals),
        cmocka_unit_test(test_schedule_parse_errors),
        cmocka_unit_test(test_schedule_durations),
        cmocka_unit_test(test_schedule_jitter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
