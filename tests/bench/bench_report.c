/* bench_report: the tables of csched-bench on stdout (bench.h). For each
 * workload, the row of each side is its run of median wall time, then the
 * ratio of those two rows; the paired ratios over the repeats follow, as
 * median and range, and at the end the verdicts on the targets, which are
 * reported and never asserted. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

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

void bench_print_header(void)
{
    printf("%-32s %-7s %9s %9s %6s %10s %9s  %s\n", "workload", "system", "wall ms", "runs/s",
           "peak", "cpu ms", "db cpu ms", "probe p50/p99/max us");
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

void bench_sort(double *v, size_t n)
{
    qsort(v, n, sizeof(v[0]), by_value);
}

/* Sorts v in place for its median and range. */
static struct spread spread_of(double *v, unsigned n)
{
    bench_sort(v, n);
    return (struct spread){v[0], v[n / 2], v[n - 1]};
}

static void print_spread(const char *what, struct spread s, const char *unit)
{
    printf("  %-34s median %7.2f%s   min %7.2f%s   max %7.2f%s\n", what, s.median, unit, s.min,
           unit, s.max, unit);
}

/* The CPU of every process of a run, per run, in us: for csched its
 * server, minders, commands and PostgreSQL. */
static double cpu_us_per_run(const struct measure *m)
{
    return m->runs ? (m->cpu_ms + m->db_cpu_ms) * 1e3 / m->runs : 0.0;
}

/* The peers' rows (their runs of median wall time), and each beside csched. */
static void print_peers(const struct measure *c, struct measure (*p)[MAX_REPEAT], unsigned repeat)
{
    printf("  all processes' cpu per run: csched %.0f us", cpu_us_per_run(c));
    for (int peer = 0; peer < PEERS; peer++) {
        qsort(p[peer], repeat, sizeof(p[peer][0]), by_wall);
        printf(", %s %.0f us", bench_peer_name(peer), cpu_us_per_run(&p[peer][repeat / 2]));
    }
    printf("\n");
    for (int peer = 0; peer < PEERS; peer++) {
        const struct measure *m = &p[peer][repeat / 2];
        print_row("", bench_peer_name(peer), m);
        if (m->ok)
            printf("%-32s %-7s %8.2fx %8.2fx %6s %9.2fx   (csched / %s)\n", "", "ratio",
                   c->wall_ms / m->wall_ms, (c->runs / c->wall_ms) / (m->runs / m->wall_ms), "",
                   (c->cpu_ms + c->db_cpu_ms) / m->cpu_ms, bench_peer_name(peer));
    }
}

/* The medians over the repeats of cschedd's own CPU and PostgreSQL's, per
 * run, in us. */
static void per_run_medians(const struct measure *c, unsigned repeat, double *own_us, double *db_us)
{
    double own[MAX_REPEAT], db[MAX_REPEAT];

    for (unsigned i = 0; i < repeat; i++) {
        own[i] = c[i].runs ? c[i].own_cpu_ms * 1e3 / c[i].runs : 0.0;
        db[i] = c[i].runs ? c[i].db_cpu_ms * 1e3 / c[i].runs : 0.0;
    }
    *own_us = spread_of(own, repeat).median;
    *db_us = spread_of(db, repeat).median;
}

/* Each variant's row, its ratio to the floor's row and what it is. */
static const char *const variant_label[VARIANTS] = {
    [VARIANT_ARRAYS] = "  the same as 2 arrays of 1000",
    [VARIANT_EMBEDDED] = "  the same, embedded PostgreSQL",
};
static const char *const variant_name[VARIANTS] = {
    [VARIANT_ARRAYS] = "with arrays",
    [VARIANT_EMBEDDED] = "embedded PostgreSQL (one replica)",
};

struct outcome bench_report_workload(const struct workload *w, struct measure *f, struct measure *c,
                                     struct measure (*v)[MAX_REPEAT],
                                     struct measure (*p)[MAX_REPEAT], unsigned repeat)
{
    double wall[MAX_REPEAT], peak[MAX_REPEAT], p99[MAX_REPEAT], max[MAX_REPEAT];
    double own[VARIANTS], db[VARIANTS];
    struct outcome o = {0};

    for (unsigned i = 0; i < repeat; i++) {
        wall[i] = c[i].wall_ms / f[i].wall_ms;
        peak[i] = f[i].peak_alive ? (double)c[i].peak_alive / f[i].peak_alive : 0.0;
        p99[i] = c[i].lag_p99_us / 1e3;
        max[i] = c[i].lag_max_us / 1e3;
    }
    o.wall_ratio = spread_of(wall, repeat);
    o.peak_ratio = spread_of(peak, repeat);
    o.lag_p99_ms = spread_of(p99, repeat);
    o.lag_max_ms = spread_of(max, repeat);
    per_run_medians(c, repeat, &o.own_cpu_us_per_run, &o.db_cpu_us_per_run);
    qsort(f, repeat, sizeof(f[0]), by_wall);
    qsort(c, repeat, sizeof(c[0]), by_wall);
    o.floor_runs_per_s = f[repeat / 2].runs / (f[repeat / 2].wall_ms / 1e3);
    print_row(w->title, "floor", &f[repeat / 2]);
    print_row("", "csched", &c[repeat / 2]);
    print_ratio(&c[repeat / 2], &f[repeat / 2]);
    for (int k = 0; v != NULL && k < VARIANTS; k++) {
        per_run_medians(v[k], repeat, &own[k], &db[k]);
        qsort(v[k], repeat, sizeof(v[k][0]), by_wall);
        print_row(variant_label[k], "csched", &v[k][repeat / 2]);
        print_ratio(&v[k][repeat / 2], &f[repeat / 2]);
    }
    print_peers(&c[repeat / 2], p, repeat);
    printf("  paired over %u repeats:\n", repeat);
    print_spread("wall, csched / floor", o.wall_ratio, "x");
    print_spread("peak alive, csched / floor", o.peak_ratio, "x");
    print_spread("probe p99 (ms)", o.lag_p99_ms, "");
    print_spread("probe max (ms)", o.lag_max_ms, "");
    printf("  per run, medians: cschedd's own cpu %.0f us, PostgreSQL's %.0f us\n",
           o.own_cpu_us_per_run, o.db_cpu_us_per_run);
    for (int k = 0; v != NULL && k < VARIANTS; k++)
        printf("  per run, medians, %s: cschedd's own cpu %.0f us, PostgreSQL's %.0f us\n",
               variant_name[k], own[k], db[k]);
    if (v != NULL) {
        o.embedded_own_cpu_us_per_run = own[VARIANT_EMBEDDED];
        o.embedded_db_cpu_us_per_run = db[VARIANT_EMBEDDED];
    }
    fflush(stdout);
    return o;
}

void bench_print_sustained(const struct sustained *s, unsigned n)
{
    if (n == 0)
        return;
    printf("\nS: true triggered at a steady rate for %u s, one job, limit %d; lateness from due "
           "to RUNNING on Watch\n",
           s[0].seconds, S_LIMIT);
    printf("  %8s %10s %9s %25s %17s %8s %9s %14s %10s\n", "rate/s", "triggers/s", "starts/s",
           "lateness p50/p99/max", "answer p50/p99", "backlog", "keeps up", "cschedd us/run",
           "db us/run");
    for (unsigned i = 0; i < n; i++)
        printf("  %8.0f %10.1f %9.1f %8.1f/%8.1f/%7.0f %8.1f/%8.1f %8u %9s %14.0f %10.0f%s\n",
               s[i].rate, s[i].trigger_rate, s[i].start_rate, s[i].late_p50_ms, s[i].late_p99_ms,
               s[i].late_max_ms, s[i].answer_p50_ms, s[i].answer_p99_ms, s[i].backlog,
               s[i].keeps_up ? "yes" : "no", s[i].own_cpu_us_per_run, s[i].db_cpu_us_per_run,
               s[i].ok ? "" : "  (FAILED RUNS)");
    fflush(stdout);
}

/* The median over the repeats of one field of one figure. */
static double api_median(const struct api_measure *m, unsigned repeat, int kind, int mode,
                         size_t field)
{
    double v[MAX_REPEAT];

    for (unsigned r = 0; r < repeat; r++)
        v[r] = *(const double *)((const char *)&m[r].fig[kind][mode] + field);
    return spread_of(v, repeat).median;
}

/* The median over the repeats of kind's calls/s over the floor's, each
 * repeat's csched figure over the floor's measured just before it. */
static double api_paired(const struct api_measure *m, unsigned repeat, int kind, int mode)
{
    double v[MAX_REPEAT];

    for (unsigned r = 0; r < repeat; r++)
        v[r] = m[r].fig[kind][mode].calls_per_s / m[r].fig[API_FLOOR][mode].calls_per_s;
    return spread_of(v, repeat).median;
}

static const char *const api_label[API_KINDS] = {
    [API_FLOOR] = "floor: GetRun, empty (rpcfloor)",
    [API_GET_RUN] = "GetRun",
    [API_GET_JOB] = "GetJob",
    [API_TRIGGER] = "TriggerJob (after its commit)",
    [API_GET_JOB_FORWARDED] = "GetJob through a standby",
};

bool bench_print_api(const struct api_measure *m, unsigned repeat, unsigned calls)
{
    static const size_t fields[] = {
        offsetof(struct api_figure, calls_per_s), offsetof(struct api_figure, p50_us),
        offsetof(struct api_figure, p99_us), offsetof(struct api_figure, server_cpu_us)};
    bool ok = true;

    printf("\nAPI: unary calls, %u per figure, median of %u; cpu = the server's per call\n", calls,
           repeat);
    printf("  %-31s %36s   %36s\n", "", "1 client thread", "16 client threads, a channel each");
    printf("  %-31s", "call");
    for (int mode = 0; mode < API_MODES; mode++)
        printf(" %9s %8s %8s %7s  ", "calls/s", "p50 us", "p99 us", "cpu us");
    printf("%s\n", "calls/s vs floor");
    for (int kind = 0; kind < API_KINDS; kind++) {
        if (m[0].fig[kind][API_SEQUENTIAL].calls_per_s == 0)
            continue; /* not measured: no standby */
        printf("  %-31s", api_label[kind]);
        for (int mode = 0; mode < API_MODES; mode++) {
            for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
                printf(f == 0   ? " %9.0f"
                       : f == 3 ? " %7.0f  "
                                : " %8.0f",
                       api_median(m, repeat, kind, mode, fields[f]));
            for (unsigned r = 0; r < repeat; r++)
                ok = ok && m[r].fig[kind][mode].errors == 0;
        }
        if (kind != API_FLOOR)
            printf("%.2fx / %.2fx", api_paired(m, repeat, kind, API_SEQUENTIAL),
                   api_paired(m, repeat, kind, API_CONCURRENT));
        printf("\n");
    }
    if (!ok)
        printf("  (FAILED CALLS)\n");
    fflush(stdout);
    return ok;
}

/* The issue sets no figure for API: its closing line puts each call
 * beside the floor. */
static void bench_print_api_targets(const struct api_measure *m, unsigned repeat)
{
    printf("  API (no figure set; calls/s against the RPC floor, 1 / 16 clients):");
    for (int kind = API_GET_RUN; kind < API_KINDS; kind++)
        if (m[0].fig[kind][API_SEQUENTIAL].calls_per_s > 0)
            printf("%s %s %.2fx / %.2fx", kind > API_GET_RUN ? "," : "", api_label[kind],
                   api_paired(m, repeat, kind, API_SEQUENTIAL),
                   api_paired(m, repeat, kind, API_CONCURRENT));
    printf("\n");
}

/* A machine creates processes fast when a static true starts and ends
 * within FAST_SPAWN_US (or, without musl-gcc, a dynamic one within
 * FAST_DYNAMIC_SPAWN_US): then csched's own pipeline, not the minders,
 * bounds A and T. */
enum { FAST_SPAWN_US = 300, FAST_DYNAMIC_SPAWN_US = 1000 };

void bench_print_minder_cost(const struct spawn_cost cost[SPAWN_KINDS])
{
    static const char *const label[SPAWN_KINDS] = {
        [SPAWN_MINDER] = "csched-minder -d DIR -- /bin/true",
        [SPAWN_MINDER_AS_USER] = "  the same, -u 65534 (as a job's user)",
        [SPAWN_STATIC_TRUE] = "static true (musl-gcc -static)",
        [SPAWN_DYNAMIC_TRUE] = "/bin/true (dynamic glibc)",
    };

    printf("\nM: minder cost, %d x posix_spawn + wait each   wall us/spawn   cpu us/spawn\n",
           SPAWN_COST_N);
    for (int i = 0; i < SPAWN_KINDS; i++) {
        if (cost[i].measured)
            printf("  %-44s %12.0f %14.0f\n", label[i], cost[i].wall_us, cost[i].cpu_us);
        else
            printf("  %-44s %12s %14s\n", label[i], "n/a", "n/a");
    }
    const struct spawn_cost *yard = &cost[SPAWN_STATIC_TRUE];
    const char *what = "static true";
    double fast_us = FAST_SPAWN_US;
    if (!yard->measured) {
        yard = &cost[SPAWN_DYNAMIC_TRUE];
        what = "/bin/true";
        fast_us = FAST_DYNAMIC_SPAWN_US;
    }
    printf("M: %s process creation (%s %.2f ms; minder + /bin/true %.2f ms)\n",
           yard->wall_us < fast_us ? "fast" : "slow", what, yard->wall_us / 1e3,
           cost[SPAWN_MINDER].wall_us / 1e3);
}

/* The minder's own CPU per attempt, beyond its command: the minder line
 * less /bin/true alone, as a job's user where that was measured. */
static void print_minder_target(const struct spawn_cost cost[SPAWN_KINDS])
{
    const struct spawn_cost *minder = &cost[SPAWN_MINDER_AS_USER];
    const char *how = "as a job's user";

    if (!minder->measured) {
        minder = &cost[SPAWN_MINDER];
        how = "as its own user";
    }
    double own_us = minder->cpu_us - cost[SPAWN_DYNAMIC_TRUE].cpu_us;
    printf("  M the minder's own cpu per attempt <= 0.3 ms (issue 36), %s: %.3f ms, %s\n", how,
           own_us / 1e3, verdict(own_us <= 300));
}

void bench_print_targets(const struct outcome *a, const struct outcome *t,
                         const struct sustained *s, unsigned n_s, const struct api_measure *api,
                         unsigned api_repeat, const struct spawn_cost *minder_cost)
{
    printf("\ntargets of issue 11 (reported, not asserted; medians of the paired runs):\n");
    if (a != NULL) {
        printf("  A wall within 1.10x of floor: %.2fx, %s\n", a->wall_ratio.median,
               verdict(a->wall_ratio.median <= 1.10));
        printf("  A peak alive >= floor's: %.2fx, %s\n", a->peak_ratio.median,
               verdict(a->peak_ratio.median >= 1.0));
        printf("  A probe p99 < 5 ms, max < 20 ms: %.2f ms / %.2f ms, %s\n", a->lag_p99_ms.median,
               a->lag_max_ms.median,
               verdict(a->lag_p99_ms.median < 5 && a->lag_max_ms.median < 20));
    }
    if (t != NULL) {
        double throughput = 1.0 / t->wall_ratio.median;
        printf("  T throughput >= 0.95x floor: %.2fx, %s\n", throughput,
               verdict(throughput >= 0.95));
        printf("  T probe p99 < 5 ms, max < 20 ms: %.2f ms / %.2f ms, %s\n", t->lag_p99_ms.median,
               t->lag_max_ms.median,
               verdict(t->lag_p99_ms.median < 5 && t->lag_max_ms.median < 20));
        printf("  T cschedd's own cpu per run < 0.25 ms: %.3f ms, %s\n",
               t->own_cpu_us_per_run / 1e3, verdict(t->own_cpu_us_per_run < 250));
        printf("  T PostgreSQL's cpu per run < 0.15 ms: %.3f ms, %s\n", t->db_cpu_us_per_run / 1e3,
               verdict(t->db_cpu_us_per_run < 150));
        double one = t->embedded_own_cpu_us_per_run + t->embedded_db_cpu_us_per_run;
        printf("  T cschedd + PostgreSQL cpu per run <= 0.25 ms (issue 36), embedded: %.3f ms, %s;"
               " by URL: %.3f ms\n",
               one / 1e3, verdict(one <= 250),
               (t->own_cpu_us_per_run + t->db_cpu_us_per_run) / 1e3);
    }
    for (unsigned i = 0; i < n_s; i++)
        printf("  S at %.0f runs/s: keeps up: %s (lateness p99 %.1f ms, backlog %u)\n", s[i].rate,
               s[i].keeps_up ? "yes" : "no", s[i].late_p99_ms, s[i].backlog);
    if (api != NULL)
        bench_print_api_targets(api, api_repeat);
    if (minder_cost != NULL)
        print_minder_target(minder_cost);
}
