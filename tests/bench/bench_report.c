/* bench_report: the tables of csched-bench on stdout (bench.h). For each
 * workload, the row of each side is its run of median wall time, then the
 * ratio of those two rows; the paired ratios over the repeats follow, as
 * median and range, and at the end the verdicts on the targets, which are
 * reported and never asserted. */
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

/* Sorts v in place for its median and range. */
static struct spread spread_of(double *v, unsigned n)
{
    qsort(v, n, sizeof(v[0]), by_value);
    return (struct spread){v[0], v[n / 2], v[n - 1]};
}

static void print_spread(const char *what, struct spread s, const char *unit)
{
    printf("  %-34s median %7.2f%s   min %7.2f%s   max %7.2f%s\n", what, s.median, unit, s.min,
           unit, s.max, unit);
}

struct outcome bench_report_workload(const struct workload *w, struct measure *f, struct measure *c,
                                     unsigned repeat)
{
    double wall[MAX_REPEAT], peak[MAX_REPEAT], p99[MAX_REPEAT], max[MAX_REPEAT];
    struct outcome o;

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

void bench_print_minder_cost(const struct spawn_cost cost[SPAWN_KINDS])
{
    static const char *const label[SPAWN_KINDS] = {
        [SPAWN_MINDER] = "csched-minder -d DIR -- /bin/true",
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
}

void bench_print_targets(const struct outcome *a, const struct outcome *t)
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
