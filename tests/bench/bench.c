/* csched-bench: csched against its floor, side by side in one run.
 *
 *   A  200 runs of `sleep 0.2` (200 jobs), limit 200: the spec's burst;
 *   T  2000 runs of `true` (one job), global limit 64: throughput;
 *   M  the minder's own cost: 1000 x posix_spawn + wait of
 *      `csched-minder -d DIR -- /bin/true`, of a static (musl) true, and of
 *      the dynamic /bin/true.
 *
 * For A and T, "csched" is a real cschedd (fresh per workload) on a throwaway
 * PostgreSQL, driven through libcsched: wall time runs from the release of
 * the trigger threads to the last run's terminal event seen on Watch. The
 * "floor" is csched-floor: the same minders posix_spawned with the same limit
 * and nothing else. Peak alive is counted the same way for both: live
 * csched-minder children in /proc, every 2 ms. CPU is the server's (or the
 * floor's) own plus that of every process it reaped (minders, commands);
 * PostgreSQL's is shown apart.
 *
 * With --repeat N each side runs N times, alternating, and the run of median
 * wall time is shown. Temp dirs are removed only at the end: on ext4 without
 * a journal, the files one run deletes slow the file creations of the next
 * (each allocation skips every inode deleted in the last seconds), and that
 * would charge one side for the other's clean-up.
 *
 * This file holds the command line and the order of the work; the workloads
 * are run and measured in bench_run.c, and printed by bench_report.c.
 *
 * Usage: csched-bench [--fsync on|off] [--only A|T|M] [--repeat N] */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#ifndef CSCHED_BIN_DIR
#error "CSCHED_BIN_DIR must name the directory holding the programs"
#endif

static const char *const sleep_cmd[] = {"sleep", "0.2", NULL};
static const char *const true_cmd[] = {"true", NULL};

static const struct workload workloads[] = {
    {"A", "A: 200 x sleep 0.2, limit 200", "bench-a", 200, 200, 200, sleep_cmd},
    {"T", "T: 2000 x true, limit 64", "bench-t", 2000, 1, 64, true_cmd},
};

/* run_workload runs floor and csched in turn, repeat times each, and
 * reports them. */
static struct outcome run_workload(const struct workload *w, const char *bin_dir,
                                   struct cs_testpg *pg, unsigned repeat)
{
    struct measure f[MAX_REPEAT], c[MAX_REPEAT];

    for (unsigned i = 0; i < repeat; i++) {
        fprintf(stderr, "bench: %s on the floor (%u of %u)\n", w->title, i + 1, repeat);
        bench_run_floor(w, bin_dir, &f[i]);
        fprintf(stderr, "bench: %s on csched (%u of %u)\n", w->title, i + 1, repeat);
        bench_run_csched(w, pg, &c[i]);
    }
    return bench_report_workload(w, f, c, repeat);
}

struct bench_args {
    struct cs_testpg_options pg;
    const char *only;
    unsigned repeat;
};

static bool parse_args(int argc, char **argv, struct bench_args *a)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 == argc)
            return false;
        if (strcmp(argv[i], "--fsync") == 0)
            a->pg.fsync = strcmp(argv[++i], "off") != 0;
        else if (strcmp(argv[i], "--only") == 0)
            a->only = argv[++i];
        else if (strcmp(argv[i], "--repeat") == 0)
            a->repeat = (unsigned)strtoul(argv[++i], NULL, 10);
        else
            return false;
    }
    return a->repeat >= 1 && a->repeat <= MAX_REPEAT;
}

int main(int argc, char **argv)
{
    struct bench_args args = {.pg = {.fsync = true}, .repeat = 1};
    struct outcome outcomes[2];
    bool ran[2] = {false, false};
    struct spawn_cost cost[SPAWN_KINDS];
    struct cs_testpg *pg = NULL;
    char bin_dir[1024];

    if (!parse_args(argc, argv, &args)) {
        fprintf(stderr, "usage: %s [--fsync on|off] [--only A|T|M] [--repeat 1-%d]\n", argv[0],
                MAX_REPEAT);
        return 2;
    }
    const char *only = args.only;
    unsigned repeat = args.repeat;
    const char *env_bin = getenv("CSCHED_BIN_DIR");
    snprintf(bin_dir, sizeof(bin_dir), "%s", env_bin ? env_bin : CSCHED_BIN_DIR);

    cs_test_defer_discards(true);
    CS_TEST_OK(cs_testpg_start_opts(&args.pg, &pg));
    printf("csched benchmark: %ld cores, PostgreSQL fsync=%s, median of %u, bin %s\n\n",
           sysconf(_SC_NPROCESSORS_ONLN), args.pg.fsync ? "on" : "off", repeat, bin_dir);
    bench_print_header();
    for (size_t i = 0; i < 2; i++) {
        if (only == NULL || strcmp(only, workloads[i].key) == 0) {
            outcomes[i] = run_workload(&workloads[i], bin_dir, pg, repeat);
            ran[i] = true;
        }
    }
    cs_testpg_stop(pg);
    cs_test_defer_discards(false);
    if (only == NULL || strcmp(only, "M") == 0) {
        bench_minder_cost(bin_dir, cost);
        bench_print_minder_cost(cost);
    }
    bench_print_targets(ran[0] ? &outcomes[0] : NULL, ran[1] ? &outcomes[1] : NULL);
    return 0;
}
