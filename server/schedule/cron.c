/* cron: the next civil second a parsed expression matches.
 *
 * The search walks months, not seconds: for each month the expression
 * allows, the days it selects are one 31-bit mask (the plain days, L, W, #
 * and the OR rule folded together), and the time of day is the next set bit
 * of three masks. So a search is at most 4801 months of a few dozen
 * operations each, whatever the expression. Pure, any thread. */
#include "cron.h"

#include <errno.h>

#include "civil.h"

/* The Gregorian calendar repeats every 400 years; one more month covers a
 * start late in a month. */
#define SEARCH_MONTHS (400 * 12 + 1)

/* The lowest set bit of mask at or above from, or -ENOENT. */
static int next_bit(uint64_t mask, int from)
{
    if (from >= 64)
        return -ENOENT;
    mask &= ~0ull << from;
    return mask == 0 ? -ENOENT : __builtin_ctzll(mask);
}

/* The weekday nearest day (1..ndays) without leaving the month. */
static int nearest_weekday(int day, int ndays, int wday_of_day)
{
    if (wday_of_day == 6)
        return day == 1 ? 3 : day - 1;
    if (wday_of_day == 0)
        return day == ndays ? day - 2 : day + 1;
    return day;
}

/* Bit n set for each day n of year-month that c selects. */
static uint32_t day_mask(const struct cs_cron *c, int64_t year, int month)
{
    int ndays = cs_civil_month_days(year, month);
    int wday1 = cs_civil_wday(cs_civil_days(year, month, 1));
    uint32_t in_month = ((1u << ndays) - 1) << 1;
    uint32_t by_mday = c->mday & in_month;
    /* The plain weekdays, rotated so bit 1 is the 1st's, then repeated for
     * five weeks. */
    uint32_t week = (uint32_t)(((c->wday | (c->wday << 7)) >> wday1) & 0x7f);
    uint32_t by_wday = (week | week << 7 | week << 14 | week << 21 | week << 28) << 1 & in_month;

    for (int n = 0; c->mday_last != 0 && n < ndays; n++) {
        if (c->mday_last & (1u << n))
            by_mday |= 1u << (ndays - n);
    }
    /* Bit 0 of mday_near is LW: the weekday nearest the last day. A day
     * past the month's end (31W in April) selects nothing. */
    for (int bit = 0; c->mday_near != 0 && bit <= ndays; bit++) {
        int day = bit == 0 ? ndays : bit;
        if (c->mday_near & (1u << bit))
            by_mday |= 1u << nearest_weekday(day, ndays, (wday1 + day - 1) % 7);
    }
    for (int day = 1; (c->wday_nth != 0 || c->wday_last != 0) && day <= ndays; day++) {
        int wday = (wday1 + day - 1) % 7;
        if (c->wday_nth & (1ull << (7 * ((day - 1) / 7) + wday)) ||
            (c->wday_last & (1u << wday) && day + 7 > ndays))
            by_wday |= 1u << day;
    }
    /* Classic cron: a `*` in either day field leaves the other to choose;
     * both restricted, a day matching either fires. */
    if (c->flags & (CS_CRON_DOM_STAR | CS_CRON_DOW_STAR))
        return by_mday & by_wday;
    return by_mday | by_wday;
}

/* The first time of day at or after h:m:s that c allows, as seconds of the
 * day, or -ENOENT. */
static int time_of_day(const struct cs_cron *c, int h, int m, int s)
{
    int first_min = next_bit(c->min, 0), first_sec = next_bit(c->sec, 0);

    for (int hour = next_bit(c->hour, h); hour >= 0; hour = next_bit(c->hour, hour + 1)) {
        int min = hour == h ? next_bit(c->min, m) : first_min;
        for (; min >= 0; min = next_bit(c->min, min + 1)) {
            int sec = hour == h && min == m ? next_bit(c->sec, s) : first_sec;
            if (sec >= 0)
                return hour * 3600 + min * 60 + sec;
        }
    }
    return -ENOENT;
}

int cs_cron_next(const struct cs_cron *c, int64_t from, int64_t *out)
{
    struct cs_civil t;
    int64_t year;
    int month, day_from;

    if (c->flags & CS_CRON_NEVER)
        return -ENOENT;
    cs_civil_split(from, &t);
    year = t.year;
    month = t.month;
    day_from = t.mday;
    for (int i = 0; i < SEARCH_MONTHS; i++) {
        uint32_t days = c->month & (1u << month) ? day_mask(c, year, month) : 0;

        days &= ~0u << day_from;
        while (days != 0) {
            int day = __builtin_ctz(days);
            bool today = i == 0 && day == t.mday;
            int tod = today ? time_of_day(c, t.hour, t.min, t.sec) : time_of_day(c, 0, 0, 0);
            if (tod >= 0) {
                *out = cs_civil_days(year, month, day) * CS_DAY_S + tod;
                return 0;
            }
            days &= days - 1;
        }
        day_from = 1;
        if (++month == 13) {
            month = 1;
            year++;
        }
    }
    return -ENOENT;
}

bool cs_cron_is_wild(const struct cs_cron *c)
{
    return (c->flags & CS_CRON_WILD) != 0;
}
