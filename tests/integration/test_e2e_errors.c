/* End-to-end tests of error statuses and of the service-level methods
 * through libcsched (and raw gRPC where a typed call cannot say it) against a
 * real cschedd: every status a person can cause, each with a message that
 * names the field; hostile input that must not hurt the server; GetStats;
 * the health service; an unknown method. One server serves every test. */
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

/* Calls CreateJob and asserts it fails with want, naming word. */
static void create_fails(struct cs_e2e *e, Csched__V1__Job *job, int want, const char *word)
{
    struct cs_status st = {0};
    int rc = cs_e2e_try_create_job(e, job, &st);

    cs_e2e_assert_status(rc, &st, want, word);
}

/* The server is still there and answering. */
static void assert_alive(struct cs_e2e *e)
{
    int serving = -1;

    assert_int_equal(cs_e2e_health_check(e, "", &serving), 0);
    assert_int_equal(serving, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
}

static void test_e2e_errors_unknown_job(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__TriggerJobRequest trig = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobRequest del = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *dresp = NULL;
    Csched__V1__Job *job = NULL;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};

    get.name = "no-such-job";
    cs_e2e_assert_status(cs_scheduler_get_job(e->client, &get, &job, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, "no-such-job");
    assert_null(job);
    trig.job_name = "no-such-job";
    cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &trig, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, "no-such-job");
    assert_null(run);
    del.name = "no-such-job";
    cs_e2e_assert_status(cs_scheduler_delete_job(e->client, &del, &dresp, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, "no-such-job");
    assert_null(dresp);
}

static void test_e2e_errors_duplicate_name(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64];

    cs_e2e_name(name, sizeof(name), "dup");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    job.name = name;
    job.shell = "false";
    create_fails(e, &job, GRPC_STATUS_ALREADY_EXISTS, name);
}

static void test_e2e_errors_bad_command(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char *argv[] = {"true"};
    char *empty_argv[] = {""};

    /* Neither command nor shell. */
    job.name = "no-command";
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "command");
    /* Both. */
    job.name = "both-commands";
    job.n_command = 1;
    job.command = argv;
    job.shell = "true";
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "shell");
    /* An argv whose program name is empty. */
    job.name = "empty-argv0";
    job.command = empty_argv;
    job.shell = "";
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "command");
}

static void test_e2e_errors_bad_name(void **state)
{
    static const char *const bad[] = {
        "", "-leading-dash", ".leading-dot", "has space", "slash/inside", "semi;colon", "ünïcode"};
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char long_name[130];

    job.shell = "true";
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(bad); i++) {
        job.name = (char *)bad[i];
        create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "name");
    }
    /* 129 characters: one more than allowed. */
    memset(long_name, 'n', 129);
    long_name[129] = '\0';
    job.name = long_name;
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "name");
    /* 128 is fine. */
    long_name[128] = '\0';
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, long_name, "true"), NULL);
}

static void test_e2e_errors_bad_fields(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job__EnvEntry env = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry *envs[] = {&env};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;

    job.name = "bad-fields";
    job.shell = "true";
    job.working_dir = "relative/dir";
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "working_dir");
    job.working_dir = "";

    job.n_env = 1;
    job.env = envs;
    env.key = "A=B";
    env.value = "x";
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "env");
    env.key = "";
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "env");
}

/* The documented upper bounds (docs/configuration.md), each one past. */
static void test_e2e_errors_oversized_values(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job__LabelsEntry label = CSCHED__V1__JOB__LABELS_ENTRY__INIT;
    Csched__V1__Job__LabelsEntry *labels[] = {&label};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char key[65];

    job.name = "oversized";
    job.shell = "true";
    job.max_attempts = 101;
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "max_attempts");
    job.max_attempts = 0;
    job.timeout_seconds = 7 * 86400 + 1;
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "timeout_seconds");
    job.timeout_seconds = 0;
    job.retry_backoff_ms = 600001;
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "retry_backoff_ms");
    job.retry_backoff_ms = 0;
    memset(key, 'k', 64);
    key[64] = '\0';
    label.key = key;
    label.value = "v";
    job.n_labels = 1;
    job.labels = labels;
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "label");
    job.n_labels = 0;
    /* trigger_env: a name with '=', and a name twice. */
    char *bad_name[] = {"A=B"}, *twice[] = {"A", "A"};
    job.trigger_env = bad_name;
    job.n_trigger_env = 1;
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "job.trigger_env[0] \"A=B\"");
    job.trigger_env = twice;
    job.n_trigger_env = 2;
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "job.trigger_env names \"A\" twice");
}

static void test_e2e_errors_bad_trigger(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__TriggerJobRequest__EnvEntry env = CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT;
    Csched__V1__TriggerJobRequest__EnvEntry *envs[] = {&env};
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    char name[64], key[130];

    cs_e2e_name(name, sizeof(name), "badtrig");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    req.job_name = name;
    memset(key, 'k', 129);
    key[129] = '\0';
    req.idempotency_key = key;
    cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "idempotency_key");
    assert_null(run);
    req.idempotency_key = "";
    req.n_env = 1;
    req.env = envs;
    env.key = "K=V";
    env.value = "x";
    cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "env");
    assert_null(run);
}

static void test_e2e_errors_unknown_run(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__GetRunRequest get = CSCHED__V1__GET_RUN_REQUEST__INIT;
    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__ReadLogsRequest logs = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};

    get.run_id = 987654321;
    cs_e2e_assert_status(cs_scheduler_get_run(e->client, &get, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, "run");
    assert_null(run);
    cancel.run_id = 987654321;
    cs_e2e_assert_status(cs_scheduler_cancel_run(e->client, &cancel, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, "run");
    assert_null(run);

    logs.run_id = 987654321;
    cs_e2e_assert_status(cs_e2e_read_logs_status(e, &logs, &st), &st, GRPC_STATUS_NOT_FOUND, "run");
}

static void test_e2e_errors_bad_page_token(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListJobsRequest jobs = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    Csched__V1__ListRunsRequest runs = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListJobsResponse *jresp = NULL;
    Csched__V1__ListRunsResponse *rresp = NULL;
    struct cs_status st = {0};

    jobs.page_token = "not-a-token!";
    cs_e2e_assert_status(cs_scheduler_list_jobs(e->client, &jobs, &jresp, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "page_token");
    assert_null(jresp);
    runs.page_token = "not-a-token!";
    cs_e2e_assert_status(cs_scheduler_list_runs(e->client, &runs, &rresp, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "page_token");
    assert_null(rresp);
}

/* A request over gRPC's 4 MiB default is refused, and the server lives on. */
static void test_e2e_errors_huge_request(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    size_t size = (size_t)5 << 20;
    char *shell = malloc(size + 1);
    struct cs_status st = {0};
    int rc;

    assert_non_null(shell);
    memset(shell, ':', size);
    shell[size] = '\0';
    job.name = "huge";
    job.shell = shell;
    rc = cs_e2e_try_create_job(e, &job, &st);
    free(shell);
    if (rc != GRPC_STATUS_RESOURCE_EXHAUSTED && rc != GRPC_STATUS_INVALID_ARGUMENT)
        fail_msg("5 MiB CreateJob: %s \"%s\", want RESOURCE_EXHAUSTED or INVALID_ARGUMENT",
                 cs_status_code_name(rc), st.message);
    assert_alive(e);
}

/* A request just under gRPC's limit (a 3.5 MiB shell string) is refused or
 * stored, and either way it must not stall the loop. */
static void create_large_job(struct cs_e2e *e, void *arg)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    size_t size = (size_t)7 << 19;
    char *shell = malloc(size + 1), name[64];
    struct cs_status st = {0};

    (void)arg;
    assert_non_null(shell);
    memset(shell, ':', size);
    shell[size] = '\0';
    cs_e2e_name(name, sizeof(name), "large");
    job.name = name;
    job.shell = shell;
    int rc = cs_e2e_try_create_job(e, &job, &st);
    free(shell);
    if (rc != 0 && rc != GRPC_STATUS_INVALID_ARGUMENT && rc != GRPC_STATUS_RESOURCE_EXHAUSTED)
        fail_msg("3.5 MiB CreateJob: %s \"%s\", want OK, INVALID_ARGUMENT or RESOURCE_EXHAUSTED",
                 cs_status_code_name(rc), st.message);
}

static void test_e2e_errors_large_request_loop_free(void **state)
{
    struct cs_e2e *e = *state;

    cs_e2e_assert_loop_free(e, "a 3.5 MiB CreateJob", create_large_job, NULL);
    assert_alive(e);
}

static void test_e2e_errors_huge_name(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char *name = malloc(10001);

    assert_non_null(name);
    memset(name, 'a', 10000);
    name[10000] = '\0';
    job.name = name;
    job.shell = "true";
    create_fails(e, &job, GRPC_STATUS_INVALID_ARGUMENT, "name");
    free(name);
    assert_alive(e);
}

/* Sends a CreateJobRequest whose env entry has a NUL byte (in the key, or in
 * the value): protobuf-c cannot build one, so the packed bytes are patched. */
static void create_with_nul(struct cs_e2e *e, const char *key, const char *value)
{
    Csched__V1__Job__EnvEntry env = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry *envs[] = {&env};
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct cs_status st = {0};
    uint8_t *buf, *at;
    size_t len;
    char name[64];
    int rc;

    cs_e2e_name(name, sizeof(name), "nul");
    env.key = (char *)key;
    env.value = (char *)value;
    job.name = name;
    job.shell = "true";
    job.n_env = 1;
    job.env = envs;
    req.job = &job;
    len = csched__v1__create_job_request__get_packed_size(&req);
    buf = malloc(len);
    assert_non_null(buf);
    assert_int_equal(csched__v1__create_job_request__pack(&req, buf), len);
    /* '@' appears once in key or value; it becomes the NUL. */
    at = memchr(buf, '@', len);
    assert_non_null(at);
    *at = '\0';
    rc = cs_e2e_raw_unary(e, "/csched.v1.Scheduler/CreateJob", buf, len, &st);
    free(buf);
    if (rc != GRPC_STATUS_INVALID_ARGUMENT)
        fail_msg("CreateJob with env {\"%s\": \"%s\"} ('@' sent as NUL): %s \"%s\", want "
                 "INVALID_ARGUMENT",
                 key, value, cs_status_code_name(rc), st.message);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "env");
}

static void test_e2e_errors_nul_in_env(void **state)
{
    struct cs_e2e *e = *state;

    create_with_nul(e, "KEY@X", "value");
    create_with_nul(e, "KEY", "val@ue");
    assert_alive(e);
}

/* A method the service does not have is UNIMPLEMENTED, answered at once. */
static void test_e2e_errors_unknown_method(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};
    int64_t t0 = cs_test_now_ms();
    int rc;

    rc = cs_e2e_raw_unary(e, "/csched.v1.Scheduler/Nope", "", 0, &st);
    if (rc != GRPC_STATUS_UNIMPLEMENTED)
        fail_msg("/csched.v1.Scheduler/Nope: %s \"%s\", want UNIMPLEMENTED",
                 cs_status_code_name(rc), st.message);
    assert_true(cs_test_now_ms() - t0 < 2000);
    assert_alive(e);
}

static void test_e2e_errors_health(void **state)
{
    struct cs_e2e *e = *state;
    int serving = -1;

    assert_alive(e);
    assert_int_equal(cs_e2e_health_check(e, "csched.v1.Scheduler", &serving), 0);
    assert_int_equal(serving, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
    /* The health protocol answers NOT_FOUND for a service it does not know. */
    assert_int_equal(cs_e2e_health_check(e, "no.such.Service", &serving), GRPC_STATUS_NOT_FOUND);
}

/* GetStats: the limit it was started with, counts that add up once runs end,
 * and a probe that has ticked. */
static void test_e2e_errors_stats(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__GetStatsRequest req = CSCHED__V1__GET_STATS_REQUEST__INIT;
    Csched__V1__Stats *before = NULL, *after = NULL;
    struct cs_status st = {0};
    char name[64];

    assert_int_equal(cs_scheduler_get_stats(e->client, &req, &before, cs_e2e_opts(), &st), 0);
    cs_e2e_name(name, sizeof(name), "stats");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    for (int i = 0; i < 3; i++)
        csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, name)), NULL);
    assert_int_equal(cs_scheduler_get_stats(e->client, &req, &after, cs_e2e_opts(), &st), 0);

    assert_int_equal(after->max_running, CS_E2E_MAX_RUNNING);
    assert_int_equal(after->running, 0);
    assert_int_equal(after->queued, 0);
    assert_int_equal(after->starting, 0);
    assert_true(after->runs_started >= before->runs_started + 3);
    assert_true(after->runs_finished >= before->runs_finished + 3);
    assert_true(after->runs_finished <= after->runs_started);
    assert_true(after->last_seq >= before->last_seq + 3 * 7);
    assert_true(after->uptime_ms > before->uptime_ms);
    assert_non_null(after->lag_since_start);
    assert_non_null(after->lag_last_minute);
    assert_true(after->lag_since_start->ticks > 0);
    assert_true(after->lag_last_minute->ticks > 0);
    /* A 10 ms timer cannot tick more often than its period allows. */
    assert_true(after->lag_since_start->ticks <= (uint64_t)after->uptime_ms / 10 + 1);
    assert_true(after->lag_since_start->p50_us <= after->lag_since_start->p99_us);
    assert_true(after->lag_since_start->p99_us <= after->lag_since_start->max_us);
    csched__v1__stats__free_unpacked(after, NULL);
    csched__v1__stats__free_unpacked(before, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_errors_unknown_job),
        cmocka_unit_test(test_e2e_errors_duplicate_name),
        cmocka_unit_test(test_e2e_errors_bad_command),
        cmocka_unit_test(test_e2e_errors_bad_name),
        cmocka_unit_test(test_e2e_errors_bad_fields),
        cmocka_unit_test(test_e2e_errors_oversized_values),
        cmocka_unit_test(test_e2e_errors_bad_trigger),
        cmocka_unit_test(test_e2e_errors_unknown_run),
        cmocka_unit_test(test_e2e_errors_bad_page_token),
        cmocka_unit_test(test_e2e_errors_huge_request),
        cmocka_unit_test(test_e2e_errors_large_request_loop_free),
        cmocka_unit_test(test_e2e_errors_huge_name),
        cmocka_unit_test(test_e2e_errors_nul_in_env),
        cmocka_unit_test(test_e2e_errors_unknown_method),
        cmocka_unit_test(test_e2e_errors_health),
        cmocka_unit_test(test_e2e_errors_stats),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
