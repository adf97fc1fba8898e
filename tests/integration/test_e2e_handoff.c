/* A slot handed on when the minder ends, against a real server: the runs
 * of a job at max_running 1 follow each other without waiting for the one
 * before to have its note read and its end committed (most runs' STARTING
 * event is written before the end of the run before it), while the limit
 * holds at every instant: the commands themselves check that none other is
 * alive (an exclusive mkdir), the live minders are counted from /proc all
 * along, and GetStats never counts more than one. */
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

enum { N_RUNS = 30 };

/* The live minders of the server, counted from /proc until told to stop. */
struct sampler {
    pid_t server;
    atomic_bool stop;
    int peak;
    unsigned samples;
};

static void *sample_main(void *arg)
{
    struct sampler *s = arg;
    struct cs_test_minder_counter *counter;
    if (cs_test_minder_counter_new(s->server, &counter) != 0)
        return NULL;
    while (!atomic_load(&s->stop)) {
        int n = cs_test_minder_counter_count(counter);
        if (n > s->peak)
            s->peak = n;
        s->samples++;
        struct timespec ts = {0, 200 * 1000};
        (void)nanosleep(&ts, NULL);
    }
    cs_test_minder_counter_free(counter);
    return NULL;
}

/* The seq of the run's own STARTING event and of its terminal one, from
 * Watch replayed from after_seq until the last run's end. */
static void read_seqs(struct cs_e2e *e, int64_t after_seq, const char *job, const int64_t *ids,
                      int64_t *starting, int64_t *ended)
{
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_stream *stream = NULL;
    struct cs_status st = {0};
    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = after_seq;
    req.job_name = (char *)job;
    if (cs_scheduler_watch(e->client, &req, &stream, &opts, &st) != 0)
        fail_msg("Watch: %s \"%s\"", cs_status_code_name(st.code), st.message);
    struct cs_test_events events = {.stream = stream};
    const Csched__V1__Event *ev;
    while (ended[N_RUNS - 1] == 0 && cs_test_next_event(&events, &ev, &st) == 1) {
        if (ev->attempt != 0)
            continue;
        for (size_t i = 0; i < N_RUNS; i++) {
            if (ev->run_id != ids[i])
                continue;
            if (ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_STARTING)
                starting[i] = ev->seq;
            else if (cs_test_run_state_is_terminal(ev->state))
                ended[i] = ev->seq;
        }
    }
    cs_test_events_done(&events);
    cs_stream_free(stream);
    if (ended[N_RUNS - 1] == 0)
        fail_msg("Watch ended before the last run's end");
}

static void test_e2e_handoff_serial_runs(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64], shell[4 * PATH_MAX + 128], overlap[PATH_MAX + 16],
        go[PATH_MAX + 16];
    int64_t ids[N_RUNS], starting[N_RUNS] = {0}, ended[N_RUNS] = {0};

    cs_e2e_tmpdir(dir);
    (void)snprintf(overlap, sizeof(overlap), "%s/overlap", dir);
    (void)snprintf(go, sizeof(go), "%s/go", dir);
    /* The first run waits for go, so that all the others queue behind it
     * and each run's end finds the next waiting. */
    (void)snprintf(shell, sizeof(shell),
                   "mkdir %s/alive || touch %s; while [ ! -e %s ]; do sleep 0.01; done; "
                   "rmdir %s/alive",
                   dir, overlap, go, dir);
    cs_e2e_name(name, sizeof(name), "handoff");
    csched__v1__job__free_unpacked(cs_e2e_create_serial_job(e, name, shell), NULL);
    int64_t after_seq = cs_e2e_last_seq(e);

    struct sampler sampler = {.server = cs_testd_pid(e->d)};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, sample_main, &sampler), 0);
    for (size_t i = 0; i < N_RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    FILE *f = fopen(go, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
    unsigned stats_peak = 0;
    for (size_t i = 0; i < N_RUNS; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);
        assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        csched__v1__run__free_unpacked(run, NULL);
        Csched__V1__Stats *stats = cs_e2e_get_stats(e);
        if (stats->running + stats->starting > stats_peak)
            stats_peak = stats->running + stats->starting;
        csched__v1__stats__free_unpacked(stats, NULL);
    }
    atomic_store(&sampler.stop, true);
    assert_int_equal(pthread_join(thread, NULL), 0);

    if (access(overlap, F_OK) == 0)
        fail_msg("two commands of a job at max_running 1 were alive together");
    if (sampler.peak > 1 || stats_peak > 1)
        fail_msg("%d minders alive together in /proc (%u samples), %u on GetStats; the limit is 1",
                 sampler.peak, sampler.samples, stats_peak);
    assert_true(sampler.samples > 100);
    read_seqs(e, after_seq, name, ids, starting, ended);
    /* The note is read on the pool: when its answer comes in the same loop
     * turn as the minder's end (another wake-up of the loop was pending),
     * the end is written first. A slot that waited for the note would make
     * that so for every run. */
    size_t handed_on = 0;
    for (size_t i = 0; i + 1 < N_RUNS; i++) {
        assert_true(starting[i] < ended[i]);
        if (starting[i + 1] < ended[i])
            handed_on++;
    }
    if (handed_on < (N_RUNS - 1) / 2)
        fail_msg("only %zu of %d runs started before the end of the run before them was "
                 "written: their slots waited for the note",
                 handed_on, N_RUNS - 1);
    cs_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_handoff_serial_runs),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
