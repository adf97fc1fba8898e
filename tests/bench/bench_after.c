/* csched-bench-after [ROUNDS]: the time from an upstream run's end to its
 * downstream run's start (tests/bench/README.md, "Dependencies"), in two
 * shapes, each ROUNDS times (default 3):
 *
 * - a chain of 100 jobs, each after the one before: every link's time from
 *   the upstream's end (ended_unix_ms) to the downstream's start
 *   (started_unix_ms), p50 and p99, and the whole chain's time;
 * - a fan-in of 100 -> 1: 100 jobs after a root, one sink after all 100:
 *   the time from the last of the 100 to end to the sink's start.
 *
 * Every job runs `true`. Starts its own PostgreSQL and cschedd. */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define WIDTH 100

static void die(const char *what)
{
    fprintf(stderr, "csched-bench-after: %s\n", what);
    exit(1);
}

static void create(struct cs_client *c, const char *name, char **ups, size_t n)
{
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT, *resp;
    Csched__V1__Dependency *deps = calloc(n ? n : 1, sizeof(*deps));
    Csched__V1__Dependency **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    struct cs_status st;
    for (size_t i = 0; i < n; i++) {
        csched__v1__dependency__init(&deps[i]);
        deps[i].job = ups[i];
        ptrs[i] = &deps[i];
    }
    job.name = (char *)name;
    job.shell = "true";
    job.after = ptrs;
    job.n_after = n;
    req.job = &job;
    if (cs_scheduler_create_job(c, &req, &resp, NULL, &st) != 0) {
        fprintf(stderr, "create %s: %s\n", name, st.message);
        die("CreateJob failed");
    }
    csched__v1__job__free_unpacked(resp, NULL);
    free(deps);
    free(ptrs);
}

static int64_t trigger(struct cs_client *c, const char *name)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run;
    struct cs_status st;
    req.job_name = (char *)name;
    if (cs_scheduler_trigger_job(c, &req, &run, NULL, &st) != 0)
        die("TriggerJob failed");
    int64_t id = run->id;
    csched__v1__run__free_unpacked(run, NULL);
    return id;
}

/* job's run of cause, once ended (waits up to a minute); caller frees. */
static Csched__V1__Run *run_of(struct cs_client *c, const char *job, const char *cause)
{
    int64_t deadline = cs_test_now_ms() + 60000;
    for (;;) {
        Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
        Csched__V1__ListRunsResponse *resp;
        struct cs_status st;
        req.job_name = (char *)job;
        req.page_size = 100;
        if (cs_scheduler_list_runs(c, &req, &resp, NULL, &st) != 0)
            die("ListRuns failed");
        for (size_t i = 0; i < resp->n_runs; i++) {
            Csched__V1__Run *r = resp->runs[i];
            char own[64]; /* a triggered run is the cause of its chain */
            snprintf(own, sizeof(own), "run:%lld", (long long)r->id);
            if ((strcmp(r->cause, cause) == 0 || strcmp(own, cause) == 0) && r->ended_unix_ms > 0) {
                resp->runs[i] = resp->runs[--resp->n_runs];
                csched__v1__list_runs_response__free_unpacked(resp, NULL);
                return r;
            }
        }
        csched__v1__list_runs_response__free_unpacked(resp, NULL);
        if (cs_test_now_ms() > deadline) {
            fprintf(stderr, "%s: no ended run for %s\n", job, cause);
            die("a downstream run did not come");
        }
        cs_test_sleep_ms(5);
    }
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, int64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), by_value);
    printf("%s: %zu samples, from upstream end to downstream start p50 %lld ms, p99 %lld ms, "
           "max %lld ms\n",
           what, n, (long long)v[n / 2], (long long)v[(n * 99) / 100], (long long)v[n - 1]);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 3;
    char names[WIDTH][32], *ptrs[WIDTH], cause[64];
    struct cs_testpg *pg;
    struct cs_testd *d;
    struct cs_client *c;
    if (rounds <= 0)
        die("usage: csched-bench-after [ROUNDS]");
    const char *const args[] = {"--max-running", "128", NULL};
    if (cs_testpg_start(&pg) != 0)
        die("PostgreSQL did not start");
    struct cs_testd_options opts = {.database_url = cs_testpg_url(pg), .extra_args = args};
    if (cs_testd_start(&opts, &d) != 0 || cs_client_new(cs_testd_target(d), &c) != 0)
        die("cschedd did not start");

    /* The chain: chain-0 <- chain-1 <- ... <- chain-99. */
    for (int i = 0; i < WIDTH; i++) {
        snprintf(names[i], sizeof(names[i]), "chain-%d", i);
        ptrs[i] = names[i];
        create(c, names[i], i > 0 ? &ptrs[i - 1] : NULL, i > 0 ? 1 : 0);
    }
    int64_t *links = calloc((size_t)rounds * WIDTH, sizeof(*links));
    size_t n_links = 0;
    for (long r = 0; r < rounds; r++) {
        snprintf(cause, sizeof(cause), "run:%lld", (long long)trigger(c, names[0]));
        Csched__V1__Run *runs[WIDTH];
        runs[WIDTH - 1] = run_of(c, names[WIDTH - 1], cause);
        for (int i = 0; i < WIDTH - 1; i++)
            runs[i] = run_of(c, names[i], cause);
        for (int i = 1; i < WIDTH; i++)
            links[n_links++] = runs[i]->started_unix_ms - runs[i - 1]->ended_unix_ms;
        printf("chain of %d jobs, round %ld: %lld ms from the first's start to the last's end\n",
               WIDTH, r + 1,
               (long long)(runs[WIDTH - 1]->ended_unix_ms - runs[0]->started_unix_ms));
        for (int i = 0; i < WIDTH; i++)
            csched__v1__run__free_unpacked(runs[i], NULL);
    }
    report("chain of 100 links", links, n_links);

    /* The fan-in: fan-root -> fan-0..99 -> fan-sink. */
    char *root[] = {"fan-root"};
    create(c, "fan-root", NULL, 0);
    for (int i = 0; i < WIDTH; i++) {
        snprintf(names[i], sizeof(names[i]), "fan-%d", i);
        create(c, names[i], root, 1);
    }
    create(c, "fan-sink", ptrs, WIDTH);
    int64_t *fan = calloc((size_t)rounds, sizeof(*fan));
    for (long r = 0; r < rounds; r++) {
        snprintf(cause, sizeof(cause), "run:%lld", (long long)trigger(c, "fan-root"));
        Csched__V1__Run *sink = run_of(c, "fan-sink", cause);
        int64_t last_end = 0;
        for (int i = 0; i < WIDTH; i++) {
            Csched__V1__Run *run = run_of(c, names[i], cause);
            if (run->ended_unix_ms > last_end)
                last_end = run->ended_unix_ms;
            csched__v1__run__free_unpacked(run, NULL);
        }
        fan[r] = sink->started_unix_ms - last_end;
        csched__v1__run__free_unpacked(sink, NULL);
    }
    report("fan-in of 100 -> 1", fan, (size_t)rounds);
    free(links);
    free(fan);
    cs_client_free(c);
    (void)cs_testd_stop(d);
    cs_testpg_stop(pg);
    return 0;
}
