/* The burst workload behind the concurrency tests and the benchmark: many
 * runs triggered together from several client threads, every state change
 * followed on Watch (counting the attempts that hold a slot on every event),
 * the server's GetStats polled, and the real minder processes sampled from
 * /proc every 2 ms. */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <errno.h>
#include <grpc/status.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "testlib_int.h"
#include "testwatch.h"

enum {
    RUN_SLOTS = 8192, /* open-addressing table of runs; power of two */
    MAX_ATTEMPTS = 8,
    SAMPLE_PERIOD_MS = 2,
    SAMPLER_NICE = -10,
    STATS_PERIOD_MS = 20,
    MAX_TRIGGER_THREADS = 64,
};

struct run_entry {
    int64_t run_id; /* 0 = free slot */
    bool active;    /* the run is STARTING or RUNNING */
    bool queued;    /* the run is QUEUED */
    bool terminal;
    uint8_t holding; /* bit per attempt: STARTING or RUNNING */
    uint8_t running; /* bit per attempt: RUNNING */
};

/* What the threads share. */
struct burst {
    const struct cs_test_burst_options *opts;
    struct cs_test_burst_result *res;
    pthread_barrier_t go;
    atomic_bool stop;
    atomic_uint next_run; /* index of the next run to trigger */
    atomic_uint trigger_errors;
    atomic_int_fast64_t last_trigger_ns;
    pthread_mutex_t lock; /* guards the first_* messages in res */
    struct run_entry *runs;
    unsigned holding, running, active_runs, queued_runs;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool holds_slot(Csched__V1__RunState s)
{
    return s == CSCHED__V1__RUN_STATE__RUN_STATE_STARTING ||
           s == CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
}

static struct run_entry *run_find(struct burst *b, int64_t run_id)
{
    size_t i = (size_t)run_id & (RUN_SLOTS - 1);

    for (size_t probes = 0; probes < RUN_SLOTS; probes++, i = (i + 1) & (RUN_SLOTS - 1)) {
        if (b->runs[i].run_id == run_id)
            return &b->runs[i];
        if (b->runs[i].run_id == 0) {
            b->runs[i].run_id = run_id;
            b->res->runs_seen++;
            return &b->runs[i];
        }
    }
    cs_test_fail(__FILE__, __LINE__, "more than %d runs in one burst", RUN_SLOTS);
}

static void note_first(struct burst *b, char *dst, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void note_first(struct burst *b, char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&b->lock);
    if (dst[0] == '\0') {
        va_start(ap, fmt);
        vsnprintf(dst, cap, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&b->lock);
}

static struct cs_client *connect_or_fail(const char *target)
{
    struct cs_client *client = cs_test_client_new(target);

    /* One call now, so the channel is connected before the burst starts. */
    csched__v1__stats__free_unpacked(cs_test_get_stats(client), NULL);
    return client;
}

void cs_test_burst_create_jobs(const struct cs_test_burst_options *o)
{
    struct cs_client *client = connect_or_fail(o->target);
    size_t argc = 0;

    while (o->command[argc] != NULL)
        argc++;
    for (unsigned i = 0; i < o->n_jobs; i++) {
        Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
        Csched__V1__Job job = CSCHED__V1__JOB__INIT;
        Csched__V1__Job *resp = NULL;
        struct cs_status st = {0};
        char name[128];

        snprintf(name, sizeof(name), "%s-%04u", o->job_prefix, i);
        job.name = name;
        job.n_command = argc;
        job.command = (char **)o->command;
        req.job = &job;
        int rc = cs_scheduler_create_job(client, &req, &resp, NULL, &st);
        if (rc == 0)
            csched__v1__job__free_unpacked(resp, NULL);
        else if (rc != GRPC_STATUS_ALREADY_EXISTS)
            cs_test_fail(__FILE__, __LINE__, "CreateJob %s: %s: %s", name, cs_status_code_name(rc),
                         st.message);
    }
    cs_client_free(client);
}

static void *trigger_main(void *arg)
{
    struct burst *b = arg;
    const struct cs_test_burst_options *o = b->opts;
    struct cs_client *client = connect_or_fail(o->target);
    unsigned step = o->array_size > 0 ? o->array_size : 1, i;

    pthread_barrier_wait(&b->go);
    while ((i = atomic_fetch_add(&b->next_run, step)) < o->n_runs) {
        Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
        Csched__V1__Run *run = NULL;
        struct cs_status st = {0};
        char name[128];

        snprintf(name, sizeof(name), "%s-%04u", o->job_prefix, i % o->n_jobs);
        req.job_name = name;
        req.array_size = o->array_size;
        int rc = cs_scheduler_trigger_job(client, &req, &run, NULL, &st);
        if (rc == 0) {
            csched__v1__run__free_unpacked(run, NULL);
            continue;
        }
        atomic_fetch_add(&b->trigger_errors, step);
        note_first(b, b->res->first_trigger_error, sizeof(b->res->first_trigger_error),
                   "TriggerJob %s: %s: %s", name, cs_status_code_name(rc), st.message);
    }
    int64_t t = now_ns();
    int64_t prev = atomic_load(&b->last_trigger_ns);
    while (t > prev && !atomic_compare_exchange_weak(&b->last_trigger_ns, &prev, t)) {
    }
    cs_client_free(client);
    return NULL;
}

/* sampler_main counts the live minders every 2 ms until told to stop. It
 * asks for a better nice value (root only; best effort): the hundreds of
 * minders starting on two cores would otherwise keep it waiting to run for
 * tens of milliseconds, and an attempt could live and end unseen. */
static void *sampler_main(void *arg)
{
    struct burst *b = arg;
    struct cs_test_burst_result *r = b->res;
    struct cs_test_minder_counter *counter;
    int64_t last = now_ns();

    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), SAMPLER_NICE);
    if (cs_test_minder_counter_new(b->opts->server_pid, &counter) != 0)
        cs_test_fail(__FILE__, __LINE__, "out of memory");
    while (!atomic_load(&b->stop)) {
        int n = cs_test_minder_counter_count(counter);
        int64_t t = now_ns();
        if (n > (int)r->proc_peak)
            r->proc_peak = (unsigned)n;
        if ((t - last) / 1000 > r->proc_max_gap_us)
            r->proc_max_gap_us = (t - last) / 1000;
        last = t;
        r->proc_samples++;
        cs_test_sleep_ms(SAMPLE_PERIOD_MS);
    }
    cs_test_minder_counter_free(counter);
    struct timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    r->proc_sampler_cpu_ms = (double)cpu.tv_sec * 1e3 + (double)cpu.tv_nsec / 1e6;
    return NULL;
}

/* stats_main polls GetStats: the server's own count of slots in use. */
static void *stats_main(void *arg)
{
    struct burst *b = arg;
    struct cs_test_burst_result *r = b->res;
    struct cs_client *client = connect_or_fail(b->opts->target);

    while (!atomic_load(&b->stop)) {
        Csched__V1__GetStatsRequest req = CSCHED__V1__GET_STATS_REQUEST__INIT;
        Csched__V1__Stats *s = NULL;
        struct cs_status st = {0};
        if (cs_scheduler_get_stats(client, &req, &s, NULL, &st) == 0) {
            unsigned used = s->running + s->starting;
            if (used > r->stats_peak)
                r->stats_peak = used;
            if (b->opts->limit > 0 && used > b->opts->limit)
                r->stats_violations++;
            r->stats_polls++;
            csched__v1__stats__free_unpacked(s, NULL);
        }
        cs_test_sleep_ms(STATS_PERIOD_MS);
    }
    cs_client_free(client);
    return NULL;
}

/* check_limit runs after every event: the attempts in STARTING may not
 * exceed the limit. One in RUNNING may have handed its slot on already: the
 * server gives it back when the minder ends, before the note is read and the
 * terminal event written, so the counts from Watch are peaks to report, and
 * GetStats and /proc are the limit's exact checks. */
static void check_limit(struct burst *b, const Csched__V1__Event *ev)
{
    struct cs_test_burst_result *r = b->res;
    unsigned limit = b->opts->limit;

    if (b->holding > r->holding_peak)
        r->holding_peak = b->holding;
    if (b->running > r->running_peak)
        r->running_peak = b->running;
    if (b->active_runs > r->active_runs_peak)
        r->active_runs_peak = b->active_runs;
    if (limit == 0 || b->holding - b->running <= limit)
        return;
    r->limit_violations++;
    note_first(b, r->first_violation, sizeof(r->first_violation),
               "after event seq %lld (run %lld attempt %u state %d): %u attempts hold a slot, "
               "%u runs active, limit %u",
               (long long)ev->seq, (long long)ev->run_id, ev->attempt, (int)ev->state, b->holding,
               b->active_runs, limit);
}

static void on_attempt_event(struct burst *b, struct run_entry *run, const Csched__V1__Event *ev)
{
    if (ev->attempt > MAX_ATTEMPTS)
        cs_test_fail(__FILE__, __LINE__, "run %lld has attempt %u; the harness tracks %d",
                     (long long)ev->run_id, ev->attempt, MAX_ATTEMPTS);
    uint8_t bit = (uint8_t)(1u << (ev->attempt - 1));

    if (holds_slot(ev->state) && !(run->holding & bit)) {
        run->holding |= bit;
        b->holding++;
    }
    if (ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING && !(run->running & bit)) {
        run->running |= bit;
        b->running++;
    }
    if (cs_test_run_state_is_terminal(ev->state)) {
        if (run->holding & bit) {
            run->holding &= (uint8_t)~bit;
            b->holding--;
        }
        if (run->running & bit) {
            run->running &= (uint8_t)~bit;
            b->running--;
        }
    }
}

/* Sets *was to now, counting the change in *count. */
static void recount(bool now, bool *was, unsigned *count)
{
    if (now == *was)
        return;
    *was = now;
    if (now)
        (*count)++;
    else
        (*count)--;
}

static void on_run_event(struct burst *b, struct run_entry *run, const Csched__V1__Event *ev)
{
    struct cs_test_burst_result *r = b->res;
    bool active = holds_slot(ev->state);

    bool queued = ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED;

    recount(active, &run->active, &b->active_runs);
    recount(queued, &run->queued, &b->queued_runs);
    if (b->active_runs + b->queued_runs > r->demand_peak)
        r->demand_peak = b->active_runs + b->queued_runs;
    if (!cs_test_run_state_is_terminal(ev->state) || run->terminal)
        return;
    run->terminal = true;
    r->runs_terminal++;
    if (ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED) {
        r->runs_succeeded++;
        return;
    }
    note_first(b, r->first_failure, sizeof(r->first_failure),
               "run %lld of %s ended in state %d (exit %d, signal %d): %s", (long long)ev->run_id,
               ev->job_name, (int)ev->state,
               ev->outcome_case == CSCHED__V1__EVENT__OUTCOME_EXIT_CODE ? ev->exit_code : -1,
               ev->outcome_case == CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL ? ev->term_signal : 0,
               ev->message);
}

/* on_event applies one Watch event of any job; only the burst's jobs count. */
static void on_event(struct burst *b, const Csched__V1__Event *ev, int64_t *last_seq)
{
    struct cs_test_burst_result *r = b->res;
    size_t prefix_len = strlen(b->opts->job_prefix);

    r->events++;
    if (ev->seq <= *last_seq)
        r->seq_errors++;
    *last_seq = ev->seq;
    if (strncmp(ev->job_name, b->opts->job_prefix, prefix_len) != 0)
        return;
    struct run_entry *run = run_find(b, ev->run_id);
    if (ev->attempt == 0)
        on_run_event(b, run, ev);
    else
        on_attempt_event(b, run, ev);
    check_limit(b, ev);
}

/* follow reads Watch until every triggered run has ended, or the stream
 * ends. Returns the time of the last run's terminal event. */
static int64_t follow(struct burst *b, struct cs_stream *stream, int64_t after_seq)
{
    struct cs_test_burst_result *r = b->res;
    int64_t last_seq = after_seq;
    int64_t last_end_ns = 0;
    struct cs_test_events events = {.stream = stream};

    for (;;) {
        const Csched__V1__Event *ev = NULL;
        struct cs_status st = {0};
        int rc = cs_test_next_event(&events, &ev, &st);
        if (rc != 1) {
            r->timed_out = true;
            note_first(b, r->first_failure, sizeof(r->first_failure),
                       "Watch ended early (%d, %s: %s) after %u runs ended", rc,
                       cs_status_code_name(st.code), st.message, r->runs_terminal);
            break;
        }
        unsigned before = r->runs_terminal;
        on_event(b, ev, &last_seq);
        if (r->runs_terminal != before)
            last_end_ns = now_ns();
        if (r->runs_terminal + atomic_load(&b->trigger_errors) >= b->opts->n_runs)
            break;
    }
    r->watch_messages = (unsigned)events.batches;
    cs_test_events_done(&events);
    return last_end_ns;
}

/* open_watch asks for every event after the server's last committed one, so
 * the burst's events are all seen and nothing older is. */
static struct cs_stream *open_watch(struct burst *b, struct cs_client *client, int64_t *after_seq)
{
    Csched__V1__WatchRequest wreq = CSCHED__V1__WATCH_REQUEST__INIT;
    Csched__V1__Stats *stats = cs_test_get_stats(client);
    struct cs_call_opts opts = {.timeout_ms = b->opts->timeout_ms, .wait_for_ready = true};
    struct cs_status st = {0};
    struct cs_stream *stream = NULL;
    int rc;

    *after_seq = stats->last_seq;
    b->res->server_max_running = stats->max_running;
    csched__v1__stats__free_unpacked(stats, NULL);
    wreq.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    wreq.after_seq = *after_seq;
    rc = cs_scheduler_watch(client, &wreq, &stream, &opts, &st);
    if (rc != 0)
        cs_test_fail(__FILE__, __LINE__, "Watch: %s: %s", cs_status_code_name(rc), st.message);
    return stream;
}

int cs_test_burst_run(const struct cs_test_burst_options *opts, struct cs_test_burst_result *res)
{
    pthread_t triggers[MAX_TRIGGER_THREADS], sampler, stats;
    unsigned n_threads = opts->trigger_threads;
    struct burst b = {.opts = opts, .res = res};
    int64_t after_seq, t0, t_end;

    if (n_threads == 0 || n_threads > MAX_TRIGGER_THREADS || opts->n_jobs == 0)
        return -EINVAL;
    memset(res, 0, sizeof(*res));
    b.runs = calloc(RUN_SLOTS, sizeof(*b.runs));
    if (b.runs == NULL)
        return -ENOMEM;
    pthread_mutex_init(&b.lock, NULL);
    pthread_barrier_init(&b.go, NULL, n_threads + 1);

    if (!opts->jobs_exist)
        cs_test_burst_create_jobs(opts);
    struct cs_client *client = connect_or_fail(opts->target);
    struct cs_stream *stream = open_watch(&b, client, &after_seq);
    pthread_create(&sampler, NULL, sampler_main, &b);
    pthread_create(&stats, NULL, stats_main, &b);
    for (unsigned i = 0; i < n_threads; i++)
        pthread_create(&triggers[i], NULL, trigger_main, &b);

    pthread_barrier_wait(&b.go);
    t0 = now_ns();
    t_end = follow(&b, stream, after_seq);
    res->wall_ms = t_end > 0 ? (double)(t_end - t0) / 1e6 : 0;

    for (unsigned i = 0; i < n_threads; i++)
        pthread_join(triggers[i], NULL);
    res->trigger_ms = (double)(atomic_load(&b.last_trigger_ns) - t0) / 1e6;
    res->trigger_errors = atomic_load(&b.trigger_errors);
    atomic_store(&b.stop, true);
    pthread_join(sampler, NULL);
    pthread_join(stats, NULL);

    cs_stream_free(stream);
    cs_client_free(client);
    pthread_barrier_destroy(&b.go);
    pthread_mutex_destroy(&b.lock);
    free(b.runs);
    return 0;
}

void cs_test_burst_print(const char *name, const struct cs_test_burst_result *r)
{
    fprintf(stderr,
            "%s: runs seen=%u ended=%u succeeded=%u trigger_errors=%u timed_out=%d\n"
            "%s: wall=%.1f ms (triggers answered after %.1f ms) events=%u in %u messages "
            "seq_errors=%u\n"
            "%s: peaks from Watch: holding a slot=%u running=%u active runs=%u, with the "
            "queued ones %u; limit violations=%u\n"
            "%s: GetStats: peak running+starting=%u over %u polls, violations=%u, "
            "max_running=%u\n"
            "%s: processes: peak live minders=%u over %u samples (largest gap %lld us, "
            "sampler CPU %.1f ms)\n",
            name, r->runs_seen, r->runs_terminal, r->runs_succeeded, r->trigger_errors,
            r->timed_out, name, r->wall_ms, r->trigger_ms, r->events, r->watch_messages,
            r->seq_errors, name, r->holding_peak, r->running_peak, r->active_runs_peak,
            r->demand_peak, r->limit_violations, name, r->stats_peak, r->stats_polls,
            r->stats_violations, r->server_max_running, name, r->proc_peak, r->proc_samples,
            (long long)r->proc_max_gap_us, r->proc_sampler_cpu_ms);
    if (r->first_failure[0] != '\0')
        fprintf(stderr, "%s: first failure: %s\n", name, r->first_failure);
    if (r->first_trigger_error[0] != '\0')
        fprintf(stderr, "%s: first trigger error: %s\n", name, r->first_trigger_error);
    if (r->first_violation[0] != '\0')
        fprintf(stderr, "%s: first limit violation: %s\n", name, r->first_violation);
}
