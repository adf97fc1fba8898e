/* Unit tests of the pump on a real uv loop, with a struct cs_sched set up by
 * hand: jobs from cs_job_insert, runs made here around a Csched__V1__Run, and
 * a fake start callback given to cs_pump_init in place of dispatch's. The
 * fake does what the real one does to the counts (the job's slots and the
 * global starting count go up; nothing else is told), and checks at every
 * start that the run was the oldest that could start and that no limit is
 * exceeded. One uv_run(UV_RUN_NOWAIT) is one loop turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "job.h"
#include "pump.h"
#include "violations.h"

enum { MAX_RUNS = 4096 };

static struct {
    uv_loop_t loop;
    struct cs_sched *s;
    struct cs_run *runs[MAX_RUNS]; /* every run made, to free them */
    size_t n_runs;
    int64_t started[MAX_RUNS]; /* ids in the order start_cb saw them */
    size_t n_started;
} fx;

static bool may_start(const struct cs_job *job)
{
    uint32_t limit = job->spec->max_running;
    return !cs_queue_is_empty(&job->queue) && (limit == 0 || job->slots < limit);
}

/* The oldest queued run of job, or NULL. */
static const struct cs_run *head_of(const struct cs_job *job)
{
    return cs_queue_is_empty(&job->queue) ? NULL : cs_pump_first(job);
}

/* The run after r on its job's queue, or NULL. */
static const struct cs_run *next_of(const struct cs_run *r)
{
    return r->queue_link.next != NULL
               ? CS_CONTAINER_OF(r->queue_link.next, struct cs_run, queue_link)
               : NULL;
}

static void start_cb(struct cs_sched *s, struct cs_run *run)
{
    struct cs_job *job = run->job;
    uint32_t limit = job->spec->max_running;

    if (run->queued || run->queue_link.next != NULL)
        violation("run %lld started while still on its job's queue", (long long)run->msg->id);
    if (run->msg->state != CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED)
        violation("run %lld started in state %d, expected QUEUED", (long long)run->msg->id,
                  (int)run->msg->state);
    if (s->stopping)
        violation("run %lld started while stopping", (long long)run->msg->id);
    if (cs_sched_slots_used(s) >= s->max_running)
        violation("run %lld started with %u of %u global slots in use", (long long)run->msg->id,
                  cs_sched_slots_used(s), s->max_running);
    if (limit != 0 && job->slots >= limit)
        violation("run %lld of job %s started with %u of its %u slots in use",
                  (long long)run->msg->id, job->spec->name, job->slots, limit);
    for (size_t i = 0; i < s->n_jobs; i++) {
        const struct cs_job *other = s->jobs[i];
        if (may_start(other) && head_of(other)->msg->id < run->msg->id)
            violation("run %lld started before run %lld of job %s, which is older and may start",
                      (long long)run->msg->id, (long long)head_of(other)->msg->id,
                      other->spec->name);
    }
    if (fx.n_started < MAX_RUNS)
        fx.started[fx.n_started++] = run->msg->id;
    run->msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_STARTING;
    s->starting++;
    job->slots++;
}

static struct cs_sched *setup(uint32_t max_running)
{
    memset(&fx, 0, sizeof(fx));
    violations_reset();
    cs_loop_thread_mark();
    assert_int_equal(uv_loop_init(&fx.loop), 0);
    fx.s = calloc(1, sizeof(*fx.s));
    assert_non_null(fx.s);
    fx.s->loop = &fx.loop;
    fx.s->max_running = max_running;
    assert_int_equal(cs_pump_init(fx.s, start_cb), 0);
    return fx.s;
}

static void teardown(void)
{
    cs_pump_close(fx.s);
    assert_int_equal(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&fx.loop), 0);
    for (size_t i = 0; i < fx.n_runs; i++) {
        protobuf_c_message_free_unpacked(&fx.runs[i]->msg->base, NULL);
        free(fx.runs[i]);
    }
    cs_job_free_all(fx.s);
    free(fx.s);
}

static struct cs_job *add_job(const char *name, uint32_t max_running)
{
    Csched__V1__Job spec;
    char *argv[] = {"true"};

    csched__v1__job__init(&spec);
    spec.name = (char *)name;
    spec.command = argv;
    spec.n_command = 1;
    spec.max_running = max_running;
    return cs_job_insert(fx.s, (Csched__V1__Job *)cs_message_copy(&spec.base));
}

static struct cs_run *new_run(struct cs_job *job, int64_t id)
{
    struct cs_run *run = calloc(1, sizeof(*run));
    Csched__V1__Run *msg = malloc(sizeof(*msg));

    assert_non_null(run);
    assert_non_null(msg);
    assert_true(fx.n_runs < MAX_RUNS);
    csched__v1__run__init(msg);
    msg->id = id;
    msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED;
    run->msg = msg;
    run->job = job;
    job->active++;
    fx.runs[fx.n_runs++] = run;
    return run;
}

static struct cs_run *enqueue(struct cs_job *job, int64_t id)
{
    struct cs_run *run = new_run(job, id);

    cs_pump_enqueue(fx.s, run);
    return run;
}

static struct cs_run *run_by_id(int64_t id)
{
    for (size_t i = 0; i < fx.n_runs; i++)
        if (fx.runs[i]->msg->id == id)
            return fx.runs[i];
    fail_msg("no run %lld", (long long)id);
    return NULL;
}

/* One loop turn; returns how many runs it started. */
static size_t turn(void)
{
    size_t before = fx.n_started;

    (void)uv_run(&fx.loop, UV_RUN_NOWAIT);
    size_t n = fx.n_started - before;
    if (n > CS_PUMP_BATCH)
        fail_msg("one loop turn started %zu runs; at most %d expected", n, CS_PUMP_BATCH);
    return n;
}

/* The run's attempt ended for good: dispatch gives the slot back this way. */
static void finish(struct cs_run *run)
{
    assert_int_equal(run->msg->state, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    run->msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
    fx.s->starting--;
    run->job->slots--;
    run->job->active--;
    cs_pump_job_changed(fx.s, run->job);
}

/* The attempt failed and will be retried at once: back on the queue under
 * its own (older) id, then the slot is given back, as dispatch does. */
static void retry(struct cs_run *run)
{
    assert_int_equal(run->msg->state, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    run->msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED;
    fx.s->starting--;
    cs_pump_enqueue(fx.s, run);
    run->job->slots--;
    cs_pump_job_changed(fx.s, run->job);
}

/* The ids started from position from on must be exactly want. */
static void assert_started(size_t from, const int64_t *want, size_t n)
{
    char got[512];
    int len = 0;

    for (size_t i = from; i < fx.n_started && len < (int)sizeof(got) - 24; i++)
        len += snprintf(got + len, sizeof(got) - (size_t)len, " %lld", (long long)fx.started[i]);
    got[len] = '\0';
    bool same = fx.n_started - from == n;
    for (size_t i = 0; same && i < n; i++)
        same = fx.started[from + i] == want[i];
    if (!same) {
        char exp[512];
        int elen = 0;
        for (size_t i = 0; i < n && elen < (int)sizeof(exp) - 24; i++)
            elen += snprintf(exp + elen, sizeof(exp) - (size_t)elen, " %lld", (long long)want[i]);
        exp[elen] = '\0';
        fail_msg("started ids: expected%s, got%s", exp, got);
    }
}

/* The job's queue, head to tail, must be exactly want, with tail right. */
static void assert_queue(const struct cs_job *job, const int64_t *want, size_t n)
{
    size_t i = 0;
    const struct cs_run *last = NULL;

    for (const struct cs_run *r = head_of(job); r != NULL; r = next_of(r), i++) {
        if (i >= n || r->msg->id != want[i])
            fail_msg("queue of %s at %zu: expected %lld, got %lld", job->spec->name, i,
                     i < n ? (long long)want[i] : -1LL, (long long)r->msg->id);
        if (!r->queued)
            fail_msg("run %lld is on the queue of %s but not marked queued", (long long)r->msg->id,
                     job->spec->name);
        last = r;
    }
    assert_int_equal(i, n);
    assert_ptr_equal(job->queue.tail, last != NULL ? &last->queue_link : NULL);
}

#define IDS(...)                                                                                   \
    ((const int64_t[]){__VA_ARGS__}), sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)

static bool pump_active(void)
{
    return uv_is_active((uv_handle_t *)&fx.s->pump_idle) != 0;
}

/* 40 runs, room for all: 16 per turn, in id order, then the pump goes idle. */
static void test_pump_batch_per_turn(void **state)
{
    struct cs_sched *s = setup(1000);
    struct cs_job *a = add_job("a", 0);

    for (int64_t id = 1; id <= 40; id++)
        enqueue(a, id);
    /* Nothing starts inside enqueue: only on the loop's turn. */
    assert_int_equal(fx.n_started, 0);
    assert_true(pump_active());

    assert_int_equal(turn(), CS_PUMP_BATCH);
    assert_int_equal(turn(), CS_PUMP_BATCH);
    assert_int_equal(turn(), 40 - 2 * CS_PUMP_BATCH);
    assert_int_equal(turn(), 0);
    for (size_t i = 0; i < 40; i++)
        assert_int_equal(fx.started[i], (int64_t)i + 1);
    assert_int_equal(s->starting, 40);
    assert_int_equal(a->slots, 40);
    /* An idle pump does no work per turn. */
    assert_false(pump_active());
    assert_false(s->pump_armed);
    assert_int_equal(a->heap_index, CS_NOT_IN_HEAP);
    assert_no_violation();
    teardown();
}

static void test_pump_oldest_first_across_jobs(void **state)
{
    struct cs_sched *s = setup(1000);
    struct cs_job *a = add_job("a", 0), *b = add_job("b", 0), *c = add_job("c", 0);

    /* Enqueued job by job; ids interleave across the jobs. */
    for (int64_t id = 1; id <= 10; id += 3)
        enqueue(a, id);
    for (int64_t id = 2; id <= 10; id += 3)
        enqueue(b, id);
    for (int64_t id = 3; id <= 10; id += 3)
        enqueue(c, id);
    assert_int_equal(turn(), 10);
    assert_started(0, IDS(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
    assert_no_violation();
    (void)s;
    teardown();
}

/* 200 runs over 7 jobs with ids dealt out at random: every turn takes the
 * oldest 16 of what is left. */
static void test_pump_oldest_first_many_jobs(void **state)
{
    enum { N = 200, JOBS = 7 };
    struct cs_sched *s = setup(1000);
    struct cs_job *jobs[JOBS];
    char name[16];
    uint64_t x = 88172645463325252ull;

    for (int j = 0; j < JOBS; j++) {
        (void)snprintf(name, sizeof(name), "j%d", j);
        jobs[j] = add_job(name, 0);
    }
    /* Each job's runs are enqueued in id order (as triggers are), but
     * which job gets which id is random. */
    int owner[N + 1];
    for (int id = 1; id <= N; id++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        owner[id] = (int)(x % JOBS);
    }
    for (int j = 0; j < JOBS; j++)
        for (int id = 1; id <= N; id++)
            if (owner[id] == j)
                enqueue(jobs[j], id);
    size_t total = 0, n;
    while ((n = turn()) > 0)
        total += n;
    assert_int_equal(total, N);
    for (size_t i = 0; i < N; i++)
        if (fx.started[i] != (int64_t)i + 1)
            fail_msg("start %zu: expected run %zu, got run %lld", i, i + 1,
                     (long long)fx.started[i]);
    assert_no_violation();
    (void)s;
    teardown();
}

static void test_pump_global_limit(void **state)
{
    struct cs_sched *s = setup(5);
    struct cs_job *a = add_job("a", 0), *b = add_job("b", 0);

    for (int64_t id = 1; id <= 20; id++)
        enqueue(id % 2 ? a : b, id);
    assert_int_equal(turn(), 5);
    assert_int_equal(cs_sched_slots_used(s), 5);
    /* Full: the pump stays disarmed however many turns pass. */
    assert_false(pump_active());
    assert_int_equal(turn(), 0);
    assert_int_equal(turn(), 0);

    finish(run_by_id(1));
    finish(run_by_id(4));
    assert_true(pump_active());
    assert_int_equal(turn(), 2);
    assert_int_equal(turn(), 0);
    assert_started(0, IDS(1, 2, 3, 4, 5, 6, 7));
    assert_int_equal(cs_sched_slots_used(s), 5);

    /* A slot freed elsewhere (cs_sched_slots_used drops) and a kick. */
    s->starting--;
    cs_pump_kick(s);
    assert_int_equal(turn(), 1);
    assert_started(7, IDS(8));

    /* A higher limit takes effect at the next kick. */
    s->max_running = 9;
    cs_pump_kick(s);
    assert_int_equal(turn(), 4);
    assert_started(8, IDS(9, 10, 11, 12));
    assert_no_violation();
    teardown();
}

/* A job's own limit holds within one turn. Before f32157d, on_idle took a
 * run off its queue with cs_pump_dequeue, which re-checked the job while
 * job->slots still had the old count, and then called cs_dispatch_start,
 * which raised job->slots without telling the pump: the job stayed in the
 * heap for one start too many, so a job with max_running 1 and three queued
 * runs started two of them in one turn, and one with max_running 2 started
 * three. This test failed then. */
static void test_pump_job_limit_within_turn(void **state)
{
    struct cs_sched *s = setup(100);
    struct cs_job *a = add_job("a", 1), *b = add_job("b", 2), *c = add_job("c", 0);

    for (int64_t id = 1; id <= 3; id++)
        enqueue(a, id);
    for (int64_t id = 4; id <= 8; id++)
        enqueue(b, id);
    for (int64_t id = 9; id <= 10; id++)
        enqueue(c, id);
    turn();
    assert_started(0, IDS(1, 4, 5, 9, 10));
    assert_int_equal(a->slots, 1);
    assert_int_equal(b->slots, 2);
    assert_queue(a, IDS(2, 3));
    assert_queue(b, IDS(6, 7, 8));
    assert_no_violation();

    /* One slot back for each: exactly one more run of each. */
    finish(run_by_id(1));
    finish(run_by_id(4));
    turn();
    assert_started(5, IDS(2, 6));
    assert_int_equal(turn(), 0);
    assert_no_violation();
    (void)s;
    teardown();
}

/* A job at its own limit is passed over: younger runs of other jobs start. */
static void test_pump_job_at_limit_does_not_block(void **state)
{
    struct cs_sched *s = setup(100);
    struct cs_job *a = add_job("a", 1), *b = add_job("b", 0);

    enqueue(a, 1);
    assert_int_equal(turn(), 1);
    assert_int_equal(a->slots, 1);

    enqueue(a, 2);
    enqueue(b, 3);
    enqueue(b, 4);
    assert_int_equal(a->heap_index, CS_NOT_IN_HEAP);
    assert_int_equal(turn(), 2);
    assert_started(1, IDS(3, 4));
    assert_queue(a, IDS(2));
    assert_int_equal(turn(), 0);
    assert_false(pump_active());

    /* Its slot comes back: its waiting run goes. */
    finish(run_by_id(1));
    assert_int_equal(turn(), 1);
    assert_started(3, IDS(2));

    /* Raising the limit (UpdateJob) lets a waiting run go at once. */
    enqueue(a, 5);
    assert_int_equal(turn(), 0);
    a->spec->max_running = 0;
    cs_pump_job_changed(s, a);
    assert_int_equal(turn(), 1);
    assert_started(4, IDS(5));
    assert_no_violation();
    teardown();
}

/* UpdateJob lowering a job's limit below what it holds: it starts nothing
 * until enough of its runs have ended, and then only up to the new limit. */
static void test_pump_job_limit_lowered(void **state)
{
    struct cs_sched *s = setup(100);
    struct cs_job *a = add_job("a", 0), *b = add_job("b", 0);

    for (int64_t id = 1; id <= 3; id++)
        enqueue(a, id);
    assert_int_equal(turn(), 3);
    for (int64_t id = 4; id <= 6; id++)
        enqueue(a, id);
    a->spec->max_running = 2;
    cs_pump_job_changed(s, a);
    assert_int_equal(a->heap_index, CS_NOT_IN_HEAP);
    enqueue(b, 7);
    assert_int_equal(turn(), 1);
    assert_started(3, IDS(7));

    finish(run_by_id(1));
    assert_int_equal(turn(), 0);
    finish(run_by_id(2));
    assert_int_equal(turn(), 1);
    assert_started(4, IDS(4));
    finish(run_by_id(3));
    assert_int_equal(turn(), 1);
    assert_started(5, IDS(5));
    assert_int_equal(turn(), 0);
    assert_int_equal(a->slots, 2);
    assert_queue(a, IDS(6));
    assert_no_violation();
    teardown();
}

/* A retry goes back under its own id, so it goes ahead of runs triggered
 * after it, in its own job and across jobs. */
static void test_pump_retry_goes_first(void **state)
{
    (void)setup(1);
    struct cs_job *a = add_job("a", 0), *b = add_job("b", 0);

    enqueue(a, 1);
    enqueue(b, 2);
    enqueue(a, 3);
    assert_int_equal(turn(), 1);
    assert_started(0, IDS(1));

    retry(run_by_id(1));
    assert_queue(a, IDS(1, 3));
    assert_int_equal(turn(), 1);
    assert_started(1, IDS(1));

    finish(run_by_id(1));
    assert_int_equal(turn(), 1);
    finish(run_by_id(2));
    assert_int_equal(turn(), 1);
    assert_started(2, IDS(2, 3));
    assert_no_violation();
    teardown();
}

/* Runs that come back with ids older than the tail land in id order:
 * before the head, in the middle, and a newer one still at the tail. */
static void test_pump_retry_queue_order(void **state)
{
    struct cs_sched *s = setup(100);
    struct cs_job *a = add_job("a", 0), *b = add_job("b", 0);

    s->stopping = true;
    enqueue(a, 4);
    enqueue(a, 8);
    enqueue(b, 3);
    enqueue(a, 6);
    enqueue(a, 2);
    enqueue(a, 10);
    assert_queue(a, IDS(2, 4, 6, 8, 10));
    enqueue(a, 5);
    assert_queue(a, IDS(2, 4, 5, 6, 8, 10));
    enqueue(a, 11);
    assert_queue(a, IDS(2, 4, 5, 6, 8, 10, 11));
    /* Stopping: nothing starts, and the pump is not even armed. */
    assert_false(pump_active());
    assert_int_equal(turn(), 0);

    s->stopping = false;
    cs_pump_kick(s);
    assert_int_equal(turn(), 8);
    assert_started(0, IDS(2, 3, 4, 5, 6, 8, 10, 11));
    assert_no_violation();
    teardown();
}

static void test_pump_dequeue(void **state)
{
    struct cs_sched *s = setup(100);
    struct cs_job *a = add_job("a", 0), *b = add_job("b", 0);

    s->stopping = true;
    struct cs_run *r1 = enqueue(a, 1), *r2 = enqueue(a, 2), *r3 = enqueue(a, 3);

    /* The middle one. */
    cs_pump_dequeue(s, r2);
    assert_false(r2->queued);
    assert_null(r2->queue_link.next);
    assert_queue(a, IDS(1, 3));

    /* The tail: what comes next must be linked after the new tail. */
    cs_pump_dequeue(s, r3);
    assert_queue(a, IDS(1));
    enqueue(a, 4);
    assert_queue(a, IDS(1, 4));

    /* The head: the job's place in the heap follows its new head, so b's
     * run 3 now goes before a's run 4. */
    enqueue(b, 3);
    cs_pump_dequeue(s, r1);
    assert_queue(a, IDS(4));

    /* The last one: the job leaves the heap. */
    struct cs_run *r5 = enqueue(b, 5);
    cs_pump_dequeue(s, run_by_id(4));
    assert_queue(a, NULL, 0);
    assert_null(head_of(a));
    assert_int_equal(a->heap_index, CS_NOT_IN_HEAP);
    enqueue(a, 6);

    s->stopping = false;
    cs_pump_kick(s);
    assert_int_equal(turn(), 3);
    assert_started(0, IDS(3, 5, 6));
    assert_true(r5->msg->state == CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);

    /* Everything dequeued before a turn: nothing starts. */
    struct cs_run *r7 = enqueue(a, 7);
    cs_pump_dequeue(s, r7);
    assert_int_equal(turn(), 0);
    assert_false(pump_active());
    assert_no_violation();
    teardown();
}

/* The ready heap as pump.h describes it: exactly the jobs that could start a
 * run, each knowing its place, keyed by its oldest queued run's id. */
static void check_heap(const struct cs_sched *s, int step)
{
    size_t in_heap = 0;

    for (size_t i = 0; i < s->n_ready; i++) {
        const struct cs_job *job = s->ready[i];
        if (job->heap_index != i)
            fail_msg("step %d: job %s at heap place %zu says %zu", step, job->spec->name, i,
                     job->heap_index);
        if (i > 0 && head_of(s->ready[(i - 1) / 2])->msg->id > head_of(job)->msg->id)
            fail_msg("step %d: heap order broken at %zu: parent key %lld, child key %lld", step, i,
                     (long long)head_of(s->ready[(i - 1) / 2])->msg->id,
                     (long long)head_of(job)->msg->id);
    }
    for (size_t i = 0; i < s->n_jobs; i++) {
        const struct cs_job *job = s->jobs[i];
        bool listed = job->heap_index != CS_NOT_IN_HEAP;
        in_heap += listed;
        if (listed != may_start(job))
            fail_msg("step %d: job %s (%u of %u slots, %s queue) %s in the heap", step,
                     job->spec->name, job->slots, job->spec->max_running,
                     head_of(job) ? "non-empty" : "empty", listed ? "is" : "is not");
    }
    assert_int_equal(in_heap, s->n_ready);
}

/* Random enqueues, cancels, ends and retries over jobs with small limits,
 * checked at every start by the fake dispatch, and after every turn for
 * liveness: a turn that started fewer than CS_PUMP_BATCH runs left no run
 * that could have started. */
static void test_pump_random_against_limits(void **state)
{
    enum { JOBS = 6, STEPS = 6000 };
    struct cs_sched *s = setup(6);
    struct cs_job *jobs[JOBS];
    char name[16];
    uint64_t x = 0x2545f4914f6cdd1dull;
    int64_t next_id = 1;

    for (int j = 0; j < JOBS; j++) {
        (void)snprintf(name, sizeof(name), "r%d", j);
        jobs[j] = add_job(name, (uint32_t)(j % 4)); /* 0 (none), 1, 2, 3 */
    }
    for (int step = 0; step < STEPS && violations.count == 0; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned op = (unsigned)(x % 100);
        struct cs_run *pick = fx.n_runs ? fx.runs[(x >> 16) % fx.n_runs] : NULL;
        if (op < 40 && fx.n_runs < MAX_RUNS) {
            enqueue(jobs[(x >> 8) % JOBS], next_id++);
        } else if (op < 50 && pick != NULL && pick->queued) {
            cs_pump_dequeue(s, pick);
            pick->msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED;
        } else if (op < 70 && pick != NULL &&
                   pick->msg->state == CSCHED__V1__RUN_STATE__RUN_STATE_STARTING) {
            finish(pick);
        } else if (op < 78 && pick != NULL &&
                   pick->msg->state == CSCHED__V1__RUN_STATE__RUN_STATE_STARTING) {
            retry(pick);
        } else if (op < 80) {
            /* The global limit moves, as on a restart with another flag. */
            s->max_running = 1 + (uint32_t)((x >> 24) % 8);
            cs_pump_kick(s);
        } else {
            size_t n = turn();
            bool any = false;
            for (int j = 0; j < JOBS; j++)
                any = any || may_start(jobs[j]);
            if (n < CS_PUMP_BATCH && any && cs_sched_slots_used(s) < s->max_running)
                fail_msg("step %d: the turn started %zu runs and left a startable run "
                         "with %u of %u slots in use",
                         step, n, cs_sched_slots_used(s), s->max_running);
        }
        check_heap(s, step);
    }
    assert_no_violation();
    teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pump_batch_per_turn),
        cmocka_unit_test(test_pump_oldest_first_across_jobs),
        cmocka_unit_test(test_pump_oldest_first_many_jobs),
        cmocka_unit_test(test_pump_global_limit),
        cmocka_unit_test(test_pump_job_limit_within_turn),
        cmocka_unit_test(test_pump_job_at_limit_does_not_block),
        cmocka_unit_test(test_pump_job_limit_lowered),
        cmocka_unit_test(test_pump_retry_goes_first),
        cmocka_unit_test(test_pump_retry_queue_order),
        cmocka_unit_test(test_pump_dequeue),
        cmocka_unit_test(test_pump_random_against_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
