/* cron: the cron grammar, parsed into bitsets, and the next wall-clock time
 * an expression matches.
 *
 * Five fields (minute hour day-of-month month day-of-week) or six with a
 * leading seconds field; `*`, lists, ranges, steps, month and day names,
 * 7 as Sunday, `L` `L-n` `nW` `LW` in the day of month, `nL` and `d#n` in the
 * day of week, the @yearly ... @hourly macros, and classic cron's rule that
 * a restricted day of month OR a restricted day of week selects a day. The
 * parsed form is a plain value (no pointers, no allocation); every function
 * is pure and runs on any thread. Times are civil seconds (civil.h): this
 * module knows no time zone, schedule.c applies one. */
#ifndef CS_CRON_H
#define CS_CRON_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* The longest expression accepted, in bytes. */
#define CS_CRON_TEXT_MAX 255

/* Flags of struct cs_cron. */
enum {
    CS_CRON_DOM_STAR = 1u << 0, /* the day-of-month field starts with `*` or `?` */
    CS_CRON_DOW_STAR = 1u << 1, /* the day-of-week field starts with `*` or `?` */
    /* The minute or the hour field starts with `*` (as cronie's MIN_STAR and
     * HR_STAR): the job fires on the real clock through DST changes. */
    CS_CRON_WILD = 1u << 2,
    /* No date ever matches (`0 0 30 2 *`): found once by the parse, so a
     * search for it costs nothing. */
    CS_CRON_NEVER = 1u << 3,
};

struct cs_cron {
    uint64_t sec;       /* bit n: second n (bit 0 only, for five fields) */
    uint64_t min;       /* bit n: minute n */
    uint32_t hour;      /* bit n: hour n */
    uint32_t mday;      /* bit n: day n of the month (1-31) */
    uint32_t mday_last; /* bit n: n days before the last day (`L` is bit 0, `L-3` bit 3) */
    uint32_t mday_near; /* bit n: the weekday nearest day n (`15W`); bit 0: `LW` */
    uint64_t wday_nth;  /* bit 7*(n-1)+d: the n-th weekday d of the month (`5#2`) */
    uint16_t month;     /* bit n: month n (1-12) */
    uint8_t wday;       /* bit d: weekday d (Sunday 0) */
    uint8_t wday_last;  /* bit d: the last weekday d of the month (`5L`) */
    unsigned flags;     /* CS_CRON_* */
};

/* Parses text into *out. 0, or -EINVAL with err naming the field and what is
 * wrong ("field 3 (day of month): 32 is out of range 1-31"). */
int cs_cron_parse(const char *text, struct cs_cron *out, struct cs_err *err);

/* The first civil second at or after from that c matches, in *out: 0, or
 * -ENOENT when none comes within 400 years (the calendar's period, so then
 * never; at once when the parse found that). At most 4801 months are looked
 * at: tens of microseconds at worst. */
int cs_cron_next(const struct cs_cron *c, int64_t from, int64_t *out);

/* Whether the expression fires on the real clock through DST changes
 * (CS_CRON_WILD). */
bool cs_cron_is_wild(const struct cs_cron *c);

#endif
