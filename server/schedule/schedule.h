/* schedule: when a job fires: a cron expression in a time zone, or an
 * interval on the real clock, and the next fire times either gives.
 *
 * DST follows cronie's rule. A job is "wild" when its minute or hour field
 * starts with `*` (a star, with or without a step; @hourly): it fires on
 * the real clock, so a local time skipped by a jump forward never fires and
 * one repeated by a jump back fires at both passes. Every other cron job
 * fires once per local time: a skipped one at the first instant after the
 * jump, a repeated one at its first pass only. Intervals never shift. A schedule is a value that
 * borrows its zone; every function is pure, any thread, microseconds. */
#ifndef CS_SCHEDULE_H
#define CS_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "civil.h"
#include "cron.h"
#include "tz.h"
#include "util.h"

/* Instants a schedule answers for: after_s from CS_TZ_BEGIN_S; fire times
 * before CS_TZ_END_S (2400-01-01 UTC). */

/* Flags of struct cs_fire: what a DST change did to it. */
enum {
    /* Its local time was skipped by a jump forward: it fires at the jump. */
    CS_FIRE_DST_SKIPPED = 1u << 0,
    /* Its local time comes twice (a jump back): this first pass is its only fire. */
    CS_FIRE_DST_ONCE = 1u << 1,
    /* The second pass of a repeated local time, fired by a wild job. */
    CS_FIRE_DST_REPEAT = 1u << 2,
};

struct cs_fire {
    int64_t at_s;     /* the instant it fires, UTC seconds, jitter not added: the slot's time */
    int64_t local_s;  /* the local time it was scheduled for, a civil second (civil.h) */
    int32_t offset_s; /* the zone's UTC offset at at_s */
    unsigned flags;   /* CS_FIRE_DST_* */
};

/* An interval: fires at anchor_s + k * period_s for every integer k. */
struct cs_interval {
    int64_t period_s; /* 1 .. CS_INTERVAL_MAX_S */
    int64_t anchor_s; /* UTC seconds; 0 aligns to the Unix epoch */
};

#define CS_INTERVAL_MAX_S (366LL * CS_DAY_S)

enum cs_schedule_kind { CS_SCHEDULE_CRON, CS_SCHEDULE_INTERVAL };

struct cs_schedule {
    enum cs_schedule_kind kind;
    union {
        struct cs_cron cron;
        struct cs_interval interval;
    };
    const struct cs_tz *tz; /* borrowed, outlives the schedule; NULL is UTC */
};

/* Parses a cron expression, a macro, or "@every DURATION [from ANCHOR]" into
 * *out, in zone tz (borrowed). 0, or -EINVAL with err saying what is wrong. */
int cs_schedule_parse(const char *text, const struct cs_tz *tz, struct cs_schedule *out,
                      struct cs_err *err);

/* A duration: one or more NUMBER UNIT with units d h m s ("90s", "1h30m"),
 * whole seconds, in *out_s. 0, or -EINVAL with err. */
int cs_duration_parse(const char *text, int64_t *out_s, struct cs_err *err);

/* The first fire strictly after after_s, in *out. 0; -ENOENT when it never
 * fires again (before CS_TZ_END_S); -ERANGE when after_s is outside the range
 * above. Bounded: one cron search and a few span lookups. */
int cs_schedule_next(const struct cs_schedule *s, int64_t after_s, struct cs_fire *out);

/* The next n fires after after_s into out[0..n): how many were found (fewer
 * than n when the schedule ends). For display. */
size_t cs_schedule_next_n(const struct cs_schedule *s, int64_t after_s, struct cs_fire *out,
                          size_t n);

/* The jitter of the slot scheduled at slot_s: a delay in 0..max_s drawn
 * from (seed, slot_s) alone, so the same seed gives the same delay again. */
int64_t cs_schedule_jitter_s(uint64_t seed, int64_t slot_s, int64_t max_s);

#endif
