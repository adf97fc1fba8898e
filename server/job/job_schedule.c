/* job_schedule: Schedule messages into parsed schedules, and the zone cache
 * they borrow from. Loop thread (the cache is the loop's). A zone is read
 * from the tz database off the loop (zone_load.h), once for all the jobs
 * in it, and replaced only when a reread finds it changed. */
#include "job_schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "civil.h"

void cs_zones_free(struct cs_zones *zones)
{
    for (size_t i = 0; i < zones->n; i++)
        cs_tz_free(zones->tz[i]);
    free(zones->tz);
    zones->tz = NULL;
    zones->n = zones->cap = 0;
}

/* Where name is in zones, or where it would go; *found says which. */
static size_t zone_index(const struct cs_zones *zones, const char *name, bool *found)
{
    size_t lo = 0, hi = zones->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(cs_tz_name(zones->tz[mid]), name);
        if (cmp == 0) {
            *found = true;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

const struct cs_tz *cs_zones_find(const struct cs_zones *zones, const char *name)
{
    bool found;
    size_t i = zone_index(zones, name, &found);
    return found ? zones->tz[i] : NULL;
}

struct cs_tz *cs_zones_swap(struct cs_zones *zones, struct cs_tz *tz)
{
    CS_ASSERT_LOOP();
    bool found;
    size_t i = zone_index(zones, cs_tz_name(tz), &found);
    if (found) {
        struct cs_tz *old = zones->tz[i];
        zones->tz[i] = tz;
        return old;
    }
    if (zones->n == zones->cap) {
        zones->cap = zones->cap ? zones->cap * 2 : 8;
        zones->tz = cs_xrealloc(zones->tz, zones->cap * sizeof(*zones->tz));
    }
    memmove(&zones->tz[i + 1], &zones->tz[i], (zones->n - i) * sizeof(*zones->tz));
    zones->tz[i] = tz;
    zones->n++;
    return NULL;
}

void cs_zones_add(struct cs_zones *zones, struct cs_tz *tz)
{
    if (cs_zones_find(zones, cs_tz_name(tz)) != NULL)
        cs_tz_free(tz);
    else
        (void)cs_zones_swap(zones, tz); /* none of its name: nothing replaced */
}

/* The numbers and enums of a Schedule, before its text and zone. */
static int check_policy(const Csched__V1__Schedule *sc, struct cs_err *err)
{
    if (sc->jitter_seconds > CS_SCHEDULE_JITTER_MAX_S)
        return cs_err_set(err, -EINVAL, "job.schedule.jitter_seconds %u is over the limit of %d",
                          sc->jitter_seconds, CS_SCHEDULE_JITTER_MAX_S);
    if ((unsigned)sc->misfire > CSCHED__V1__MISFIRE__MISFIRE_RUN_ALL)
        return cs_err_set(err, -EINVAL,
                          "job.schedule.misfire %d is not a policy: use SKIP, RUN_ONCE or RUN_ALL",
                          (int)sc->misfire);
    if (sc->max_catchup > CS_SCHEDULE_CATCHUP_MAX)
        return cs_err_set(err, -EINVAL, "job.schedule.max_catchup %u is over the limit of %d",
                          sc->max_catchup, CS_SCHEDULE_CATCHUP_MAX);
    if (sc->starting_deadline_seconds > CS_SCHEDULE_DEADLINE_MAX_S)
        return cs_err_set(err, -EINVAL,
                          "job.schedule.starting_deadline_seconds %u is over the limit of %d "
                          "(7 days)",
                          sc->starting_deadline_seconds, CS_SCHEDULE_DEADLINE_MAX_S);
    if ((unsigned)sc->overlap > CSCHED__V1__OVERLAP__OVERLAP_QUEUE_ONE)
        return cs_err_set(err, -EINVAL,
                          "job.schedule.overlap %d is not a policy: use ALLOW, FORBID, REPLACE or "
                          "QUEUE_ONE",
                          (int)sc->overlap);
    return 0;
}

/* An empty text means no schedule, so a policy given with it would be
 * kept without ever applying: refused, naming the first one set. */
static int check_unset(const Csched__V1__Schedule *sc, struct cs_err *err)
{
    const char *field = sc->time_zone[0] != '\0'             ? "time_zone"
                        : sc->jitter_seconds != 0            ? "jitter_seconds"
                        : sc->misfire != 0                   ? "misfire"
                        : sc->max_catchup != 0               ? "max_catchup"
                        : sc->starting_deadline_seconds != 0 ? "starting_deadline_seconds"
                        : sc->overlap != 0                   ? "overlap"
                                                             : NULL;
    if (field == NULL)
        return 0;
    return cs_err_set(err, -EINVAL,
                      "job.schedule.text is empty, which means no schedule, but "
                      "job.schedule.%s is set: give the schedule's text, or leave every other "
                      "schedule field unset",
                      field);
}

int cs_job_schedule_parse(const struct cs_zones *zones, const Csched__V1__Job *spec,
                          struct cs_schedule **out, struct cs_err *err)
{
    CS_ASSERT_LOOP();
    const Csched__V1__Schedule *sc = spec->schedule;
    const struct cs_tz *tz = NULL;
    struct cs_err why;
    int rc;

    *out = NULL;
    if (sc == NULL)
        return 0;
    if (sc->text[0] == '\0')
        return check_unset(sc, err);
    rc = check_policy(sc, err);
    if (rc != 0)
        return rc;
    if (strnlen(sc->time_zone, CS_TZ_NAME_MAX + 1) > CS_TZ_NAME_MAX)
        return cs_err_set(err, -EINVAL,
                          "job.schedule.time_zone: \"%.32s...\" is longer than any zone name "
                          "(at most %d bytes)",
                          sc->time_zone, CS_TZ_NAME_MAX);
    if (sc->time_zone[0] != '\0' && (tz = cs_zones_find(zones, sc->time_zone)) == NULL)
        return cs_err_set(err, -EAGAIN,
                          "job.schedule.time_zone: time zone \"%.64s\" has not been read from the "
                          "tz database",
                          sc->time_zone);
    struct cs_schedule *s = cs_xmalloc(sizeof(*s));
    rc = cs_schedule_parse(sc->text, tz, s, &why);
    if (rc != 0) {
        free(s);
        return cs_err_set(err, rc, "job.schedule.text: %s", why.msg);
    }
    *out = s;
    return 0;
}

/* "2026-03-29 03:00:00 +02:00": a fire's local time and its offset. */
static void format_local(const struct cs_fire *f, char *buf, size_t len)
{
    struct cs_civil c;
    int32_t off = f->offset_s < 0 ? -f->offset_s : f->offset_s;

    cs_civil_split(f->at_s + f->offset_s, &c);
    (void)snprintf(buf, len, "%04lld-%02d-%02d %02d:%02d:%02d %c%02d:%02d", (long long)c.year,
                   c.month, c.mday, c.hour, c.min, c.sec, f->offset_s < 0 ? '-' : '+',
                   (int)(off / 3600), (int)(off / 60 % 60));
}

size_t cs_job_next_fires(const struct cs_schedule *s, int64_t after_s, Csched__V1__FireTime *out,
                         char (*text)[40], size_t n)
{
    struct cs_fire fires[CS_JOB_NEXT_FIRES_MAX];
    size_t got;

    if (n > CS_ARRAY_LEN(fires))
        n = CS_ARRAY_LEN(fires);
    got = cs_schedule_next_n(s, after_s, fires, n);
    for (size_t i = 0; i < got; i++) {
        csched__v1__fire_time__init(&out[i]);
        out[i].at_unix_ms = fires[i].at_s * 1000;
        format_local(&fires[i], text[i], sizeof(text[i]));
        out[i].local_time = text[i];
        out[i].dst_shifted = fires[i].flags != 0;
    }
    return got;
}
