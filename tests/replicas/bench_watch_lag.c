/* csched-bench-watchlag [RUNS]: the lag of a Watch across replicas
 * (tests/bench/README.md, "Replicas"). Two replicas on one PostgreSQL; a
 * Watch opened on the active replica and one through the standby, which
 * forwards it; RUNS runs of `true` (default 500) triggered in bursts of 10.
 * For every event, the wall clock when each stream delivered it, against
 * the event's own time (at_unix_ms: the change, before its commit) and
 * against each other: p50, p99 and max in ms. */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replicas_fixture.h"
#include "testlib.h"
#include "testwatch.h"

#define MAX_EVENTS 20000
#define WAIT_MS 120000

struct stream_reader {
    const char *target;
    atomic_llong until;             /* 0 until the last seq is known */
    double at_ms[MAX_EVENTS + 1];   /* by seq: when this stream delivered it */
    double made_ms[MAX_EVENTS + 1]; /* by seq: the event's at_unix_ms */
    int64_t last_seq;
    pthread_t thread;
};

static double unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *read_main(void *arg)
{
    struct stream_reader *s = arg;
    struct cs_client *c = NULL;
    int64_t deadline = cs_test_now_ms() + WAIT_MS;

    if (cs_client_new(s->target, &c) != 0)
        return NULL;
    while (cs_test_now_ms() < deadline) {
        long long until = atomic_load(&s->until);
        if (until > 0 && s->last_seq >= until)
            break;
        Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
        req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
        req.after_seq = s->last_seq;
        struct cs_call_opts opts = {.timeout_ms = 2000};
        struct cs_status st = {0};
        struct cs_stream *stream = NULL;
        if (cs_scheduler_watch(c, &req, &stream, &opts, &st) != 0) {
            cs_test_sleep_ms(20);
            continue;
        }
        struct cs_test_events events = {.stream = stream};
        const Csched__V1__Event *ev;
        while (cs_test_next_event(&events, &ev, &st) == 1 && ev->seq <= MAX_EVENTS) {
            s->at_ms[ev->seq] = unix_ms();
            s->made_ms[ev->seq] = (double)ev->at_unix_ms;
            s->last_seq = ev->seq;
        }
        cs_test_events_done(&events);
        cs_stream_free(stream);
    }
    cs_client_free(c);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *v, size_t n)
{
    qsort(v, n, sizeof(v[0]), cmp);
    printf("%-44s p50 %6.2f ms, p99 %6.2f ms, max %6.2f ms (%zu events)\n", what, v[n / 2],
           v[n * 99 / 100], v[n - 1], n);
}

int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 500;
    static struct stream_reader active, standby;
    static double d_active[MAX_EVENTS], d_standby[MAX_EVENTS], across[MAX_EVENTS];
    struct cs_replicas_options o = {.n = 2, .heartbeat = "200ms", .wait = CS_REPLICAS_WAIT_UP};
    struct cs_replicas *rs = NULL;

    if (runs == 0 || runs * 8 > MAX_EVENTS || cs_replicas_start(&o, &rs) != 0)
        return 1;
    int a = cs_replicas_wait_active(rs, -1, WAIT_MS, NULL);
    if (a < 0)
        return 1;
    struct cs_e2e *e = cs_replicas_e2e(rs, (unsigned)a);
    const char *job = "watchlag";
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, job, "true"), NULL);
    active.target = cs_testd_target(e->d);
    standby.target = cs_testd_target(cs_replicas_e2e(rs, 1 - (unsigned)a)->d);
    pthread_create(&active.thread, NULL, read_main, &active);
    pthread_create(&standby.thread, NULL, read_main, &standby);
    for (unsigned k = 0; k < runs; k++) {
        cs_e2e_trigger(e, job);
        if (k % 10 == 9)
            cs_test_sleep_ms(20);
    }
    int64_t deadline = cs_test_now_ms() + WAIT_MS;
    Csched__V1__Stats *stats = NULL;
    struct cs_status st = {0};
    long long last = 0;
    /* Every run ended: the last seq stays put for a second. */
    while (cs_test_now_ms() < deadline) {
        if (cs_scheduler_get_stats(e->client, NULL, &stats, NULL, &st) != 0)
            return 1;
        bool quiet =
            stats->last_seq == last && stats->running + stats->queued + stats->starting == 0;
        last = stats->last_seq;
        csched__v1__stats__free_unpacked(stats, NULL);
        if (quiet)
            break;
        cs_test_sleep_ms(1000);
    }
    atomic_store(&active.until, last);
    atomic_store(&standby.until, last);
    pthread_join(active.thread, NULL);
    pthread_join(standby.thread, NULL);
    size_t n = 0;
    for (long long seq = 1; seq <= last && seq <= MAX_EVENTS; seq++) {
        if (active.at_ms[seq] == 0 || standby.at_ms[seq] == 0)
            continue;
        d_active[n] = active.at_ms[seq] - active.made_ms[seq];
        d_standby[n] = standby.at_ms[seq] - standby.made_ms[seq];
        across[n++] = standby.at_ms[seq] - active.at_ms[seq];
    }
    printf("%u runs of true, %lld events; both streams saw %zu\n", runs, last, n);
    if (n == 0)
        return 1;
    report("the change to its delivery, on the active:", d_active, n);
    report("the change to its delivery, via the standby:", d_standby, n);
    report("the standby's delivery after the active's:", across, n);
    return cs_replicas_stop(rs) != 0 || n != (size_t)last;
}
