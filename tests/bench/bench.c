/* csched-bench: csched against its floor, side by side in one run.
 *
 *   A  200 runs of `sleep 0.2` (200 jobs), limit 200: the spec's burst;
 *   T  2000 runs of `true` (one job), global limit 64: throughput; and on
 *      csched again with the 2000 runs made by two TriggerJob of arrays,
 *      and again on cschedd's embedded PostgreSQL;
 *   S  `true` triggered at a steady rate for 60 s, at 500/s and at the
 *      floor's T rate: lateness from due to started, and whether csched
 *      keeps up (bench_sustained.c);
 *   API  unary calls/s and latency of GetRun, GetJob and TriggerJob, from
 *      1 and 16 client threads, beside csched-bench-rpcfloor, the same gRPC
 *      core answering an empty method (bench_api.c);
 *   M  the minder's own cost: 1000 x posix_spawn + wait of
 *      `csched-minder -d DIR -- /bin/true` (each on a fresh attempt
 *      directory), of a static (musl) true, and of the dynamic /bin/true,
 *      and the verdict: a machine of fast or of slow process creation.
 *
 * Beside each, the peers a user would pick instead (bench_peers.c): xargs -P
 * and APScheduler, an in-process Python scheduler.
 *
 * For A and T, "csched" is a real cschedd (fresh per workload) on a throwaway
 * PostgreSQL by URL, as a replica (T's embedded row: on its own embedded
 * PostgreSQL), driven through libcsched: wall time runs from the release of
 * the trigger threads to the last run's terminal event seen on Watch. The
 * "floor" is csched-floor: the same minders posix_spawned with the same limit
 * and nothing else. Peak alive is counted the same way for both: live
 * csched-minder children in /proc, every 2 ms. CPU is the server's (or the
 * floor's) own plus that of every process it reaped (minders, commands);
 * PostgreSQL's is shown apart.
 *
 * With --repeat N each side runs N times, alternating, and the run of median
 * wall time is shown; API alternates the floor and cschedd N times too. S
 * runs once per rate (each run is a minute, and its floor is a rate). Temp dirs are removed only at
 * the end: on ext4 without a journal, the files one run deletes slow the file creations of the next
 * (each allocation skips every inode deleted in the last seconds), and that
 * would charge one side for the other's clean-up.
 *
 * This file holds the command line and the order of the work; the workloads
 * are run and measured in bench_run.c, and printed by bench_report.c.
 *
 * Usage: csched-bench [--fsync on|off] [--only LINE[,LINE...]] [--repeat N]
 *                    [--s-seconds N] [--s-rate R] [--api-calls N] [--standbys N]
 * LINE is A, T, S, API or M. --s-rate gives S's second rate instead of the
 * floor's T rate (measured by a floor run of T when T itself is not run).
 * --standbys N (0 to 4) runs N standby replicas on the same database beside
 * the cschedd of A and T, whose CPU is shown apart.
 * Exits 1 if a run of S or a call of API failed. */
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

/* Line S's fixed rate; its other is the floor's T rate. */
#define S_RATE 500.0

static const struct workload workloads[] = {
    {"A", "A: 200 x sleep 0.2, limit 200", "bench-a", 200, 200, 200, sleep_cmd, 0},
    {"T", "T: 2000 x true, limit 64", "bench-t", 2000, 1, 64, true_cmd, 0},
};

/* T's further rows (bench_variant), csched alone beside T's floor and
 * peers: the same runs made by two TriggerJob of an array of 1000 each,
 * the most one may hold; and the same triggers on cschedd's embedded
 * PostgreSQL, its default, where it is the one replica and fences nothing. */
static const struct workload t_variants[VARIANTS] = {
    [VARIANT_ARRAYS] = {"T[]", "T[]", "bench-ta", 2000, 1, 64, true_cmd, 1000},
    [VARIANT_EMBEDDED] = {"T/embedded", "T/embedded", "bench-t", 2000, 1, 64, true_cmd, 0},
};

/* run_workload runs floor and csched in turn, repeat times each, and
 * reports them. */
static struct outcome run_workload(const struct workload *w, const char *bin_dir,
                                   struct cs_testpg *pg, unsigned repeat)
{
    struct measure f[MAX_REPEAT], c[MAX_REPEAT], v[VARIANTS][MAX_REPEAT], p[PEERS][MAX_REPEAT];
    bool variants = strcmp(w->key, "T") == 0;

    for (unsigned i = 0; i < repeat; i++) {
        fprintf(stderr, "bench: %s on the floor (%u of %u)\n", w->title, i + 1, repeat);
        bench_run_floor(w, bin_dir, &f[i]);
        fprintf(stderr, "bench: %s on csched (%u of %u)\n", w->title, i + 1, repeat);
        bench_run_csched(w, pg, &c[i]);
        for (int k = 0; variants && k < VARIANTS; k++) {
            fprintf(stderr, "bench: %s on csched as %s (%u of %u)\n", w->title, t_variants[k].key,
                    i + 1, repeat);
            bench_run_csched(&t_variants[k], k == VARIANT_EMBEDDED ? NULL : pg, &v[k][i]);
        }
        for (int peer = 0; peer < PEERS; peer++) {
            fprintf(stderr, "bench: %s on %s (%u of %u)\n", w->title, bench_peer_name(peer), i + 1,
                    repeat);
            bench_run_peer(w, peer, &p[peer][i]);
        }
    }
    return bench_report_workload(w, f, c, variants ? v : NULL, p, repeat);
}

struct bench_args {
    struct cs_testpg_options pg;
    const char *only;
    unsigned repeat;
    unsigned s_seconds;
    double s_rate;
    unsigned api_calls;
    unsigned standbys;
};

/* selected says whether line key is in --only's comma-separated list. */
static bool selected(const char *only, const char *key)
{
    size_t n = strlen(key);

    for (const char *p = only; p != NULL; p = strchr(p, ',')) {
        p += *p == ',';
        if (strncmp(p, key, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    }
    return only == NULL;
}

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
        else if (strcmp(argv[i], "--s-seconds") == 0)
            a->s_seconds = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--s-rate") == 0)
            a->s_rate = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--api-calls") == 0)
            a->api_calls = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--standbys") == 0)
            a->standbys = (unsigned)strtoul(argv[++i], NULL, 10);
        else
            return false;
    }
    return a->repeat >= 1 && a->repeat <= MAX_REPEAT && a->s_seconds >= 1 && a->s_rate >= 0 &&
           a->api_calls >= API_THREADS && a->standbys <= BENCH_MAX_STANDBYS;
}

/* The rates of line S: S_RATE, and the floor's T rate (given, from T's
 * floor runs, or measured now by one). */
static void run_sustained(const struct bench_args *args, const char *bin_dir, struct cs_testpg *pg,
                          const struct outcome *t, struct sustained s[2])
{
    double floor_rate = args->s_rate;

    if (floor_rate == 0 && t != NULL)
        floor_rate = t->floor_runs_per_s;
    if (floor_rate == 0) {
        struct measure f;
        fprintf(stderr, "bench: the floor's T rate, for S\n");
        bench_run_floor(&workloads[1], bin_dir, &f);
        floor_rate = f.runs / (f.wall_ms / 1e3);
    }
    bench_run_sustained(pg, S_RATE, args->s_seconds, &s[0]);
    bench_run_sustained(pg, floor_rate, args->s_seconds, &s[1]);
    bench_print_sustained(s, 2);
}

int main(int argc, char **argv)
{
    struct bench_args args = {
        .pg = {.fsync = true}, .repeat = 1, .s_seconds = 60, .api_calls = 3000};
    struct outcome outcomes[2];
    bool ran[2] = {false, false}, ok = true;
    struct spawn_cost cost[SPAWN_KINDS];
    struct sustained sustained[2];
    struct api_measure api[MAX_REPEAT];
    struct cs_testpg *pg = NULL;
    char bin_dir[1024];

    if (!parse_args(argc, argv, &args)) {
        fprintf(stderr,
                "usage: %s [--fsync on|off] [--only A|T|S|API|M[,...]] [--repeat 1-%d]\n"
                "       [--s-seconds N] [--s-rate RUNS_PER_S] [--api-calls N >= %d]\n"
                "       [--standbys 0-%d]\n",
                argv[0], MAX_REPEAT, API_THREADS, BENCH_MAX_STANDBYS);
        return 2;
    }
    bench_set_standbys(args.standbys);
    const char *only = args.only;
    unsigned repeat = args.repeat;
    const char *env_bin = getenv("CSCHED_BIN_DIR");
    snprintf(bin_dir, sizeof(bin_dir), "%s", env_bin ? env_bin : CSCHED_BIN_DIR);

    cs_test_defer_discards(true);
    CS_TEST_OK(cs_testpg_start_opts(&args.pg, &pg));
    printf("csched benchmark: %ld cores, PostgreSQL fsync=%s, median of %u, bin %s\n",
           sysconf(_SC_NPROCESSORS_ONLN), args.pg.fsync ? "on" : "off", repeat, bin_dir);
    bench_print_disk();
    printf("\n");
    if (selected(only, "A") || selected(only, "T"))
        bench_print_header();
    for (size_t i = 0; i < 2; i++) {
        if (selected(only, workloads[i].key)) {
            outcomes[i] = run_workload(&workloads[i], bin_dir, pg, repeat);
            ran[i] = true;
        }
    }
    bool ran_s = selected(only, "S"), ran_api = selected(only, "API");
    if (ran_s) {
        run_sustained(&args, bin_dir, pg, ran[1] ? &outcomes[1] : NULL, sustained);
        ok = sustained[0].ok && sustained[1].ok;
    }
    if (ran_api) {
        bench_run_api(pg, bin_dir, args.api_calls, repeat, api);
        ok = bench_print_api(api, repeat, args.api_calls) && ok;
    }
    cs_testpg_stop(pg);
    cs_test_defer_discards(false);
    if (selected(only, "M")) {
        bench_minder_cost(bin_dir, cost);
        bench_print_minder_cost(cost);
    }
    bench_print_targets(ran[0] ? &outcomes[0] : NULL, ran[1] ? &outcomes[1] : NULL, sustained,
                        ran_s ? 2 : 0, ran_api ? api : NULL, repeat,
                        selected(only, "M") ? cost : NULL);
    return ok ? 0 : 1;
}
