/* Unit tests of the order in which the pump starts runs (pump_fixture.h):
 * at most CS_PUMP_BATCH a turn, the oldest queued run first across all jobs,
 * and a retry back on its queue under its own older id, ahead of younger
 * runs. The fake start callback checks every start against the order. */
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
    assert_int_equal(s->slots_held, 40);
    assert_int_equal(a->slots, 40);
    /* An idle pump does no work per turn. */
    assert_false(pump_active());
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
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pump_batch_per_turn),
        cmocka_unit_test(test_pump_oldest_first_across_jobs),
        cmocka_unit_test(test_pump_oldest_first_many_jobs),
        cmocka_unit_test(test_pump_retry_goes_first),
        cmocka_unit_test(test_pump_retry_queue_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
