/* tz_rule: a POSIX TZ string, the rule a TZif file's footer gives for the
 * instants after its last transition (RFC 8536 section 3.3): a standard
 * offset, and optionally a daylight saving offset with the yearly dates and
 * times it starts and ends, as in "CET-1CEST,M3.5.0,M10.5.0/3" or
 * "<-02>2<-01>,M3.5.0/-2,M10.5.0/-1". RFC 8536's extensions are read: a
 * transition time may be negative or past 24 hours (-167h..167h). Pure
 * functions, any thread. */
#ifndef CS_TZ_RULE_H
#define CS_TZ_RULE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* The longest footer read, in bytes (zic's are under 60). */
#define CS_TZ_RULE_TEXT_MAX 255

/* A yearly date and the local time on it at which a change happens. */
struct cs_tz_rule_date {
    enum {
        CS_TZ_RULE_JULIAN_1,       /* Jn: day n of 1..365, February 29 never counted */
        CS_TZ_RULE_JULIAN_0,       /* n: day n of 0..365, February 29 counted */
        CS_TZ_RULE_MONTH_WEEK_DAY, /* Mm.w.d: weekday d (Sunday 0), week w (5: last), month m */
    } kind;
    int day, week, month;
    int32_t time_s; /* the local time of day, in the offset in force before the change */
};

struct cs_tz_rule {
    int32_t std_offset_s; /* local = UTC + offset, east positive (the TZ string's sign inverted) */
    int32_t dst_offset_s; /* std_offset_s + 3600 unless the string says otherwise */
    bool has_dst;         /* false: std_offset_s holds all year */
    struct cs_tz_rule_date start, end; /* when daylight saving time starts and ends */
};

/* Parses text (a TZ string without the footer's newlines) into *out. 0, or
 * -EINVAL with err saying what is wrong and where. A string with daylight
 * saving time but no rule for it ("EST5EDT") is refused: zic never writes
 * one, and POSIX leaves its dates to the implementation. */
int cs_tz_rule_parse(const char *text, struct cs_tz_rule *out, struct cs_err *err);

/* The UTC instants at which daylight saving time starts and ends in year
 * (either may come first: south of the equator the end does). Only for a
 * rule with has_dst. */
void cs_tz_rule_year(const struct cs_tz_rule *rule, int64_t year, int64_t *start_s, int64_t *end_s);

#endif
