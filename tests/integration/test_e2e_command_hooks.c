/* End-to-end tests of command hooks (docs/hooks.md, "Command hooks"): the
 * command
 * sees the run's outcome in its environment, runs as the job's user (the
 * default job user, or run_as_user), its output is kept and shown by
 * ListHookDeliveries; a non-zero exit is retried until it exits 0 or its
 * attempts run out; a job's commands run one at a time in the order of the
 * changes; a delivery pending across a kill -9 of cschedd runs after its
 * restart; a command that runs past its timeout is stopped and recorded
 * so; a hook that would run as a user the job may not run as, or that
 * is both a webhook and a command, is refused at CreateJob. */
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define WAIT_MS 20000
#define CONSOLE_URL "https://console.example/ui"

/* A shell job with one command hook (shell hook_shell) on the given events. */
static Csched__V1__Job *command_job(const char *name, const char *shell, const char *hook_shell,
                                    const Csched__V1__HookEvent *events, size_t n_events)
{
    Csched__V1__Job *job = cs_e2e_hook_job(name, shell, "cmd", events, n_events);
    job->hooks[0]->shell = strdup(hook_shell);
    job->hooks[0]->timeout_ms = 10000;
    return job;
}

/* Waits until job has n deliveries, none of them pending; returns them. */
static Csched__V1__ListHookDeliveriesResponse *wait_settled(struct cs_e2e *e, const char *job,
                                                            size_t n)
{
    for (int64_t until = cs_test_now_ms() + WAIT_MS;; cs_test_sleep_ms(50)) {
        Csched__V1__ListHookDeliveriesResponse *resp = cs_e2e_hook_deliveries(e, job);
        size_t done = 0;
        for (size_t i = 0; i < resp->n_deliveries; i++)
            done += resp->deliveries[i]->status !=
                    CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_PENDING;
        if (done == n && resp->n_deliveries == n)
            return resp;
        if (cs_test_now_ms() > until)
            fail_msg("%zu of %zu deliveries of %s settled (%zu rows)", done, n, job,
                     resp->n_deliveries);
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
}

static void assert_delivered(const Csched__V1__HookDelivery *d)
{
    if (d->status != CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_DELIVERED)
        fail_msg("delivery %lld is %d after %u attempts: %s", (long long)d->id, (int)d->status,
                 d->attempts, d->last_error);
}

/* The contents of dir/name ("" when it is not there), malloc'd. */
static char *slurp(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 65536);
    if (f != NULL) {
        size_t n = fread(text, 1, 65535, f);
        text[n] = '\0';
        fclose(f);
    }
    return text;
}

static int64_t run_once(struct cs_e2e *e, const char *job)
{
    int64_t id = cs_e2e_trigger(e, job);
    protobuf_c_message_free_unpacked(&cs_e2e_wait_end(e, id)->base, NULL);
    return id;
}

static void free_job(Csched__V1__Job *job, Csched__V1__Job *got)
{
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

static const Csched__V1__HookEvent ended[] = {
    CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED,
    CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED,
};

/* A failed run's command sees the outcome in its environment, runs as the
 * job's command ran (the default job user), and its output is kept. */
static void test_e2e_command_hooks_outcome_env(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], hook[PATH_MAX * 2 + 200], want[256];

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "cmdenv");
    snprintf(hook, sizeof(hook),
             "env | grep ^CSCHED_ | sort > %s/env; id -u > %s/uid; echo hook-out; "
             "echo hook-err >&2",
             dir, dir);
    Csched__V1__Job *job = command_job(name, "id -u; exit 3", hook, ended, 2);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    int64_t id = run_once(e, name);

    Csched__V1__ListHookDeliveriesResponse *resp = wait_settled(e, name, 1);
    const Csched__V1__HookDelivery *d = resp->deliveries[0];
    assert_delivered(d);
    assert_string_equal(d->url, "");
    assert_int_equal(d->attempts, 1);
    assert_int_equal(d->exit_code, 0);
    assert_int_equal(d->term_signal, 0);
    assert_int_equal(d->run_id, id);
    assert_string_equal(d->stdout_tail, "hook-out\n");
    assert_string_equal(d->stderr_tail, "hook-err\n");

    char *env = slurp(dir, "env");
    snprintf(want, sizeof(want), "CSCHED_JOB=%s\n", name);
    assert_non_null(strstr(env, want));
    snprintf(want, sizeof(want), "CSCHED_RUN_ID=%lld\n", (long long)id);
    assert_non_null(strstr(env, want));
    snprintf(want, sizeof(want), "CSCHED_CONSOLE_URL=%s/runs/%lld\n", CONSOLE_URL, (long long)id);
    assert_non_null(strstr(env, want));
    assert_non_null(strstr(env, "CSCHED_HOOK_EVENT=failed\n"));
    assert_non_null(strstr(env, "CSCHED_HOOK_NAME=cmd\n"));
    assert_non_null(strstr(env, "CSCHED_OUTCOME=FAILED\n"));
    assert_non_null(strstr(env, "CSCHED_EXIT_CODE=3\n"));
    assert_non_null(strstr(env, "CSCHED_ATTEMPT=1\n"));
    assert_non_null(strstr(env, "CSCHED_STARTED_UNIX_MS="));
    assert_non_null(strstr(env, "CSCHED_ENDED_UNIX_MS="));
    assert_null(strstr(env, "CSCHED_TERM_SIGNAL="));
    free(env);

    /* The hook ran as the job's command did. */
    size_t len;
    char *job_uid = cs_e2e_read_logs(e, id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    char *hook_uid = slurp(dir, "uid");
    assert_string_equal(hook_uid, job_uid);
    if (geteuid() == 0) /* never root by default */
        assert_string_not_equal(hook_uid, "0\n");
    free(job_uid);
    free(hook_uid);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    free_job(job, got);
}

/* A job with run_as_user: its hook's command runs as that user too. */
static void test_e2e_command_hooks_run_as_user(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], hook[PATH_MAX + 64], want[32];

    /* Only a root cschedd changes users (CI runs as root). */
    struct passwd *pw = getpwnam("nobody");
    if (geteuid() != 0 || pw == NULL)
        skip();
    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "cmdnobody");
    snprintf(hook, sizeof(hook), "id -u > %s/uid", dir);
    Csched__V1__Job *job = command_job(name, "true", hook, ended, 2);
    job->run_as_user = strdup("nobody");
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    (void)run_once(e, name);
    Csched__V1__ListHookDeliveriesResponse *resp = wait_settled(e, name, 1);
    assert_delivered(resp->deliveries[0]);
    char *uid = slurp(dir, "uid");
    snprintf(want, sizeof(want), "%u\n", (unsigned)pw->pw_uid);
    assert_string_equal(uid, want);
    free(uid);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    free_job(job, got);
}

/* A command that exits non-zero is retried: twice 1, then 0, delivered on
 * the third attempt; one that always fails is given up after its
 * max_attempts, with its exit code, error and output recorded. */
static void test_e2e_command_hooks_retry_on_nonzero(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], hook[PATH_MAX * 2 + 200];

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "cmdretry");
    snprintf(hook, sizeof(hook),
             "n=$(cat %s/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s/count; "
             "test $n -ge 3",
             dir, dir);
    Csched__V1__Job *job = command_job(name, "true", hook, ended, 2);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    (void)run_once(e, name);
    Csched__V1__ListHookDeliveriesResponse *resp = wait_settled(e, name, 1);
    assert_delivered(resp->deliveries[0]);
    assert_int_equal(resp->deliveries[0]->attempts, 3);
    assert_int_equal(resp->deliveries[0]->exit_code, 0);
    char *count = slurp(dir, "count");
    assert_string_equal(count, "3\n");
    free(count);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    free_job(job, got);

    cs_e2e_name(name, sizeof(name), "cmdgiveup");
    job = command_job(name, "true", "echo giving up >&2; exit 7", ended, 2);
    job->hooks[0]->max_attempts = 2;
    got = cs_e2e_create_job(e, job);
    (void)run_once(e, name);
    resp = wait_settled(e, name, 1);
    const Csched__V1__HookDelivery *d = resp->deliveries[0];
    assert_int_equal(d->status, CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_FAILED);
    assert_int_equal(d->attempts, 2);
    assert_int_equal(d->exit_code, 7);
    assert_string_equal(d->last_error, "the command exited 7");
    assert_string_equal(d->stderr_tail, "giving up\n");
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    free_job(job, got);
}

/* Five runs, each told started and ended, the command failing every third
 * time: what it recorded is each run's started then succeeded, in order. */
static void test_e2e_command_hooks_in_order_per_job(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], hook[PATH_MAX * 3 + 300];
    static const Csched__V1__HookEvent events[] = {
        CSCHED__V1__HOOK_EVENT__HOOK_EVENT_STARTED,
        CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED,
    };

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "cmdorder");
    snprintf(hook, sizeof(hook),
             "n=$(cat %s/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s/count; "
             "[ $((n %% 3)) -eq 0 ] && exit 1; "
             "echo \"$CSCHED_RUN_ID $CSCHED_HOOK_EVENT\" >> %s/log",
             dir, dir, dir);
    Csched__V1__Job *job = command_job(name, "true", hook, events, 2);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    int64_t ids[5];
    for (size_t i = 0; i < 5; i++)
        ids[i] = cs_e2e_trigger(e, name);
    for (size_t i = 0; i < 5; i++)
        protobuf_c_message_free_unpacked(&cs_e2e_wait_end(e, ids[i])->base, NULL);
    Csched__V1__ListHookDeliveriesResponse *resp = wait_settled(e, name, 10);
    for (size_t i = 0; i < resp->n_deliveries; i++)
        assert_delivered(resp->deliveries[i]);
    protobuf_c_message_free_unpacked(&resp->base, NULL);

    char want[512] = "", line[64];
    for (size_t i = 0; i < 5; i++) {
        snprintf(line, sizeof(line), "%lld started\n%lld succeeded\n", (long long)ids[i],
                 (long long)ids[i]);
        strcat(want, line);
    }
    char *log = slurp(dir, "log");
    assert_string_equal(log, want);
    free(log);
    free_job(job, got);
}

/* The run's end commits with its delivery: a command that fails until a
 * file exists is still pending when cschedd is killed (SIGKILL); after
 * the restart it runs again and is delivered, having run for no other
 * run. */
static void test_e2e_command_hooks_survive_kill9(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], hook[PATH_MAX * 2 + 200], flag[PATH_MAX + 16];

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "cmdkilled");
    snprintf(hook, sizeof(hook), "test -e %s/go && echo $CSCHED_RUN_ID >> %s/log", dir, dir);
    Csched__V1__Job *job = command_job(name, "true", hook, ended, 2);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    int64_t id = run_once(e, name);
    for (int64_t until = cs_test_now_ms() + WAIT_MS;; cs_test_sleep_ms(50)) {
        Csched__V1__ListHookDeliveriesResponse *resp = cs_e2e_hook_deliveries(e, name);
        bool tried = resp->n_deliveries == 1 && resp->deliveries[0]->attempts >= 1;
        protobuf_c_message_free_unpacked(&resp->base, NULL);
        if (tried)
            break;
        assert_true(cs_test_now_ms() < until);
    }
    assert_int_equal(cs_testd_kill(e->d), 0);
    snprintf(flag, sizeof(flag), "%s/go", dir);
    FILE *f = fopen(flag, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(cs_testd_restart(e->d), 0);
    Csched__V1__ListHookDeliveriesResponse *resp = wait_settled(e, name, 1);
    assert_delivered(resp->deliveries[0]);
    assert_true(resp->deliveries[0]->attempts >= 2);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    /* Once, or more: a retry the killed cschedd had just started may have
     * seen the go file too, and the restart, which cannot know its
     * outcome, runs the command again (at least once, docs/hooks.md). */
    char *log = slurp(dir, "log"), want[32];
    snprintf(want, sizeof(want), "%lld\n", (long long)id);
    size_t n = strlen(want);
    assert_true(strlen(log) >= n && strlen(log) % n == 0);
    for (size_t at = 0; log[at] != '\0'; at += n)
        assert_memory_equal(log + at, want, n);
    free(log);
    free_job(job, got);
}

/* A command hook that runs past its own timeout is stopped by its minder
 * (TERM, then KILL after the job's grace) and its delivery says so, long
 * before the command would have ended; a command hook may have a timeout
 * of up to a day, a webhook of a minute. */
static void test_e2e_command_hooks_timeout(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};
    char name[64];

    cs_e2e_name(name, sizeof(name), "cmdslow");
    Csched__V1__Job *job = command_job(name, "true", "echo slow; exec sleep 600", ended, 2);
    job->hooks[0]->timeout_ms = 300;
    job->hooks[0]->max_attempts = 1;
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    int64_t t0 = cs_test_now_ms();
    (void)run_once(e, name);
    Csched__V1__ListHookDeliveriesResponse *resp = wait_settled(e, name, 1);
    const Csched__V1__HookDelivery *d = resp->deliveries[0];
    assert_int_equal(d->status, CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_FAILED);
    assert_string_equal(d->last_error,
                        "the command ran past the hook's timeout_ms (300 ms) and was stopped");
    assert_string_equal(d->stdout_tail, "slow\n");
    assert_true(cs_test_now_ms() - t0 < WAIT_MS);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    free_job(job, got);

    cs_e2e_name(name, sizeof(name), "cmdlong");
    job = command_job(name, "true", "true", ended, 2);
    job->hooks[0]->timeout_ms = 2 * 60 * 60 * 1000;
    free_job(job, cs_e2e_create_job(e, job));
    job = command_job("cmd-too-long", "true", "true", ended, 2);
    job->hooks[0]->timeout_ms = 24 * 60 * 60 * 1000 + 1;
    cs_e2e_assert_status(cs_e2e_try_create_job(e, job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "job.hooks[0].timeout_ms 86400001 is over the limit of 86400000 for a "
                         "command hook");
    protobuf_c_message_free_unpacked(&job->base, NULL);
    job = cs_e2e_hook_job("hook-too-long", "true", "web", ended, 2);
    job->hooks[0]->url = strdup("https://127.0.0.1:1/hook");
    job->hooks[0]->secret = calloc(1, sizeof(*job->hooks[0]->secret));
    csched__v1__secret_ref__init(job->hooks[0]->secret);
    job->hooks[0]->secret->source_case = CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV;
    job->hooks[0]->secret->server_env = strdup("HOOK_SECRET");
    job->hooks[0]->timeout_ms = 120000;
    cs_e2e_assert_status(cs_e2e_try_create_job(e, job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "job.hooks[0].timeout_ms 120000 is over the limit of 60000 for a webhook");
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* A hook command runs as the job's user, so a job whose user does not
 * exist is refused with it; a hook that is both a webhook and a command,
 * or has both command and shell, is refused too. */
static void test_e2e_command_hooks_refused(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};

    Csched__V1__Job *job = command_job("cmd-refused", "true", "true", ended, 2);
    job->run_as_user = strdup("no-such-user-csched");
    cs_e2e_assert_status(cs_e2e_try_create_job(e, job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "no-such-user-csched");
    free(job->run_as_user);
    job->run_as_user = strdup("");
    job->hooks[0]->url = strdup("https://127.0.0.1:1/hook");
    cs_e2e_assert_status(cs_e2e_try_create_job(e, job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "not both");
    free(job->hooks[0]->url);
    job->hooks[0]->url = strdup("");
    job->hooks[0]->command = calloc(1, sizeof(char *));
    job->hooks[0]->command[0] = strdup("true");
    job->hooks[0]->n_command = 1;
    cs_e2e_assert_status(cs_e2e_try_create_job(e, job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "both command and shell");
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

static int setup(void **state)
{
    static const char *args[] = {"--hook-retry-base-ms", "100", "--console-url", CONSOLE_URL, NULL};
    return cs_e2e_start(state, args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_command_hooks_outcome_env),
        cmocka_unit_test(test_e2e_command_hooks_run_as_user),
        cmocka_unit_test(test_e2e_command_hooks_retry_on_nonzero),
        cmocka_unit_test(test_e2e_command_hooks_in_order_per_job),
        cmocka_unit_test(test_e2e_command_hooks_refused),
        cmocka_unit_test(test_e2e_command_hooks_timeout),
        cmocka_unit_test(test_e2e_command_hooks_survive_kill9),
    };
    return cmocka_run_group_tests(tests, setup, cs_e2e_teardown);
}
