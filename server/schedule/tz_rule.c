/* tz_rule: POSIX TZ strings (see tz_rule.h). A small recursive-descent
 * reader over the grammar std offset [dst [offset] ,start[/time],end[/time]];
 * the dates become days through civil.h's arithmetic. Pure, any thread. */
#include "tz_rule.h"

#include <ctype.h>
#include <errno.h>

#include "civil.h"

/* The default time of a change: 02:00 local. */
#define DEFAULT_TIME_S 7200
/* POSIX's offsets run to 24 hours; RFC 8536's transition times to 167. */
#define OFFSET_HOURS_MAX 24
#define TIME_HOURS_MAX 167

/* A zone abbreviation: three or more letters, or <...> with three or more
 * letters, digits, '+' or '-' between the brackets. */
static bool read_name(const char **p)
{
    const char *s = *p;
    int n = 0;

    if (*s == '<') {
        for (s++; isalnum((unsigned char)*s) || *s == '+' || *s == '-'; s++)
            n++;
        if (*s++ != '>')
            return false;
    } else {
        for (; isalpha((unsigned char)*s); s++)
            n++;
    }
    *p = s;
    return n >= 3;
}

/* Up to max_digits decimal digits, at least one, into *out. */
static bool read_number(const char **p, int max_digits, int *out)
{
    int n = 0;

    *out = 0;
    for (; n < max_digits && isdigit((unsigned char)**p); (*p)++, n++)
        *out = *out * 10 + (**p - '0');
    return n > 0 && !isdigit((unsigned char)**p);
}

/* [+-]hh[:mm[:ss]], hh up to max_hours, into *out seconds (signed). */
static bool read_hms(const char **p, int max_hours, int32_t *out)
{
    int sign = 1, h, m = 0, s = 0;

    if (**p == '+' || **p == '-')
        sign = *(*p)++ == '-' ? -1 : 1;
    if (!read_number(p, 3, &h) || h > max_hours)
        return false;
    if (**p == ':' && ((*p)++, !read_number(p, 2, &m) || m > 59))
        return false;
    if (**p == ':' && ((*p)++, !read_number(p, 2, &s) || s > 59))
        return false;
    *out = sign * (h * 3600 + m * 60 + s);
    return true;
}

/* Jn, n or Mm.w.d, then an optional /time. */
static bool read_date(const char **p, struct cs_tz_rule_date *out)
{
    if (**p == 'J') {
        (*p)++;
        out->kind = CS_TZ_RULE_JULIAN_1;
        if (!read_number(p, 3, &out->day) || out->day < 1 || out->day > 365)
            return false;
    } else if (**p == 'M') {
        (*p)++;
        out->kind = CS_TZ_RULE_MONTH_WEEK_DAY;
        if (!read_number(p, 2, &out->month) || out->month < 1 || out->month > 12 ||
            *(*p)++ != '.' || !read_number(p, 1, &out->week) || out->week < 1 || out->week > 5 ||
            *(*p)++ != '.' || !read_number(p, 1, &out->day) || out->day > 6)
            return false;
    } else {
        out->kind = CS_TZ_RULE_JULIAN_0;
        if (!read_number(p, 3, &out->day) || out->day > 365)
            return false;
    }
    out->time_s = DEFAULT_TIME_S;
    return **p != '/' || ((*p)++, read_hms(p, TIME_HOURS_MAX, &out->time_s));
}

int cs_tz_rule_parse(const char *text, struct cs_tz_rule *out, struct cs_err *err)
{
    const char *p = text, *what;
    int32_t offset;

    *out = (struct cs_tz_rule){0};
    what = "a zone abbreviation (3 or more letters, or <...>)";
    if (!read_name(&p))
        goto err_syntax;
    what = "the standard time's offset ([+-]hh[:mm[:ss]])";
    if (!read_hms(&p, OFFSET_HOURS_MAX, &offset))
        goto err_syntax;
    out->std_offset_s = out->dst_offset_s = -offset;
    if (*p == '\0')
        return 0;
    what = "the daylight saving time's abbreviation";
    if (!read_name(&p))
        goto err_syntax;
    out->has_dst = true;
    out->dst_offset_s = out->std_offset_s + 3600;
    what = "the daylight saving time's offset";
    if (*p != ',' && *p != '\0') {
        if (!read_hms(&p, OFFSET_HOURS_MAX, &offset))
            goto err_syntax;
        out->dst_offset_s = -offset;
    }
    what = "',' and the dates daylight saving time starts and ends";
    if (*p++ != ',')
        goto err_syntax;
    what = "a date (Jn, n or Mm.w.d) and an optional /time";
    if (!read_date(&p, &out->start) || *p++ != ',' || !read_date(&p, &out->end))
        goto err_syntax;
    what = "the end of the string";
    if (*p != '\0')
        goto err_syntax;
    return 0;

err_syntax:
    return cs_err_set(err, -EINVAL, "TZ string \"%.64s\": expected %s at byte %d", text, what,
                      (int)(p - text));
}

/* The day (from 1970-01-01) date falls on in year. */
static int64_t date_day(const struct cs_tz_rule_date *date, int64_t year)
{
    int64_t jan1 = cs_civil_days(year, 1, 1);

    switch (date->kind) {
    case CS_TZ_RULE_JULIAN_1:
        return jan1 + date->day - 1 + (date->day >= 60 && cs_civil_month_days(year, 2) == 29);
    case CS_TZ_RULE_JULIAN_0:
        return jan1 + date->day;
    case CS_TZ_RULE_MONTH_WEEK_DAY:
    default: {
        int64_t first = cs_civil_days(year, date->month, 1);
        int mday = 1 + (date->day - cs_civil_wday(first) + 7) % 7 + 7 * (date->week - 1);
        while (mday > cs_civil_month_days(year, date->month))
            mday -= 7;
        return first + mday - 1;
    }
    }
}

void cs_tz_rule_year(const struct cs_tz_rule *rule, int64_t year, int64_t *start_s, int64_t *end_s)
{
    /* Each change's local time is read in the offset in force before it. */
    *start_s = date_day(&rule->start, year) * CS_DAY_S + rule->start.time_s - rule->std_offset_s;
    *end_s = date_day(&rule->end, year) * CS_DAY_S + rule->end.time_s - rule->dst_offset_s;
}
