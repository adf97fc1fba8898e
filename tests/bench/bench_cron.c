/* bench_cron: what a schedule's next fire time costs, and what opening a
 * zone costs, for the expressions the scheduler will meet most and the
 * worst ones (a leap day, a fifth Friday of February, a "never").
 * Prints a table; asserts nothing. Run by hand:
 *   BUILD/bin/csched-bench-cron [ITERATIONS]    (default 200000) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "civil.h"
#include "schedule.h"
#include "tzdb.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const struct {
    const char *text, *zone;
} cases[] = {
    {"*/5 * * * *", "UTC"},
    {"*/5 * * * *", "Europe/Berlin"},
    {"30 2 * * *", "Europe/Berlin"},
    {"0 9 * * MON-FRI", "America/New_York"},
    {"*/10 * * * * *", "Australia/Lord_Howe"},
    {"0 0 L,15W * *", "Europe/Berlin"},
    {"0 0 29 2 *", "America/New_York"},
    {"0 0 * 2 5#5", "UTC"},
    {"0 0 30 2 *", "Europe/Berlin"},
    {"@every 1h30m from :05", "Europe/Berlin"},
};

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 200000;
    int64_t start = cs_civil_join(2026, 1, 1, 0, 0, 0);

    if (iterations < 1) {
        fprintf(stderr, "usage: %s [ITERATIONS]\n", argv[0]);
        return 100;
    }
    printf("%-24s %-20s %12s %14s\n", "schedule", "zone", "ns/next", "fires/iter");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_tz *tz = NULL;
        struct cs_schedule s;
        struct cs_err err = {0};
        int64_t t0 = now_ns();
        if (cs_tzdb_open(CS_TZDB_DIR_DEFAULT, cases[i].zone, &tz, &err) != 0 ||
            cs_schedule_parse(cases[i].text, tz, &s, &err) != 0) {
            fprintf(stderr, "%s in %s: %s\n", cases[i].text, cases[i].zone, err.msg);
            return 1;
        }
        int64_t open_ns = now_ns() - t0;
        /* Each call looks after the previous fire, as a scheduler does,
         * starting over from 2026 when the schedule ends. */
        int64_t after = start, fired = 0;
        t0 = now_ns();
        for (long n = 0; n < iterations; n++) {
            struct cs_fire f;
            if (cs_schedule_next(&s, after, &f) == 0 && f.at_s < CS_TZ_END_S - 400LL * CS_DAY_S) {
                after = f.at_s;
                fired++;
            } else {
                after = start;
            }
        }
        int64_t took = now_ns() - t0;
        printf("%-24s %-20s %12.0f %14.3f   (zone opened in %.2f ms)\n", cases[i].text,
               cases[i].zone, (double)took / (double)iterations, (double)fired / (double)iterations,
               (double)open_ns / 1e6);
        cs_tz_free(tz);
    }
    return 0;
}
