/* bench_api: line API of csched-bench (bench.h). Unary calls through
 * libcsched's generated functions, timed one by one: GetRun, GetJob and
 * TriggerJob on a fresh cschedd, and GetRun on csched-bench-rpcfloor (the
 * same gRPC C core answering an empty Run, the RPC layer's floor). Each
 * kind runs from one client thread, then from API_THREADS at once, each
 * thread on its own channel and connected before the clock starts. The
 * serving process's CPU is read from /proc around each figure. */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "testlib.h"

extern char **environ;

enum { CONNECT_TIMEOUT_MS = 10000 };

static const char API_JOB[] = "bench-api-0000";

/* What every caller thread of one figure shares. */
struct api_call_set {
    const char *target;
    int kind;
    int64_t run_id;        /* GetRun's run */
    int64_t not_before_ms; /* TriggerJob's runs wait this long: none starts */
    unsigned calls_each;
    double *lat_us; /* calls_each per thread, thread i's from i * calls_each */
    atomic_uint errors;
    pthread_barrier_t ready, go;
};

struct api_caller {
    struct api_call_set *set;
    unsigned index;
};

/* call_once makes one call of set's kind and frees the answer: unpacking
 * and freeing it are in every figure, the floor's too. */
static int call_once(struct cs_client *c, const struct api_call_set *set,
                     const struct cs_call_opts *opts, struct cs_status *st)
{
    int rc;

    if (set->kind == API_GET_JOB || set->kind == API_GET_JOB_FORWARDED) {
        Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
        Csched__V1__Job *job = NULL;
        req.name = (char *)API_JOB;
        rc = cs_scheduler_get_job(c, &req, &job, opts, st);
        if (rc == 0)
            csched__v1__job__free_unpacked(job, NULL);
        return rc;
    }
    Csched__V1__Run *run = NULL;
    if (set->kind == API_TRIGGER) {
        Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
        req.job_name = (char *)API_JOB;
        req.not_before_unix_ms = set->not_before_ms;
        rc = cs_scheduler_trigger_job(c, &req, &run, opts, st);
    } else {
        Csched__V1__GetRunRequest req = CSCHED__V1__GET_RUN_REQUEST__INIT;
        req.run_id = set->run_id;
        rc = cs_scheduler_get_run(c, &req, &run, opts, st);
    }
    if (rc == 0)
        csched__v1__run__free_unpacked(run, NULL);
    return rc;
}

static void *caller_main(void *arg)
{
    struct api_caller *me = arg;
    struct api_call_set *set = me->set;
    struct cs_client *client = cs_test_client_new(set->target);
    struct cs_call_opts wait = {.timeout_ms = CONNECT_TIMEOUT_MS, .wait_for_ready = true};
    struct cs_status st = {0};
    double *lat = set->lat_us + (size_t)me->index * set->calls_each;

    /* Connected, and the server's code paths warm, before the clock. */
    if (call_once(client, set, &wait, &st) != 0)
        cs_test_fail(__FILE__, __LINE__, "first call to %s: %s", set->target, st.message);
    pthread_barrier_wait(&set->ready);
    pthread_barrier_wait(&set->go);
    for (unsigned i = 0; i < set->calls_each; i++) {
        int64_t t0 = bench_now_ns();
        if (call_once(client, set, NULL, &st) != 0)
            atomic_fetch_add(&set->errors, 1);
        lat[i] = (double)(bench_now_ns() - t0) / 1e3;
    }
    cs_client_free(client);
    return NULL;
}

/* measure times calls of set->kind from threads threads into *fig; pid is
 * the serving process. */
static void measure(struct api_call_set *set, unsigned threads, unsigned calls, pid_t pid,
                    struct api_figure *fig)
{
    struct api_caller callers[API_THREADS];
    pthread_t th[API_THREADS];
    double cpu0, cpu1;

    set->calls_each = calls / threads;
    unsigned total = set->calls_each * threads;
    set->lat_us = calloc(total, sizeof(double));
    CS_TEST_TRUE(set->lat_us != NULL);
    atomic_store(&set->errors, 0);
    pthread_barrier_init(&set->ready, NULL, threads + 1);
    pthread_barrier_init(&set->go, NULL, threads + 1);
    for (unsigned i = 0; i < threads; i++) {
        callers[i] = (struct api_caller){.set = set, .index = i};
        pthread_create(&th[i], NULL, caller_main, &callers[i]);
    }
    pthread_barrier_wait(&set->ready);
    CS_TEST_OK(cs_test_proc_cpu_ms(pid, false, &cpu0));
    int64_t t0 = bench_now_ns();
    pthread_barrier_wait(&set->go);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    int64_t t1 = bench_now_ns();
    CS_TEST_OK(cs_test_proc_cpu_ms(pid, false, &cpu1));
    bench_sort(set->lat_us, total);
    fig->calls_per_s = total / ((double)(t1 - t0) / 1e9);
    fig->p50_us = set->lat_us[total / 2];
    fig->p99_us = set->lat_us[(size_t)total * 99 / 100];
    fig->server_cpu_us = (cpu1 - cpu0) * 1e3 / total;
    fig->errors = atomic_load(&set->errors);
    pthread_barrier_destroy(&set->ready);
    pthread_barrier_destroy(&set->go);
    free(set->lat_us);
    set->lat_us = NULL;
}

/* measure_both times kind sequentially and from API_THREADS threads. */
static void measure_both(struct api_call_set *set, int kind, unsigned calls, pid_t pid,
                         struct api_measure *m)
{
    static const unsigned threads[API_MODES] = {
        [API_SEQUENTIAL] = 1, [API_CONCURRENT] = API_THREADS};

    set->kind = kind;
    for (int mode = 0; mode < API_MODES; mode++)
        measure(set, threads[mode], calls, pid, &m->fig[kind][mode]);
}

/* start_floor spawns csched-bench-rpcfloor on a socket in dir; the first
 * calls wait for it to listen. */
static pid_t start_floor(const char *bin_dir, const char *dir, char *target, size_t cap)
{
    char path[1200];
    pid_t pid;

    snprintf(path, sizeof(path), "%s/csched-bench-rpcfloor", bin_dir);
    snprintf(target, cap, "unix:%s/floor.sock", dir);
    char *argv[] = {path, target, NULL};
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    /* A session of its own, as cschedd has (tests/lib/testd.c). */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    CS_TEST_OK(posix_spawn(&pid, path, NULL, &attr, argv, environ));
    posix_spawnattr_destroy(&attr);
    return pid;
}

/* wait_forwarding waits for the standby at target to know the active
 * replica: GetJob through it answers. */
static void wait_forwarding(const char *target)
{
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    struct cs_client *c = cs_test_client_new(target);
    int64_t deadline = cs_test_now_ms() + 30000;
    Csched__V1__Job *job = NULL;
    struct cs_status st = {0};

    req.name = (char *)API_JOB;
    while (cs_scheduler_get_job(c, &req, &job, NULL, &st) != 0) {
        if (cs_test_now_ms() > deadline)
            cs_test_fail(__FILE__, __LINE__, "GetJob through a standby: %s", st.message);
        cs_test_sleep_ms(20);
    }
    csched__v1__job__free_unpacked(job, NULL);
    cs_client_free(c);
}

/* make_api_job creates the job and one run of it that has ended: GetRun
 * then reads a run with its attempt and outcome, as clients mostly do. */
static int64_t make_api_job(const char *target)
{
    static const char *const true_cmd[] = {"true", NULL};
    struct cs_test_burst_options o = {
        .target = target, .job_prefix = "bench-api", .command = true_cmd, .n_jobs = 1};
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    struct cs_client *c = cs_test_client_new(target);
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    int64_t deadline = cs_test_now_ms() + 30000;

    cs_test_burst_create_jobs(&o);
    req.job_name = (char *)API_JOB;
    if (cs_scheduler_trigger_job(c, &req, &run, NULL, &st) != 0)
        cs_test_fail(__FILE__, __LINE__, "TriggerJob %s: %s", API_JOB, st.message);
    int64_t id = run->id;
    while (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED) {
        Csched__V1__GetRunRequest get = CSCHED__V1__GET_RUN_REQUEST__INIT;
        csched__v1__run__free_unpacked(run, NULL);
        CS_TEST_LT(cs_test_now_ms(), deadline);
        cs_test_sleep_ms(20);
        get.run_id = id;
        if (cs_scheduler_get_run(c, &get, &run, NULL, &st) != 0)
            cs_test_fail(__FILE__, __LINE__, "GetRun %lld: %s", (long long)id, st.message);
    }
    csched__v1__run__free_unpacked(run, NULL);
    cs_client_free(c);
    return id;
}

void bench_run_api(struct cs_testpg *pg, const char *bin_dir, unsigned calls, unsigned repeat,
                   struct api_measure *m)
{
    static const char *const active_args[] = {"--replica-id", "bench-active", NULL};
    struct cs_testd_options dopts = {.database_url = cs_testpg_url(pg), .extra_args = active_args};
    struct cs_testd *standby[BENCH_MAX_STANDBYS] = {NULL};
    char dir[64], floor_target[96];
    struct cs_testd *d = NULL;
    int wstatus;

    CS_TEST_OK(cs_test_mkdtemp(dir, sizeof(dir), "cs-bench-api"));
    pid_t floor_pid = start_floor(bin_dir, dir, floor_target, sizeof(floor_target));
    CS_TEST_OK(cs_testd_start(&dopts, &d));
    /* TriggerJob's runs wait an hour: the figure is the call and its
     * commit, with no process started beside it. */
    struct api_call_set csched = {.target = cs_testd_target(d),
                                  .run_id = make_api_job(cs_testd_target(d)),
                                  .not_before_ms = (int64_t)bench_unix_ms() + 3600 * 1000};
    struct api_call_set floor = {.target = floor_target, .run_id = csched.run_id};
    /* With --standbys: GetJob through the first, which forwards it. */
    bench_start_standbys(pg, 0, standby);
    struct api_call_set forwarded = {.target =
                                         standby[0] != NULL ? cs_testd_target(standby[0]) : NULL};
    if (standby[0] != NULL)
        wait_forwarding(forwarded.target);

    for (unsigned r = 0; r < repeat; r++) {
        fprintf(stderr, "bench: API, %u calls per figure (%u of %u)\n", calls, r + 1, repeat);
        memset(&m[r], 0, sizeof(m[r]));
        measure_both(&floor, API_FLOOR, calls, floor_pid, &m[r]);
        measure_both(&csched, API_GET_RUN, calls, cs_testd_pid(d), &m[r]);
        measure_both(&csched, API_GET_JOB, calls, cs_testd_pid(d), &m[r]);
        measure_both(&csched, API_TRIGGER, calls, cs_testd_pid(d), &m[r]);
        if (standby[0] != NULL)
            measure_both(&forwarded, API_GET_JOB_FORWARDED, calls, cs_testd_pid(standby[0]), &m[r]);
    }
    for (unsigned i = 0; i < bench_standbys(); i++)
        (void)cs_testd_stop(standby[i]);
    int status = cs_testd_stop(d);
    if (status != 0)
        fprintf(stderr, "bench: cschedd exited with status %d\n", status);
    kill(floor_pid, SIGTERM);
    CS_TEST_EQ(waitpid(floor_pid, &wstatus, 0), floor_pid);
    cs_test_rmtree(dir);
}
