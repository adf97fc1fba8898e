/* Three replicas and a Watch through each, from seq 0, during a burst of
 * runs triggered through every replica, with the active replica killed
 * (kill -9) in the middle of it. A Watch that ends (its replica killed, or
 * its own short deadline) is opened again after the last seq it saw, on
 * its replica or, if that one is dead, the next. Once every run has ended,
 * each of the three has seen exactly the events table: the same seqs, in
 * order, none missing, none twice. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "replicas_runs.h"
#include "testwatch.h"

#define N_REPLICAS 3
#define RUNS_BEFORE 30
#define RUNS_AFTER 30
#define MAX_EVENTS 8192
/* Each Watch ends this often, so that resuming is tested all along. */
#define STREAM_MS 1500
#define WATCHERS_MS 60000

struct watcher {
    struct cs_replicas *rs;
    unsigned on;             /* the replica it watches through */
    const atomic_bool *dead; /* of N_REPLICAS: killed by the test */
    atomic_llong *until;     /* 0 until the last seq is known */
    int64_t seqs[MAX_EVENTS];
    size_t n;
    unsigned reopened;
    char error[256];
    pthread_t thread;
};

/* Reads one Watch through w->on from after the last seq seen, until it
 * ends: 0, or -EOVERFLOW. */
static int read_stream(struct watcher *w, struct cs_client *client)
{
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = w->n > 0 ? w->seqs[w->n - 1] : 0;
    struct cs_call_opts opts = {.timeout_ms = STREAM_MS};
    struct cs_status st = {0};
    struct cs_stream *stream = NULL;
    if (cs_scheduler_watch(client, &req, &stream, &opts, &st) != 0)
        return 0;
    struct cs_test_events events = {.stream = stream};
    const Csched__V1__Event *ev;
    while (cs_test_next_event(&events, &ev, &st) == 1) {
        if (w->n == MAX_EVENTS) {
            snprintf(w->error, sizeof(w->error), "more than %d events", MAX_EVENTS);
            break;
        }
        w->seqs[w->n++] = ev->seq;
    }
    cs_test_events_done(&events);
    cs_stream_free(stream);
    return w->error[0] != '\0' ? -EOVERFLOW : 0;
}

static void *watch_main(void *arg)
{
    struct watcher *w = arg;
    struct cs_client *client = NULL;
    int64_t deadline = cs_test_now_ms() + WATCHERS_MS;

    while (cs_test_now_ms() < deadline) {
        long long until = atomic_load(w->until);
        if (until > 0 && w->n > 0 && w->seqs[w->n - 1] >= until)
            break;
        if (atomic_load(&w->dead[w->on])) {
            cs_client_free(client);
            client = NULL;
            w->on = (w->on + 1) % N_REPLICAS;
            continue;
        }
        if (client == NULL &&
            cs_client_new(cs_testd_target(cs_replicas_e2e(w->rs, w->on)->d), &client) != 0)
            break;
        if (read_stream(w, client) != 0)
            break;
        w->reopened++;
        cs_test_sleep_ms(20);
    }
    cs_client_free(client);
    return NULL;
}

/* The events table's seqs, in order, into seqs (at most cap): how many. */
static size_t table_seqs(struct cs_replicas *rs, int64_t *seqs, size_t cap)
{
    static char text[MAX_EVENTS * 8];
    size_t n = 0;

    assert_int_equal(cs_replicas_sql(rs,
                                     "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM events",
                                     text, sizeof(text), false),
                     0);
    for (char *p = text; *p != '\0' && n < cap; p += *p == ',') {
        char *end;
        seqs[n++] = strtoll(p, &end, 10);
        p = end;
    }
    return n;
}

static int setup(void **state)
{
    return cs_rruns_setup(state, N_REPLICAS, NULL);
}

static void trigger_round_robin(struct cs_rruns_suite *f, const atomic_bool *dead, const char *job,
                                int64_t *ids, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        unsigned i = (unsigned)(k % N_REPLICAS);
        while (atomic_load(&dead[i]))
            i = (i + 1) % N_REPLICAS;
        cs_rruns_trigger(f->rs, i, job, 1, &ids[k]);
    }
}

static void test_replicas_watch_one_stream(void **state)
{
    struct cs_rruns_suite *f = *state;
    static struct watcher watchers[N_REPLICAS];
    atomic_bool dead[N_REPLICAS] = {false, false, false};
    atomic_llong until = 0;
    int64_t ids[RUNS_BEFORE + RUNS_AFTER];
    char job[64];
    unsigned a = cs_rruns_active(f, -1, NULL);

    for (unsigned i = 0; i < N_REPLICAS; i++)
        if (i != a)
            cs_rruns_wait_forwarding(f->rs, i);
    for (unsigned i = 0; i < N_REPLICAS; i++) {
        watchers[i] = (struct watcher){.rs = f->rs, .on = i, .dead = dead, .until = &until};
        assert_int_equal(pthread_create(&watchers[i].thread, NULL, watch_main, &watchers[i]), 0);
    }
    cs_rruns_job(f->rs, a, &f->oracle, "watch", "sleep 0.2", 4, CS_RRUNS_MAX_ATTEMPTS, job,
                 sizeof(job));
    trigger_round_robin(f, dead, job, ids, RUNS_BEFORE);
    cs_rruns_wait_started(&f->oracle, ids[RUNS_BEFORE / 2], CS_E2E_RUN_TIMEOUT_MS);
    atomic_store(&dead[a], true);
    assert_int_equal(cs_replicas_kill9(f->rs, a), 0);
    unsigned b = cs_rruns_active(f, (int)a, NULL);
    for (unsigned i = 0; i < N_REPLICAS; i++)
        if (i != a && i != b)
            cs_rruns_wait_forwarding(f->rs, i);
    trigger_round_robin(f, dead, job, ids + RUNS_BEFORE, RUNS_AFTER);
    for (size_t k = 0; k < RUNS_BEFORE + RUNS_AFTER; k++)
        csched__v1__run__free_unpacked(cs_rruns_wait_end(f->rs, b, ids[k], CS_RRUNS_END_MS), NULL);

    static int64_t table[MAX_EVENTS];
    size_t n = table_seqs(f->rs, table, MAX_EVENTS);
    assert_true(n > 0);
    atomic_store(&until, (long long)table[n - 1]);
    for (unsigned i = 0; i < N_REPLICAS; i++) {
        struct watcher *w = &watchers[i];
        assert_int_equal(pthread_join(w->thread, NULL), 0);
        fprintf(stderr, "watch: through %s (then %s): %zu events, opened again %u times\n",
                f->rs->r[i].id, f->rs->r[w->on].id, w->n, w->reopened);
        if (w->error[0] != '\0')
            fail_msg("the Watch through %s: %s", f->rs->r[i].id, w->error);
        if (w->n != n || memcmp(w->seqs, table, n * sizeof(table[0])) != 0)
            fail_msg("the Watch through %s saw %zu events, the table has %zu (last %lld, %lld)",
                     f->rs->r[i].id, w->n, n, w->n > 0 ? (long long)w->seqs[w->n - 1] : -1LL,
                     (long long)table[n - 1]);
    }
    for (size_t k = 0; k < n; k++)
        assert_int_equal(table[k], (int64_t)k + 1);
    cs_rruns_assert_no_excess(&f->oracle);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_watch_one_stream),
    };

    return cmocka_run_group_tests(tests, setup, cs_rruns_teardown);
}
