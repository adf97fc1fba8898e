/* Unit tests of the pump against the limits (pump_fixture.h): the global
 * max_running, a job's own max_running within one turn, a job at its limit
 * passed over, a limit raised or lowered, and a random walk of enqueues,
 * cancels, ends and retries that checks the ready heap after every step.
 * The fake start callback checks every start against the limits. */
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

#include "pump_fixture.h"

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
    s->slots_held--;
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
 * job->slots still had the old count, and then called dispatch's start,
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
/* The ready heap as pump.h describes it: exactly the jobs that could start a
 * run, each knowing its place, keyed by its oldest queued run's id. */
static void check_heap(const struct cs_sched *s, int step)
{
    size_t in_heap = 0;

    for (size_t i = 0; i < s->ready.n; i++) {
        const struct cs_job *job = s->ready.items[i];
        const struct cs_job *parent = i > 0 ? s->ready.items[(i - 1) / 2] : NULL;
        if (job->heap_index != i)
            fail_msg("step %d: job %s at heap place %zu says %zu", step, job->spec->name, i,
                     job->heap_index);
        if (parent != NULL && head_of(parent)->msg->id > head_of(job)->msg->id)
            fail_msg("step %d: heap order broken at %zu: parent key %lld, child key %lld", step, i,
                     (long long)head_of(parent)->msg->id, (long long)head_of(job)->msg->id);
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
    assert_int_equal(in_heap, s->ready.n);
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
        cmocka_unit_test(test_pump_global_limit),
        cmocka_unit_test(test_pump_job_limit_within_turn),
        cmocka_unit_test(test_pump_job_at_limit_does_not_block),
        cmocka_unit_test(test_pump_job_limit_lowered),
        cmocka_unit_test(test_pump_random_against_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
