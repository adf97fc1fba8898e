/* bench: what the parts of csched-bench share. bench_run.c runs the
 * bursts A and T, each on csched or on its floor, and line M;
 * bench_sustained.c line S and bench_api.c line API; bench_report.c turns
 * those measures into the table, the paired ratios and the verdicts on
 * stdout. Everything is called from the main thread (the lines start client
 * and sampler threads of their own); progress and per-run details go to
 * stderr. */
#ifndef CS_BENCH_H
#define CS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
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
    unsigned array_size; /* csched: one TriggerJob per this many runs; 0: one per run */
};

/* One run of a workload on one side; the probe's lag only for csched. */
struct measure {
    bool ok;
    unsigned runs;
    unsigned failed;
    double wall_ms;
    unsigned peak_alive;
    double cpu_ms;
    double own_cpu_ms; /* cschedd's own, without its minders' (csched only) */
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
    double floor_runs_per_s; /* the floor's run of median wall time */
    /* Medians over the csched runs, per run: cschedd's own CPU (launch
     * thread, loop, gRPC; not its minders) and PostgreSQL's. */
    double own_cpu_us_per_run, db_cpu_us_per_run;
    /* The same on the embedded PostgreSQL (T only; 0 when not run). */
    double embedded_own_cpu_us_per_run, embedded_db_cpu_us_per_run;
};

/* The programs line M times, in the order it shows them: the minder as
 * cschedd starts it for a job of its own user, and as cschedd running as
 * root starts it for every job (the default job user; root only). */
enum { SPAWN_MINDER, SPAWN_MINDER_AS_USER, SPAWN_STATIC_TRUE, SPAWN_DYNAMIC_TRUE, SPAWN_KINDS };

/* The cost of one posix_spawn + wait, in us; not measured when the program
 * is missing (the static true needs musl-gcc). */
struct spawn_cost {
    bool measured;
    double wall_us, cpu_us;
};

/* The monotonic clock in ns; the wall clock in ms, as the server stamps
 * its *_unix_ms fields. */
int64_t bench_now_ns(void);
double bench_unix_ms(void);

/* Sorts v[0..n) in ascending order. */
void bench_sort(double *v, size_t n);

/* Runs w once on csched-floor from bin_dir and fills m. Exits the program
 * if the floor cannot be started or read. */
void bench_run_floor(const struct workload *w, const char *bin_dir, struct measure *m);

/* Runs w once on a fresh cschedd (from $CSCHED_BIN_DIR, as tests/lib
 * starts it) on pg by its URL, as a replica, and fills m; with pg NULL, on
 * the cschedd's own embedded PostgreSQL (its default: one replica, no
 * fencing), made and started before the workload. The server is stopped
 * before it returns. */
void bench_run_csched(const struct workload *w, struct cs_testpg *pg, struct measure *m);
/* How many standby replicas run beside the active cschedd of A and T (0 by
 * default): the cost of coordination through the database. */
#define BENCH_MAX_STANDBYS 4
void bench_set_standbys(unsigned n);
/* Starts --standbys standby replicas on pg into out (BENCH_MAX_STANDBYS),
 * each joined when it returns, each taking limit attempts under a cluster
 * limit of limit (0: testd's default, no cluster limit). */
void bench_start_standbys(struct cs_testpg *pg, unsigned limit, struct cs_testd **out);
unsigned bench_standbys(void);

/* The reference lines of A and T: what a user would pick instead. */
enum bench_peer { PEER_XARGS, PEER_APSCHEDULER, PEERS };
const char *bench_peer_name(enum bench_peer peer);

/* Runs w once on peer (bench_peers.c) and fills m's runs, wall and CPU (of
 * the peer and of every process it reaped); m->ok is false when the peer
 * failed or is not installed. */
void bench_run_peer(const struct workload *w, enum bench_peer peer, struct measure *m);

/* Measures SPAWN_COST_N spawns of each program of line M from bin_dir. */
void bench_minder_cost(const char *bin_dir, struct spawn_cost cost[SPAWN_KINDS]);

/* Prints the table's header line. */
void bench_print_header(void);

/* T's further rows on csched, run in the same repeats: its runs made as
 * arrays, and cschedd on its embedded PostgreSQL instead of by URL. */
enum bench_variant { VARIANT_ARRAYS, VARIANT_EMBEDDED, VARIANTS };

/* Prints w's rows from the repeat runs of each side (f the floor's, c
 * csched's, in pairs; v[variant] csched's other rows, NULL if not run;
 * p[peer] the peers', run beside them; all sorted here) and returns the
 * paired outcome. */
struct outcome bench_report_workload(const struct workload *w, struct measure *f, struct measure *c,
                                     struct measure (*v)[MAX_REPEAT],
                                     struct measure (*p)[MAX_REPEAT], unsigned repeat);

/* Prints line M. */
void bench_print_minder_cost(const struct spawn_cost cost[SPAWN_KINDS]);

/* Prints the D line: the file system of the temp dirs (CSCHED_TEST_TMPDIR,
 * else /tmp), and a warning when it is ext4 without a journal. */
void bench_print_disk(void);

/* Line S: runs of `true` triggered at a steady rate, one job, limit
 * S_LIMIT. Lateness runs from a trigger's due time to its attempt's RUNNING
 * event on Watch (the server's at_unix_ms). */
enum { S_LIMIT = 64 };

struct sustained {
    bool ok; /* every trigger answered, every run started and succeeded */
    bool keeps_up;
    double rate;  /* asked for, runs/s */
    unsigned due; /* runs due in the window: rate x seconds */
    unsigned seconds;
    unsigned errors;     /* TriggerJob calls that failed */
    unsigned started;    /* runs whose attempt reached RUNNING */
    unsigned succeeded;  /* runs that ended SUCCEEDED */
    unsigned backlog;    /* due by the window's end, not started by then */
    double trigger_rate; /* triggers answered / (last answer - first due) */
    double start_rate;   /* starts within the window / its length */
    double late_p50_ms, late_p99_ms, late_max_ms;
    double answer_p50_ms, answer_p99_ms; /* due -> TriggerJob answered */
    double own_cpu_us_per_run, db_cpu_us_per_run;
};

/* Runs line S once at rate for seconds on a fresh cschedd on pg, then
 * waits for the backlog to drain (bounded), and fills s. */
void bench_run_sustained(struct cs_testpg *pg, double rate, unsigned seconds, struct sustained *s);

/* Prints line S's rows, one per rate. */
void bench_print_sustained(const struct sustained *s, unsigned n);

/* Line API: unary calls, each kind timed sequentially and from
 * API_THREADS client threads (one channel each). API_FLOOR is GetRun
 * answered with an empty Run by csched-bench-rpcfloor. */
enum { API_FLOOR, API_GET_RUN, API_GET_JOB, API_TRIGGER, API_GET_JOB_FORWARDED, API_KINDS };
enum { API_SEQUENTIAL, API_CONCURRENT, API_MODES };
enum { API_THREADS = 16 };

struct api_figure {
    double calls_per_s;
    double p50_us, p99_us;
    double server_cpu_us; /* the serving process's CPU per call */
    unsigned errors;
};

struct api_measure {
    struct api_figure fig[API_KINDS][API_MODES];
};

/* Runs line API repeat times (the floor and cschedd alternating, calls
 * per figure) into m[0..repeat). cschedd runs fresh on pg; the floor is
 * bin_dir's csched-bench-rpcfloor. */
void bench_run_api(struct cs_testpg *pg, const char *bin_dir, unsigned calls, unsigned repeat,
                   struct api_measure *m);

/* Prints line API: medians over the repeats, and paired ratios to the
 * floor. Returns false if any call failed. */
bool bench_print_api(const struct api_measure *m, unsigned repeat, unsigned calls);

/* Prints the verdicts on the targets; NULL (or n_s 0) for a line not run. */
void bench_print_targets(const struct outcome *a, const struct outcome *t,
                         const struct sustained *s, unsigned n_s, const struct api_measure *api,
                         unsigned api_repeat, const struct spawn_cost *minder_cost);

#endif
