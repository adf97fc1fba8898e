/* End-to-end tests of array runs (TriggerJobRequest.array_size,
 * docs/running.md "Arrays") through libcsched against a real cschedd,
 * real minders and a real PostgreSQL: each run's index and the array's
 * size in its env, the array's cap never exceeded (a flock-guarded count of
 * the runs alive, kept by the commands themselves), one TriggerJob with a
 * key making the array once, CancelRun of the whole array, ListRuns of one
 * array, the sizes refused, and the cap kept across a crash of cschedd. One server serves every
 * test of this file. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

static int trigger_array(struct cs_e2e *e, const char *job, uint32_t first, uint32_t size,
                         uint32_t max_running, const char *key, Csched__V1__Run **run,
                         struct cs_status *st)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;

    req.job_name = (char *)job;
    req.array_first_index = first;
    req.array_size = size;
    req.array_max_running = max_running;
    req.idempotency_key = (char *)(key != NULL ? key : "");
    *run = NULL;
    return cs_scheduler_trigger_job(e->client, &req, run, cs_e2e_opts(), st);
}

/* Triggers the array and asserts OK; returns its id (its first run's). */
static int64_t start_array(struct cs_e2e *e, const char *job, uint32_t first, uint32_t size,
                           uint32_t max_running, const char *key)
{
    struct cs_status st = {0};
    Csched__V1__Run *run;
    int rc = trigger_array(e, job, first, size, max_running, key, &run, &st);
    if (rc != 0)
        fail_msg("TriggerJob(%s, array %u): %s \"%s\"", job, size, cs_status_code_name(rc),
                 st.message);
    assert_int_equal(run->array_id, run->id);
    assert_int_equal(run->array_index, first);
    assert_int_equal(run->array_max_running, max_running);
    int64_t id = run->id;
    csched__v1__run__free_unpacked(run, NULL);
    return id;
}

/* The array's runs as ListRuns gives them (state UNSPECIFIED: all), every
 * page, newest first; returns how many, the runs into out (caller frees). */
static size_t list_array(struct cs_e2e *e, int64_t array_id, Csched__V1__RunState state,
                         Csched__V1__Run ***out)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__Run **runs = NULL;
    char token[64] = "";
    size_t n = 0;

    req.array_id = array_id;
    req.state = state;
    req.page_size = 1000;
    do {
        Csched__V1__ListRunsResponse *resp = NULL;
        struct cs_status st = {0};
        req.page_token = token;
        int rc = cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st);
        if (rc != 0)
            fail_msg("ListRuns(array %lld): %s \"%s\"", (long long)array_id,
                     cs_status_code_name(rc), st.message);
        runs = realloc(runs, (n + resp->n_runs + 1) * sizeof(*runs));
        for (size_t i = 0; i < resp->n_runs; i++) {
            runs[n++] = resp->runs[i];
            resp->runs[i] = NULL;
        }
        resp->n_runs = 0;
        snprintf(token, sizeof(token), "%s", resp->next_page_token);
        csched__v1__list_runs_response__free_unpacked(resp, NULL);
    } while (token[0] != '\0');
    *out = runs;
    return n;
}

static void free_runs(Csched__V1__Run **runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        csched__v1__run__free_unpacked(runs[i], NULL);
    free(runs);
}

/* Waits until every run of the array has ended; asserts they are n. */
static void wait_array_end(struct cs_e2e *e, int64_t array_id, size_t n, int64_t timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms;
    for (;;) {
        Csched__V1__Run **runs;
        size_t total = list_array(e, array_id, CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED, &runs);
        size_t ended = 0;
        for (size_t i = 0; i < total; i++)
            ended += runs[i]->ended_unix_ms > 0;
        free_runs(runs, total);
        assert_int_equal(total, n);
        if (ended == n)
            return;
        if (cs_test_now_ms() > deadline)
            fail_msg("array %lld: %zu of %zu runs ended after %lld ms", (long long)array_id, ended,
                     n, (long long)timeout_ms);
        cs_test_sleep_ms(50);
    }
}

static const char *env_of(const Csched__V1__Run *run, const char *key)
{
    for (size_t i = 0; i < run->n_env; i++)
        if (strcmp(run->env[i]->key, key) == 0)
            return run->env[i]->value;
    return NULL;
}

/* Each run sees its own index and the array's size; the array is one group
 * of ListRuns, indexed from array_first_index. */
static void test_e2e_arrays_index_env(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], shell[PATH_MAX + 128], path[PATH_MAX + 32];
    Csched__V1__Run **runs;

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "arrayenv");
    snprintf(shell, sizeof(shell),
             "echo \"$CSCHED_ARRAY_INDEX $CSCHED_ARRAY_SIZE\" > %s/$CSCHED_ARRAY_INDEX", dir);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    int64_t array_id = start_array(e, name, 5, 6, 0, NULL);
    wait_array_end(e, array_id, 6, CS_E2E_RUN_TIMEOUT_MS);

    size_t n = list_array(e, array_id, CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED, &runs);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i++) {
        /* Newest first: the last index first, ids one after another. */
        uint32_t index = (uint32_t)(10 - i);
        char want[32];
        assert_int_equal(runs[i]->array_id, array_id);
        assert_int_equal(runs[i]->id, array_id + (int64_t)(index - 5));
        assert_int_equal(runs[i]->array_index, index);
        assert_int_equal(runs[i]->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        assert_non_null(env_of(runs[i], "CSCHED_ARRAY_INDEX"));
        assert_int_equal(atoi(env_of(runs[i], "CSCHED_ARRAY_INDEX")), index);
        snprintf(path, sizeof(path), "%s/%u", dir, index);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            fail_msg("run of index %u wrote no %s", index, path);
        char line[64] = "";
        assert_non_null(fgets(line, sizeof(line), f));
        fclose(f);
        snprintf(want, sizeof(want), "%u 6\n", index);
        assert_string_equal(line, want);
    }
    free_runs(runs, n);
    assert_int_equal(cs_test_rmtree(dir), 0);
}

/* The most commands alive at once, of the counts they wrote into
 * dir/counts; asserts there are n of them. */
static int most_alive(const char *dir, int n)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/counts", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int count, most = 0, lines = 0;
    while (fscanf(f, "%d", &count) == 1) {
        most = count > most ? count : most;
        lines++;
    }
    fclose(f);
    assert_int_equal(lines, n);
    return most;
}

/* The shell of a job whose every run counts, under a lock, the runs alive
 * as it starts (into dir/counts), then lives sleep_s. */
static void counting_shell(char *shell, size_t size, const char *dir, const char *sleep_s)
{
    snprintf(shell, size,
             "d=%s; touch $d/alive.$CSCHED_ARRAY_INDEX;"
             " flock $d/lock sh -c \"ls $d | grep -c '^alive\\.' >> $d/counts\";"
             " sleep %s; rm $d/alive.$CSCHED_ARRAY_INDEX",
             dir, sleep_s);
}

/* At most array_max_running of the array run at once, though the global
 * limit (CS_E2E_MAX_RUNNING) would let more: each command counts the
 * commands alive under a lock, as it starts. */
static void test_e2e_arrays_cap(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], shell[4 * PATH_MAX];
    const uint32_t size = 24, cap = 3;

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "arraycap");
    counting_shell(shell, sizeof(shell), dir, "0.3");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    int64_t array_id = start_array(e, name, 0, size, cap, NULL);
    wait_array_end(e, array_id, size, 4 * CS_E2E_RUN_TIMEOUT_MS);

    Csched__V1__Run **runs;
    size_t n = list_array(e, array_id, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, &runs);
    free_runs(runs, n);
    assert_int_equal(n, size);
    int most = most_alive(dir, (int)size);
    if (most > (int)cap)
        fail_msg("%d runs of an array capped at %u were alive at once", most, cap);
    /* The cap is a cap, not a queue of one. */
    if (most < 2)
        fail_msg("at most %d run of the array ran at once: the cap (%u) was never used", most, cap);
    assert_int_equal(cs_test_rmtree(dir), 0);
}

/* A crash of cschedd while the array's cap is full: the restart adopts the
 * running minders and counts them against the cap before it lets any
 * waiting run through. */
static void test_e2e_arrays_cap_across_crash(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], shell[4 * PATH_MAX];
    const uint32_t size = 8, cap = 2;

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "arraycrash");
    counting_shell(shell, sizeof(shell), dir, "1.5");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    int64_t array_id = start_array(e, name, 0, size, cap, NULL);
    Csched__V1__Run *run =
        cs_e2e_wait_state(e, array_id + 1, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_testd_kill(e->d), 0);
    int rc = cs_testd_restart(e->d);
    if (rc != 0)
        fail_msg("cs_testd_restart returned %d", rc);
    wait_array_end(e, array_id, size, 4 * CS_E2E_RUN_TIMEOUT_MS);
    int most = most_alive(dir, (int)size);
    if (most > (int)cap)
        fail_msg("%d runs of an array capped at %u were alive at once across a crash", most, cap);
    assert_int_equal(cs_test_rmtree(dir), 0);
}

/* One key, one array: the second TriggerJob answers the first's run and
 * makes nothing. */
static void test_e2e_arrays_idempotent(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    Csched__V1__Run **runs;

    cs_e2e_name(name, sizeof(name), "arraykey");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    int64_t first = start_array(e, name, 0, 50, 4, "nightly-2026-12-07");
    int64_t again = start_array(e, name, 0, 50, 4, "nightly-2026-12-07");
    assert_int_equal(again, first);
    wait_array_end(e, first, 50, 4 * CS_E2E_RUN_TIMEOUT_MS);
    /* Once it has ended too (the key is then read from the store). */
    assert_int_equal(start_array(e, name, 0, 50, 4, "nightly-2026-12-07"), first);

    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *resp = NULL;
    struct cs_status st = {0};
    req.job_name = name;
    req.page_size = 1000;
    assert_int_equal(cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st), 0);
    assert_int_equal(resp->n_runs, 50);
    csched__v1__list_runs_response__free_unpacked(resp, NULL);
    size_t n = list_array(e, first, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, &runs);
    free_runs(runs, n);
    assert_int_equal(n, 50);
}

static int cancel_array(struct cs_e2e *e, int64_t array_id, Csched__V1__Run **run,
                        struct cs_status *st)
{
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    req.array_id = array_id;
    *run = NULL;
    return cs_scheduler_cancel_run(e->client, &req, run, cs_e2e_opts(), st);
}

/* CancelRun of the array ends every run of it: those running, those queued
 * and those waiting at its cap; none is left to start. */
static void test_e2e_arrays_cancel(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};
    Csched__V1__Run *run, **runs;
    char name[64];

    cs_e2e_name(name, sizeof(name), "arraycancel");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "sleep 30"), NULL);
    int64_t array_id = start_array(e, name, 0, 40, 2, NULL);
    run = cs_e2e_wait_state(e, array_id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);

    int rc = cancel_array(e, array_id, &run, &st);
    if (rc != 0)
        fail_msg("CancelRun(array %lld): %s \"%s\"", (long long)array_id, cs_status_code_name(rc),
                 st.message);
    assert_int_equal(run->id, array_id);
    csched__v1__run__free_unpacked(run, NULL);
    wait_array_end(e, array_id, 40, CS_E2E_RUN_TIMEOUT_MS);
    size_t n = list_array(e, array_id, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, &runs);
    size_t started = 0;
    for (size_t i = 0; i < n; i++)
        started += runs[i]->n_attempts;
    free_runs(runs, n);
    assert_int_equal(n, 40);
    /* The cap's two, and none after them. */
    assert_int_equal(started, 2);

    /* Nothing is left: FAILED_PRECONDITION; a run of no array is none. */
    cs_e2e_assert_status(cancel_array(e, array_id, &run, &st), &st, GRPC_STATUS_FAILED_PRECONDITION,
                         "ended");
    int64_t single = cs_e2e_trigger(e, name);
    cs_e2e_assert_status(cancel_array(e, single, &run, &st), &st, GRPC_STATUS_NOT_FOUND,
                         "does not exist");
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    req.run_id = single;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &req, &run, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
}

/* Sizes past the limit, a cap without an array, and indices past the last
 * are INVALID_ARGUMENT naming the field; 1,000 runs are one call. */
static void test_e2e_arrays_sizes(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};
    Csched__V1__Run *run;
    char name[64];

    cs_e2e_name(name, sizeof(name), "arraysize");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    cs_e2e_assert_status(trigger_array(e, name, 0, 1001, 0, NULL, &run, &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "array_size");
    cs_e2e_assert_status(trigger_array(e, name, 0, 0, 4, NULL, &run, &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "array_size");
    cs_e2e_assert_status(trigger_array(e, name, UINT32_MAX, 2, 0, NULL, &run, &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "array_first_index");
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *resp = NULL;
    req.job_name = name;
    assert_int_equal(cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st), 0);
    assert_int_equal(resp->n_runs, 0);
    csched__v1__list_runs_response__free_unpacked(resp, NULL);

    /* The most: made and answered in one call, queued behind a cap of 1 and
     * cancelled as a whole. */
    int64_t t0 = cs_test_now_ms();
    int64_t array_id = start_array(e, name, 0, 1000, 1, NULL);
    int64_t took_ms = cs_test_now_ms() - t0;
    fprintf(stderr, "arrays: TriggerJob of 1000 runs answered in %lld ms\n", (long long)took_ms);
    assert_int_equal(cancel_array(e, array_id, &run, &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
    wait_array_end(e, array_id, 1000, CS_E2E_RUN_TIMEOUT_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_arrays_index_env),
        cmocka_unit_test(test_e2e_arrays_cap),
        cmocka_unit_test(test_e2e_arrays_idempotent),
        cmocka_unit_test(test_e2e_arrays_cancel),
        cmocka_unit_test(test_e2e_arrays_sizes),
        cmocka_unit_test(test_e2e_arrays_cap_across_crash),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
