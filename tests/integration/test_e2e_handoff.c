/* A slot handed on when the minder ends, against a real server on its
 * embedded database: the runs of a job at max_running 1 follow each other
 * without waiting for the end of the one before to commit. (With a database
 * other replicas share, a start waits for its own commit, so that a replica
 * taking the work over knows of every command that may run: there a frozen
 * database holds the starts back, docs/operations.md, "Replicas".) The database is frozen (SIGSTOP)
 * once the runs are queued and committed, so no end can commit until it is thawed, and all the
 * commands must still run, one after the other, meanwhile. The limit holds at every instant: the
 * commands themselves check that none other is alive (an exclusive mkdir), the live minders are
 * counted from /proc all along, and GetStats never counts more than one. After the thaw every run
 * ends SUCCEEDED, each end written after its start. */
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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
    struct cs_stream *stream = cs_e2e_watch_job(e, job, after_seq);
    struct cs_test_events events = {.stream = stream};
    struct cs_status st = {0};
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

/* The frozen postmaster, until thawed; the teardown thaws it after a
 * failure, so the fixture can stop it. */
static pid_t frozen;

static void thaw(void)
{
    if (frozen > 0)
        assert_int_equal(cs_test_signal_tree(frozen, SIGCONT), 0);
    frozen = 0;
}

static int thaw_teardown(void **state)
{
    (void)state;
    thaw();
    return 0;
}

/* How long the commands have, all together, to run while the database is
 * frozen: generous, as on a loaded machine each takes some 10-50 ms. */
enum { FROZEN_RUNS_MS = 30000 };

static void test_e2e_handoff_serial_runs(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64], shell[6 * PATH_MAX], overlap[PATH_MAX + 16], go[PATH_MAX + 16],
        done[PATH_MAX + 16];
    int64_t ids[N_RUNS], starting[N_RUNS] = {0}, ended[N_RUNS] = {0};

    cs_e2e_tmpdir(dir);
    (void)snprintf(overlap, sizeof(overlap), "%s/overlap", dir);
    (void)snprintf(go, sizeof(go), "%s/go", dir);
    (void)snprintf(done, sizeof(done), "%s/done", dir);
    /* The first run waits for go, so that all the others queue behind it
     * and each run's end finds the next waiting. Each adds a line to done. */
    (void)snprintf(shell, sizeof(shell),
                   "mkdir %s/alive || touch %s; while [ ! -e %s ]; do sleep 0.01; done; "
                   "rmdir %s/alive; echo $CSCHED_RUN_ID >> %s",
                   dir, overlap, go, dir, done);
    cs_e2e_name(name, sizeof(name), "handoff");
    csched__v1__job__free_unpacked(cs_e2e_create_serial_job(e, name, shell), NULL);
    int64_t after_seq = cs_e2e_last_seq(e);

    struct sampler sampler = {.server = cs_testd_pid(e->d)};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, sample_main, &sampler), 0);
    for (size_t i = 0; i < N_RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    /* Every run is committed (each trigger answered after its commit):
     * from here on nothing more commits until the thaw. */
    frozen = cs_e2e_embedded_postmaster(e);
    assert_int_equal(cs_test_signal_tree(frozen, SIGSTOP), 0);
    FILE *f = fopen(go, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
    int64_t t0 = cs_test_now_ms();
    long ran = 0;
    while ((ran = cs_e2e_count_lines(done)) < N_RUNS && cs_test_now_ms() - t0 < FROZEN_RUNS_MS) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        (void)nanosleep(&ts, NULL);
    }
    if (ran < N_RUNS)
        fail_msg("only %ld of %d commands ran while the database was frozen: their slots "
                 "waited for the end before them to commit",
                 ran, N_RUNS);
    printf("handoff: %d runs at max_running 1 ran in %lld ms with the database frozen\n", N_RUNS,
           (long long)(cs_test_now_ms() - t0));
    thaw();
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
    for (size_t i = 0; i < N_RUNS; i++)
        assert_true(starting[i] < ended[i]);
    cs_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_e2e_handoff_serial_runs, thaw_teardown),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup_embedded, cs_e2e_teardown);
}
