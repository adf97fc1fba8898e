/* bench_run: the workloads of csched-bench, run and measured (bench.h).
 * The floor is csched-floor, spawned in a session of its own and watched by
 * a thread that counts live minders in /proc every 2 ms; csched is a fresh
 * cschedd driven through tests/lib's burst, whose /proc count is the same.
 * CPU is the kernel's account: for the floor, what wait4 reports of it and
 * of all it reaped; for csched, the server's and PostgreSQL's process trees
 * read just before and after the burst, once the jobs exist. */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <limits.h>
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

#include "bench.h"
#include "testlib.h"

extern char **environ;

enum { TRIGGER_THREADS = 10, BURST_TIMEOUT_MS = 120000 };

int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double bench_unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
    return (double)bench_now_ns() / 1e6;
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

/* spawn_floor starts csched-floor on argv in a session of its own, as
 * cschedd has (see tests/lib/testd.c), its stdout into out_path. */
static pid_t spawn_floor(const char *floor_path, const char *const *argv, const char *out_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    pid_t pid;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    CS_TEST_OK(posix_spawn(&pid, floor_path, &fa, &attr, (char **)argv, environ));
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

void bench_run_floor(const struct workload *w, const char *bin_dir, struct measure *m)
{
    char floor_path[1200], minder[1200], workdir[64], runs[16], limit[16];
    char out_path[96];
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
    CS_TEST_OK(cs_test_mkdtemp(workdir, sizeof(workdir), "cs-floor"));
    snprintf(out_path, sizeof(out_path), "%s.out", workdir);
    const char *head[] = {"csched-floor", "-m", minder, "-d",  workdir,
                          "-n",           runs, "-j",   limit, "--"};
    for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
        argv[n++] = head[i];
    for (size_t i = 0; w->command[i] != NULL; i++)
        argv[n++] = w->command[i];
    argv[n] = NULL;

    pid = spawn_floor(floor_path, argv, out_path);
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

/* Standby replicas beside the active cschedd of A and T (--standbys): the
 * active one places attempts on every machine (docs/design/0036), each
 * taking the workload's limit, and the cluster's limit holds them to it
 * together. */
static unsigned standbys;

void bench_set_standbys(unsigned n)
{
    standbys = n;
}

unsigned bench_standbys(void)
{
    return standbys;
}

/* Starts the standbys, each taking limit attempts (0: testd's default),
 * and waits until each has joined (its row). */
void bench_start_standbys(struct cs_testpg *pg, unsigned limit, struct cs_testd **out)
{
    static char ids[BENCH_MAX_STANDBYS][32], cluster[16];
    const char *args[BENCH_MAX_STANDBYS][5];
    (void)snprintf(cluster, sizeof(cluster), "%u", limit);
    for (unsigned i = 0; i < standbys; i++) {
        (void)snprintf(ids[i], sizeof(ids[i]), "bench-standby-%u", i + 1);
        args[i][0] = "--replica-id";
        args[i][1] = ids[i];
        args[i][2] = limit > 0 ? "--cluster-max-running" : NULL;
        args[i][3] = cluster;
        args[i][4] = NULL;
        struct cs_testd_options o = {.database_url = cs_testpg_url(pg),
                                     .extra_args = args[i],
                                     .no_wait = true,
                                     .max_running = limit};
        CS_TEST_OK(cs_testd_start(&o, &out[i]));
    }
    PGconn *conn = PQconnectdb(cs_testpg_url(pg));
    int64_t deadline = cs_test_now_ms() + 30000;
    for (;;) {
        PGresult *res = PQexec(conn, "SELECT count(*) FROM replicas WHERE state = 1");
        long joined = PQresultStatus(res) == PGRES_TUPLES_OK ? atol(PQgetvalue(res, 0, 0)) : -1;
        PQclear(res);
        if (joined >= (long)standbys)
            break;
        if (cs_test_now_ms() > deadline) {
            fprintf(stderr, "bench: %ld of %u standbys joined in 30 s\n", joined, standbys);
            exit(1);
        }
        cs_test_sleep_ms(20);
    }
    PQfinish(conn);
}

static double standbys_cpu_ms(struct cs_testd *const *standby, unsigned n)
{
    double sum = 0, ms;
    for (unsigned i = 0; i < n; i++) {
        CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(standby[i]), false, &ms));
        sum += ms;
    }
    return sum;
}

/* The postmaster cschedd writes to: pg's, or (pg NULL) the embedded one in
 * its state dir, which pg_ctl started outside cschedd's process tree. */
static pid_t postmaster_of(struct cs_testpg *pg, struct cs_testd *d)
{
    char path[PATH_MAX];
    long pid = 0;

    if (pg != NULL)
        return cs_testpg_pid(pg);
    snprintf(path, sizeof(path), "%s/pg/data/postmaster.pid", cs_testd_state_dir(d));
    FILE *f = fopen(path, "r");
    CS_TEST_TRUE(f != NULL);
    CS_TEST_TRUE(fscanf(f, "%ld", &pid) == 1 && pid > 1);
    fclose(f);
    return (pid_t)pid;
}

void bench_run_csched(const struct workload *w, struct cs_testpg *pg, struct measure *m)
{
    char cluster[16];
    (void)snprintf(cluster, sizeof(cluster), "%u", w->limit);
    const char *const active_args[] = {"--replica-id", "bench-active", "--cluster-max-running",
                                       cluster, NULL};
    struct cs_testd_options dopts = {.max_running = w->limit};
    struct cs_testd *standby[BENCH_MAX_STANDBYS] = {NULL};
    struct cs_test_burst_result r;
    double srv0, srv1, own0, own1, db0, db1;
    struct rusage self0, self1;
    struct cs_testd *d = NULL;

    memset(m, 0, sizeof(*m));
    if (pg != NULL) {
        dopts.database_url = cs_testpg_url(pg);
        dopts.extra_args = active_args;
    }
    CS_TEST_OK(cs_testd_start(&dopts, &d));
    /* Standbys share a database by URL; the embedded one is cschedd's own. */
    unsigned n_standbys = pg != NULL ? standbys : 0;
    if (n_standbys > 0)
        bench_start_standbys(pg, w->limit, standby);
    pid_t db_pid = postmaster_of(pg, d);
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
        .array_size = w->array_size,
    };
    /* The jobs are made before the CPU count starts. */
    cs_test_burst_create_jobs(&bopts);
    bopts.jobs_exist = true;
    CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(d), true, &srv0));
    CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(d), false, &own0));
    CS_TEST_OK(cs_test_tree_cpu_ms(db_pid, &db0));
    double standby0 = standbys_cpu_ms(standby, n_standbys);
    getrusage(RUSAGE_SELF, &self0);
    CS_TEST_OK(cs_test_burst_run(&bopts, &r));
    getrusage(RUSAGE_SELF, &self1);
    CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(d), true, &srv1));
    CS_TEST_OK(cs_test_proc_cpu_ms(cs_testd_pid(d), false, &own1));
    CS_TEST_OK(cs_test_tree_cpu_ms(db_pid, &db1));
    double standby_ms = standbys_cpu_ms(standby, n_standbys) - standby0;
    if (n_standbys > 0)
        fprintf(stderr,
                "%s: %u standbys' cschedd used %.1f ms CPU; every replica's cschedd %.1f us "
                "per run\n",
                w->key, n_standbys, standby_ms,
                (own1 - own0 + standby_ms) * 1000.0 / (w->n_runs > 0 ? w->n_runs : 1));
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
    m->own_cpu_ms = own1 - own0;
    m->db_cpu_ms = db1 - db0;
    for (unsigned i = 0; i < n_standbys; i++)
        (void)cs_testd_stop(standby[i]);
    int status = cs_testd_stop(d);
    if (status != 0)
        fprintf(stderr, "bench: cschedd exited with status %d\n", status);
}

/* spawn_cost times n posix_spawn + waitpid of argv, per spawn. With dirs,
 * argv[dir_arg] is dirs[i] for spawn i: the minder refuses a directory that
 * holds a pid file already, so each spawn gets the fresh attempt directory
 * cschedd's launch thread would have made for it. */
static void spawn_cost(char *argv[], int dir_arg, char *const *dirs, unsigned n,
                       struct spawn_cost *cost)
{
    struct rusage before, after;
    int wstatus;
    pid_t pid;

    getrusage(RUSAGE_CHILDREN, &before);
    double t0 = now_ms();
    for (unsigned i = 0; i < n; i++) {
        if (dirs != NULL)
            argv[dir_arg] = dirs[i];
        CS_TEST_OK(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ));
        CS_TEST_EQ(waitpid(pid, &wstatus, 0), pid);
        CS_TEST_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    }
    cost->wall_us = (now_ms() - t0) * 1e3 / n;
    getrusage(RUSAGE_CHILDREN, &after);
    double cpu = tv_ms(after.ru_utime) + tv_ms(after.ru_stime) - tv_ms(before.ru_utime) -
                 tv_ms(before.ru_stime);
    cost->cpu_us = cpu * 1e3 / n;
    cost->measured = true;
}

/* n fresh attempt directories under dir, as cschedd's launch thread makes
 * them (outside the minder's own cost, so before the timed loop). */
static char **make_attempt_dirs(const char *dir, const char *prefix, unsigned n)
{
    char **dirs = calloc(n, sizeof(*dirs));

    CS_TEST_TRUE(dirs != NULL);
    for (unsigned i = 0; i < n; i++) {
        CS_TEST_TRUE(asprintf(&dirs[i], "%s/%s%u-1", dir, prefix, i + 1) > 0);
        CS_TEST_OK(mkdir(dirs[i], 0755));
    }
    return dirs;
}

static void free_attempt_dirs(char **dirs, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
}

void bench_minder_cost(const char *bin_dir, struct spawn_cost cost[SPAWN_KINDS])
{
    char minder[1200], static_true[1200], dir[64];

    snprintf(minder, sizeof(minder), "%s/csched-minder", bin_dir);
    snprintf(static_true, sizeof(static_true), "%s/csched-bench-true", bin_dir);
    CS_TEST_OK(cs_test_mkdtemp(dir, sizeof(dir), "cs-bench-minder"));
    char **attempt_dirs = make_attempt_dirs(dir, "", SPAWN_COST_N);
    char *minder_argv[] = {minder, "-d", NULL, "--", "/bin/true", NULL};
    /* nobody, as cschedd hands the default job user's ids to the minder. */
    char *as_user_argv[] = {minder,  "-d", NULL, "-u", "65534",     "-G",
                            "65534", "-S", "-",  "--", "/bin/true", NULL};
    char *static_argv[] = {static_true, NULL};
    char *dynamic_argv[] = {"/bin/true", NULL};

    memset(cost, 0, SPAWN_KINDS * sizeof(cost[0]));
    spawn_cost(minder_argv, 2, attempt_dirs, SPAWN_COST_N, &cost[SPAWN_MINDER]);
    if (geteuid() == 0) {
        char **user_dirs = make_attempt_dirs(dir, "u", SPAWN_COST_N);
        spawn_cost(as_user_argv, 2, user_dirs, SPAWN_COST_N, &cost[SPAWN_MINDER_AS_USER]);
        free_attempt_dirs(user_dirs, SPAWN_COST_N);
    }
    if (access(static_true, X_OK) == 0)
        spawn_cost(static_argv, 0, NULL, SPAWN_COST_N, &cost[SPAWN_STATIC_TRUE]);
    spawn_cost(dynamic_argv, 0, NULL, SPAWN_COST_N, &cost[SPAWN_DYNAMIC_TRUE]);
    free_attempt_dirs(attempt_dirs, SPAWN_COST_N);
    cs_test_rmtree(dir);
}
