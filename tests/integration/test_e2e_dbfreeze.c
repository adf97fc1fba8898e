/* End-to-end test of a database that hangs under a running cschedd: the
 * fixture's PostgreSQL (postmaster and backends) is frozen with SIGSTOP while
 * runs are in flight, then thawed with SIGCONT. A frozen server keeps its
 * connections open and answers nothing, so only cschedd's own watchdog can
 * see it: health must turn NOT_SERVING within seconds, state-changing calls
 * answer UNAVAILABLE at once and reads within a bounded time, and after the
 * thaw every run ends once, as its command did, with nothing written twice;
 * and a SIGTERM while a trigger waits for its commit ends cleanly.
 * Its own executable: it freezes the fixture's database. */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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

#define RUNS 5
/* Longer than the connect timeout of a reconnect, so one of those fails
 * while frozen too. */
#define FREEZE_MS 12000
/* What the watchdog may take to see the freeze: an idle ping, then its
 * answer timeout (CS_STORE_PING_IDLE_MS + CS_STORE_ANSWER_TIMEOUT_MS), and
 * some slack for a loaded machine. */
#define DETECT_MS 10000
/* A call answered "at once" while the database is frozen. */
#define PROMPT_MS 2000

/* Sends sig to the postmaster and to every process it started. */
static void signal_cluster(pid_t postmaster, int sig)
{
    assert_int_equal(cs_test_signal_tree(postmaster, sig), 0);
}

/* The frozen postmaster, until thawed; the teardown thaws it after a
 * failure, so the fixture can stop it. */
static pid_t frozen;

/* The calls made while frozen: a trigger refused at once with a message that
 * says the database does not answer, and reads answered (from memory, or
 * UNAVAILABLE) within PROMPT_MS. */
static void calls_while_frozen(struct cs_e2e *e, const char *job, int64_t run_id)
{
    Csched__V1__TriggerJobRequest trig = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__GetRunRequest get = CSCHED__V1__GET_RUN_REQUEST__INIT;
    Csched__V1__ListRunsRequest list = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *page = NULL;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    int64_t t0 = cs_test_now_ms();
    int rc;

    trig.job_name = (char *)job;
    cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &trig, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_UNAVAILABLE, "does not answer");
    assert_true(cs_test_now_ms() - t0 < PROMPT_MS);
    t0 = cs_test_now_ms();
    get.run_id = run_id;
    rc = cs_scheduler_get_run(e->client, &get, &run, cs_e2e_opts(), &st);
    if (rc == 0)
        csched__v1__run__free_unpacked(run, NULL);
    else
        cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAVAILABLE, NULL);
    assert_true(cs_test_now_ms() - t0 < PROMPT_MS);
    t0 = cs_test_now_ms();
    list.job_name = (char *)job;
    rc = cs_scheduler_list_runs(e->client, &list, &page, cs_e2e_opts(), &st);
    if (rc == 0)
        csched__v1__list_runs_response__free_unpacked(page, NULL);
    else
        cs_e2e_assert_status(rc, &st, GRPC_STATUS_UNAVAILABLE, NULL);
    assert_true(cs_test_now_ms() - t0 < PROMPT_MS);
}

/* Replays every event committed so far: each of the runs in ids has no
 * (attempt, state) event twice, and its end once for the run (attempt 0) and
 * once for its attempt 1. Returns how many runs pass. */
static int events_once(struct cs_e2e *e, const int64_t *ids, size_t n)
{
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_CALL_TIMEOUT_MS, .wait_for_ready = true};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_test_events events = {0};
    struct cs_stream *stream = NULL;
    struct cs_status st = {0};
    const Csched__V1__Event *ev;
    int64_t until = cs_e2e_last_seq(e), seq = 0;
    /* [run][attempt][state]: attempts 0 (the run's own) and 1 only. */
    int seen[RUNS][2][CSCHED__V1__RUN_STATE__RUN_STATE_LOST + 1] = {{{0}}};
    int ok = 0;

    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    assert_int_equal(cs_scheduler_watch(e->client, &req, &stream, &opts, &st), 0);
    events.stream = stream;
    while (seq < until) {
        assert_int_equal(cs_test_next_event(&events, &ev, &st), 1);
        assert_true(ev->seq > seq);
        seq = ev->seq;
        for (size_t i = 0; i < n; i++)
            if (ev->run_id == ids[i] && ev->attempt < 2 && ev->state >= 0 &&
                ev->state <= CSCHED__V1__RUN_STATE__RUN_STATE_LOST)
                seen[i][ev->attempt][ev->state]++;
    }
    cs_test_events_done(&events);
    cs_stream_free(stream);
    for (size_t i = 0; i < n; i++) {
        bool once = true;

        for (int a = 0; a < 2; a++)
            for (int k = 0; k <= CSCHED__V1__RUN_STATE__RUN_STATE_LOST; k++)
                once = once && seen[i][a][k] <= 1;
        ok += once && seen[i][0][CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED] == 1 &&
              seen[i][1][CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED] == 1;
    }
    return ok;
}

static void test_e2e_dbfreeze_detected_and_resumed(void **state)
{
    struct cs_e2e *e = *state;
    pid_t postmaster = cs_testpg_pid(e->pg);
    Csched__V1__ListRunsRequest list = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *page = NULL;
    struct cs_status st = {0};
    char dir[4096], shell[4400], name[64];
    int64_t ids[RUNS], t0, detect_ms, thaw_ms;
    int ended_ok = 0;

    cs_e2e_tmpdir(dir);
    (void)snprintf(shell, sizeof(shell), "echo x >> %s/$CSCHED_RUN_ID; sleep 2", dir);
    cs_e2e_name(name, sizeof(name), "frozen");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    for (int i = 0; i < RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING, 0);

    signal_cluster(postmaster, SIGSTOP);
    frozen = postmaster;
    t0 = cs_test_now_ms();
    detect_ms = cs_e2e_wait_health(
        e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING, DETECT_MS);
    calls_while_frozen(e, name, ids[0]);
    while (cs_test_now_ms() - t0 < FREEZE_MS)
        cs_test_sleep_ms(100);
    signal_cluster(postmaster, SIGCONT);
    frozen = 0;
    thaw_ms = cs_e2e_wait_health(
        e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING, CS_E2E_RUN_TIMEOUT_MS);

    for (int i = 0; i < RUNS; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);

        if (run->state == CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED && run->n_attempts == 1 &&
            cs_e2e_executions(dir, ids[i]) == 1)
            ended_ok++;
        csched__v1__run__free_unpacked(run, NULL);
    }
    /* Nothing doubled: the job has exactly the runs triggered. */
    list.job_name = name;
    list.page_size = 100;
    assert_int_equal(cs_scheduler_list_runs(e->client, &list, &page, cs_e2e_opts(), &st), 0);
    assert_int_equal(page->n_runs, RUNS);
    csched__v1__list_runs_response__free_unpacked(page, NULL);
    printf("dbfreeze: %d runs in flight, frozen %d ms: NOT_SERVING after %lld ms, SERVING %lld ms "
           "after the thaw; %d ended SUCCEEDED with 1 attempt and 1 execution\n",
           RUNS, FREEZE_MS, (long long)detect_ms, (long long)thaw_ms, ended_ok);
    assert_int_equal(ended_ok, RUNS);
    assert_int_equal(events_once(e, ids, RUNS), RUNS);
    cs_test_rmtree(dir);
}

/* How many entries dir has besides . and .. (marker files: commands that ran). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    int n = 0;

    assert_non_null(d);
    while ((ent = readdir(d)) != NULL)
        n += strcmp(ent->d_name, ".") != 0 && strcmp(ent->d_name, "..") != 0;
    (void)closedir(d);
    return n;
}

/* Makes a job (named after prefix, into name) whose command appends a line
 * to dir/$CSCHED_RUN_ID in a new temp dir (into dir, PATH_MAX bytes),
 * freezes the database and triggers the job: the trigger waits for a commit
 * that cannot come, so the call runs out of its timeout_ms. */
static void trigger_while_frozen(struct cs_e2e *e, const char *prefix, char *name, size_t cap,
                                 char *dir, int64_t timeout_ms)
{
    Csched__V1__TriggerJobRequest trig = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    struct cs_call_opts short_call = {.timeout_ms = timeout_ms};
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    char shell[PATH_MAX + 64];

    cs_e2e_tmpdir(dir);
    (void)snprintf(shell, sizeof(shell), "echo x >> %s/$CSCHED_RUN_ID", dir);
    cs_e2e_name(name, cap, prefix);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    frozen = cs_testpg_pid(e->pg);
    signal_cluster(frozen, SIGSTOP);
    trig.job_name = name;
    cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &trig, &run, &short_call, &st), &st,
                         GRPC_STATUS_DEADLINE_EXCEEDED, NULL);
}

/* The id of job's only run, or 0 without one (at most one is allowed). */
static int64_t only_run(struct cs_e2e *e, const char *job)
{
    Csched__V1__ListRunsRequest list = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *page = NULL;
    struct cs_status st = {0};
    int64_t run_id = 0;

    list.job_name = (char *)job;
    assert_int_equal(cs_scheduler_list_runs(e->client, &list, &page, cs_e2e_opts(), &st), 0);
    assert_true(page->n_runs <= 1);
    if (page->n_runs == 1)
        run_id = page->runs[0]->id;
    csched__v1__list_runs_response__free_unpacked(page, NULL);
    return run_id;
}

/* A run triggered just as the database froze: its creation cannot commit,
 * so its command must not start; cschedd then dies before the thaw. After
 * the restart the run exists (the frozen backend committed it after all) and
 * ran once, or it does not exist and never ran. */
static void test_e2e_dbfreeze_unstored_run_never_starts(void **state)
{
    struct cs_e2e *e = *state;
    pid_t postmaster = cs_testpg_pid(e->pg);
    char dir[PATH_MAX], name[64];

    trigger_while_frozen(e, "unstored", name, sizeof(name), dir, 1000);
    cs_test_sleep_ms(1000);
    assert_int_equal(entries(dir), 0); /* nothing ran */
    assert_int_equal(cs_testd_kill(e->d), 0);
    signal_cluster(postmaster, SIGCONT);
    frozen = 0;
    assert_int_equal(cs_testd_restart(e->d), 0);

    int64_t run_id = only_run(e, name);
    if (run_id != 0)
        csched__v1__run__free_unpacked(cs_e2e_wait_end(e, run_id), NULL);
    printf("dbfreeze: a trigger while frozen, then kill -9: %s after the restart, executions %d\n",
           run_id != 0 ? "stored" : "unknown", run_id != 0 ? cs_e2e_executions(dir, run_id) : 0);
    if (run_id != 0)
        assert_int_equal(cs_e2e_executions(dir, run_id), 1);
    else
        assert_int_equal(entries(dir), 0);
    cs_test_rmtree(dir);
}

/* How long the thread of the next test lets the database stay frozen. */
#define THAW_AFTER_MS 2000

static void *thaw_later(void *arg)
{
    cs_test_sleep_ms(THAW_AFTER_MS);
    signal_cluster(*(pid_t *)arg, SIGCONT);
    return NULL;
}

/* SIGTERM while a trigger waits for its commit (the database frozen): the
 * server aborted on its way out (its gRPC side gone with a call still
 * open). It must wait for the commit, answer and exit 0, and the run, once
 * committed, runs once. */
static void test_e2e_dbfreeze_sigterm_while_a_commit_waits(void **state)
{
    struct cs_e2e *e = *state;
    pid_t postmaster = cs_testpg_pid(e->pg);
    char dir[PATH_MAX], name[64];
    pthread_t thawer;

    trigger_while_frozen(e, "sigterm", name, sizeof(name), dir, 500);
    assert_int_equal(pthread_create(&thawer, NULL, thaw_later, &postmaster), 0);
    int status = cs_testd_restart(e->d);
    assert_int_equal(pthread_join(thawer, NULL), 0);
    frozen = 0;
    assert_int_equal(status, 0);

    int64_t run_id = only_run(e, name);
    assert_true(run_id > 0);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, run_id), NULL);
    assert_int_equal(cs_e2e_executions(dir, run_id), 1);
    cs_test_rmtree(dir);
}

static int thaw_teardown(void **state)
{
    (void)state;
    if (frozen > 0)
        signal_cluster(frozen, SIGCONT);
    frozen = 0;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_e2e_dbfreeze_detected_and_resumed, thaw_teardown),
        cmocka_unit_test_teardown(test_e2e_dbfreeze_unstored_run_never_starts, thaw_teardown),
        cmocka_unit_test_teardown(test_e2e_dbfreeze_sigterm_while_a_commit_waits, thaw_teardown),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
