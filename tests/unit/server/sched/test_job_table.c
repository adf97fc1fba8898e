/* Unit tests of the table of jobs (job_table.c), sorted by name: insert, find,
 * index_after, replace and remove keep it sorted in byte order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "job.h"
#include "job_table.h"

static Csched__V1__Job *spec_named(const char *name)
{
    Csched__V1__Job job;
    char *argv[] = {"true"};

    csched__v1__job__init(&job);
    job.name = (char *)name;
    job.command = argv;
    job.n_command = 1;
    return (Csched__V1__Job *)cs_message_copy(&job.base);
}

static void check_sorted(const struct cs_sched *s)
{
    for (size_t i = 1; i < s->n_jobs; i++)
        if (strcmp(s->jobs[i - 1]->spec->name, s->jobs[i]->spec->name) >= 0)
            fail_msg("jobs[%zu] \"%s\" and jobs[%zu] \"%s\": expected ascending names", i - 1,
                     s->jobs[i - 1]->spec->name, i, s->jobs[i]->spec->name);
}

static void test_job_table(void **state)
{
    enum { N = 300 };
    struct cs_sched *s = calloc(1, sizeof(*s));
    char name[32];

    assert_non_null(s);
    assert_null(cs_job_find(s, "x"));
    assert_int_equal(cs_job_index_after(s, ""), 0);

    /* Even numbers in a scrambled order (7 is coprime to N). */
    for (size_t k = 0; k < N; k++) {
        size_t i = (k * 7) % N;
        (void)snprintf(name, sizeof(name), "job-%04zu", 2 * i);
        struct cs_job *job = cs_job_insert(s, spec_named(name));
        assert_non_null(job);
        assert_ptr_equal(cs_job_find(s, name), job);
        assert_int_equal(job->active, 0);
        assert_int_equal(job->slots, 0);
        assert_true(cs_queue_is_empty(&job->queue));
        assert_int_equal(job->heap_index, CS_NOT_IN_HEAP);
    }
    assert_int_equal(s->n_jobs, N);
    check_sorted(s);

    for (size_t i = 0; i < N; i++) {
        (void)snprintf(name, sizeof(name), "job-%04zu", 2 * i);
        struct cs_job *job = cs_job_find(s, name);
        if (job == NULL || strcmp(job->spec->name, name) != 0)
            fail_msg("find(%s): expected the job, got %s", name, job ? job->spec->name : "NULL");
        assert_ptr_equal(s->jobs[i], job);
        /* After an existing name: the next index. */
        assert_int_equal(cs_job_index_after(s, name), i + 1);
        /* After a missing name between two: the later one's index. */
        (void)snprintf(name, sizeof(name), "job-%04zu", 2 * i + 1);
        assert_null(cs_job_find(s, name));
        assert_int_equal(cs_job_index_after(s, name), i + 1);
    }
    assert_int_equal(cs_job_index_after(s, ""), 0);
    assert_int_equal(cs_job_index_after(s, "a"), 0);
    assert_int_equal(cs_job_index_after(s, "job-"), 0);
    assert_int_equal(cs_job_index_after(s, "z"), N);
    /* A prefix of a name sorts before it. */
    assert_null(cs_job_find(s, "job-000"));
    assert_int_equal(cs_job_index_after(s, "job-000"), 0);

    /* Remove the first, the last and one in the middle. */
    cs_job_remove(s, cs_job_find(s, "job-0000"));
    cs_job_remove(s, cs_job_find(s, "job-0598"));
    cs_job_remove(s, cs_job_find(s, "job-0300"));
    assert_int_equal(s->n_jobs, N - 3);
    check_sorted(s);
    assert_null(cs_job_find(s, "job-0000"));
    assert_null(cs_job_find(s, "job-0598"));
    assert_null(cs_job_find(s, "job-0300"));
    assert_non_null(cs_job_find(s, "job-0298"));
    assert_non_null(cs_job_find(s, "job-0302"));
    assert_ptr_equal(s->jobs[0], cs_job_find(s, "job-0002"));
    assert_int_equal(cs_job_index_after(s, "job-0300"), 149);
    assert_ptr_equal(s->jobs[149], cs_job_find(s, "job-0302"));

    /* A removed name can come back, in its place. */
    cs_job_insert(s, spec_named("job-0300"));
    assert_ptr_equal(s->jobs[149], cs_job_find(s, "job-0300"));
    check_sorted(s);

    /* Replacing the spec keeps the job where it is and frees the old spec
     * (LeakSanitizer checks the latter). */
    struct cs_job *job = cs_job_find(s, "job-0100");
    Csched__V1__Job *spec = spec_named("job-0100");
    spec->max_running = 3;
    cs_job_replace_spec(s, job, spec);
    assert_ptr_equal(cs_job_find(s, "job-0100"), job);
    assert_int_equal(job->spec->max_running, 3);

    cs_job_free_all(s);
    assert_int_equal(s->n_jobs, 0);
    assert_null(s->jobs);
    free(s);
}

/* Byte order, not locale order: upper case sorts before lower case. */
static void test_job_table_byte_order(void **state)
{
    struct cs_sched *s = calloc(1, sizeof(*s));
    static const char *const names[] = {"b", "B", "a", "_", "A", "0", "a.b", "a-b", "a_b"};
    static const char *const sorted[] = {"0", "A", "B", "_", "a", "a-b", "a.b", "a_b", "b"};

    assert_non_null(s);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        cs_job_insert(s, spec_named(names[i]));
    for (size_t i = 0; i < sizeof(sorted) / sizeof(sorted[0]); i++)
        assert_string_equal(s->jobs[i]->spec->name, sorted[i]);
    cs_job_free_all(s);
    free(s);
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
        cmocka_unit_test(test_job_table),
        cmocka_unit_test(test_job_table_byte_order),
    };
    return cmocka_run_group_tests(tests, mark_loop_thread, NULL);
}
