/* Unit test of schedule's DST rule as a whole: cronie's own loop, run
 * minute by minute on the real clock over three days around every offset
 * change of Berlin, New York and Lord Howe in 2026, Moscow in 2011 and 2014
 * and Apia in 2011, must fire each of fifteen expressions, wild and fixed,
 * at exactly the instants cs_schedule_next gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "civil.h"
#include "schedule.h"
#include "tzdb.h"

#define T(y, mo, d, h, mi, s) cs_civil_join(y, mo, d, h, mi, s)

/* Whether expression c matches local civil minute m. */
static bool matches(const struct cs_cron *c, int64_t m)
{
    int64_t found;
    return cs_cron_next(c, m * 60, &found) == 0 && found == m * 60;
}

/* cronie's own loop, minute by minute on the real clock over [from, to):
 * when local time steps by one minute, everything due fires; when it jumps
 * forward, fixed-time jobs due in the skipped minutes fire now, wild jobs
 * only for the minute it is; when it jumps back, wild jobs fire for the
 * minute it is and fixed-time jobs wait until local time passes the latest
 * it had reached. Writes the instants a job fires at, in order. */
static size_t cronie_fires(const struct cs_cron *c, const struct cs_tz *tz, int64_t from,
                           int64_t to, int64_t *out, size_t cap)
{
    bool wild = cs_cron_is_wild(c);
    int64_t last = INT64_MIN, reached = INT64_MIN;
    size_t n = 0;

    for (int64_t u = from; u < to; u += 60) {
        struct cs_tz_span sp;
        cs_tz_span(tz, u, &sp);
        int64_t lt = (u + sp.offset_s) / 60;
        /* Fixed-time jobs fire only past the latest local time reached. */
        bool fire = (wild || lt > reached) && matches(c, lt);
        for (int64_t m = last + 1; m < lt && last != INT64_MIN && !wild && !fire; m++)
            fire = m > reached && matches(c, m);
        if (fire) {
            assert_true(n < cap);
            out[n++] = u;
        }
        last = lt;
        reached = lt > reached ? lt : reached;
    }
    return n;
}

/* The rule as implemented against cronie's loop, over three days around
 * every offset change of the named years, for expressions of both kinds. */
static void test_schedule_against_cronie(void **state)
{
    static const struct {
        const char *zone;
        int year;
    } zones[] = {{"Europe/Berlin", 2026}, {"America/New_York", 2026}, {"Australia/Lord_Howe", 2026},
                 {"Europe/Moscow", 2011}, {"Europe/Moscow", 2014},    {"Pacific/Apia", 2011}};
    static const char *const exprs[] = {
        "30 2 * * *",   "0,30 2 * * *",     "*/30 * * * *", "0 * * * *",        "15 1 * * *",
        "*/20 2 * * *", "0 0 * * *",        "45 1,2 * * *", "0-59/7 1-3 * * *", "59 1 * * *",
        "0 3 * * *",    "10,40 0-23 * * *", "0 12 * * *",   "5 */2 * * *",      "0-59 * * * *"};
    static int64_t want[8192], got[8192];
    size_t changes = 0, fires = 0;

    for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
        struct cs_tz *tz = NULL;
        assert_int_equal(cs_tzdb_open(CS_TZDB_DIR_DEFAULT, zones[z].zone, &tz, NULL), 0);
        int64_t t = T(zones[z].year, 1, 1, 0, 0, 0), end = T(zones[z].year + 1, 1, 1, 0, 0, 0);
        for (;;) {
            struct cs_tz_span sp;
            cs_tz_span(tz, t, &sp);
            if (sp.end_s >= end)
                break;
            t = sp.end_s;
            changes++;
            for (size_t e = 0; e < sizeof(exprs) / sizeof(exprs[0]); e++) {
                struct cs_schedule s;
                assert_int_equal(cs_schedule_parse(exprs[e], tz, &s, NULL), 0);
                size_t nw = cronie_fires(&s.cron, tz, t - 36 * 3600, t + 36 * 3600, want,
                                         sizeof(want) / sizeof(want[0]));
                size_t ng = 0;
                struct cs_fire f;
                for (int64_t after = t - 36 * 3600 - 1;
                     cs_schedule_next(&s, after, &f) == 0 && f.at_s < t + 36 * 3600; after = f.at_s)
                    got[ng++] = f.at_s;
                fires += ng;
                for (size_t i = 0; i < nw || i < ng; i++) {
                    if (i >= nw || i >= ng || want[i] != got[i])
                        fail_msg("\"%s\" in %s around %lld: fire %zu is %lld, cronie's %lld",
                                 exprs[e], zones[z].zone, (long long)t, i,
                                 i < ng ? (long long)got[i] : -1LL,
                                 i < nw ? (long long)want[i] : -1LL);
                }
            }
        }
        cs_tz_free(tz);
    }
    /* Two changes a year in Berlin, New York and Lord Howe, one in each of
     * Moscow's years, three in Apia's 2011 (April, September, December). */
    assert_int_equal(changes, 11);
    assert_true(fires > 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule_against_cronie),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
