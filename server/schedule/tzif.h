/* tzif: the TZif format (RFC 8536), in which the tz database's zones are
 * compiled (the files under /usr/share/zoneinfo): a zone's transitions, the
 * local time types they switch to, and the footer's POSIX TZ string for the
 * instants after the last transition. Reads version 1 (32-bit data, no
 * footer) and versions 2 and later (the 64-bit block and the footer). The
 * parse checks every count and index against the file's length and the
 * RFC's rules, so a truncated or hostile file is refused, never read past.
 * Pure functions, any thread, no allocation: the result borrows the bytes. */
#ifndef CS_TZIF_H
#define CS_TZIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tz_rule.h"
#include "util.h"

/* A local time type: its UTC offset and whether it is daylight saving time. */
struct cs_tzif_type {
    int32_t utoff_s;
    bool is_dst;
};

/* A parsed file; the pointers borrow the buffer given to cs_tzif_parse. */
struct cs_tzif {
    int version;                          /* 1, 2, 3, ... */
    size_t timecnt;                       /* transitions */
    size_t typecnt;                       /* local time types, 1..256 */
    size_t leapcnt;                       /* leap second records */
    size_t time_size;                     /* bytes per transition time: 4 (version 1) or 8 */
    const uint8_t *times;                 /* timecnt big-endian times, strictly ascending */
    const uint8_t *indexes;               /* timecnt type indexes, each below typecnt */
    const uint8_t *types;                 /* typecnt records of 6 bytes */
    char footer[CS_TZ_RULE_TEXT_MAX + 1]; /* the TZ string; "" when there is none */
};

/* Parses the len bytes at buf into *out (borrowing buf). 0, or -EINVAL with
 * err saying what is wrong ("not a TZif file", "truncated", ...). */
int cs_tzif_parse(const uint8_t *buf, size_t len, struct cs_tzif *out, struct cs_err *err);

/* Transition i's instant, UTC seconds (i < timecnt). */
int64_t cs_tzif_time(const struct cs_tzif *f, size_t i);
/* The local time type transition i switches to (i < timecnt). */
struct cs_tzif_type cs_tzif_type_after(const struct cs_tzif *f, size_t i);
/* Local time type number t (t < typecnt). */
struct cs_tzif_type cs_tzif_type(const struct cs_tzif *f, size_t t);

#endif
