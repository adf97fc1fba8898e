/* Unit tests of the release gates (server/release_gate.h): one gate per due
 * time, in due order; opening one makes it readable for every holder of
 * its fd and leaves the later ones shut; at most CS_RELEASE_GATES_MAX. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "release_gate.h"

/* Whether fd (a copy of a gate's, as a minder holds it) reads as open. */
static bool is_open(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void test_one_gate_per_due_time_in_order(void **state)
{
    (void)state;
    struct cs_release_gates gates = {0};
    int late = cs_release_gate_of(&gates, 2000);
    int early = cs_release_gate_of(&gates, 1000);
    assert_true(late >= 0 && early >= 0 && late != early);
    assert_int_equal(cs_release_gate_of(&gates, 2000), late);
    assert_int_equal(gates.n, 2);
    assert_int_equal(cs_release_gates_first_due(&gates), 1000);
    cs_release_gates_free(&gates);
    assert_int_equal(gates.n, 0);
    assert_int_equal(cs_release_gates_first_due(&gates), 0);
}

static void test_opening_releases_every_holder_of_the_due_ones(void **state)
{
    (void)state;
    struct cs_release_gates gates = {0};
    int early[2], late;
    early[0] = dup(cs_release_gate_of(&gates, 1000));
    early[1] = dup(cs_release_gate_of(&gates, 1000));
    late = dup(cs_release_gate_of(&gates, 3000));
    cs_release_gates_open(&gates, 999);
    assert_false(is_open(early[0]));
    cs_release_gates_open(&gates, 2000);
    assert_true(is_open(early[0]) && is_open(early[1]));
    assert_false(is_open(late));
    assert_int_equal(gates.n, 1);
    assert_int_equal(cs_release_gates_first_due(&gates), 3000);
    /* A gate is never opened twice: the next of that due time is new. */
    int again = cs_release_gate_of(&gates, 1000);
    assert_false(is_open(again));
    cs_release_gates_free(&gates);
    /* Closing a gate shut does not open it for the minders holding it. */
    assert_false(is_open(late));
    for (int i = 0; i < 2; i++)
        (void)close(early[i]);
    (void)close(late);
}

static void test_at_most_the_max_shut(void **state)
{
    (void)state;
    struct cs_release_gates gates = {0};
    for (int64_t due = 1; due <= CS_RELEASE_GATES_MAX; due++)
        assert_true(cs_release_gate_of(&gates, due) >= 0);
    assert_int_equal(cs_release_gate_of(&gates, CS_RELEASE_GATES_MAX + 1), -EAGAIN);
    /* One already there is still found. */
    assert_true(cs_release_gate_of(&gates, 1) >= 0);
    cs_release_gates_open(&gates, 1);
    assert_true(cs_release_gate_of(&gates, CS_RELEASE_GATES_MAX + 1) >= 0);
    cs_release_gates_free(&gates);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_gate_per_due_time_in_order),
        cmocka_unit_test(test_opening_releases_every_holder_of_the_due_ones),
        cmocka_unit_test(test_at_most_the_max_shut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
