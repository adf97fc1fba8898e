/* Unit tests of run_keys, the active runs by job name and idempotency key:
 * every run found by its own job and key and by nothing else, runs without
 * a key never indexed, removal from the middle of a bucket, and the table
 * growing past its first size with every run still found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "run_keys.h"
#include "sched_state.h"
#include "util.h"

#define N_RUNS 3000

struct fixture {
    struct cs_run runs[N_RUNS];
    Csched__V1__Run msgs[N_RUNS];
    char jobs[N_RUNS][16];
    char keys[N_RUNS][16];
    struct cs_run_keys index;
};

/* Run i belongs to job "job-(i % 3)" and has key "k-(i / 3)", so each key
 * is shared by three jobs; every tenth run has no key. */
static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    for (size_t i = 0; i < N_RUNS; i++) {
        csched__v1__run__init(&f->msgs[i]);
        (void)snprintf(f->jobs[i], sizeof(f->jobs[i]), "job-%zu", i % 3);
        (void)snprintf(f->keys[i], sizeof(f->keys[i]), "k-%zu", i / 3);
        f->msgs[i].id = (int64_t)i + 1;
        f->msgs[i].job_name = f->jobs[i];
        f->msgs[i].idempotency_key = i % 10 == 0 ? "" : f->keys[i];
        f->runs[i].msg = &f->msgs[i];
    }
    cs_run_keys_init(&f->index);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    cs_run_keys_close(&f->index);
    free(f);
    return 0;
}

static bool has_key(const struct fixture *f, size_t i)
{
    return f->msgs[i].idempotency_key[0] != '\0';
}

static void add_all(struct fixture *f)
{
    for (size_t i = 0; i < N_RUNS; i++)
        cs_run_keys_add(&f->index, &f->runs[i]);
}

static void test_run_keys_empty(void **state)
{
    struct fixture *f = *state;
    assert_null(cs_run_keys_find(&f->index, "job-0", "k-1"));
    /* A run without a key is never indexed. */
    cs_run_keys_add(&f->index, &f->runs[0]);
    assert_int_equal(f->index.count, 0);
    assert_null(cs_run_keys_find(&f->index, "job-0", ""));
    cs_run_keys_remove(&f->index, &f->runs[0]);
}

static void test_run_keys_find_each(void **state)
{
    struct fixture *f = *state;
    add_all(f);
    size_t keyed = 0;
    for (size_t i = 0; i < N_RUNS; i++) {
        if (!has_key(f, i))
            continue;
        keyed++;
        assert_ptr_equal(cs_run_keys_find(&f->index, f->jobs[i], f->keys[i]), &f->runs[i]);
    }
    assert_int_equal(f->index.count, keyed);
    /* The table grew past its first size. */
    assert_true(f->index.cap >= keyed);
    /* The same key of another job, an unknown key or job: nothing. */
    assert_null(cs_run_keys_find(&f->index, "job-3", "k-1"));
    assert_null(cs_run_keys_find(&f->index, "job-1", "k-99999"));
    assert_null(cs_run_keys_find(&f->index, "job-1k", "-1"));
}

static void test_run_keys_remove(void **state)
{
    struct fixture *f = *state;
    add_all(f);
    /* Every other keyed run goes, wherever it sits in its bucket. */
    for (size_t i = 0; i < N_RUNS; i += 2)
        cs_run_keys_remove(&f->index, &f->runs[i]);
    for (size_t i = 0; i < N_RUNS; i++) {
        if (!has_key(f, i))
            continue;
        struct cs_run *found = cs_run_keys_find(&f->index, f->jobs[i], f->keys[i]);
        if (i % 2 == 0)
            assert_null(found);
        else
            assert_ptr_equal(found, &f->runs[i]);
    }
    /* Back in again, and out altogether. */
    for (size_t i = 0; i < N_RUNS; i += 2)
        cs_run_keys_add(&f->index, &f->runs[i]);
    for (size_t i = 0; i < N_RUNS; i++)
        if (has_key(f, i))
            assert_ptr_equal(cs_run_keys_find(&f->index, f->jobs[i], f->keys[i]), &f->runs[i]);
    for (size_t i = 0; i < N_RUNS; i++)
        cs_run_keys_remove(&f->index, &f->runs[i]);
    assert_int_equal(f->index.count, 0);
    assert_null(cs_run_keys_find(&f->index, f->jobs[1], f->keys[1]));
}

/* The functions under test belong to the loop thread: this one is it. */
static int mark_loop_thread(void **state)
{
    cs_loop_thread_mark();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_keys_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_keys_find_each, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_keys_remove, setup, teardown),
    };
    return cmocka_run_group_tests(tests, mark_loop_thread, NULL);
}
