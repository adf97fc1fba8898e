/* Unit tests of slot_rules: the decision for one due slot, rule by rule
 * (pause, misfire and catch-up, starting deadline, overlap) and in their
 * order, as pure function calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "slot_rules.h"

#define STARTED CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED
#define SKIPPED CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED

/* A slot due at 100 s, decided on time at 100.005 s; the server up since 50 s. */
static struct cs_slot_facts on_time(const Csched__V1__Schedule *sc)
{
    return (struct cs_slot_facts){
        .due_ms = 100000, .now_ms = 100005, .missed_before_ms = 50000, .schedule = sc};
}

static void assert_skipped(struct cs_slot_decision d, Csched__V1__SkipReason reason)
{
    assert_int_equal(d.outcome, SKIPPED);
    assert_int_equal(d.reason, reason);
    assert_false(d.cancel_active);
}

static void test_slot_on_time_starts(void **state)
{
    (void)state;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    struct cs_slot_facts f = on_time(&sc);
    struct cs_slot_decision d = cs_slot_decide(&f);

    assert_int_equal(d.outcome, STARTED);
    assert_false(d.catchup);
    assert_false(d.cancel_active);
}

static void test_slot_paused_comes_first(void **state)
{
    (void)state;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    struct cs_slot_facts f = on_time(&sc);

    f.paused = true;
    f.due_ms = 10000; /* missed too, and overlapping: paused still wins */
    f.active = 1;
    sc.overlap = CSCHED__V1__OVERLAP__OVERLAP_FORBID;
    assert_skipped(cs_slot_decide(&f), CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED);
}

static void test_slot_catchup_limits(void **state)
{
    (void)state;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;

    assert_int_equal(cs_slot_catchup_limit(&sc), 0);
    sc.misfire = CSCHED__V1__MISFIRE__MISFIRE_RUN_ONCE;
    sc.max_catchup = 7; /* ignored by run_once */
    assert_int_equal(cs_slot_catchup_limit(&sc), 1);
    sc.misfire = CSCHED__V1__MISFIRE__MISFIRE_RUN_ALL;
    assert_int_equal(cs_slot_catchup_limit(&sc), 7);
    sc.max_catchup = 0;
    assert_int_equal(cs_slot_catchup_limit(&sc), 10);
}

/* Missed while down (due before the start) or because a later slot is due. */
static void test_slot_misfire_skip(void **state)
{
    (void)state;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    struct cs_slot_facts f = on_time(&sc);

    f.due_ms = 40000;
    f.now_ms = 60000;
    assert_skipped(cs_slot_decide(&f), CSCHED__V1__SKIP_REASON__SKIP_REASON_MISSED);
    f = on_time(&sc);
    f.later_due = 1;
    assert_skipped(cs_slot_decide(&f), CSCHED__V1__SKIP_REASON__SKIP_REASON_MISSED);
}

/* run_once runs only the newest missed slot (no later one due). */
static void test_slot_misfire_run_once(void **state)
{
    (void)state;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    struct cs_slot_facts f = on_time(&sc);
    struct cs_slot_decision d;

    sc.misfire = CSCHED__V1__MISFIRE__MISFIRE_RUN_ONCE;
    f.due_ms = 40000;
    f.now_ms = 60000;
    f.later_due = 1;
    assert_skipped(cs_slot_decide(&f), CSCHED__V1__SKIP_REASON__SKIP_REASON_SUPERSEDED);
    f.later_due = 0;
    d = cs_slot_decide(&f);
    assert_int_equal(d.outcome, STARTED);
    assert_true(d.catchup);
}

/* run_all runs the newest max_catchup missed slots. */
static void test_slot_misfire_run_all(void **state)
{
    (void)state;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    struct cs_slot_facts f = on_time(&sc);

    sc.misfire = CSCHED__V1__MISFIRE__MISFIRE_RUN_ALL;
    sc.max_catchup = 3;
    f.due_ms = 40000;
    f.now_ms = 60000;
    for (uint32_t later = 0; later < 6; later++) {
        f.later_due = later;
        struct cs_slot_decision d = cs_slot_decide(&f);
        if (later < 3) {
            assert_int_equal(d.outcome, STARTED);
            assert_true(d.catchup);
        } else {
            assert_skipped(d, CSCHED__V1__SKIP_REASON__SKIP_REASON_SUPERSEDED);
        }
    }
}

/* The deadline counts from the due time, for catch-ups too; 0 is none. */
static void test_slot_starting_deadline(void **state)
{
    (void)state;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    struct cs_slot_facts f = on_time(&sc);

    sc.starting_deadline_seconds = 5;
    f.now_ms = f.due_ms + 5000;
    assert_int_equal(cs_slot_decide(&f).outcome, STARTED);
    f.now_ms = f.due_ms + 5001;
    assert_skipped(cs_slot_decide(&f), CSCHED__V1__SKIP_REASON__SKIP_REASON_DEADLINE_PASSED);
    sc.misfire = CSCHED__V1__MISFIRE__MISFIRE_RUN_ONCE;
    f.due_ms = 40000;
    f.now_ms = 60000;
    assert_skipped(cs_slot_decide(&f), CSCHED__V1__SKIP_REASON__SKIP_REASON_DEADLINE_PASSED);
    sc.starting_deadline_seconds = 0;
    assert_int_equal(cs_slot_decide(&f).outcome, STARTED);
}

static void test_slot_overlap(void **state)
{
    (void)state;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    struct cs_slot_facts f = on_time(&sc);
    struct cs_slot_decision d;

    f.active = 1;
    assert_int_equal(cs_slot_decide(&f).outcome, STARTED); /* allow */
    sc.overlap = CSCHED__V1__OVERLAP__OVERLAP_FORBID;
    assert_skipped(cs_slot_decide(&f), CSCHED__V1__SKIP_REASON__SKIP_REASON_OVERLAP_FORBIDDEN);
    sc.overlap = CSCHED__V1__OVERLAP__OVERLAP_QUEUE_ONE;
    assert_int_equal(cs_slot_decide(&f).outcome, STARTED);
    f.queued = 1;
    f.active = 2;
    assert_skipped(cs_slot_decide(&f), CSCHED__V1__SKIP_REASON__SKIP_REASON_QUEUE_FULL);
    sc.overlap = CSCHED__V1__OVERLAP__OVERLAP_REPLACE;
    d = cs_slot_decide(&f);
    assert_int_equal(d.outcome, STARTED);
    assert_true(d.cancel_active);
    /* Nothing active: no policy applies. */
    f.active = 0;
    f.queued = 0;
    d = cs_slot_decide(&f);
    assert_false(d.cancel_active);
    sc.overlap = CSCHED__V1__OVERLAP__OVERLAP_FORBID;
    assert_int_equal(cs_slot_decide(&f).outcome, STARTED);
}

static void test_slot_reason_texts(void **state)
{
    (void)state;
    for (int r = CSCHED__V1__SKIP_REASON__SKIP_REASON_MISSED;
         r <= CSCHED__V1__SKIP_REASON__SKIP_REASON_QUEUE_FULL; r++)
        assert_true(cs_slot_reason_text((Csched__V1__SkipReason)r)[0] != '\0');
    assert_string_equal(cs_slot_reason_text(CSCHED__V1__SKIP_REASON__SKIP_REASON_UNSPECIFIED), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_on_time_starts),
        cmocka_unit_test(test_slot_paused_comes_first),
        cmocka_unit_test(test_slot_catchup_limits),
        cmocka_unit_test(test_slot_misfire_skip),
        cmocka_unit_test(test_slot_misfire_run_once),
        cmocka_unit_test(test_slot_misfire_run_all),
        cmocka_unit_test(test_slot_starting_deadline),
        cmocka_unit_test(test_slot_overlap),
        cmocka_unit_test(test_slot_reason_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
