/* pump_fixture: what the pump's unit tests share. A struct cs_sched set up
 * by hand on a real uv loop: jobs from cs_job_insert, runs made here around a
 * Csched__V1__Run, and a fake start callback given to cs_pump_init in place
 * of dispatch's. The fake does what the real one does to the counts (the
 * job's slots and the global slots held go up; nothing else is told),
 * and checks at every start that the run was the oldest that could start and
 * that no limit is exceeded. One uv_run(UV_RUN_NOWAIT) is one loop turn.
 * Static, as loop_test.h is: each test file has its own fixture and its own
 * record of violations. Include after cmocka.h. */
#ifndef CS_TEST_PUMP_FIXTURE_H
#define CS_TEST_PUMP_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "job_table.h"
#include "loop_test.h"
#include "pump.h"

enum { MAX_RUNS = 4096 };

static struct {
    uv_loop_t loop;
    struct cs_sched *s;
    struct cs_run *runs[MAX_RUNS]; /* every run made, to free them */
    size_t n_runs;
    int64_t started[MAX_RUNS]; /* ids in the order start_cb saw them */
    size_t n_started;
} fx;

static inline bool may_start(const struct cs_job *job)
{
    uint32_t limit = job->spec->max_running;
    return !cs_queue_is_empty(&job->queue) && (limit == 0 || job->slots < limit);
}

/* The oldest queued run of job, or NULL. */
static inline const struct cs_run *head_of(const struct cs_job *job)
{
    return cs_queue_is_empty(&job->queue) ? NULL : cs_pump_first(job);
}

/* The run after r on its job's queue, or NULL. */
static inline const struct cs_run *next_of(const struct cs_run *r)
{
    return r->queue_link.next != NULL
               ? CS_CONTAINER_OF(r->queue_link.next, struct cs_run, queue_link)
               : NULL;
}

static inline void start_cb(struct cs_sched *s, struct cs_run *run)
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
    s->slots_held++;
    job->slots++;
}

/* The pump asks only may_start_cb of the ops: none, so starts are never
 * held for the lease. */
static const struct cs_sched_ops pump_ops;

static inline struct cs_sched *setup(uint32_t max_running)
{
    memset(&fx, 0, sizeof(fx));
    violations_reset();
    cs_loop_thread_mark();
    assert_int_equal(uv_loop_init(&fx.loop), 0);
    fx.s = calloc(1, sizeof(*fx.s));
    assert_non_null(fx.s);
    fx.s->loop = &fx.loop;
    fx.s->ops = &pump_ops;
    fx.s->max_running = max_running;
    assert_int_equal(cs_pump_init(fx.s, start_cb), 0);
    return fx.s;
}

static inline void teardown(void)
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

static inline struct cs_job *add_job(const char *name, uint32_t max_running)
{
    return loop_test_add_job(fx.s, name, max_running, 0, 0);
}

static inline struct cs_run *new_run(struct cs_job *job, int64_t id)
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

static inline struct cs_run *enqueue(struct cs_job *job, int64_t id)
{
    struct cs_run *run = new_run(job, id);

    cs_pump_enqueue(fx.s, run);
    return run;
}

static inline struct cs_run *run_by_id(int64_t id)
{
    for (size_t i = 0; i < fx.n_runs; i++)
        if (fx.runs[i]->msg->id == id)
            return fx.runs[i];
    fail_msg("no run %lld", (long long)id);
    return NULL;
}

/* One loop turn; returns how many runs it started. */
static inline size_t turn(void)
{
    size_t before = fx.n_started;

    (void)uv_run(&fx.loop, UV_RUN_NOWAIT);
    size_t n = fx.n_started - before;
    if (n > CS_PUMP_BATCH)
        fail_msg("one loop turn started %zu runs; at most %d expected", n, CS_PUMP_BATCH);
    return n;
}

/* The run's attempt ended for good: dispatch gives the slot back this way. */
static inline void finish(struct cs_run *run)
{
    assert_int_equal(run->msg->state, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    run->msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
    fx.s->slots_held--;
    run->job->slots--;
    run->job->active--;
    cs_pump_job_changed(fx.s, run->job);
}

/* The attempt failed and will be retried at once: back on the queue under
 * its own (older) id, then the slot is given back, as dispatch does. */
static inline void retry(struct cs_run *run)
{
    assert_int_equal(run->msg->state, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    run->msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED;
    fx.s->slots_held--;
    cs_pump_enqueue(fx.s, run);
    run->job->slots--;
    cs_pump_job_changed(fx.s, run->job);
}

/* The ids started from position from on must be exactly want. */
static inline void assert_started(size_t from, const int64_t *want, size_t n)
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
static inline void assert_queue(const struct cs_job *job, const int64_t *want, size_t n)
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

static inline bool pump_active(void)
{
    return cs_next_turn_asked(&fx.s->pump_turn);
}

#endif
