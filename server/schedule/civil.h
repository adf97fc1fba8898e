/* civil: the proleptic Gregorian calendar as arithmetic on seconds.
 *
 * A "civil second" counts seconds from 1970-01-01 00:00:00 of a wall clock
 * that never jumps: UTC itself, or the local time of a zone read as if it
 * were UTC. Pure functions, any thread; exact for every int64 day count the
 * scheduler uses (years -1e9..1e9), no tables, no time zone. */
#ifndef CS_CIVIL_H
#define CS_CIVIL_H

#include <stdint.h>

#define CS_DAY_S 86400

/* A broken-down wall clock time: month 1-12, mday 1-31, wday 0-6 (Sunday 0). */
struct cs_civil {
    int64_t year;
    int month, mday, hour, min, sec, wday;
};

/* Days from 1970-01-01 to year-month-mday (month 1-12; mday may run past the
 * month's end, it then counts into the next). */
int64_t cs_civil_days(int64_t year, int month, int mday);
/* The broken-down form of a civil second. */
void cs_civil_split(int64_t t, struct cs_civil *out);
/* The civil second of year-month-mday hour:min:sec. */
int64_t cs_civil_join(int64_t year, int month, int mday, int hour, int min, int sec);
/* Days in the month (28-31). */
int cs_civil_month_days(int64_t year, int month);
/* Day of the week of a day count from 1970-01-01 (Sunday 0). */
int cs_civil_wday(int64_t days);

#endif
