/* End-to-end tests of when attempts start and how they are stopped, against
 * a real cschedd, real minders and the real clock: runs triggered for a
 * later time (also across a kill -9 and restart of cschedd), retries with
 * an exponential backoff and each delay recorded, the run's deadline across
 * its attempts, and a job's kill signal and kill grace. */
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

static int64_t wall_ms(void)
{
    struct timespec ts;
    assert_int_equal(clock_gettime(CLOCK_REALTIME, &ts), 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static Csched__V1__Run *trigger_at(struct cs_e2e *e, const char *job_name, int64_t not_before)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    req.job_name = (char *)job_name;
    req.not_before_unix_ms = not_before;
    int rc = cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st);
    if (rc != 0)
        fail_msg("TriggerJob(%s): %s \"%s\"", job_name, cs_status_code_name(rc), st.message);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    assert_int_equal(run->not_before_unix_ms, not_before);
    return run;
}

/* Fails unless the run's first attempt started at not_before or up to 1 s
 * after it. */
static void assert_started_on_time(const Csched__V1__Run *run, int64_t not_before)
{
    assert_true(run->n_attempts >= 1);
    int64_t late = run->attempts[0]->started_unix_ms - not_before;
    print_message("run %lld started %lld ms after its not_before\n", (long long)run->id,
                  (long long)late);
    if (late < 0 || late > 1000)
        fail_msg("run %lld started %lld ms after its not_before, want 0 to 1000",
                 (long long)run->id, (long long)late);
}

/* Queued at once, started at its time. */
static void test_e2e_retries_later_run_starts_on_time(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    cs_e2e_name(name, sizeof(name), "later");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    int64_t not_before = wall_ms() + 1500;
    Csched__V1__Run *run = trigger_at(e, name, not_before);
    int64_t id = run->id;
    csched__v1__run__free_unpacked(run, NULL);
    cs_test_sleep_ms(1000);
    run = cs_e2e_get_run(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    assert_int_equal(run->n_attempts, 0);
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_started_on_time(run, not_before);
    csched__v1__run__free_unpacked(run, NULL);
}

/* A waiting run can be cancelled, and a time past or too far is handled. */
static void test_e2e_retries_later_run_cancel_and_bounds(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    cs_e2e_name(name, sizeof(name), "later-cancel");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    Csched__V1__Run *run = trigger_at(e, name, wall_ms() + 60000);
    Csched__V1__CancelRunRequest creq = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *cancelled = NULL;
    struct cs_status st = {0};
    creq.run_id = run->id;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &creq, &cancelled, cs_e2e_opts(), &st), 0);
    assert_int_equal(cancelled->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(cancelled->n_attempts, 0);
    csched__v1__run__free_unpacked(cancelled, NULL);
    csched__v1__run__free_unpacked(run, NULL);

    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    req.job_name = name;
    req.not_before_unix_ms = wall_ms() + 2LL * 366 * 24 * 3600 * 1000;
    run = NULL;
    int rc = cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "not_before_unix_ms");
    assert_null(run);
    req.not_before_unix_ms = wall_ms() - 60000;
    assert_int_equal(cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st), 0);
    assert_int_equal(run->not_before_unix_ms, 0);
    int64_t id = run->id;
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
}

/* cschedd killed with SIGKILL while a run waits for its time: the restart
 * finds it queued with its not_before, and it starts once, at that time. */
static void test_e2e_retries_later_run_across_a_crash(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX];
    cs_e2e_create_counter_job(e, "later-crash", "true", 1, name, sizeof(name), dir);
    int64_t not_before = wall_ms() + 4000;
    Csched__V1__Run *run = trigger_at(e, name, not_before);
    int64_t id = run->id;
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
    run = cs_e2e_get_run(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    assert_int_equal(run->not_before_unix_ms, not_before);
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->n_attempts, 1);
    assert_started_on_time(run, not_before);
    char path[PATH_MAX + 16];
    (void)snprintf(path, sizeof(path), "%s/count", dir);
    assert_int_equal(cs_e2e_count_lines(path), 1);
    csched__v1__run__free_unpacked(run, NULL);
    (void)cs_test_rmtree(dir);
}

/* cschedd killed with SIGKILL while a run waits to retry: the wait is
 * stored with the run, so the restart still keeps it. */
static void test_e2e_retries_wait_across_a_crash(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX];
    cs_e2e_create_counter_job(e, "retry-crash", "exit 1", 2, name, sizeof(name), dir);
    Csched__V1__UpdateJobRequest ureq = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    Csched__V1__GetJobRequest greq = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL, *updated = NULL;
    struct cs_status st = {0};
    greq.name = name;
    assert_int_equal(cs_scheduler_get_job(e->client, &greq, &job, cs_e2e_opts(), &st), 0);
    job->retry_backoff_ms = 3000;
    ureq.job = job;
    assert_int_equal(cs_scheduler_update_job(e->client, &ureq, &updated, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(updated, NULL);
    csched__v1__job__free_unpacked(job, NULL);

    int64_t id = cs_e2e_trigger(e, name);
    Csched__V1__Run *run = NULL;
    for (int64_t until = cs_test_now_ms() + CS_E2E_RUN_TIMEOUT_MS;; cs_test_sleep_ms(20)) {
        assert_true(cs_test_now_ms() < until);
        run = cs_e2e_get_run(e, id);
        if (run->n_attempts == 1 && run->attempts[0]->ended_unix_ms > 0 &&
            run->state == CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED)
            break;
        csched__v1__run__free_unpacked(run, NULL);
    }
    int64_t due = run->not_before_unix_ms;
    assert_true(due >= run->attempts[0]->ended_unix_ms + 2900);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
    run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->n_attempts, 2);
    int64_t gap = run->attempts[1]->started_unix_ms - run->attempts[0]->ended_unix_ms;
    print_message("after the restart, attempt 2 started %lld ms after attempt 1 ended "
                  "(recorded delay %lld ms)\n",
                  (long long)gap, (long long)run->attempts[1]->retry_delay_ms);
    if (gap < 2900 || gap > 4000)
        fail_msg("attempt 2 started %lld ms after attempt 1 ended, want about 3000",
                 (long long)gap);
    assert_true(run->attempts[1]->retry_delay_ms >= 2900 &&
                run->attempts[1]->retry_delay_ms <= 3100);
    char path[PATH_MAX + 16];
    (void)snprintf(path, sizeof(path), "%s/count", dir);
    FILE *f = fopen(path, "r");
    int n = 0;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &n), 1);
    (void)fclose(f);
    assert_int_equal(n, 2);
    csched__v1__run__free_unpacked(run, NULL);
    (void)cs_test_rmtree(dir);
}

static Csched__V1__Job *shell_job(const char *prefix, char *name, size_t cap, const char *shell)
{
    static Csched__V1__Job job;
    csched__v1__job__init(&job);
    cs_e2e_name(name, cap, prefix);
    job.name = name;
    job.shell = (char *)shell;
    return &job;
}

/* 300, 600, 1200 ms between the attempts, each recorded with the attempt
 * it came before and each kept to within 25 %. */
static void test_e2e_retries_backoff_timing(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    Csched__V1__RetryPolicy policy = CSCHED__V1__RETRY_POLICY__INIT;
    policy.initial_backoff_ms = 300;
    policy.multiplier = 2;
    policy.max_backoff_ms = 5000;
    Csched__V1__Job *job = shell_job("backoff", name, sizeof(name), "exit 3");
    job->max_attempts = 4;
    job->retry = &policy;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    Csched__V1__Run *run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->n_attempts, 4);
    assert_int_equal(run->attempts[0]->retry_delay_ms, 0);
    for (size_t i = 1; i < 4; i++) {
        const Csched__V1__Attempt *a = run->attempts[i];
        int64_t want = 300LL << (i - 1);
        assert_int_equal(a->retry_delay_ms, want);
        assert_int_equal(a->retry_jitter_ms, 0);
        int64_t gap = a->started_unix_ms - run->attempts[i - 1]->ended_unix_ms;
        print_message("attempt %zu: recorded delay %lld ms, measured %lld ms\n", i + 1,
                      (long long)a->retry_delay_ms, (long long)gap);
        if (gap < want * 3 / 4 || gap > want * 5 / 4)
            fail_msg("attempt %zu started %lld ms after the one before ended, want %lld +-25%%",
                     i + 1, (long long)gap, (long long)want);
    }
    csched__v1__run__free_unpacked(run, NULL);
}

/* A run of a new job running shell, with max_attempts, retry_backoff_ms
 * and run_deadline_seconds (and policy, if any), to its end. */
static Csched__V1__Run *deadline_run(struct cs_e2e *e, const char *prefix, const char *shell,
                                     uint32_t max_attempts, uint32_t backoff_ms,
                                     uint32_t deadline_s, Csched__V1__RetryPolicy *policy)
{
    char name[64];
    Csched__V1__Job *job = shell_job(prefix, name, sizeof(name), shell);
    job->max_attempts = max_attempts;
    job->retry_backoff_ms = backoff_ms;
    job->run_deadline_seconds = deadline_s;
    job->retry = policy;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    return cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
}

static void assert_message_has(const Csched__V1__Run *run, const char *want)
{
    if (strstr(run->message, want) == NULL)
        fail_msg("run %lld's message \"%s\" lacks \"%s\"", (long long)run->id, run->message, want);
}

/* A run whose attempts keep failing ends at its deadline: the attempt
 * running then is stopped as a timeout, or the retry that would start past
 * it is not started, and no retry follows. */
static void test_e2e_retries_deadline_ends_the_run(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__RetryPolicy policy = CSCHED__V1__RETRY_POLICY__INIT;
    policy.initial_backoff_ms = 100;
    policy.multiplier = 1;
    Csched__V1__Run *run = deadline_run(e, "deadline", "sleep 0.3; exit 1", 100, 0, 2, &policy);
    int64_t took = run->ended_unix_ms - run->attempts[0]->started_unix_ms;
    print_message("run ended %lld ms after its first start, %zu attempts: %s\n", (long long)took,
                  run->n_attempts, run->message);
    /* It ends at the deadline, or up to one wait (100 ms) before it when
     * that wait would end past it. */
    if (took < 1850 || took > 2600)
        fail_msg("run took %lld ms from its first start, want 1850 to 2600", (long long)took);
    assert_true(run->n_attempts >= 3 && run->n_attempts < 10);
    assert_int_equal(run->state == CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT ||
                         run->state == CSCHED__V1__RUN_STATE__RUN_STATE_FAILED,
                     1);
    assert_message_has(run, "deadline");
    csched__v1__run__free_unpacked(run, NULL);

    /* An attempt still running at the deadline is stopped as a timeout. */
    run = deadline_run(e, "deadline-stop", "sleep 30", 3, 0, 1, NULL);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    assert_int_equal(run->n_attempts, 1);
    took = run->attempts[0]->ended_unix_ms - run->attempts[0]->started_unix_ms;
    print_message("attempt stopped %lld ms after it started: %s\n", (long long)took, run->message);
    assert_true(took >= 1000 && took < 1600);
    assert_message_has(run, "the run's deadline (run_deadline_seconds 1) passed");
    csched__v1__run__free_unpacked(run, NULL);

    /* A wait past the deadline: no retry is started at all. */
    run = deadline_run(e, "deadline-wait", "exit 1", 5, 5000, 2, NULL);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->n_attempts, 1);
    assert_message_has(run, "would end after the run's deadline");
    csched__v1__run__free_unpacked(run, NULL);
}

/* kill_signal INT on a timeout reaches a command that traps it. */
static void test_e2e_retries_kill_signal(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], shell[PATH_MAX + 128];
    cs_e2e_tmpdir(dir);
    (void)snprintf(shell, sizeof(shell),
                   "trap 'echo INT > %s/got; exit 0' INT; while :; do sleep 0.05; done", dir);
    Csched__V1__Job *job = shell_job("kill-signal", name, sizeof(name), shell);
    job->timeout_seconds = 1;
    job->kill_signal = "INT";
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    Csched__V1__Run *run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    char path[PATH_MAX + 16];
    (void)snprintf(path, sizeof(path), "%s/got", dir);
    assert_int_equal(cs_e2e_count_lines(path), 1);
    /* It ended on INT, well within the default 10 s grace. */
    int64_t took = run->attempts[0]->ended_unix_ms - run->attempts[0]->started_unix_ms;
    assert_true(took >= 1000 && took < 3000);
    csched__v1__run__free_unpacked(run, NULL);
    (void)cs_test_rmtree(dir);

    Csched__V1__Job bad = CSCHED__V1__JOB__INIT;
    struct cs_status st = {0};
    bad.name = name;
    bad.shell = "true";
    bad.kill_signal = "KILL";
    cs_e2e_assert_status(cs_e2e_try_create_job(e, &bad, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "kill_signal");
    Csched__V1__RetryPolicy policy = CSCHED__V1__RETRY_POLICY__INIT;
    policy.multiplier = 0.5;
    bad.kill_signal = "";
    bad.retry = &policy;
    cs_e2e_assert_status(cs_e2e_try_create_job(e, &bad, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "retry.multiplier: 0.5 is less than 1");
}

/* kill_grace_seconds 1: a command that ignores TERM is killed about 1 s
 * after the cancel. */
static void test_e2e_retries_kill_grace(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    Csched__V1__Job *job = shell_job("kill-grace", name, sizeof(name), "trap '' TERM; sleep 30");
    job->kill_grace_seconds = 1;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    int64_t id = cs_e2e_trigger(e, name);
    csched__v1__run__free_unpacked(
        cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, CS_E2E_RUN_TIMEOUT_MS),
        NULL);
    cs_test_sleep_ms(300); /* so the trap is set */
    Csched__V1__CancelRunRequest creq = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *reply = NULL;
    struct cs_status st = {0};
    creq.run_id = id;
    int64_t cancelled_at = wall_ms();
    assert_int_equal(cs_scheduler_cancel_run(e->client, &creq, &reply, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(reply, NULL);
    Csched__V1__Run *run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(run->term_signal, SIGKILL);
    int64_t after = run->attempts[0]->ended_unix_ms - cancelled_at;
    print_message("KILL came %lld ms after the cancel\n", (long long)after);
    if (after < 900 || after > 1600)
        fail_msg("KILL came %lld ms after the cancel, want about 1000", (long long)after);
    if (strstr(run->attempts[0]->message, "SIGKILL after 1000 ms") == NULL)
        fail_msg("attempt message \"%s\" does not say SIGKILL after 1000 ms",
                 run->attempts[0]->message);
    csched__v1__run__free_unpacked(run, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_retries_later_run_starts_on_time),
        cmocka_unit_test(test_e2e_retries_later_run_cancel_and_bounds),
        cmocka_unit_test(test_e2e_retries_later_run_across_a_crash),
        cmocka_unit_test(test_e2e_retries_wait_across_a_crash),
        cmocka_unit_test(test_e2e_retries_backoff_timing),
        cmocka_unit_test(test_e2e_retries_deadline_ends_the_run),
        cmocka_unit_test(test_e2e_retries_kill_signal),
        cmocka_unit_test(test_e2e_retries_kill_grace),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
