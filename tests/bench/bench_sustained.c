/* bench_sustained: line S of csched-bench (bench.h). Runs of `true` (one
 * job) triggered at a steady rate, open loop: trigger i is due at
 * t0 + i / rate whether or not the ones before it have been answered, sent
 * by the first of S_SENDERS client threads free at that time. A run's
 * lateness is from its due time to its attempt's RUNNING event on Watch, as
 * the server stamps it (at_unix_ms): a sender that falls behind counts
 * against csched, as a client waiting on it would. The backlog is the runs
 * due by the end of the window whose attempt had not reached RUNNING by
 * then. After the window the backlog drains (bounded) so every run's
 * lateness is known. */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "testlib.h"
#include "testwatch.h"

enum { S_SENDERS = 64, DRAIN_MIN_MS = 30000 };

/* A run's attempt seen RUNNING on Watch. */
struct s_start {
    int64_t run_id;
    int64_t at_ms;
};

/* What the senders, the watcher and the main thread share. */
struct s_shared {
    const char *target;
    char job[64];
    double rate;
    unsigned n;         /* triggers due in the window */
    int64_t t0_ns;      /* CLOCK_MONOTONIC of trigger 0's due time */
    double t0_unix_ms;  /* the same instant on the wall clock */
    atomic_uint next;   /* the next trigger to send */
    int64_t *run_id;    /* per trigger, from its answer */
    int64_t *answer_ns; /* per trigger: due -> answered */
    atomic_uint errors;
    pthread_barrier_t ready;
    struct cs_stream *stream;
    struct s_start *starts; /* written by the watcher only */
    atomic_uint n_starts, n_ended, n_succeeded;
};

static int64_t due_ns(const struct s_shared *s, unsigned i)
{
    return s->t0_ns + (int64_t)((double)i * 1e9 / s->rate);
}

static void *sender_main(void *arg)
{
    struct s_shared *s = arg;
    struct cs_client *client = cs_test_client_new(s->target);
    unsigned i;

    csched__v1__stats__free_unpacked(cs_test_get_stats(client), NULL);
    pthread_barrier_wait(&s->ready);
    while ((i = atomic_fetch_add(&s->next, 1)) < s->n) {
        Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
        Csched__V1__Run *run = NULL;
        struct cs_status st = {0};
        int64_t due = due_ns(s, i);
        struct timespec at = {.tv_sec = due / 1000000000, .tv_nsec = due % 1000000000};

        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
        req.job_name = s->job;
        if (cs_scheduler_trigger_job(client, &req, &run, NULL, &st) != 0) {
            if (atomic_fetch_add(&s->errors, 1) == 0)
                fprintf(stderr, "bench: S: TriggerJob %s: %s\n", s->job, st.message);
            continue;
        }
        s->answer_ns[i] = bench_now_ns() - due;
        s->run_id[i] = run->id;
        csched__v1__run__free_unpacked(run, NULL);
    }
    cs_client_free(client);
    return NULL;
}

/* watcher_main records each run's first attempt reaching RUNNING, and
 * counts the runs that end, until the stream is cancelled. */
static void *watcher_main(void *arg)
{
    struct s_shared *s = arg;
    struct cs_test_events events = {.stream = s->stream};
    const Csched__V1__Event *ev;
    struct cs_status st = {0};

    while (cs_test_next_event(&events, &ev, &st) == 1) {
        unsigned k = atomic_load(&s->n_starts);
        if (ev->attempt == 1 && ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING && k < s->n) {
            s->starts[k] = (struct s_start){ev->run_id, ev->at_unix_ms};
            atomic_store(&s->n_starts, k + 1);
        } else if (ev->attempt == 0 && cs_test_run_state_is_terminal(ev->state)) {
            atomic_fetch_add(&s->n_ended, 1);
            if (ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED)
                atomic_fetch_add(&s->n_succeeded, 1);
        }
    }
    cs_test_events_done(&events);
    return NULL;
}

/* open_watch follows the job's events from the server's last one on. */
static struct cs_stream *open_watch(struct cs_client *client, const char *job)
{
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    Csched__V1__Stats *stats = cs_test_get_stats(client);
    struct cs_stream *stream = NULL;
    struct cs_status st = {0};

    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = stats->last_seq;
    req.job_name = (char *)job;
    csched__v1__stats__free_unpacked(stats, NULL);
    if (cs_scheduler_watch(client, &req, &stream, NULL, &st) != 0)
        cs_test_fail(__FILE__, __LINE__, "Watch %s: %s", job, st.message);
    return stream;
}

static int cmp_start(const void *a, const void *b)
{
    const struct s_start *x = a, *y = b;
    return (x->run_id > y->run_id) - (x->run_id < y->run_id);
}

/* The p-th percentile of v[0..n), sorted here; 0 when empty. */
static double pct(double *v, size_t n, unsigned p)
{
    if (n == 0)
        return 0;
    bench_sort(v, n);
    return v[p >= 100 ? n - 1 : n * p / 100];
}

/* tally turns what the threads recorded into s's figures. */
static void tally(struct s_shared *sh, struct sustained *s)
{
    unsigned n_starts = atomic_load(&sh->n_starts);
    double *late = calloc(sh->n, sizeof(double)), *answer = calloc(sh->n, sizeof(double));
    size_t n_late = 0, n_answer = 0;
    int64_t last_answer = 0;

    CS_TEST_TRUE(late != NULL && answer != NULL);
    qsort(sh->starts, n_starts, sizeof(*sh->starts), cmp_start);
    for (unsigned i = 0; i < sh->n; i++) {
        struct s_start key = {.run_id = sh->run_id[i]};
        if (sh->run_id[i] == 0)
            continue;
        answer[n_answer++] = (double)sh->answer_ns[i] / 1e6;
        int64_t answered = due_ns(sh, i) + sh->answer_ns[i];
        if (answered > last_answer)
            last_answer = answered;
        const struct s_start *st = bsearch(&key, sh->starts, n_starts, sizeof(key), cmp_start);
        if (st != NULL)
            late[n_late++] = (double)st->at_ms - (sh->t0_unix_ms + (double)i * 1e3 / sh->rate);
    }
    s->trigger_rate =
        last_answer > sh->t0_ns ? n_answer / ((double)(last_answer - sh->t0_ns) / 1e9) : 0;
    s->answer_p50_ms = pct(answer, n_answer, 50);
    s->answer_p99_ms = pct(answer, n_answer, 99);
    s->late_p50_ms = pct(late, n_late, 50);
    s->late_p99_ms = pct(late, n_late, 99);
    s->late_max_ms = pct(late, n_late, 100);
    s->started = (unsigned)n_late;
    s->succeeded = atomic_load(&sh->n_succeeded);
    s->errors = atomic_load(&sh->errors);
    free(late);
    free(answer);
}

/* The rule of "keeps up", as README.md states it: every trigger answered,
 * at 0.95x the rate or more, and no more than one second of triggers
 * waiting at the window's end. Falling behind by a few percent leaves
 * seconds of them after a minute; a short stall under load leaves less. */
static bool keeps_up(const struct sustained *s)
{
    return s->errors == 0 && s->trigger_rate >= 0.95 * s->rate && s->backlog <= s->rate;
}

/* prepare makes the job and the tables of n triggers. */
static void prepare(struct s_shared *sh)
{
    static const char *const true_cmd[] = {"true", NULL};
    char prefix[32];

    snprintf(prefix, sizeof(prefix), "bench-s%u", (unsigned)sh->rate);
    snprintf(sh->job, sizeof(sh->job), "%s-0000", prefix);
    struct cs_test_burst_options o = {
        .target = sh->target, .job_prefix = prefix, .command = true_cmd, .n_jobs = 1};
    cs_test_burst_create_jobs(&o);
    sh->run_id = calloc(sh->n, sizeof(int64_t));
    sh->answer_ns = calloc(sh->n, sizeof(int64_t));
    sh->starts = calloc(sh->n, sizeof(*sh->starts));
    CS_TEST_TRUE(sh->run_id != NULL && sh->answer_ns != NULL && sh->starts != NULL);
}

/* trigger runs the window and the drain after it: the senders and the
 * watcher, the backlog at the window's end, and the CPU of cschedd (its
 * own, not its minders') and of PostgreSQL from the first trigger to the
 * drain's end. */
static void trigger(struct s_shared *sh, pid_t server, pid_t db, struct sustained *s)
{
    pthread_t senders[S_SENDERS], watcher;
    double own0, own1, db0, db1;

    struct cs_client *client = cs_test_client_new(sh->target);
    sh->stream = open_watch(client, sh->job);
    pthread_create(&watcher, NULL, watcher_main, sh);
    pthread_barrier_init(&sh->ready, NULL, S_SENDERS + 1);
    for (unsigned i = 0; i < S_SENDERS; i++)
        pthread_create(&senders[i], NULL, sender_main, sh);
    /* Trigger 0 is due a little after every sender is connected. */
    sh->t0_ns = bench_now_ns() + 200 * 1000000LL;
    sh->t0_unix_ms = bench_unix_ms() + 200;
    pthread_barrier_wait(&sh->ready);
    CS_TEST_OK(cs_test_proc_cpu_ms(server, false, &own0));
    CS_TEST_OK(cs_test_tree_cpu_ms(db, &db0));
    fprintf(stderr, "bench: S at %.0f runs/s for %u s (%u runs)\n", sh->rate, s->seconds, sh->n);

    int64_t end = sh->t0_ns + (int64_t)s->seconds * 1000000000;
    cs_test_sleep_ms((end - bench_now_ns()) / 1000000);
    s->backlog = sh->n - atomic_load(&sh->n_starts);
    s->start_rate = (double)(sh->n - s->backlog) / s->seconds;
    /* The backlog drains, within twice the window (and at least 30 s). */
    int64_t deadline = cs_test_now_ms() + 2 * (int64_t)s->seconds * 1000 + DRAIN_MIN_MS;
    for (unsigned i = 0; i < S_SENDERS; i++)
        pthread_join(senders[i], NULL);
    while (atomic_load(&sh->n_ended) + atomic_load(&sh->errors) < sh->n &&
           cs_test_now_ms() < deadline)
        cs_test_sleep_ms(20);
    CS_TEST_OK(cs_test_proc_cpu_ms(server, false, &own1));
    CS_TEST_OK(cs_test_tree_cpu_ms(db, &db1));
    s->own_cpu_us_per_run = (own1 - own0) * 1e3 / sh->n;
    s->db_cpu_us_per_run = (db1 - db0) * 1e3 / sh->n;
    cs_stream_cancel(sh->stream);
    pthread_join(watcher, NULL);
    cs_stream_free(sh->stream);
    cs_client_free(client);
    pthread_barrier_destroy(&sh->ready);
}

void bench_run_sustained(struct cs_testpg *pg, double rate, unsigned seconds, struct sustained *s)
{
    struct cs_testd_options dopts = {.database_url = cs_testpg_url(pg), .max_running = S_LIMIT};
    struct s_shared sh = {.rate = rate, .n = (unsigned)(rate * seconds + 0.5)};
    struct cs_testd *d = NULL;

    memset(s, 0, sizeof(*s));
    s->rate = rate;
    s->seconds = seconds;
    s->due = sh.n;
    CS_TEST_OK(cs_testd_start(&dopts, &d));
    sh.target = cs_testd_target(d);
    prepare(&sh);
    trigger(&sh, cs_testd_pid(d), cs_testpg_pid(pg), s);
    tally(&sh, s);
    s->keeps_up = keeps_up(s);
    s->ok = s->errors == 0 && s->started == sh.n && s->succeeded == sh.n;
    fprintf(stderr,
            "bench: S %.0f/s: %u due, %u started, %u succeeded, %u errors, backlog %u at the "
            "window's end\n",
            rate, sh.n, s->started, s->succeeded, s->errors, s->backlog);
    free(sh.run_id);
    free(sh.answer_ns);
    free(sh.starts);
    int status = cs_testd_stop(d);
    if (status != 0)
        fprintf(stderr, "bench: cschedd exited with status %d\n", status);
}
