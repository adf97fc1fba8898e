/* csched-bench-retention [ROWS [SECONDS]]: history retention's purge
 * (docs/design/0030-history-retention.md) under load. Loads ROWS rows of
 * old history (default 1,000,000: runs, attempts, slots, two events, a hook
 * delivery and a dependency cause with its upstream row per run, an
 * eighth each, ended 30 days ago) by SQL into the database cschedd
 * migrated, then measures for SECONDS (default 30) with TriggerJob called
 * every 20 ms and a Watch of the triggered job: TriggerJob's latency and
 * Watch's delivery lag (an event's receipt less its at_unix_ms), p50 /
 * p99 / max, first with no retention, then with --retention-days 1 while
 * the purge runs, and the rows the purge deleted per second; after each,
 * T's burst (2,000 runs of `true` at a limit of 64): its wall time and
 * runs a second, and the rows deleted meanwhile (tests/bench/README.md,
 * "History retention under load"). */
#include <inttypes.h>
#include <libpq-fe.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csched/client.h"
#include "testlib.h"

#define TRIGGER_EVERY_MS 20
/* The benchmark's T (tests/bench/README.md). */
#define T_RUNS 2000
#define T_LIMIT 64
#define T_TRIGGER_THREADS 8
#define T_TIMEOUT_MS 600000
#define SAMPLES_MAX 100000

struct samples {
    int64_t v[SAMPLES_MAX];
    size_t n;
};

struct watcher {
    struct cs_client *client;
    struct cs_stream *stream;
    struct samples lag;
};

static void die(const char *what)
{
    fprintf(stderr, "csched-bench-retention: %s\n", what);
    exit(1);
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int64_t mono_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void add(struct samples *s, int64_t v)
{
    if (s->n < SAMPLES_MAX)
        s->v[s->n++] = v;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* "p50 X, p99 Y, max Z" of s, in unit (divided by div). */
static void quantiles(struct samples *s, double div, const char *unit, char *buf, size_t cap)
{
    if (s->n == 0) {
        snprintf(buf, cap, "no samples");
        return;
    }
    qsort(s->v, s->n, sizeof(s->v[0]), by_value);
    snprintf(buf, cap, "p50 %.1f %s, p99 %.1f %s, max %.1f %s", (double)s->v[s->n / 2] / div, unit,
             (double)s->v[(s->n * 99) / 100] / div, unit, (double)s->v[s->n - 1] / div, unit);
}

static void exec_sql(PGconn *db, const char *sql)
{
    PGresult *r = PQexec(db, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "%s\n%s", sql, PQerrorMessage(db));
        die("SQL failed");
    }
    PQclear(r);
}

/* Runs 1 to loaded_runs are the loaded ones. */
static long long loaded_runs;

static long long history_rows(PGconn *db)
{
    /* The loaded rows only (runs 1 to loaded_runs): the runs triggered
     * meanwhile come after them and add their own. */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT (SELECT count(*) FROM runs WHERE id <= %lld)"
             " + (SELECT count(*) FROM attempts WHERE run_id <= %lld)"
             " + (SELECT count(*) FROM slots WHERE run_id <= %lld)"
             " + (SELECT count(*) FROM events WHERE run_id <= %lld)"
             " + (SELECT count(*) FROM dependency_causes WHERE run_id <= %lld)"
             " + (SELECT count(*) FROM dependency_upstreams WHERE run_id <= %lld)"
             " + (SELECT count(*) FROM hook_deliveries WHERE run_id <= %lld)",
             loaded_runs, loaded_runs, loaded_runs, loaded_runs, loaded_runs, loaded_runs,
             loaded_runs);
    PGresult *r = PQexec(db, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        die(PQerrorMessage(db));
    long long n = atoll(PQgetvalue(r, 0, 0));
    PQclear(r);
    return n;
}

/* ROWS rows of history that ended 30 days ago, after what is there: runs
 * of 50 jobs, one attempt, one slot, two events, one delivered hook
 * delivery and one dependency cause that made the run (with its upstream
 * row) each. */
static void load(PGconn *db, long long rows)
{
    char sql[4096];
    long long n = loaded_runs = rows / 8;
    int64_t t0 = now_ms() - 30LL * 24 * 3600 * 1000 - n * 10;
    snprintf(sql, sizeof(sql),
             "INSERT INTO runs (id, job_name, state, created_unix_ms, started_unix_ms,"
             " ended_unix_ms, exit_code, message, triggered_by)"
             " SELECT i, 'old-' || (i %% 50), 4, %" PRId64 " + i*10, %" PRId64
             " + i*10 + 1, %" PRId64
             " + i*10 + 5, 0, '', 'schedule' FROM generate_series(1, %lld) i",
             t0, t0, t0, n);
    exec_sql(db, sql);
    snprintf(
        sql, sizeof(sql),
        "INSERT INTO attempts (run_id, number, state, exit_code, started_unix_ms, ended_unix_ms,"
        " minder_pid, user_cpu_ms, system_cpu_ms, max_rss_kb, message, attempt_dir, replica)"
        " SELECT i, 1, 4, 0, %" PRId64 " + i*10 + 1, %" PRId64
        " + i*10 + 5, 100000 + i, 1, 1, 1024, '', '/nonexistent/' || i, 'bench'"
        " FROM generate_series(1, %lld) i",
        t0, t0, n);
    exec_sql(db, sql);
    snprintf(sql, sizeof(sql),
             "INSERT INTO slots (job_name, slot_unix_ms, outcome, run_id, due_unix_ms,"
             " decided_unix_ms) SELECT 'old-' || (i %% 50), %" PRId64 " + i*10, 1,"
             " i, %" PRId64 " + i*10, %" PRId64 " + i*10"
             " FROM generate_series(1, %lld) i",
             t0, t0, t0, n);
    exec_sql(db, sql);
    /* The stream's oldest: nothing ran before (the job was only created). */
    snprintf(sql, sizeof(sql),
             "INSERT INTO events (seq, at_unix_ms, run_id, job_name, attempt, state, exit_code,"
             " message) SELECT (i-1)*2 + k, %" PRId64 " + i*10 + k, i,"
             " 'old-' || (i %% 50), 1, CASE k WHEN 1 THEN 3 ELSE 4 END, CASE k WHEN 2 THEN 0 END,"
             " '' FROM generate_series(1, %lld) i, generate_series(1, 2) k",
             t0, n);
    exec_sql(db, sql);
    snprintf(sql, sizeof(sql),
             "INSERT INTO hook_deliveries (dedup_key, job_name, hook_name, event, run_id, url,"
             " timeout_ms, max_attempts, body, created_unix_ms, status, attempts, next_unix_ms)"
             " SELECT 'r' || i || '/succeeded/h', 'old-' || (i %% 50), 'h', 2, i,"
             " 'https://127.0.0.1/h', 10000, 10, '{}', %" PRId64 " + i*10 + 5, 2, 1, 0"
             " FROM generate_series(1, %lld) i",
             t0, n);
    exec_sql(db, sql);
    snprintf(sql, sizeof(sql),
             "INSERT INTO dependency_causes (job_name, cause, outcome, run_id, created_unix_ms,"
             " decided_unix_ms, body) SELECT 'old-' || (i %% 50), 'run:' || (i + %lld), 2, i,"
             " %" PRId64 " + i*10, %" PRId64 " + i*10, '' FROM generate_series(1, %lld) i",
             n, t0, t0, n);
    exec_sql(db, sql);
    snprintf(sql, sizeof(sql),
             "INSERT INTO dependency_upstreams (job_name, cause, upstream_job, run_id, state,"
             " started, recorded_unix_ms) SELECT 'old-' || (i %% 50), 'run:' || (i + %lld),"
             " 'up', i, 4, true, %" PRId64 " + i*10 FROM generate_series(1, %lld) i",
             n, t0, n);
    exec_sql(db, sql);
    exec_sql(db, "VACUUM ANALYZE runs, attempts, slots, events, hook_deliveries,"
                 " dependency_causes, dependency_upstreams");
}

static void *watch_main(void *arg)
{
    struct watcher *w = arg;
    for (;;) {
        Csched__V1__WatchResponse *resp = NULL;
        struct cs_status st = {0};
        if (cs_scheduler_watch_next(w->stream, &resp, &st) != 1)
            break;
        int64_t at = now_ms();
        for (size_t i = 0; i < resp->n_events; i++)
            add(&w->lag, at - resp->events[i]->at_unix_ms);
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
    return NULL;
}

static void create_job(struct cs_client *c)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__Job *out = NULL;
    struct cs_status st = {0};
    job.name = "t";
    job.shell = "true";
    req.job = &job;
    if (cs_scheduler_create_job(c, &req, &out, NULL, &st) != 0)
        die(st.message);
    protobuf_c_message_free_unpacked(&out->base, NULL);
}

/* SECONDS of TriggerJob every 20 ms with a Watch of job t; prints one line. */
static void measure(const char *what, const char *target, PGconn *db, int seconds)
{
    static struct watcher w;
    static struct samples trig;
    struct cs_client *c;
    struct cs_status st = {0};
    Csched__V1__WatchRequest wreq = CSCHED__V1__WATCH_REQUEST__INIT;
    pthread_t thread;
    char a[128], b[128];

    memset(&w, 0, sizeof(w));
    memset(&trig, 0, sizeof(trig));
    if (cs_client_new(target, &c) != 0 || cs_client_new(target, &w.client) != 0)
        die("no client");
    wreq.job_name = "t";
    if (cs_scheduler_watch(w.client, &wreq, &w.stream, NULL, &st) != 0)
        die(st.message);
    if (pthread_create(&thread, NULL, watch_main, &w) != 0)
        die("pthread_create");
    long long before = history_rows(db);
    int64_t start = mono_us(), end = start + (int64_t)seconds * 1000000;
    for (int64_t next = start; next < end; next += TRIGGER_EVERY_MS * 1000) {
        int64_t wait = next - mono_us();
        if (wait > 0)
            cs_test_sleep_ms((unsigned)(wait / 1000));
        Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
        Csched__V1__Run *run = NULL;
        req.job_name = "t";
        int64_t t = mono_us();
        if (cs_scheduler_trigger_job(c, &req, &run, NULL, &st) != 0)
            die(st.message);
        add(&trig, mono_us() - t);
        protobuf_c_message_free_unpacked(&run->base, NULL);
    }
    double took = (double)(mono_us() - start) / 1e6;
    long long after = history_rows(db);
    cs_test_sleep_ms(500); /* the last runs' events */
    cs_stream_cancel(w.stream);
    pthread_join(thread, NULL);
    cs_stream_free(w.stream);
    cs_client_free(w.client);
    cs_client_free(c);
    quantiles(&trig, 1000.0, "ms", a, sizeof(a));
    quantiles(&w.lag, 1.0, "ms", b, sizeof(b));
    printf("retention %s: %zu TriggerJob %s; %zu Watch events, lag %s; old rows %lld -> %lld in "
           "%.1f s: %.0f deleted/s\n",
           what, trig.n, a, w.lag.n, b, before, after, took,
           before > after ? (double)(before - after) / took : 0.0);
    fflush(stdout);
}

/* T's burst on d (whose --max-running is T's limit); prints one line. */
static void burst(const char *what, struct cs_testd *d, PGconn *db)
{
    static const char *const command[] = {"/bin/true", NULL};
    struct cs_test_burst_options o = {
        .target = cs_testd_target(d),
        .server_pid = cs_testd_pid(d),
        .job_prefix = "burst",
        .command = command,
        .n_jobs = 1,
        .n_runs = T_RUNS,
        .trigger_threads = T_TRIGGER_THREADS,
        .limit = T_LIMIT,
        .timeout_ms = T_TIMEOUT_MS,
    };
    struct cs_test_burst_result r;

    long long before = history_rows(db);
    if (cs_test_burst_run(&o, &r) != 0 || r.runs_succeeded != T_RUNS || r.timed_out)
        die("T's burst did not end with every run succeeded");
    long long after = history_rows(db);
    printf("retention %s: T, %d runs of true at a limit of %d: %.0f ms, %.0f runs/s; old rows "
           "%lld -> %lld: %.0f deleted/s\n",
           what, T_RUNS, T_LIMIT, r.wall_ms, T_RUNS / (r.wall_ms / 1000.0), before, after,
           before > after ? (double)(before - after) / (r.wall_ms / 1000.0) : 0.0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    long long rows = argc > 1 ? atoll(argv[1]) : 1000000;
    int seconds = argc > 2 ? atoi(argv[2]) : 30;
    struct cs_testpg *pg;
    struct cs_testd *d;
    struct cs_client *c;

    if (rows < 5 || seconds <= 0)
        die("usage: csched-bench-retention [ROWS [SECONDS]]");
    if (cs_testpg_start(&pg) != 0)
        die("PostgreSQL did not start");
    const char *const keep[] = {"--max-running", "64", "--retention-days", "0", NULL};
    struct cs_testd_options opts = {.database_url = cs_testpg_url(pg), .extra_args = keep};
    if (cs_testd_start(&opts, &d) != 0 || cs_client_new(cs_testd_target(d), &c) != 0)
        die("cschedd did not start");
    create_job(c);
    cs_client_free(c);
    (void)cs_testd_stop(d);

    PGconn *db = PQconnectdb(cs_testpg_url(pg));
    if (PQstatus(db) != CONNECTION_OK)
        die(PQerrorMessage(db));
    int64_t t = mono_us();
    load(db, rows);
    fprintf(stderr, "loaded %lld history rows in %.1f s\n", history_rows(db),
            (double)(mono_us() - t) / 1e6);

    if (cs_testd_start(&opts, &d) != 0)
        die("cschedd did not start");
    cs_test_sleep_ms(2000);
    measure("off", cs_testd_target(d), db, seconds);
    burst("off", d, db);
    (void)cs_testd_stop(d);

    const char *const purge[] = {"--max-running", "64", "--retention-days", "1", NULL};
    opts.extra_args = purge;
    if (cs_testd_start(&opts, &d) != 0)
        die("cschedd did not start");
    /* The first round starts 5 s after the start (server/host/history.c). */
    long long full = history_rows(db);
    for (int64_t until = mono_us() + 20000000; history_rows(db) >= full;) {
        if (mono_us() > until)
            die("the purge did not start within 20 s");
        cs_test_sleep_ms(100);
    }
    measure("purging", cs_testd_target(d), db, seconds);
    burst("purging", d, db);
    (void)cs_testd_stop(d);
    PQfinish(db);
    cs_testpg_stop(pg);
    return 0;
}
