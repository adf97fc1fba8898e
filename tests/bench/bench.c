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
 * Usage: csched-bench [--fsync on|off] [--only A|T|M] [--repeat N] */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#ifndef CSCHED_BIN_DIR
#error "CSCHED_BIN_DIR must name the directory holding the programs"
#endif

extern char **environ;

enum { TRIGGER_THREADS = 10, SPAWN_COST_N = 1000, BURST_TIMEOUT_MS = 120000, MAX_REPEAT = 15 };

struct workload {
    const char *key;
    const char *title;
    const char *prefix;
    unsigned n_runs;
    unsigned n_jobs;
    unsigned limit;
    const char *const *command;
};

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

static const char *const sleep_cmd[] = {"sleep", "0.2", NULL};
static const char *const true_cmd[] = {"true", NULL};

static const struct workload workloads[] = {
    {"A", "A: 200 x sleep 0.2, limit 200", "bench-a", 200, 200, 200, sleep_cmd},
    {"T", "T: 2000 x true, limit 64", "bench-t", 2000, 1, 64, true_cmd},
};

static char bin_dir[1024];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double tv_ms(struct timeval tv)
{
    return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* A /proc sampler for the floor, the same count the burst driver makes. */
struct sampler {
    pid_t pid;
    atomic_bool stop;
    unsigned peak;
};

static void *sampler_main(void *arg)
{
    struct sampler *s = arg;
    struct timespec period = {.tv_sec = 0, .tv_nsec = 2 * 1000 * 1000};
    struct cs_test_minder_counter *counter;

    CS_TEST_OK(cs_test_minder_counter_new(s->pid, &counter));
    while (!atomic_load(&s->stop)) {
        int n = cs_test_minder_counter_count(counter);
        if (n > (int)s->peak)
            s->peak = (unsigned)n;
        nanosleep(&period, NULL);
    }
    cs_test_minder_counter_free(counter);
    return NULL;
}

/* run_floor runs csched-floor for the workload and reads its result line. */
static void run_floor(const struct workload *w, struct measure *m)
{
    char floor_path[1200], minder[1200], workdir[] = "/tmp/cs-floor-XXXXXX", runs[16], limit[16];
    char out_path[64];
    const char *argv[32];
    size_t n = 0;
    struct rusage ru;
    int wstatus;
    pid_t pid;

    memset(m, 0, sizeof(*m));
    snprintf(floor_path, sizeof(floor_path), "%s/csched-floor", bin_dir);
    snprintf(minder, sizeof(minder), "%s/csched-minder", bin_dir);
    snprintf(runs, sizeof(runs), "%u", w->n_runs);
    snprintf(limit, sizeof(limit), "%u", w->limit);
    CS_TEST_TRUE(mkdtemp(workdir) != NULL);
    snprintf(out_path, sizeof(out_path), "%s.out", workdir);
    const char *head[] = {"csched-floor", "-m", minder, "-d",  workdir,
                          "-n",           runs, "-j",   limit, "--"};
    for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
        argv[n++] = head[i];
    for (size_t i = 0; w->command[i] != NULL; i++)
        argv[n++] = w->command[i];
    argv[n] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    /* A session of its own, as cschedd has (see tests/lib/testd.c). */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    CS_TEST_OK(posix_spawn(&pid, floor_path, &fa, &attr, (char **)argv, environ));
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    struct sampler s = {.pid = pid};
    pthread_t th;
    pthread_create(&th, NULL, sampler_main, &s);
    CS_TEST_EQ(wait4(pid, &wstatus, 0, &ru), pid);
    atomic_store(&s.stop, true);
    pthread_join(th, NULL);

    FILE *f = fopen(out_path, "r");
    unsigned own_peak = 0;
    double runs_per_s;
    CS_TEST_TRUE(f != NULL);
    m->ok = fscanf(f, "runs=%u failed=%u wall_ms=%lf runs_per_s=%lf peak_alive=%u", &m->runs,
                   &m->failed, &m->wall_ms, &runs_per_s, &own_peak) == 5 &&
            WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    fclose(f);
    m->peak_alive = s.peak;
    m->cpu_ms = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
    unlink(out_path);
    if (!m->ok)
        fprintf(stderr, "bench: csched-floor failed (status %d)\n", wstatus);
    fprintf(stderr, "bench: floor %s: own count of peak alive %u, /proc %u\n", w->key, own_peak,
            s.peak);
    cs_test_discard_dir("floor", workdir);
}

/* get_lag reads the probe's last-minute window. */
static void get_lag(struct cs_testd *d, struct measure *m)
{
    Csched__V1__GetStatsRequest req = CSCHED__V1__GET_STATS_REQUEST__INIT;
    Csched__V1__Stats *stats = NULL;
    struct cs_client *client = NULL;
    struct cs_status st = {0};

    CS_TEST_OK(cs_client_new(cs_testd_target(d), &client));
    CS_TEST_OK(cs_scheduler_get_stats(client, &req, &stats, NULL, &st));
    if (stats->lag_last_minute != NULL) {
        m->has_lag = true;
        m->lag_p50_us = stats->lag_last_minute->p50_us;
        m->lag_p99_us = stats->lag_last_minute->p99_us;
        m->lag_max_us = stats->lag_last_minute->max_us;
    }
    csched__v1__stats__free_unpacked(stats, NULL);
    cs_client_free(client);
}

/* run_csched runs the workload on a fresh cschedd on pg. */
static void run_csched(const struct workload *w, struct cs_testpg *pg, struct measure *m)
{
    struct cs_testd_options dopts = {.database_url = cs_testpg_url(pg), .max_running = w->limit};
    struct cs_test_burst_result r;
    double srv0, srv1, own0, own1, db0, db1;
    struct rusage self0, self1;
    struct cs_testd *d = NULL;

    memset(m, 0, sizeof(*m));
    CS_TEST_OK(cs_testd_start(&dopts, &d));
    struct cs_test_burst_options bopts = {
        .target = cs_testd_target(d),
        .server_pid = cs_testd_pid(d),
        .job_prefix = w->prefix,
        .command = w->command,
        .n_jobs = w->n_jobs,
        .n_runs = w->n_runs,
        .trigger_threads = TRIGGER_THREADS,
        .limit = w->limit,
        .timeout_ms = BURST_TIMEOUT_MS,
    };
    /* The jobs are made before the CPU count starts. */
    cs_test_burst_create_jobs(&bopts);
    bopts.jobs_exist = true;
    CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(d), true, &srv0));
    CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(d), false, &own0));
    CS_TEST_OK(cs_test_tree_cpu_ms(cs_testpg_pid(pg), &db0));
    getrusage(RUSAGE_SELF, &self0);
    CS_TEST_OK(cs_test_burst_run(&bopts, &r));
    getrusage(RUSAGE_SELF, &self1);
    CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(d), true, &srv1));
    CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(d), false, &own1));
    CS_TEST_OK(cs_test_tree_cpu_ms(cs_testpg_pid(pg), &db1));
    cs_test_burst_print(w->key, &r);
    fprintf(stderr, "%s: cschedd itself used %.1f ms CPU, its minders and commands %.1f ms\n",
            w->key, own1 - own0, (srv1 - srv0) - (own1 - own0));
    /* The clients share the cores with the server; the floor has none. */
    fprintf(stderr, "%s: this process (client threads, Watch, samplers) used %.1f ms CPU\n", w->key,
            tv_ms(self1.ru_utime) + tv_ms(self1.ru_stime) - tv_ms(self0.ru_utime) -
                tv_ms(self0.ru_stime));
    get_lag(d, m);
    m->ok = r.runs_succeeded == w->n_runs && r.limit_violations == 0 && !r.timed_out;
    m->runs = r.runs_terminal;
    m->failed = r.runs_terminal - r.runs_succeeded;
    m->wall_ms = r.wall_ms;
    m->peak_alive = r.proc_peak;
    m->cpu_ms = srv1 - srv0;
    m->db_cpu_ms = db1 - db0;
    int status = cs_testd_stop(d);
    if (status != 0)
        fprintf(stderr, "bench: cschedd exited with status %d\n", status);
}

/* spawn_cost times n posix_spawn + waitpid of argv; per spawn, in us. */
static void spawn_cost(char *const argv[], unsigned n, double *wall_us, double *cpu_us)
{
    struct rusage before, after;
    int wstatus;
    pid_t pid;

    getrusage(RUSAGE_CHILDREN, &before);
    double t0 = now_ms();
    for (unsigned i = 0; i < n; i++) {
        CS_TEST_OK(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ));
        CS_TEST_EQ(waitpid(pid, &wstatus, 0), pid);
        CS_TEST_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    }
    *wall_us = (now_ms() - t0) * 1e3 / n;
    getrusage(RUSAGE_CHILDREN, &after);
    double cpu = tv_ms(after.ru_utime) + tv_ms(after.ru_stime) - tv_ms(before.ru_utime) -
                 tv_ms(before.ru_stime);
    *cpu_us = cpu * 1e3 / n;
}

static void print_row(const char *label, const char *system, const struct measure *m)
{
    printf("%-32s %-7s %9.1f %9.1f %6u %10.1f %9.1f", label, system, m->wall_ms,
           m->wall_ms > 0 ? m->runs / (m->wall_ms / 1e3) : 0.0, m->peak_alive, m->cpu_ms,
           m->db_cpu_ms);
    if (m->has_lag)
        printf("  %6lld/%6lld/%6lld", (long long)m->lag_p50_us, (long long)m->lag_p99_us,
               (long long)m->lag_max_us);
    printf("%s\n", m->ok ? "" : "  (FAILED RUNS)");
}

static void print_ratio(const struct measure *c, const struct measure *f)
{
    double rps_c = c->runs / (c->wall_ms / 1e3), rps_f = f->runs / (f->wall_ms / 1e3);

    printf("%-32s %-7s %8.2fx %8.2fx %5.2fx %9.2fx\n", "", "ratio", c->wall_ms / f->wall_ms,
           rps_c / rps_f, f->peak_alive ? (double)c->peak_alive / f->peak_alive : 0.0,
           f->cpu_ms > 0 ? (c->cpu_ms + c->db_cpu_ms) / f->cpu_ms : 0.0);
}

static const char *verdict(bool met)
{
    return met ? "met" : "NOT met";
}

static void print_header(void)
{
    printf("%-32s %-7s %9s %9s %6s %10s %9s  %s\n", "workload", "system", "wall ms", "runs/s",
           "peak", "cpu ms", "db cpu ms", "probe p50/p99/max us");
}

/* minder_cost prints line M: the minder's start, run and exit beside a
 * static and a dynamic true. */
static void minder_cost(void)
{
    char minder[1200], static_true[1200], dir[] = "/tmp/cs-bench-minder-XXXXXX";
    double wall, cpu;

    snprintf(minder, sizeof(minder), "%s/csched-minder", bin_dir);
    snprintf(static_true, sizeof(static_true), "%s/csched-bench-true", bin_dir);
    CS_TEST_TRUE(mkdtemp(dir) != NULL);
    char *minder_argv[] = {minder, "-d", dir, "--", "/bin/true", NULL};
    char *static_argv[] = {static_true, NULL};
    char *dynamic_argv[] = {"/bin/true", NULL};

    printf("\nM: minder cost, %d x posix_spawn + wait each   wall us/spawn   cpu us/spawn\n",
           SPAWN_COST_N);
    spawn_cost(minder_argv, SPAWN_COST_N, &wall, &cpu);
    printf("  %-44s %12.0f %14.0f\n", "csched-minder -d DIR -- /bin/true", wall, cpu);
    if (access(static_true, X_OK) == 0) {
        spawn_cost(static_argv, SPAWN_COST_N, &wall, &cpu);
        printf("  %-44s %12.0f %14.0f\n", "static true (musl-gcc -static)", wall, cpu);
    } else {
        printf("  %-44s %12s %14s\n", "static true (musl-gcc -static)", "n/a", "n/a");
    }
    spawn_cost(dynamic_argv, SPAWN_COST_N, &wall, &cpu);
    printf("  %-44s %12.0f %14.0f\n", "/bin/true (dynamic glibc)", wall, cpu);
    cs_test_rmtree(dir);
}

static int by_wall(const void *a, const void *b)
{
    const struct measure *x = a, *y = b;
    return (x->wall_ms > y->wall_ms) - (x->wall_ms < y->wall_ms);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A figure over the repeats: sorted in place, median and range. */
struct spread {
    double min, median, max;
};

static struct spread spread_of(double *v, unsigned n)
{
    qsort(v, n, sizeof(v[0]), by_value);
    return (struct spread){v[0], v[n / 2], v[n - 1]};
}

/* What the targets are judged on. Each csched run is paired with the floor
 * run just before it, so that a drift of the machine over the repeats (its
 * speed moves by 10-20% here from one minute to the next) moves both sides
 * of a ratio alike; the medians of those paired ratios are the verdicts. */
struct outcome {
    struct spread wall_ratio; /* csched wall / floor wall */
    struct spread peak_ratio; /* csched peak alive / floor's */
    struct spread lag_p99_ms, lag_max_ms;
};

static void print_spread(const char *what, struct spread s, const char *unit)
{
    printf("  %-34s median %7.2f%s   min %7.2f%s   max %7.2f%s\n", what, s.median, unit, s.min,
           unit, s.max, unit);
}

/* run_workload runs floor and csched in turn, repeat times each; the rows
 * show for each side the run of median wall time, then the paired ratios. */
static struct outcome run_workload(const struct workload *w, struct cs_testpg *pg, unsigned repeat)
{
    struct measure f[MAX_REPEAT], c[MAX_REPEAT];
    double wall[MAX_REPEAT], peak[MAX_REPEAT], p99[MAX_REPEAT], max[MAX_REPEAT];
    struct outcome o;

    for (unsigned i = 0; i < repeat; i++) {
        fprintf(stderr, "bench: %s on the floor (%u of %u)\n", w->title, i + 1, repeat);
        run_floor(w, &f[i]);
        fprintf(stderr, "bench: %s on csched (%u of %u)\n", w->title, i + 1, repeat);
        run_csched(w, pg, &c[i]);
        wall[i] = c[i].wall_ms / f[i].wall_ms;
        peak[i] = f[i].peak_alive ? (double)c[i].peak_alive / f[i].peak_alive : 0.0;
        p99[i] = c[i].lag_p99_us / 1e3;
        max[i] = c[i].lag_max_us / 1e3;
    }
    o.wall_ratio = spread_of(wall, repeat);
    o.peak_ratio = spread_of(peak, repeat);
    o.lag_p99_ms = spread_of(p99, repeat);
    o.lag_max_ms = spread_of(max, repeat);
    qsort(f, repeat, sizeof(f[0]), by_wall);
    qsort(c, repeat, sizeof(c[0]), by_wall);
    print_row(w->title, "floor", &f[repeat / 2]);
    print_row("", "csched", &c[repeat / 2]);
    print_ratio(&c[repeat / 2], &f[repeat / 2]);
    printf("  paired over %u repeats:\n", repeat);
    print_spread("wall, csched / floor", o.wall_ratio, "x");
    print_spread("peak alive, csched / floor", o.peak_ratio, "x");
    print_spread("probe p99 (ms)", o.lag_p99_ms, "");
    print_spread("probe max (ms)", o.lag_max_ms, "");
    fflush(stdout);
    return o;
}

static void print_targets(const struct outcome *a, const struct outcome *t)
{
    printf("\ntargets (reported, not asserted; medians of the paired runs):\n");
    if (a != NULL) {
        printf("  A wall within 1.15x of floor: %.2fx, %s\n", a->wall_ratio.median,
               verdict(a->wall_ratio.median <= 1.15));
        printf("  A peak alive >= floor's: %.2fx, %s\n", a->peak_ratio.median,
               verdict(a->peak_ratio.median >= 1.0));
        printf("  A probe p99 < 5 ms, max < 20 ms: %.2f ms / %.2f ms, %s\n", a->lag_p99_ms.median,
               a->lag_max_ms.median,
               verdict(a->lag_p99_ms.median < 5 && a->lag_max_ms.median < 20));
    }
    if (t != NULL) {
        double throughput = 1.0 / t->wall_ratio.median;
        printf("  T throughput >= 0.85x floor: %.2fx, %s\n", throughput,
               verdict(throughput >= 0.85));
    }
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
    struct cs_testpg *pg = NULL;

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
    print_header();
    for (size_t i = 0; i < 2; i++) {
        if (only == NULL || strcmp(only, workloads[i].key) == 0) {
            outcomes[i] = run_workload(&workloads[i], pg, repeat);
            ran[i] = true;
        }
    }
    cs_testpg_stop(pg);
    cs_test_defer_discards(false);
    if (only == NULL || strcmp(only, "M") == 0)
        minder_cost();
    print_targets(ran[0] ? &outcomes[0] : NULL, ran[1] ? &outcomes[1] : NULL);
    return 0;
}
