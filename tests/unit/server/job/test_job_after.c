/* job_after: the rules of job.after, the cycles a list would close, and
 * which ends meet which on. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "job_after.h"

#define MAX_JOBS 8

/* A table of jobs, each after at most 4 others. */
struct table {
    Csched__V1__Job jobs[MAX_JOBS];
    Csched__V1__Dependency deps[MAX_JOBS][4];
    Csched__V1__Dependency *ptrs[MAX_JOBS][4];
    size_t n;
};

static Csched__V1__Job *add(struct table *t, const char *name, const char *const *ups, size_t n)
{
    Csched__V1__Job *job = &t->jobs[t->n];
    csched__v1__job__init(job);
    job->name = (char *)name;
    job->shell = "true";
    for (size_t i = 0; i < n; i++) {
        csched__v1__dependency__init(&t->deps[t->n][i]);
        t->deps[t->n][i].job = (char *)ups[i];
        t->ptrs[t->n][i] = &t->deps[t->n][i];
    }
    job->after = t->ptrs[t->n];
    job->n_after = n;
    t->n++;
    return job;
}

static const Csched__V1__Job *lookup(void *ctx, const char *name)
{
    struct table *t = ctx;
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->jobs[i].name, name) == 0)
            return &t->jobs[i];
    return NULL;
}

static void test_validate(void **state)
{
    struct table t = {0};
    struct cs_err err;
    const char *self[] = {"a"}, *twice[] = {"b", "b"}, *bad[] = {"-x"}, *ok[] = {"b", "c"};
    assert_int_equal(cs_job_after_validate(add(&t, "a", self, 1), &err), -EINVAL);
    assert_non_null(strstr(err.msg, "itself"));
    assert_string_equal(err.field, "job.after[0].job");
    assert_int_equal(cs_job_after_validate(add(&t, "a", twice, 2), &err), -EINVAL);
    assert_non_null(strstr(err.msg, "twice"));
    assert_int_equal(cs_job_after_validate(add(&t, "a", bad, 1), &err), -EINVAL);
    Csched__V1__Job *job = add(&t, "a", ok, 2);
    assert_int_equal(cs_job_after_validate(job, &err), 0);
    job->after[1]->on = (Csched__V1__DependencyOn)7;
    assert_int_equal(cs_job_after_validate(job, &err), -EINVAL);
    assert_string_equal(err.field, "job.after[1].on");
}

/* c after b after a; a after c closes a -> c -> b -> a; a diamond does not. */
static void test_cycles(void **state)
{
    struct table t = {0};
    struct cs_err err;
    const char *a[] = {"a"}, *b[] = {"b"}, *c[] = {"c"}, *bc[] = {"b", "c"};
    add(&t, "a", NULL, 0);
    add(&t, "b", a, 1);
    add(&t, "c", b, 1);
    add(&t, "d", bc, 2);
    struct table upd = t;
    Csched__V1__Job *new_a = add(&upd, "a", c, 1);
    assert_int_equal(cs_job_after_find_cycle(new_a, lookup, &t, &err), -EINVAL);
    assert_string_equal(err.field, "job.after");
    assert_non_null(strstr(err.msg, "a -> c -> b -> a"));
    /* The diamond d after b and c, both after a: no cycle. */
    Csched__V1__Job *e = add(&upd, "e", bc, 2);
    assert_int_equal(cs_job_after_find_cycle(e, lookup, &t, &err), 0);
    /* An unknown upstream is no cycle. */
    const char *nobody[] = {"nobody"};
    assert_int_equal(cs_job_after_find_cycle(add(&upd, "f", nobody, 1), lookup, &t, &err), 0);
}

static void test_met(void **state)
{
    const Csched__V1__DependencyOn S = CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED,
                                   F = CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_FAILED,
                                   A = CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY,
                                   U = CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_UNSPECIFIED;
    assert_true(cs_job_after_met(S, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, true));
    assert_true(cs_job_after_met(U, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, true));
    assert_false(cs_job_after_met(S, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, true));
    assert_true(cs_job_after_met(F, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT, true));
    assert_true(cs_job_after_met(F, CSCHED__V1__RUN_STATE__RUN_STATE_LOST, true));
    assert_false(cs_job_after_met(F, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, true));
    assert_true(cs_job_after_met(A, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, true));
    assert_false(cs_job_after_met(A, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, false));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_cycles),
        cmocka_unit_test(test_met),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
