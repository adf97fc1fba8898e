/* End-to-end tests of server restarts against a real cschedd and a real
 * PostgreSQL: after a clean restart (SIGTERM, then a new cschedd on the same
 * state dir and database) and after a crash (SIGKILL), jobs, finished runs
 * and the event history are all still there, a run whose minder outlived the
 * server is adopted and ends with its real outcome, and new runs continue the
 * history. One server serves every test of this file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"
#include "testwatch.h"

#define MAX_EVENTS 512

/* The history as seq/run/attempt/state tuples, read to the current end. */
struct history {
    size_t n;
    int64_t seq[MAX_EVENTS];
    int64_t run_id[MAX_EVENTS];
    uint32_t attempt[MAX_EVENTS];
    int state[MAX_EVENTS];
};

/* Replays every event up to and including seq until_seq into h. */
static void read_history(struct cs_e2e *e, int64_t until_seq, struct history *h)
{
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS, .wait_for_ready = true};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_stream *s = NULL;
    struct cs_status st = {0};
    struct cs_test_events events = {0};
    const Csched__V1__Event *ev;
    int64_t seq = 0;

    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = 0;
    assert_int_equal(cs_scheduler_watch(e->client, &req, &s, &opts, &st), 0);
    h->n = 0;
    events.stream = s;
    while (seq < until_seq) {
        if (cs_test_next_event(&events, &ev, &st) != 1)
            fail_msg("history ended at seq %lld of %lld: %s \"%s\"", (long long)seq,
                     (long long)until_seq, cs_status_code_name(st.code), st.message);
        assert_true(ev->seq > seq);
        assert_true(h->n < MAX_EVENTS);
        seq = ev->seq;
        h->seq[h->n] = ev->seq;
        h->run_id[h->n] = ev->run_id;
        h->attempt[h->n] = ev->attempt;
        h->state[h->n] = ev->state;
        h->n++;
    }
    cs_test_events_done(&events);
    cs_stream_free(s);
}

/* Asserts that the history now starts with the whole of before. */
static void assert_history_kept(struct cs_e2e *e, const struct history *before)
{
    struct history *now = calloc(1, sizeof(*now));

    assert_non_null(now);
    read_history(e, before->seq[before->n - 1], now);
    assert_int_equal(now->n, before->n);
    for (size_t i = 0; i < now->n; i++)
        if (now->seq[i] != before->seq[i] || now->run_id[i] != before->run_id[i] ||
            now->attempt[i] != before->attempt[i] || now->state[i] != before->state[i])
            fail_msg("event %zu changed across the restart: seq %lld run %lld attempt %u %s, "
                     "was seq %lld run %lld attempt %u %s",
                     i, (long long)now->seq[i], (long long)now->run_id[i], now->attempt[i],
                     cs_test_run_state_name(now->state[i]), (long long)before->seq[i],
                     (long long)before->run_id[i], before->attempt[i],
                     cs_test_run_state_name(before->state[i]));
    free(now);
}

/* A run whose minder was alive when its server went away is adopted by the
 * next server and ends with its real outcome: docs/running.md promises that
 * a restart loses no running attempt, and a crash of the server does not end
 * a minder either (it runs in a session of its own). */
static void assert_adopted(struct cs_e2e *e, const Csched__V1__Run *was, const char *how)
{
    Csched__V1__Run *run = cs_e2e_wait_end(e, was->id);
    int64_t id = was->id;

    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED)
        fail_msg("run %lld running across a %s ended %s (\"%s\"), want SUCCEEDED (adopted)",
                 (long long)id, how, cs_test_run_state_name(run->state), run->message);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_int_equal(run->exit_code, 0);
    assert_int_equal(run->n_attempts, 1);
    /* The same minder saw it through: adopted, not started again. */
    assert_int_equal(run->attempts[0]->minder_pid, was->attempts[0]->minder_pid);
    assert_int_equal(run->attempts[0]->started_unix_ms, was->attempts[0]->started_unix_ms);
    assert_int_equal(run->started_unix_ms, was->started_unix_ms);
    csched__v1__run__free_unpacked(run, NULL);
}

/* Asserts that two answers for one run encode to the same bytes. */
static void assert_same_run(const Csched__V1__Run *now, const Csched__V1__Run *was, const char *how)
{
    size_t len_now = csched__v1__run__get_packed_size(now);
    size_t len_was = csched__v1__run__get_packed_size(was);
    uint8_t *a = malloc(len_now + 1), *b = malloc(len_was + 1);
    assert_true(a != NULL && b != NULL);
    csched__v1__run__pack(now, a);
    csched__v1__run__pack(was, b);
    if (len_now != len_was || memcmp(a, b, len_now) != 0)
        fail_msg("run %lld reads differently after a %s (%zu bytes encoded, was %zu)",
                 (long long)now->id, how, len_now, len_was);
    free(a);
    free(b);
}

static void restart_keeps_everything(struct cs_e2e *e, bool crash)
{
    const char *how = crash ? "crash (SIGKILL)" : "clean restart";
    struct history *before = calloc(1, sizeof(*before));
    Csched__V1__Run *done, *again, *next, *running;
    Csched__V1__Job *job, *job_again;
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    struct cs_status st = {0};
    char quick[64], slow[64];
    int64_t long_run;
    size_t len;
    char *out;
    int rc;

    assert_non_null(before);
    cs_e2e_name(quick, sizeof(quick), crash ? "crash-quick" : "restart-quick");
    cs_e2e_name(slow, sizeof(slow), crash ? "crash-slow" : "restart-slow");
    job = cs_e2e_create_shell_job(e, quick, "echo kept");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, slow, "sleep 2"), NULL);
    done = cs_e2e_wait_end(e, cs_e2e_trigger(e, quick));
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    /* Asked again once its end has committed, it is answered from memory. */
    int64_t done_id = done->id;
    csched__v1__run__free_unpacked(done, NULL);
    done = cs_e2e_get_run(e, done_id);
    long_run = cs_e2e_trigger(e, slow);
    running = cs_e2e_wait_state(e, long_run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_int_equal(running->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    assert_int_equal(running->n_attempts, 1);
    assert_true(running->attempts[0]->minder_pid > 0);
    read_history(e, cs_e2e_last_seq(e), before);

    if (crash)
        assert_int_equal(cs_testd_kill(e->d), 0);
    rc = cs_testd_restart(e->d);
    if (rc != 0)
        fail_msg("%s: cs_testd_restart returned %d", how, rc);

    /* The job, the finished run and its logs are still there. */
    get.name = quick;
    if (cs_scheduler_get_job(e->client, &get, &job_again, cs_e2e_opts(), &st) != 0)
        fail_msg("GetJob after a %s: %s \"%s\"", how, cs_status_code_name(st.code), st.message);
    assert_int_equal(job_again->version, job->version);
    assert_string_equal(job_again->shell, "echo kept");
    again = cs_e2e_get_run(e, done->id);
    assert_int_equal(again->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(again->n_attempts, 1);
    /* Before, GetRun answered from the runs kept in memory as they ended;
     * now from the database: the same run, field for field. */
    assert_same_run(again, done, how);
    out = cs_e2e_read_logs(e, done->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_string_equal(out, "kept\n");
    free(out);

    assert_history_kept(e, before);
    assert_adopted(e, running, how);

    /* New work continues the history. */
    next = cs_e2e_wait_end(e, cs_e2e_trigger(e, quick));
    assert_int_equal(next->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_true(next->id > long_run);
    assert_true(cs_e2e_last_seq(e) > before->seq[before->n - 1]);

    csched__v1__run__free_unpacked(next, NULL);
    csched__v1__run__free_unpacked(running, NULL);
    csched__v1__run__free_unpacked(again, NULL);
    csched__v1__run__free_unpacked(done, NULL);
    csched__v1__job__free_unpacked(job_again, NULL);
    csched__v1__job__free_unpacked(job, NULL);
    free(before);
}

static void test_e2e_restart_clean(void **state)
{
    restart_keeps_everything(*state, false);
}

static void test_e2e_restart_after_crash(void **state)
{
    restart_keeps_everything(*state, true);
}

/* Sets the times of path (not following a link) to when. */
static void backdate(const char *path, time_t when)
{
    struct timespec times[2] = {{.tv_sec = when}, {.tv_sec = when}};
    if (utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) != 0)
        fail_msg("utimensat(%s): %s", path, strerror(errno));
}

/* The first retention sweep after a start removes the directory of an
 * attempt that ended over --retention-days ago (30 by default), and only
 * that: the run's record stays, and ReadLogs says its output is gone. */
static void test_e2e_restart_removes_expired_attempt_dirs(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest logs = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    struct cs_status st = {0};
    char name[64], old_dir[PATH_MAX], young_dir[PATH_MAX], note[PATH_MAX + 16];
    size_t len;

    cs_e2e_name(name, sizeof(name), "retention");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "echo output"), NULL);
    Csched__V1__Run *old = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    Csched__V1__Run *young = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_int_equal(old->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(young->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    (void)snprintf(old_dir, sizeof(old_dir), "%s/attempts/%lld-1", cs_testd_state_dir(e->d),
                   (long long)old->id);
    (void)snprintf(young_dir, sizeof(young_dir), "%s/attempts/%lld-1", cs_testd_state_dir(e->d),
                   (long long)young->id);
    (void)snprintf(note, sizeof(note), "%s/status", old_dir);
    time_t forty_days_ago = time(NULL) - 40 * 24 * 60 * 60;
    backdate(note, forty_days_ago);
    backdate(old_dir, forty_days_ago);

    int rc = cs_testd_restart(e->d);
    if (rc != 0)
        fail_msg("cs_testd_restart returned %d", rc);
    int64_t deadline = cs_test_now_ms() + 30 * 1000;
    while (access(old_dir, F_OK) == 0 && cs_test_now_ms() < deadline)
        cs_test_sleep_ms(100);
    if (access(old_dir, F_OK) == 0)
        fail_msg("%s is still there 30 s after the restart", old_dir);
    assert_int_equal(access(young_dir, F_OK), 0);

    logs.run_id = old->id;
    cs_e2e_assert_status(cs_e2e_read_logs_status(e, &logs, &st), &st, GRPC_STATUS_NOT_FOUND,
                         "retention-days");
    Csched__V1__Run *again = cs_e2e_get_run(e, old->id);
    assert_int_equal(again->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(again->n_attempts, 1);
    char *out = cs_e2e_read_logs(e, young->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_string_equal(out, "output\n");

    free(out);
    csched__v1__run__free_unpacked(again, NULL);
    csched__v1__run__free_unpacked(young, NULL);
    csched__v1__run__free_unpacked(old, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_restart_clean),
        cmocka_unit_test(test_e2e_restart_after_crash),
        cmocka_unit_test(test_e2e_restart_removes_expired_attempt_dirs),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
