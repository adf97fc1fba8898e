/* Unit tests of ended_runs: what is kept is found by id, the oldest go
 * first past the count and the byte budget, a run too large or kept twice
 * is freed at once, and a run added after the close is freed too (ASan's
 * leak check sees every run freed exactly once). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "ended_runs.h"

/* A run of id whose message is len bytes long. */
static Csched__V1__Run *run_new(int64_t id, size_t len)
{
    Csched__V1__Run *run = malloc(sizeof(*run));
    assert_non_null(run);
    csched__v1__run__init(run);
    run->id = id;
    run->message = malloc(len + 1);
    assert_non_null(run->message);
    memset(run->message, 'x', len);
    run->message[len] = '\0';
    return run;
}

static void test_kept_runs_are_found(void **state)
{
    struct cs_ended_runs e;
    cs_ended_runs_init(&e, CS_ENDED_RUNS_BYTES);
    for (int64_t id = 1; id <= 100; id++)
        cs_ended_runs_add(&e, run_new(id, 10));
    for (int64_t id = 1; id <= 100; id++) {
        const Csched__V1__Run *run = cs_ended_runs_get(&e, id);
        assert_non_null(run);
        assert_int_equal(run->id, id);
    }
    assert_null(cs_ended_runs_get(&e, 101));
    cs_ended_runs_close(&e);
}

static void test_the_oldest_go_first_past_the_count(void **state)
{
    struct cs_ended_runs e;
    cs_ended_runs_init(&e, CS_ENDED_RUNS_BYTES);
    int64_t n = CS_ENDED_RUNS_MAX + 500;
    for (int64_t id = 1; id <= n; id++)
        cs_ended_runs_add(&e, run_new(id, 1));
    for (int64_t id = 1; id <= 500; id++)
        assert_null(cs_ended_runs_get(&e, id));
    for (int64_t id = 501; id <= n; id++)
        assert_non_null(cs_ended_runs_get(&e, id));
    assert_int_equal(e.count, CS_ENDED_RUNS_MAX);
    cs_ended_runs_close(&e);
}

static void test_the_oldest_go_first_past_the_bytes(void **state)
{
    Csched__V1__Run *probe = run_new(1, 1000);
    size_t one = protobuf_c_message_get_packed_size(&probe->base);
    protobuf_c_message_free_unpacked(&probe->base, NULL);

    struct cs_ended_runs e;
    cs_ended_runs_init(&e, 10 * one);
    for (int64_t id = 1; id <= 25; id++) {
        cs_ended_runs_add(&e, run_new(id, 1000));
        assert_true(e.bytes <= 10 * one);
    }
    for (int64_t id = 1; id <= 15; id++)
        assert_null(cs_ended_runs_get(&e, id));
    for (int64_t id = 16; id <= 25; id++)
        assert_non_null(cs_ended_runs_get(&e, id));
    /* One larger than the whole budget is not kept, and nothing goes for it. */
    cs_ended_runs_add(&e, run_new(26, 20000));
    assert_null(cs_ended_runs_get(&e, 26));
    assert_non_null(cs_ended_runs_get(&e, 16));
    cs_ended_runs_close(&e);
}

static void test_a_run_kept_twice_keeps_the_first(void **state)
{
    struct cs_ended_runs e;
    cs_ended_runs_init(&e, CS_ENDED_RUNS_BYTES);
    cs_ended_runs_add(&e, run_new(7, 3));
    cs_ended_runs_add(&e, run_new(7, 30));
    assert_string_equal(cs_ended_runs_get(&e, 7)->message, "xxx");
    assert_int_equal(e.count, 1);
    cs_ended_runs_close(&e);
}

static void test_after_the_close_runs_are_freed(void **state)
{
    struct cs_ended_runs e;
    cs_ended_runs_init(&e, CS_ENDED_RUNS_BYTES);
    cs_ended_runs_add(&e, run_new(1, 3));
    cs_ended_runs_close(&e);
    cs_ended_runs_add(&e, run_new(2, 3));
    assert_null(cs_ended_runs_get(&e, 1));
    assert_null(cs_ended_runs_get(&e, 2));
}

/* Retention: a run whose row went is forgotten, its place left empty
 * until it is the oldest; those that ended before a cutoff go first. */
static void test_forgotten_and_aged_runs_go(void **state)
{
    struct cs_ended_runs e;
    cs_ended_runs_init(&e, CS_ENDED_RUNS_BYTES);
    for (int64_t id = 1; id <= 10; id++) {
        Csched__V1__Run *run = run_new(id, 10);
        run->ended_unix_ms = id * 1000;
        cs_ended_runs_add(&e, run);
    }
    size_t bytes = e.bytes;
    cs_ended_runs_forget(&e, 5);
    cs_ended_runs_forget(&e, 42);
    assert_null(cs_ended_runs_get(&e, 5));
    assert_non_null(cs_ended_runs_get(&e, 6));
    assert_true(e.bytes < bytes);
    cs_ended_runs_drop_ended_before(&e, 7000);
    for (int64_t id = 1; id <= 6; id++)
        assert_null(cs_ended_runs_get(&e, id));
    for (int64_t id = 7; id <= 10; id++)
        assert_non_null(cs_ended_runs_get(&e, id));
    assert_int_equal(e.count, 4);
    for (int64_t id = 11; id <= CS_ENDED_RUNS_MAX + 20; id++)
        cs_ended_runs_add(&e, run_new(id, 1));
    assert_int_equal(e.count, CS_ENDED_RUNS_MAX);
    cs_ended_runs_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_runs_are_found),
        cmocka_unit_test(test_the_oldest_go_first_past_the_count),
        cmocka_unit_test(test_the_oldest_go_first_past_the_bytes),
        cmocka_unit_test(test_a_run_kept_twice_keeps_the_first),
        cmocka_unit_test(test_after_the_close_runs_are_freed),
        cmocka_unit_test(test_forgotten_and_aged_runs_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
