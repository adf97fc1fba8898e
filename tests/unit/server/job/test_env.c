/* Unit tests of cs_env_build: the order of the sources (the server's own
 * environment, then the job's, the trigger's and csched's variables), the
 * last definition of a name winning, names that are prefixes of others and
 * values that contain '='. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "env.h"

/* A source from pairs of strings; the strings are borrowed. */
struct kv_list {
    struct cs_kv kv[8];
    struct cs_kv *ptrs[8];
    size_t n;
};

static void kv_add(struct kv_list *list, const char *key, const char *value)
{
    assert_true(list->n < 8);
    struct cs_kv *kv = &list->kv[list->n];
    memset(kv, 0, sizeof(*kv));
    kv->key = (char *)key;
    kv->value = (char *)value;
    list->ptrs[list->n++] = kv;
}

static struct cs_env_source source_of(const struct kv_list *list)
{
    return (struct cs_env_source){.entries = list->ptrs, .n = list->n};
}

static size_t env_len(char **env)
{
    size_t n = 0;

    while (env[n] != NULL)
        n++;
    return n;
}

/* The entry for name ("NAME=..."), or NULL; fails if name is there twice. */
static const char *env_find(char **env, const char *name)
{
    size_t len = strlen(name);
    const char *found = NULL;

    for (size_t i = 0; env[i] != NULL; i++) {
        if (strncmp(env[i], name, len) == 0 && (env[i][len] == '=' || env[i][len] == '\0')) {
            if (found != NULL)
                fail_msg("%s is defined twice: \"%s\" and \"%s\"", name, found, env[i]);
            found = env[i];
        }
    }
    return found;
}

static void assert_entry(char **env, const char *name, const char *want)
{
    const char *got = env_find(env, name);

    if (got == NULL || strcmp(got, want) != 0)
        fail_msg("%s: expected \"%s\", got \"%s\"", name, want, got ? got : "(absent)");
}

static void test_env_override_order(void **state)
{
    char *base[] = {"A=base", "B=base", "C=base", "D=base", "CSCHED_RUN_ID=from-base", NULL};
    struct kv_list job = {0}, run = {0}, csched = {0};

    kv_add(&job, "A", "job");
    kv_add(&job, "B", "job");
    kv_add(&job, "D", "job");
    kv_add(&job, "CSCHED_JOB_NAME", "from-job");
    kv_add(&run, "A", "run");
    kv_add(&run, "D", "run");
    kv_add(&run, "CSCHED_ATTEMPT", "from-run");
    kv_add(&run, "E", "run");
    kv_add(&csched, "CSCHED_RUN_ID", "7");
    kv_add(&csched, "CSCHED_JOB_NAME", "nightly");
    kv_add(&csched, "CSCHED_ATTEMPT", "2");
    const struct cs_env_source sources[] = {source_of(&job), source_of(&run), source_of(&csched)};

    char **env = cs_env_build(base, sources, 3);
    assert_entry(env, "A", "A=run");
    assert_entry(env, "B", "B=job");
    assert_entry(env, "C", "C=base");
    assert_entry(env, "D", "D=run");
    assert_entry(env, "E", "E=run");
    assert_entry(env, "CSCHED_RUN_ID", "CSCHED_RUN_ID=7");
    assert_entry(env, "CSCHED_JOB_NAME", "CSCHED_JOB_NAME=nightly");
    assert_entry(env, "CSCHED_ATTEMPT", "CSCHED_ATTEMPT=2");
    assert_int_equal(env_len(env), 8);
    cs_env_free(env);
}

/* Within one source too, and in the base environment, the last one wins. */
static void test_env_last_definition_wins(void **state)
{
    char *base[] = {"X=1", "Y=1", "X=2", NULL};
    struct kv_list job = {0};

    kv_add(&job, "Z", "a");
    kv_add(&job, "Z", "b");
    kv_add(&job, "Y", "2");
    kv_add(&job, "Y", "3");
    const struct cs_env_source sources[] = {source_of(&job)};

    char **env = cs_env_build(base, sources, 1);
    assert_entry(env, "X", "X=2");
    assert_entry(env, "Y", "Y=3");
    assert_entry(env, "Z", "Z=b");
    assert_int_equal(env_len(env), 3);
    cs_env_free(env);
}

static void test_env_prefix_names(void **state)
{
    char *base[] = {"PATH=/bin", "PATHX=x", "PAT=p", "P=1", NULL};
    struct kv_list job = {0};

    kv_add(&job, "PATH", "/usr/bin");
    kv_add(&job, "PATHXY", "xy");
    const struct cs_env_source sources[] = {source_of(&job)};

    char **env = cs_env_build(base, sources, 1);
    assert_entry(env, "PATH", "PATH=/usr/bin");
    assert_entry(env, "PATHX", "PATHX=x");
    assert_entry(env, "PAT", "PAT=p");
    assert_entry(env, "P", "P=1");
    assert_entry(env, "PATHXY", "PATHXY=xy");
    assert_int_equal(env_len(env), 5);
    cs_env_free(env);

    /* The longer name overriding must not touch the shorter one either. */
    struct kv_list run = {0};
    kv_add(&run, "PATHX", "y");
    kv_add(&run, "PA", "a");
    const struct cs_env_source sources2[] = {source_of(&run)};
    env = cs_env_build(base, sources2, 1);
    assert_entry(env, "PATH", "PATH=/bin");
    assert_entry(env, "PATHX", "PATHX=y");
    assert_entry(env, "PA", "PA=a");
    assert_int_equal(env_len(env), 5);
    cs_env_free(env);
}

/* A name ends at the first '='; the value keeps any further ones. */
static void test_env_values_with_equals(void **state)
{
    char *base[] = {"OPTS=a=b=c", "EQ==", "KEEP=x=y", NULL};
    struct kv_list job = {0};

    kv_add(&job, "OPTS", "--level=3");
    kv_add(&job, "NEW", "k=v");
    kv_add(&job, "EMPTY", "");
    const struct cs_env_source sources[] = {source_of(&job)};

    char **env = cs_env_build(base, sources, 1);
    assert_entry(env, "OPTS", "OPTS=--level=3");
    assert_entry(env, "EQ", "EQ==");
    assert_entry(env, "KEEP", "KEEP=x=y");
    assert_entry(env, "NEW", "NEW=k=v");
    assert_entry(env, "EMPTY", "EMPTY=");
    assert_int_equal(env_len(env), 5);
    cs_env_free(env);
}

/* Names seen only once keep their relative order. */
static void test_env_keeps_order(void **state)
{
    char *base[] = {"HOME=/root", "LANG=C", "TERM=dumb", NULL};
    struct kv_list job = {0};

    kv_add(&job, "LANG", "C.UTF-8");
    kv_add(&job, "TZ", "UTC");
    const struct cs_env_source sources[] = {source_of(&job)};

    char **env = cs_env_build(base, sources, 1);
    assert_int_equal(env_len(env), 4);
    assert_string_equal(env[0], "HOME=/root");
    assert_string_equal(env[1], "TERM=dumb");
    assert_string_equal(env[2], "LANG=C.UTF-8");
    assert_string_equal(env[3], "TZ=UTC");
    cs_env_free(env);
}

static void test_env_empty(void **state)
{
    char *base[] = {NULL};
    struct kv_list none = {0};
    const struct cs_env_source sources[] = {source_of(&none), source_of(&none)};

    char **env = cs_env_build(base, sources, 2);
    assert_non_null(env);
    assert_null(env[0]);
    cs_env_free(env);

    env = cs_env_build(base, NULL, 0);
    assert_null(env[0]);
    cs_env_free(env);
    cs_env_free(NULL);
}

/* The copy owns its strings: changing the original leaves it alone. */
static void test_env_copy(void **state)
{
    char a[] = "A=1", b[] = "B=2";
    char *base[] = {a, b, NULL};

    char **env = cs_env_copy(base);
    assert_int_equal(env_len(env), 2);
    assert_ptr_not_equal(env[0], a);
    a[2] = '9';
    assert_string_equal(env[0], "A=1");
    assert_string_equal(env[1], "B=2");
    cs_env_free(env);
}

/* The server's own settings (its database URL among them) never reach a
 * command: every CSCHED_ variable is left out, and nothing else is. */
static void test_env_copy_without_prefix(void **state)
{
    char *base[] = {"PATH=/bin",  "CSCHED_DATABASE_URL=postgresql://u:secret@db/x",
                    "CSCHEDX=1",  "CSCHED_=2",
                    "HOME=/root", NULL};
    char **env = cs_env_base_for_jobs(base);

    assert_string_equal(env[0], "PATH=/bin");
    assert_string_equal(env[1], "CSCHEDX=1");
    assert_string_equal(env[2], "HOME=/root");
    assert_null(env[3]);
    cs_env_free(env);
}

/* Nor do libpq's variables or a DATABASE_URL: each may hold the password. */
static void test_env_base_drops_database_credentials(void **state)
{
    char *base[] = {"PGPASSWORD=secret",
                    "PGHOST=db",
                    "PGPASSFILE=/root/.pgpass",
                    "PGSERVICE=prod",
                    "PG=1",
                    "DATABASE_URL=postgresql://u:secret@db/x",
                    "APP_DATABASE_URL=postgresql://u:secret@db/y",
                    "DATABASE_URLS=kept",
                    "MY_PGHOST=kept",
                    "LANG=C.UTF-8",
                    NULL};
    char **env = cs_env_base_for_jobs(base);

    assert_string_equal(env[0], "DATABASE_URLS=kept");
    assert_string_equal(env[1], "MY_PGHOST=kept");
    assert_string_equal(env[2], "LANG=C.UTF-8");
    assert_null(env[3]);
    cs_env_free(env);
}

/* 60,000 variables, half of them overridden, merge in well under a second
 * (the scan it replaced took 9.7 s), each name once, the last one winning. */
static void test_env_many_variables(void **state)
{
    enum { N = 30000 };
    char **base = calloc(N + 1, sizeof(*base));
    struct cs_kv *kv = calloc(N, sizeof(*kv));
    struct cs_kv **ptrs = calloc(N, sizeof(*ptrs));
    char(*names)[16] = calloc(N, sizeof(*names));

    assert_true(base != NULL && kv != NULL && ptrs != NULL && names != NULL);
    for (size_t i = 0; i < N; i++) {
        base[i] = malloc(24);
        assert_non_null(base[i]);
        (void)snprintf(base[i], 24, "V%zu=base", i);
        (void)snprintf(names[i], sizeof(names[i]), "%s%zu", i % 2 ? "V" : "W", i);
        kv[i].key = names[i];
        kv[i].value = "job";
        ptrs[i] = &kv[i];
    }
    const struct cs_env_source sources[] = {{ptrs, N}};
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    char **env = cs_env_build(base, sources, 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (s > 0.5)
        fail_msg("merging %d + %d variables took %.3f s", N, N, s);
    /* Odd V<i> are overridden by the job; even W<i> are new. */
    assert_int_equal(env_len(env), N + N / 2);
    assert_string_equal(env[0], "V0=base");
    assert_entry(env, "V1", "V1=job");
    assert_entry(env, "W0", "W0=job");
    assert_entry(env, "V2", "V2=base");
    cs_env_free(env);
    for (size_t i = 0; i < N; i++)
        free(base[i]);
    free(base);
    free(kv);
    free(ptrs);
    free(names);
}

static void test_env_attempt_over_the_base(void **state)
{
    char *base[] = {"A=base", "HOME=/root", "B=base", "CSCHED_ATTEMPT=from-base", NULL};
    Csched__V1__Job spec = CSCHED__V1__JOB__INIT;
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;
    struct kv_list job = {0}, trigger = {0};

    kv_add(&job, "B", "job");
    kv_add(&job, "J", "job");
    kv_add(&job, "J", "job-again");
    kv_add(&trigger, "J", "trigger");
    kv_add(&trigger, "T", "trigger");
    spec.env = (Csched__V1__Job__EnvEntry **)job.ptrs;
    spec.n_env = job.n;
    run.env = (Csched__V1__Run__EnvEntry **)trigger.ptrs;
    run.n_env = trigger.n;
    run.id = 42;
    run.job_name = "nightly";
    char **env = cs_env_build_attempt(base, &spec, &run, 3);
    const char *want[] = {"A=base",
                          "HOME=/root",
                          "B=job",
                          "J=trigger",
                          "T=trigger",
                          "CSCHED_RUN_ID=42",
                          "CSCHED_JOB_NAME=nightly",
                          "CSCHED_ATTEMPT=3"};
    assert_int_equal(env_len(env), sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(env[i], want[i]);
    cs_env_free(env);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_copy_without_prefix),
        cmocka_unit_test(test_env_base_drops_database_credentials),
        cmocka_unit_test(test_env_many_variables),
        cmocka_unit_test(test_env_override_order),
        cmocka_unit_test(test_env_last_definition_wins),
        cmocka_unit_test(test_env_prefix_names),
        cmocka_unit_test(test_env_values_with_equals),
        cmocka_unit_test(test_env_keeps_order),
        cmocka_unit_test(test_env_empty),
        cmocka_unit_test(test_env_copy),
        cmocka_unit_test(test_env_attempt_over_the_base),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
