/* End-to-end tests of runs (TriggerJob, GetRun, ListRuns, CancelRun) through
 * libcsched against a real cschedd, real minders and the real clock: exit
 * codes, signals, env, working dir, idempotency keys, timeouts, cancels,
 * retries and the per-job limit. One server serves every test of this file. */
#include <limits.h>
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
#include "testwatch.h"

/* The run's captured stdout is exactly want. */
static void assert_stdout(struct cs_e2e *e, int64_t run_id, const char *want)
{
    size_t len;
    char *out = cs_e2e_read_logs(e, run_id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);

    assert_string_equal(out, want);
    free(out);
}

/* Creates a shell job and runs it once to its end; returns the final run. */
static Csched__V1__Run *run_shell(struct cs_e2e *e, const char *prefix, const char *shell)
{
    char name[64];

    cs_e2e_name(name, sizeof(name), prefix);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    return cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
}

static void assert_run_state(const Csched__V1__Run *run, Csched__V1__RunState want)
{
    if (run->state != want)
        fail_msg("run %lld is %s, want %s (message \"%s\")", (long long)run->id,
                 cs_test_run_state_name(run->state), cs_test_run_state_name(want), run->message);
}

static void test_e2e_runs_exit_zero_succeeds(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "exit0", "exit 0");

    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_int_equal(run->exit_code, 0);
    assert_int_equal(run->n_attempts, 1);
    assert_int_equal(run->attempts[0]->number, 1);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->attempts[0]->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE);
    assert_int_equal(run->attempts[0]->exit_code, 0);
    assert_true(run->attempts[0]->minder_pid > 0);
    assert_true(run->created_unix_ms > 0);
    assert_true(run->started_unix_ms >= run->created_unix_ms);
    assert_true(run->ended_unix_ms >= run->started_unix_ms);
    assert_true(run->attempts[0]->started_unix_ms > 0);
    assert_true(run->attempts[0]->ended_unix_ms >= run->attempts[0]->started_unix_ms);
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_e2e_runs_exit_three_fails(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "exit3", "exit 3");

    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_int_equal(run->exit_code, 3);
    assert_int_equal(run->n_attempts, 1);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->attempts[0]->exit_code, 3);
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_e2e_runs_killed_by_signal_fails(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "sig", "kill -KILL $$");

    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL);
    assert_int_equal(run->term_signal, SIGKILL);
    assert_int_equal(run->attempts[0]->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL);
    assert_int_equal(run->attempts[0]->term_signal, SIGKILL);
    csched__v1__run__free_unpacked(run, NULL);
}

/* An argv command runs without a shell, argv[0] found in PATH. */
static void test_e2e_runs_argv_command(void **state)
{
    struct cs_e2e *e = *state;
    char *argv[] = {"printf", "%s|%s", "a b", "$HOME"};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run;
    char name[64];

    cs_e2e_name(name, sizeof(name), "argv");
    job.name = name;
    job.n_command = 4;
    job.command = argv;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_stdout(e, run->id, "a b|$HOME");
    csched__v1__run__free_unpacked(run, NULL);
}

/* The job's env and the trigger's overrides both reach the command, the
 * trigger winning where both set a name. */
static void test_e2e_runs_env_and_overrides(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job__EnvEntry jx = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry jy = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry *jenv[] = {&jx, &jy};
    Csched__V1__TriggerJobRequest__EnvEntry ty = CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT;
    Csched__V1__TriggerJobRequest__EnvEntry tz = CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT;
    Csched__V1__TriggerJobRequest__EnvEntry *tenv[] = {&ty, &tz};
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run = NULL, *plain;
    struct cs_status st = {0};
    char name[64];

    cs_e2e_name(name, sizeof(name), "env");
    jx.key = "X";
    jx.value = "from job";
    jy.key = "Y";
    jy.value = "job y";
    job.name = name;
    job.shell = "echo \"$X|$Y|$Z\"";
    job.n_env = 2;
    job.env = jenv;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);

    ty.key = "Y";
    ty.value = "trigger y";
    tz.key = "Z";
    tz.value = "trigger z";
    req.job_name = name;
    req.n_env = 2;
    req.env = tenv;
    if (cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st) != 0)
        fail_msg("TriggerJob with env: %s \"%s\"", cs_status_code_name(st.code), st.message);
    plain = cs_e2e_wait_end(e, run->id);
    assert_run_state(plain, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_stdout(e, run->id, "from job|trigger y|trigger z\n");
    csched__v1__run__free_unpacked(plain, NULL);
    csched__v1__run__free_unpacked(run, NULL);

    /* The overrides were for that run only. */
    plain = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_stdout(e, plain->id, "from job|job y|\n");
    csched__v1__run__free_unpacked(plain, NULL);
}

/* working_dir is where the command starts; empty means the attempt's own
 * directory, STATE_DIR/attempts/<run_id>-<attempt>. */
static void test_e2e_runs_working_dir(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char dir[PATH_MAX], want[PATH_MAX + 64], real[PATH_MAX], name[64];
    Csched__V1__Run *run;
    size_t len;
    char *out;

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "wd");
    job.name = name;
    job.shell = "pwd -P";
    job.working_dir = dir;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    out = cs_e2e_read_logs(e, run->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_non_null(realpath(dir, real));
    snprintf(want, sizeof(want), "%s\n", real);
    assert_string_equal(out, want);
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(dir), 0);

    run = run_shell(e, "wddefault", "pwd -P");
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    out = cs_e2e_read_logs(e, run->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_non_null(realpath(cs_testd_state_dir(e->d), real));
    snprintf(want, sizeof(want), "%s/attempts/%lld-1\n", real, (long long)run->id);
    assert_string_equal(out, want);
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
}

static Csched__V1__Run *trigger_key(struct cs_e2e *e, const char *job, const char *key)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};

    req.job_name = (char *)job;
    req.idempotency_key = (char *)key;
    if (cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st) != 0)
        fail_msg("TriggerJob(%s, key %s): %s \"%s\"", job, key, cs_status_code_name(st.code),
                 st.message);
    assert_string_equal(run->idempotency_key, key);
    return run;
}

/* The same key returns the same run, also after that run ended; another key
 * makes another run. */
static void test_e2e_runs_idempotency_key(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *a, *b, *c, *end;
    char name[64];

    cs_e2e_name(name, sizeof(name), "idem");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    a = trigger_key(e, name, "key-1");
    b = trigger_key(e, name, "key-1");
    assert_int_equal(b->id, a->id);
    end = cs_e2e_wait_end(e, a->id);
    csched__v1__run__free_unpacked(end, NULL);
    csched__v1__run__free_unpacked(b, NULL);
    b = trigger_key(e, name, "key-1");
    assert_int_equal(b->id, a->id);
    assert_run_state(b, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    c = trigger_key(e, name, "key-2");
    assert_int_not_equal(c->id, a->id);
    assert_true(c->id > a->id);
    end = cs_e2e_wait_end(e, c->id);
    csched__v1__run__free_unpacked(end, NULL);
    csched__v1__run__free_unpacked(c, NULL);
    csched__v1__run__free_unpacked(b, NULL);
    csched__v1__run__free_unpacked(a, NULL);
}

/* The shell records its process group, then waits on a child so the group
 * holds two processes to stop. */
#define GROUP_SHELL "cut -d' ' -f5 /proc/$$/stat > %s/pgid; sleep 30 & wait"

/* A run of GROUP_SHELL (after shell_head) in a fresh temp dir, triggered and
 * waited for until its command's group exists. */
struct group_run {
    char dir[PATH_MAX];
    int64_t id;
    pid_t pgid;
};

/* job carries the limits (timeout, attempts); its name and shell are set
 * here and cleared again. */
static void start_group_run(struct cs_e2e *e, const char *prefix, const char *shell_head,
                            Csched__V1__Job *job, struct group_run *g)
{
    char shell[2 * PATH_MAX], path[PATH_MAX + 8], name[64];

    cs_e2e_tmpdir(g->dir);
    snprintf(shell, sizeof(shell), "%s" GROUP_SHELL, shell_head, g->dir);
    snprintf(path, sizeof(path), "%s/pgid", g->dir);
    cs_e2e_name(name, sizeof(name), prefix);
    job->name = name;
    job->shell = shell;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    job->name = job->shell = NULL;
    g->id = cs_e2e_trigger(e, name);
    g->pgid = cs_e2e_read_pgid(path, 5000);
}

static void test_e2e_runs_timeout(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct group_run g;
    int64_t t0, took_ms;
    Csched__V1__Run *run;

    job.timeout_seconds = 1;
    t0 = cs_test_now_ms();
    start_group_run(e, "timeout", "", &job, &g);
    run = cs_e2e_wait_end(e, g.id);
    took_ms = cs_test_now_ms() - t0;
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    if (took_ms < 900 || took_ms > 4000)
        fail_msg("timeout_seconds 1 ended the run after %lld ms", (long long)took_ms);
    cs_e2e_assert_group_gone(g.pgid, 1000);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(g.dir), 0);
}

/* A minder killed outright leaves no status note: its attempt is LOST with a
 * message saying so, the command it left behind is stopped, and the run goes
 * on to its next attempt. */
static void test_e2e_runs_killed_minder_is_lost_then_retried(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct group_run g;
    Csched__V1__Run *run;

    job.max_attempts = 2;
    start_group_run(e, "minderkill", "[ \"$CSCHED_ATTEMPT\" = 2 ] && exit 0; ", &job, &g);
    run = cs_e2e_wait_state(e, g.id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_int_equal(run->n_attempts, 1);
    assert_true(run->attempts[0]->minder_pid > 0);
    assert_int_equal(kill(run->attempts[0]->minder_pid, SIGKILL), 0);
    csched__v1__run__free_unpacked(run, NULL);

    run = cs_e2e_wait_end(e, g.id);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->n_attempts, 2);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
    if (strstr(run->attempts[0]->message, "status note") == NULL)
        fail_msg("LOST attempt message \"%s\" does not say the note is missing",
                 run->attempts[0]->message);
    assert_int_equal(run->attempts[1]->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    /* The server stopped the command the killed minder left behind. */
    cs_e2e_assert_group_gone(g.pgid, 2000);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(g.dir), 0);
}

/* A minder that cannot enforce its job's timeout (here: stopped) is killed
 * by the server once the timeout, the kill grace (10 s), the drain (1 s) and
 * a margin (5 s) have passed: the attempt is LOST, saying so, and the
 * command's group is stopped. */
static void test_e2e_runs_stopped_minder_is_killed_after_its_deadline(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct group_run g;
    Csched__V1__Run *run;
    int64_t t0;
    pid_t minder;

    job.timeout_seconds = 1;
    start_group_run(e, "minderstop", "", &job, &g);
    run = cs_e2e_wait_state(e, g.id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    minder = run->attempts[0]->minder_pid;
    assert_true(minder > 0);
    assert_int_equal(kill(minder, SIGSTOP), 0);
    t0 = cs_test_now_ms();
    csched__v1__run__free_unpacked(run, NULL);

    run = cs_e2e_wait_state(e, g.id, CSCHED__V1__RUN_STATE__RUN_STATE_LOST, 30000);
    int64_t took_ms = cs_test_now_ms() - t0;
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
    if (strstr(run->attempts[0]->message, "cschedd killed it") == NULL)
        fail_msg("LOST attempt message \"%s\" does not say the server killed the minder",
                 run->attempts[0]->message);
    /* Not before the minder had all its time: 1 s + 10 s + 1 s + 5 s from
     * its start, of which at most the run's start-up had passed at t0. */
    if (took_ms < 15000)
        fail_msg("the minder was killed %lld ms after it was stopped, before its deadline",
                 (long long)took_ms);
    cs_e2e_assert_group_gone(g.pgid, 2000);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(g.dir), 0);
}

static Csched__V1__Run *cancel_run(struct cs_e2e *e, int64_t id, int want)
{
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    int rc;

    req.run_id = id;
    rc = cs_scheduler_cancel_run(e->client, &req, &run, cs_e2e_opts(), &st);
    if (want == 0 && rc != 0)
        fail_msg("CancelRun(%lld): %s \"%s\"", (long long)id, cs_status_code_name(rc), st.message);
    if (want != 0) {
        cs_e2e_assert_status(rc, &st, want, NULL);
        assert_null(run);
    }
    return run;
}

/* CancelRun of a running attempt stops its whole process group quickly. */
static void test_e2e_runs_cancel_running(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct group_run g;
    Csched__V1__Run *run;
    int64_t id, t0, took_ms;

    start_group_run(e, "cancel", "", &job, &g);
    id = g.id;
    run = cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);

    t0 = cs_test_now_ms();
    run = cancel_run(e, id, 0);
    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED && !run->cancel_requested)
        fail_msg("CancelRun answered %s without cancel_requested",
                 cs_test_run_state_name(run->state));
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, id);
    took_ms = cs_test_now_ms() - t0;
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(run->n_attempts, 1);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    if (took_ms > 3000)
        fail_msg("cancel took %lld ms", (long long)took_ms);
    cs_e2e_assert_group_gone(g.pgid, 1000);
    csched__v1__run__free_unpacked(run, NULL);

    /* A finished run cannot be cancelled. */
    cancel_run(e, id, GRPC_STATUS_FAILED_PRECONDITION);
    assert_int_equal(cs_test_rmtree(g.dir), 0);
}

/* A cancelled attempt is never retried, whatever max_attempts allows. */
static void test_e2e_runs_cancel_not_retried(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    bool still_requested;
    Csched__V1__Run *run;
    size_t attempts;
    char name[64];
    int64_t id;

    cs_e2e_name(name, sizeof(name), "cancelretry");
    job.name = name;
    job.shell = "sleep 30";
    job.max_attempts = 3;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    id = cs_e2e_trigger(e, name);
    run = cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);
    csched__v1__run__free_unpacked(cancel_run(e, id, 0), NULL);
    run = cs_e2e_wait_end(e, id);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    attempts = run->n_attempts;
    still_requested = run->cancel_requested;
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(attempts, 1);
    /* docs/configuration.md: cancel_requested shows until the attempt has
     * ended. */
    assert_false(still_requested);
}

/* A run queued behind its job's limit is cancelled at once, without an
 * attempt. */
static void test_e2e_runs_cancel_queued(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run;
    int64_t blocker, queued;
    char name[64];

    cs_e2e_name(name, sizeof(name), "cancelq");
    csched__v1__job__free_unpacked(cs_e2e_create_serial_job(e, name, "sleep 30"), NULL);
    blocker = cs_e2e_trigger(e, name);
    run = cs_e2e_wait_state(e, blocker, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);

    queued = cs_e2e_trigger(e, name);
    run = cs_e2e_get_run(e, queued);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    csched__v1__run__free_unpacked(run, NULL);
    run = cancel_run(e, queued, 0);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(run->n_attempts, 0);
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_get_run(e, queued);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    csched__v1__run__free_unpacked(run, NULL);
    cancel_run(e, queued, GRPC_STATUS_FAILED_PRECONDITION);

    csched__v1__run__free_unpacked(cancel_run(e, blocker, 0), NULL);
    run = cs_e2e_wait_end(e, blocker);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_e2e_runs_retries_until_success(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], shell[2 * PATH_MAX + 128], name[64];
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run;

    cs_e2e_tmpdir(dir);
    /* Fails twice, then succeeds. */
    cs_e2e_counter_shell(shell, sizeof(shell), dir, "[ $n -ge 3 ]");
    cs_e2e_name(name, sizeof(name), "retry");
    job.name = name;
    job.shell = shell;
    job.max_attempts = 3;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->n_attempts, 3);
    for (size_t i = 0; i < 3; i++) {
        Csched__V1__Attempt *a = run->attempts[i];

        assert_int_equal(a->number, i + 1);
        assert_int_equal(a->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE);
        assert_int_equal(a->exit_code, i < 2 ? 1 : 0);
        assert_int_equal(a->state, i < 2 ? CSCHED__V1__RUN_STATE__RUN_STATE_FAILED
                                         : CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    }
    assert_int_equal(run->exit_code, 0);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(dir), 0);
}
static void test_e2e_runs_retries_exhausted(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run;
    char name[64];

    cs_e2e_name(name, sizeof(name), "retryfail");
    job.name = name;
    job.shell = "exit 7";
    job.max_attempts = 2;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->n_attempts, 2);
    assert_int_equal(run->attempts[0]->number, 1);
    assert_int_equal(run->attempts[1]->number, 2);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->attempts[1]->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_int_equal(run->exit_code, 7);
    csched__v1__run__free_unpacked(run, NULL);
}

/* A timed-out attempt is retried too, after retry_backoff_ms. */
static void test_e2e_runs_timeout_retried_after_backoff(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run;
    int64_t gap_ms;
    char name[64];

    cs_e2e_name(name, sizeof(name), "timeoutretry");
    job.name = name;
    job.shell = "sleep 30";
    job.timeout_seconds = 1;
    job.max_attempts = 2;
    job.retry_backoff_ms = 500;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    assert_int_equal(run->n_attempts, 2);
    assert_int_equal(run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    assert_int_equal(run->attempts[1]->state, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    gap_ms = run->attempts[1]->started_unix_ms - run->attempts[0]->ended_unix_ms;
    if (gap_ms < 490)
        fail_msg("retry started %lld ms after the first attempt ended, backoff is 500 ms",
                 (long long)gap_ms);
    csched__v1__run__free_unpacked(run, NULL);
}

/* A job with max_running 1 and three quick runs triggered together: Watch
 * never shows two of them RUNNING at once, and all three succeed. */
static void test_e2e_runs_job_max_running(void **state)
{
    struct cs_e2e *e = *state;
    enum { N = 3 };
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__WatchRequest wreq = CSCHED__V1__WATCH_REQUEST__INIT;
    int running = 0, peak = 0, ended = 0, succeeded = 0, rc;
    int64_t bad_seq = 0, peak_seq = 0;
    struct cs_status st = {0};
    struct cs_stream *s = NULL;
    struct cs_test_events events = {0};
    const Csched__V1__Event *ev;
    int64_t t0, took_ms;
    char name[64];

    cs_e2e_name(name, sizeof(name), "jobmax");
    csched__v1__job__free_unpacked(cs_e2e_create_serial_job(e, name, "sleep 0.3"), NULL);

    /* The job is new, so a replay from 0 holds nothing before its runs. */
    wreq.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    wreq.after_seq = 0;
    wreq.job_name = name;
    assert_int_equal(cs_scheduler_watch(e->client, &wreq, &s, &opts, &st), 0);
    t0 = cs_test_now_ms();
    for (int i = 0; i < N; i++)
        (void)cs_e2e_trigger(e, name); /* Ids are followed through Watch. */

    /* Everything is judged after the stream is freed, so a failure leaks
     * nothing. */
    events.stream = s;
    while (ended < N && (rc = cs_test_next_event(&events, &ev, &st)) == 1) {
        if (strcmp(ev->job_name, name) != 0 && bad_seq == 0)
            bad_seq = ev->seq;
        if (ev->attempt == 0) {
            if (ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING)
                running++;
            if (cs_test_run_state_is_terminal(ev->state)) {
                succeeded += ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
                running--;
                ended++;
            }
            if (running > peak) {
                peak = running;
                peak_seq = ev->seq;
            }
        }
    }
    cs_test_events_done(&events);
    cs_stream_free(s);
    if (ended < N)
        fail_msg("Watch ended after %d of %d runs: %s \"%s\"", ended, N,
                 cs_status_code_name(st.code), st.message);
    if (bad_seq != 0)
        fail_msg("Watch filtered by job %s sent another job's event (seq %lld)", name,
                 (long long)bad_seq);
    if (peak > 1)
        fail_msg("%d runs of a max_running 1 job RUNNING at once (seq %lld)", peak,
                 (long long)peak_seq);
    assert_int_equal(succeeded, N);
    took_ms = cs_test_now_ms() - t0;
    /* Three 0.3 s runs one after another cannot take less than 0.9 s. */
    if (took_ms < 900)
        fail_msg("%d serialised runs of sleep 0.3 took only %lld ms", N, (long long)took_ms);
}

static Csched__V1__ListRunsResponse *list_runs(struct cs_e2e *e, const char *job,
                                               Csched__V1__RunState state, uint32_t page_size,
                                               const char *token)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *resp = NULL;
    struct cs_status st = {0};

    req.job_name = (char *)job;
    req.state = state;
    req.page_size = page_size;
    req.page_token = (char *)token;
    if (cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListRuns(job \"%s\", state %s): %s \"%s\"", job, cs_test_run_state_name(state),
                 cs_status_code_name(st.code), st.message);
    return resp;
}

/* Collects the ids of every page of a ListRuns query, checking page sizes,
 * newest-first order, the filters and that no run comes twice. Returns the
 * number of ids stored in ids (at most cap). */
static size_t list_all_runs(struct cs_e2e *e, const char *job, Csched__V1__RunState state,
                            uint32_t page_size, int64_t *ids, size_t cap)
{
    Csched__V1__ListRunsResponse *page;
    char *token = strdup("");
    size_t n = 0;

    do {
        page = list_runs(e, job, state, page_size, token);
        assert_true(page->n_runs <= page_size);
        for (size_t i = 0; i < page->n_runs; i++) {
            Csched__V1__Run *r = page->runs[i];

            if (job[0] != '\0')
                assert_string_equal(r->job_name, job);
            if (state != CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED)
                assert_int_equal(r->state, state);
            if (n > 0 && r->id >= ids[n - 1])
                fail_msg("ListRuns not newest first: %lld after %lld", (long long)r->id,
                         (long long)ids[n - 1]);
            assert_true(n < cap);
            ids[n++] = r->id;
        }
        free(token);
        token = strdup(page->next_page_token);
        if (page->n_runs == 0)
            assert_string_equal(token, "");
        csched__v1__list_runs_response__free_unpacked(page, NULL);
    } while (token[0] != '\0');
    free(token);
    return n;
}

static void test_e2e_runs_list_filters_and_paging(void **state)
{
    struct cs_e2e *e = *state;
    char ok_job[64], bad_job[64];
    int64_t ok[5], bad[2], ids[512];
    Csched__V1__Run *run;
    size_t n;

    cs_e2e_name(ok_job, sizeof(ok_job), "listok");
    cs_e2e_name(bad_job, sizeof(bad_job), "listbad");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, ok_job, "true"), NULL);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, bad_job, "false"), NULL);
    for (int i = 0; i < 5; i++)
        ok[i] = cs_e2e_trigger(e, ok_job);
    for (int i = 0; i < 2; i++)
        bad[i] = cs_e2e_trigger(e, bad_job);
    for (int i = 0; i < 5; i++) {
        run = cs_e2e_wait_end(e, ok[i]);
        csched__v1__run__free_unpacked(run, NULL);
    }
    for (int i = 0; i < 2; i++) {
        run = cs_e2e_wait_end(e, bad[i]);
        csched__v1__run__free_unpacked(run, NULL);
    }

    /* By job, two per page: 5 runs, newest first. */
    n = list_all_runs(e, ok_job, CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED, 2, ids, 512);
    assert_int_equal(n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(ids[i], ok[4 - i]);

    /* By job and state. */
    n = list_all_runs(e, bad_job, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, 1, ids, 512);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], bad[1]);
    assert_int_equal(ids[1], bad[0]);
    n = list_all_runs(e, ok_job, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, 10, ids, 512);
    assert_int_equal(n, 0);

    /* By state across every job: all of ok_job's runs, none of bad_job's. */
    n = list_all_runs(e, "", CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, 3, ids, 512);
    for (int i = 0; i < 5; i++) {
        bool found = false;

        for (size_t j = 0; j < n; j++)
            found = found || ids[j] == ok[i];
        assert_true(found);
    }
    for (size_t j = 0; j < n; j++)
        assert_true(ids[j] != bad[0] && ids[j] != bad[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_runs_exit_zero_succeeds),
        cmocka_unit_test(test_e2e_runs_exit_three_fails),
        cmocka_unit_test(test_e2e_runs_killed_by_signal_fails),
        cmocka_unit_test(test_e2e_runs_argv_command),
        cmocka_unit_test(test_e2e_runs_env_and_overrides),
        cmocka_unit_test(test_e2e_runs_working_dir),
        cmocka_unit_test(test_e2e_runs_idempotency_key),
        cmocka_unit_test(test_e2e_runs_timeout),
        cmocka_unit_test(test_e2e_runs_killed_minder_is_lost_then_retried),
        cmocka_unit_test(test_e2e_runs_stopped_minder_is_killed_after_its_deadline),
        cmocka_unit_test(test_e2e_runs_cancel_running),
        cmocka_unit_test(test_e2e_runs_cancel_not_retried),
        cmocka_unit_test(test_e2e_runs_cancel_queued),
        cmocka_unit_test(test_e2e_runs_retries_until_success),
        cmocka_unit_test(test_e2e_runs_retries_exhausted),
        cmocka_unit_test(test_e2e_runs_timeout_retried_after_backoff),
        cmocka_unit_test(test_e2e_runs_job_max_running),
        cmocka_unit_test(test_e2e_runs_list_filters_and_paging),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
