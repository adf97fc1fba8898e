/* Unit tests of taking a run off its job's queue before it starts, as a
 * cancel does (pump_fixture.h): from the middle, the tail and the head, the
 * job's place in the ready heap following its new head, and the job leaving
 * the heap with its last run. */
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
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pump_dequeue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
