/* civil: Gregorian calendar arithmetic on day counts, after the well-known
 * era-of-400-years formulas (days_from_civil / civil_from_days): no loops,
 * no tables. Pure, any thread. */
#include "civil.h"

#include <stdbool.h>

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t cs_civil_days(int64_t year, int month, int mday)
{
    /* Years start in March, so the leap day is the last of the year. */
    int64_t y = month <= 2 ? year - 1 : year;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t mp = month > 2 ? month - 3 : month + 9;
    int64_t doy = (153 * mp + 2) / 5 + mday - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int cs_civil_wday(int64_t days)
{
    /* 1970-01-01 was a Thursday. */
    return (int)(days - floor_div(days + 4, 7) * 7 + 4);
}

void cs_civil_split(int64_t t, struct cs_civil *out)
{
    int64_t days = floor_div(t, CS_DAY_S);
    int64_t secs = t - days * CS_DAY_S;
    int64_t z = days + 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;

    out->mday = (int)(doy - (153 * mp + 2) / 5 + 1);
    out->month = (int)(mp < 10 ? mp + 3 : mp - 9);
    out->year = yoe + era * 400 + (out->month <= 2);
    out->hour = (int)(secs / 3600);
    out->min = (int)(secs / 60 % 60);
    out->sec = (int)(secs % 60);
    out->wday = cs_civil_wday(days);
}

int64_t cs_civil_join(int64_t year, int month, int mday, int hour, int min, int sec)
{
    return cs_civil_days(year, month, mday) * CS_DAY_S + hour * 3600 + min * 60 + sec;
}

int cs_civil_month_days(int64_t year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}
