/* fuzz_cron: a schedule's text (cs_schedule_parse: cron, macros, @every) over
 * any bytes, then its next fire times in a few zones with DST and odd
 * changes. Byte 0 picks the zone, bytes 1-8 the instant to look after
 * (folded into the range a schedule answers for), the rest is the text.
 * Each next() must end within a bound asserted here (timed twice when
 * over it), each fire must come after the last and join UTC to local time,
 * and in UTC a cron fire must be a time the expression matches. The zones
 * are read once and kept. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule.h"
#include "tzdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FIRES 8
/* A next() takes microseconds, tens under the sanitizers; only a loop
 * would reach this much of the thread's own CPU time (not wall time, which
 * a busy machine stretches). */
#define NEXT_BOUND_NS (50 * 1000 * 1000LL)

static const char *const zone_names[] = {"UTC",          "Europe/Berlin",    "Australia/Lord_Howe",
                                         "Pacific/Apia", "America/New_York", "Europe/Moscow"};
static struct cs_tz *zones[sizeof(zone_names) / sizeof(zone_names[0])];

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The thread's CPU time of next(s, after), timed again once when over the
 * bound: a loop takes as long every time, while a page fault the kernel
 * served slowly (memory compaction on a busy machine) is charged once. */
static int next_timed(const struct cs_schedule *s, int64_t after, struct cs_fire *f, int64_t *ns)
{
    int64_t t0 = cpu_ns();
    int rc = cs_schedule_next(s, after, f);
    *ns = cpu_ns() - t0;
    if (*ns >= NEXT_BOUND_NS) {
        struct cs_fire again;
        t0 = cpu_ns();
        (void)cs_schedule_next(s, after, &again);
        *ns = cpu_ns() - t0;
    }
    return rc;
}

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_cron: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[CS_CRON_TEXT_MAX + 8];
    struct cs_schedule s;
    struct cs_err err = {0};
    uint64_t raw = 0;
    size_t zi;

    if (size < 9)
        return 0;
    zi = data[0] % (sizeof(zones) / sizeof(zones[0]));
    if (zones[zi] == NULL &&
        cs_tzdb_open(CS_TZDB_DIR_DEFAULT, zone_names[zi], &zones[zi], &err) != 0)
        check(false, "a zone of the target does not open");
    memcpy(&raw, data + 1, sizeof(raw));
    size_t len = size - 9 < sizeof(text) - 1 ? size - 9 : sizeof(text) - 1;
    memcpy(text, data + 9, len);
    text[len] = '\0';

    int64_t span = CS_TZ_END_S - CS_TZ_BEGIN_S;
    int64_t after = CS_TZ_BEGIN_S + (int64_t)(raw % (uint64_t)span);
    if (cs_schedule_parse(text, zones[zi], &s, &err) != 0) {
        check(err.code == -EINVAL && err.msg[0] != '\0', "a refusal without its message");
        return 0;
    }
    for (int i = 0; i < FIRES; i++) {
        struct cs_fire f;
        int64_t ns;
        int rc = next_timed(&s, after, &f, &ns);
        check(ns < NEXT_BOUND_NS, "a next() over its time bound, twice");
        if (rc != 0) {
            check(rc == -ENOENT, "next() failed otherwise than with never");
            break;
        }
        check(f.at_s > after && f.at_s < CS_TZ_END_S, "a fire not after the last");
        check((f.flags &
               ~(unsigned)(CS_FIRE_DST_SKIPPED | CS_FIRE_DST_ONCE | CS_FIRE_DST_REPEAT)) == 0,
              "unknown flags");
        check((f.flags & CS_FIRE_DST_SKIPPED) || f.local_s == f.at_s + f.offset_s,
              "local time and UTC do not join");
        if (s.kind == CS_SCHEDULE_CRON && zi == 0) {
            int64_t match = 0;
            check(cs_cron_next(&s.cron, f.at_s, &match) == 0 && match == f.at_s,
                  "a UTC fire the expression does not match");
        }
        after = f.at_s;
    }
    return 0;
}
