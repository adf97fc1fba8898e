/* bench: what the parts of csched-bench share. bench_run.c runs the
 * workloads, each on csched or on its floor, and measures them; bench_report.c
 * turns those measures into the table, the paired ratios and the verdicts on
 * stdout. Everything runs on the main thread (bench_run.c samples /proc from
 * threads of its own); progress and per-run details go to stderr. */
#ifndef CS_BENCH_H
#define CS_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "testlib.h"

enum { SPAWN_COST_N = 1000, MAX_REPEAT = 15 };

/* A burst: n_runs runs of command over n_jobs jobs, limit at once. */
struct workload {
    const char *key;
    const char *title;
    const char *prefix;
    unsigned n_runs;
    unsigned n_jobs;
    unsigned limit;
    const char *const *command;
};

/* One run of a workload on one side; the probe's lag only for csched. */
struct measure {
    bool ok;
    unsigned runs;
    unsigned failed;
    double wall_ms;
    unsigned peak_alive;
    double cpu_ms;
    double db_cpu_ms;
    bool has_lag;
    int64_t lag_p50_us, lag_p99_us, lag_max_us;
};

/* A figure over the repeats: median and range. */
struct spread {
    double min, median, max;
};

/* What the targets are judged on. Each csched run is paired with the floor
 * run just before it, so that a drift of the machine over the repeats (its
 * speed moves by 10-20% here from one minute to the next) moves both sides
 * of a ratio alike; the medians of those paired ratios are the verdicts. */
struct outcome {
    struct spread wall_ratio; /* csched wall / floor wall */
    struct spread peak_ratio; /* csched peak alive / floor's */
    struct spread lag_p99_ms, lag_max_ms;
};

/* The programs line M times, in the order it shows them. */
enum { SPAWN_MINDER, SPAWN_STATIC_TRUE, SPAWN_DYNAMIC_TRUE, SPAWN_KINDS };

/* The cost of one posix_spawn + wait, in us; not measured when the program
 * is missing (the static true needs musl-gcc). */
struct spawn_cost {
    bool measured;
    double wall_us, cpu_us;
};

/* Runs w once on csched-floor from bin_dir and fills m. Exits the program
 * if the floor cannot be started or read. */
void bench_run_floor(const struct workload *w, const char *bin_dir, struct measure *m);

/* Runs w once on a fresh cschedd (from $CSCHED_BIN_DIR, as tests/lib
 * starts it) on pg and fills m; the server is stopped before it returns. */
void bench_run_csched(const struct workload *w, struct cs_testpg *pg, struct measure *m);

/* Measures SPAWN_COST_N spawns of each program of line M from bin_dir. */
void bench_minder_cost(const char *bin_dir, struct spawn_cost cost[SPAWN_KINDS]);

/* Prints the table's header line. */
void bench_print_header(void);

/* Prints w's rows from the repeat runs of each side (f the floor's, c
 * csched's, in pairs; both sorted here) and returns the paired outcome. */
struct outcome bench_report_workload(const struct workload *w, struct measure *f, struct measure *c,
                                     unsigned repeat);

/* Prints line M. */
void bench_print_minder_cost(const struct spawn_cost cost[SPAWN_KINDS]);

/* Prints the verdicts on the targets of A and T; NULL for one not run. */
void bench_print_targets(const struct outcome *a, const struct outcome *t);

#endif
