/* test_retry: the retry policy (backoff with multiplier and cap, jitter,
 * retry_on), the run's deadline, the kill grace and signal given to the
 * minder, and runs triggered for a later time, through the dispatcher and
 * its fixture (fake store and launcher, real loop and timers). */
#include "dispatch_fixture.h"

static Csched__V1__RetryPolicy *set_policy(struct cs_job *job, uint32_t initial_ms, uint32_t max_ms,
                                           double multiplier, double jitter)
{
    if (job->spec->retry != NULL)
        csched__v1__retry_policy__free_unpacked(job->spec->retry, NULL);
    Csched__V1__RetryPolicy *p = cs_xmalloc(sizeof(*p));
    csched__v1__retry_policy__init(p);
    p->initial_backoff_ms = initial_ms;
    p->max_backoff_ms = max_ms;
    p->multiplier = multiplier;
    p->jitter = jitter;
    job->spec->retry = p;
    return p;
}

static void test_retry_backoff_multiplier_and_max(void **state)
{
    struct cs_job *job = add_job("a", 0, 10, 0);
    Csched__V1__RetryPolicy *p = set_policy(job, 300, 1000, 2, 0);
    const uint64_t doubling[] = {300, 600, 1000, 1000};
    for (uint32_t n = 1; n <= 4; n++)
        assert_int_equal(cs_retry_backoff_ms(job->spec, n), doubling[n - 1]);
    p->multiplier = 1.5;
    p->max_backoff_ms = 0; /* 10 minutes */
    assert_int_equal(cs_retry_backoff_ms(job->spec, 3), 675);
    assert_int_equal(cs_retry_backoff_ms(job->spec, 60), CS_RETRY_BACKOFF_MAX_MS);
    p->multiplier = 1;
    assert_int_equal(cs_retry_backoff_ms(job->spec, 9), 300);
    p->multiplier = 0; /* the default, 2 */
    assert_int_equal(cs_retry_backoff_ms(job->spec, 3), 1200);
}

static void test_retry_jitter_bounds(void **state)
{
    struct cs_job *job = add_job("a", 0, 10, 1000);
    assert_int_equal(cs_retry_jitter_ms(job->spec, 1000, UINT32_MAX), 0);
    Csched__V1__RetryPolicy *p = set_policy(job, 1000, 0, 2, 0.5);
    assert_int_equal(cs_retry_jitter_ms(job->spec, 1000, 0), 0);
    assert_int_equal(cs_retry_jitter_ms(job->spec, 1000, UINT32_C(1) << 31), 250);
    assert_int_equal(cs_retry_jitter_ms(job->spec, 1000, UINT32_MAX), 499);
    p->jitter = 1;
    assert_int_equal(cs_retry_jitter_ms(job->spec, 1000, UINT32_MAX), 999);
    p->jitter = 0;
    assert_int_equal(cs_retry_jitter_ms(job->spec, 1000, UINT32_MAX), 0);
}

/* Each attempt records the wait before it, less the jitter it drew; with
 * jitter 0.5 that is at least half the backoff. */
static void test_retry_records_each_delay(void **state)
{
    struct cs_job *job = add_job("a", 0, 3, 0);
    set_policy(job, 4, 0, 3, 0.5);
    int64_t id = trigger(job);
    for (uint32_t attempt = 1; attempt <= 3; attempt++) {
        turn();
        minder_exits(id, attempt, launch_ok(id), 1);
        wait_for(id, attempt, FA);
        struct cs_run *run = run_of(id);
        if (attempt == 3) {
            assert_null(run);
            break;
        }
        int64_t backoff = attempt == 1 ? 4 : 12;
        assert_int_equal(run->retry_delay_ms + run->retry_jitter_ms, backoff);
        assert_true(run->retry_jitter_ms <= backoff / 2);
        run_until(is_queued, run, "the retry to be queued");
        turn();
        const Csched__V1__Attempt *next = run->msg->attempts[attempt];
        assert_int_equal(next->retry_delay_ms + next->retry_jitter_ms, backoff);
        assert_int_equal(run->msg->attempts[0]->retry_delay_ms, 0);
    }
}

static void set_retry_on(struct cs_job *job, Csched__V1__RetryOn on)
{
    set_policy(job, 0, 0, 0, 0)->retry_on = on;
}

/* The minder of run_id's first attempt stops its command on the timeout. */
static void times_out(int64_t run_id, pid_t pid)
{
    write_note(run_id, 1, CS_NOTE_TIMED_OUT, 0, SIGTERM, "timed out after 1000 ms");
    minder_ends(pid);
}

/* retry_on FAILURE: a timeout ends the run; retry_on TIMEOUT: a failure
 * does; each kind is retried by the flag that names it. */
static void test_retry_on_picks_the_ends(void **state)
{
    struct cs_job *job = add_job("a", 0, 3, 0);
    set_retry_on(job, CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE);
    pid_t pid;
    int64_t id = start_running(job, &pid);
    times_out(id, pid);
    wait_for(id, 0, TO);
    assert_string_equal(history(id), START_TO_RUNNING " a1:TIMED_OUT run:TIMED_OUT");

    set_retry_on(job, CSCHED__V1__RETRY_ON__RETRY_ON_TIMEOUT);
    id = start_running(job, &pid);
    minder_exits(id, 1, pid, 3);
    wait_for(id, 0, FA);
    assert_string_equal(history(id), START_TO_RUNNING " a1:FAILED run:FAILED");

    id = start_running(job, &pid);
    times_out(id, pid);
    wait_for(id, 1, TO);
    assert_non_null(run_of(id));
    assert_int_equal(run_of(id)->msg->state, Q);
}

/* A cancelled attempt is never retried, whatever retry_on says. */
static void test_retry_never_after_cancel(void **state)
{
    struct cs_job *job = add_job("a", 0, 5, 0);
    set_retry_on(job, CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE_AND_TIMEOUT);
    pid_t pid;
    int64_t id = start_running(job, &pid);
    write_note(id, 1, CS_NOTE_CANCELLED, 0, SIGTERM, "cancelled");
    assert_int_equal(cancel(id), RU);
    wait_for(id, 0, CA);
    assert_string_equal(history(id), START_TO_RUNNING " a1:CANCELLED run:CANCELLED");
}

/* Past the run's deadline no retry starts, and the run says why. */
static void test_retry_deadline_stops_retries(void **state)
{
    struct cs_job *job = add_job("a", 0, 5, 0);
    job->spec->run_deadline_seconds = 2;
    pid_t pid;
    int64_t id = start_running(job, &pid);
    /* As if its first attempt had started 3 s ago. */
    run_of(id)->msg->started_unix_ms -= 3000;
    minder_exits(id, 1, pid, 1);
    wait_for(id, 0, FA);
    assert_string_equal(history(id), START_TO_RUNNING " a1:FAILED run:FAILED");
    assert_null(run_of(id));
}

/* A retry that waited on the queue until past the deadline ends the run
 * instead of starting. */
static void test_retry_queued_past_deadline(void **state)
{
    struct cs_job *job = add_job("a", 0, 5, 0);
    job->spec->run_deadline_seconds = 10;
    pid_t pid;
    int64_t id = start_running(job, &pid);
    minder_exits(id, 1, pid, 1);
    wait_for(id, 1, FA);
    struct cs_run *run = run_of(id);
    assert_true(run->queued);
    run->msg->started_unix_ms -= 20000;
    turn();
    assert_null(run_of(id));
    assert_int_equal(fx.n_launches, 0);
    assert_int_equal(fx.last_run_state, FA);
    assert_string_equal(history(id), START_TO_RUNNING " a1:FAILED run:QUEUED run:FAILED");
}

/* A retry whose wait would end after the deadline is not started. */
static void test_retry_wait_past_deadline(void **state)
{
    struct cs_job *job = add_job("a", 0, 5, 60000);
    job->spec->run_deadline_seconds = 30;
    pid_t pid;
    int64_t id = start_running(job, &pid);
    struct cs_run *run = run_of(id);
    assert_int_equal(cs_retry_decide(run, FA, run->msg->started_unix_ms + 1000),
                     CS_RETRY_PAST_DEADLINE);
    assert_int_equal(run->retry_delay_ms, 60000);
    assert_int_equal(cs_retry_decide(run, FA, run->msg->started_unix_ms + 31000),
                     CS_RETRY_PAST_DEADLINE);
    assert_int_equal(run->retry_delay_ms, 0);
    job->spec->retry_backoff_ms = 1000;
    assert_int_equal(cs_retry_decide(run, FA, run->msg->started_unix_ms + 1000), CS_RETRY_YES);
    job->spec->retry_backoff_ms = 60000;
    minder_exits(id, 1, pid, 1);
    wait_for(id, 0, FA);
    assert_int_equal(fx.last_run_state, FA);
}

/* The attempt's timeout is the job's, or what is left of the deadline. */
static void test_retry_attempt_timeout_follows_deadline(void **state)
{
    struct cs_job *job = add_job("a", 0, 5, 0);
    int64_t id = trigger(job);
    struct cs_run *run = run_of(id);
    run->msg->started_unix_ms = 1000000;
    assert_int_equal(cs_retry_attempt_timeout_ms(run, 1000000), 0);
    job->spec->timeout_seconds = 10;
    assert_int_equal(cs_retry_attempt_timeout_ms(run, 1000000), 10000);
    job->spec->run_deadline_seconds = 4;
    assert_int_equal(cs_retry_attempt_timeout_ms(run, 1001000), 3000);
    assert_int_equal(cs_retry_attempt_timeout_ms(run, 1009000), 1);
    job->spec->timeout_seconds = 0;
    assert_int_equal(cs_retry_attempt_timeout_ms(run, 1000500), 3500);
}

/* The minder is told the job's grace and first signal; TERM and the
 * default grace are what a job that sets none gets. */
static void test_retry_kill_grace_and_signal_reach_the_minder(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    job->spec->kill_grace_seconds = 3;
    cs_message_set_str(&job->spec->kill_signal, "INT");
    int64_t id = trigger(job);
    turn();
    assert_int_equal(fx.n_launches, 1);
    char **argv = fx.launches[0]->argv;
    bool grace = false, sig = false;
    for (size_t i = 1; argv[i] != NULL && strcmp(argv[i], "--") != 0; i++) {
        grace |= strcmp(argv[i], "-g") == 0 && strcmp(argv[i + 1], "3000") == 0;
        sig |= strcmp(argv[i], "-s") == 0 && atoi(argv[i + 1]) == SIGINT;
    }
    assert_true(grace);
    assert_true(sig);
    minder_exits(id, 1, launch_ok(id), 0);
    wait_for(id, 0, OK);
    assert_int_equal(cs_job_kill_signal(job->spec), SIGINT);
    cs_message_set_str(&job->spec->kill_signal, "");
    assert_int_equal(cs_job_kill_signal(job->spec), SIGTERM);
}

static int64_t trigger_at(struct cs_job *job, int64_t not_before_unix_ms)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    req.job_name = job->spec->name;
    req.not_before_unix_ms = not_before_unix_ms;
    int64_t id = cs_dispatch_trigger(&fx.s, job, &req, "test", NULL, NULL)->msg->id;
    commit();
    return id;
}

/* A run for later waits off its queue until its time (wall clock) less
 * the lead (later.h), the earliest first; one in the past starts at once. */
static void test_retry_later_runs_wait_for_their_time(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    int64_t t0 = cs_now_unix_ms();
    int64_t late = trigger_at(job, t0 + CS_LATER_LEAD_MS + 80);
    int64_t soon = trigger_at(job, t0 + CS_LATER_LEAD_MS + 30);
    int64_t now = trigger_at(job, t0 - 1000);
    assert_int_equal(run_of(now)->msg->not_before_unix_ms, 0);
    assert_true(run_of(now)->queued);
    assert_true(cs_later_is_waiting(run_of(soon)) && cs_later_is_waiting(run_of(late)));
    assert_false(run_of(soon)->queued);
    run_until(is_queued, run_of(soon), "the sooner run to be queued");
    assert_true(cs_now_unix_ms() >= t0 + 30);
    assert_true(cs_later_is_waiting(run_of(late)));
    run_until(is_queued, run_of(late), "the later run to be queued");
    assert_true(cs_now_unix_ms() >= t0 + 80);
    assert_int_equal(run_of(late)->msg->not_before_unix_ms, t0 + CS_LATER_LEAD_MS + 80);
}

/* A waiting run can be cancelled; the timer then waits for the next. */
static void test_retry_later_run_cancelled(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    int64_t t0 = cs_now_unix_ms();
    int64_t first = trigger_at(job, t0 + CS_LATER_LEAD_MS + 20);
    int64_t second = trigger_at(job, t0 + CS_LATER_LEAD_MS + 40);
    assert_int_equal(cancel(first), CA);
    assert_null(run_of(first));
    assert_string_equal(history(first), "run:QUEUED run:CANCELLED");
    run_until(is_queued, run_of(second), "the second run to be queued");
    assert_true(cs_now_unix_ms() >= t0 + 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_retry_backoff_multiplier_and_max, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_jitter_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_records_each_delay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_on_picks_the_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_never_after_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_deadline_stops_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_wait_past_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_queued_past_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_attempt_timeout_follows_deadline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_retry_kill_grace_and_signal_reach_the_minder, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_retry_later_runs_wait_for_their_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_later_run_cancelled, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
