/* End-to-end tests of cschedd killed (SIGKILL) at each point of an attempt's
 * start, against its real embedded PostgreSQL and real minders (a single
 * replica: with a database other replicas share, a start also waits for its
 * commit, and a frozen database holds the starts back): after the restart every
 * run ends as its command did, each command ran exactly as often as its
 * attempts say, and no attempt number or directory is used twice. The
 * points inside the launch are reached with CSCHED_TEST_CRASH_AT (the server
 * kills itself a second after the named step); the others with real timing
 * and a frozen (SIGSTOP) database. docs/operations.md, "Crash points", has
 * the table these rows test. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"
#include "testwatch.h"

#define CRASH_AT_ENV "CSCHED_TEST_CRASH_AT"
#define BURST_RUNS 200
/* 2020-01-01: before any boot of a machine these tests run on. */
#define LONG_BEFORE_BOOT 1577836800

/* The directory the commands count their executions in. */
static char counts[4096];

/* The command: one line per execution in counts/<run id>, then exit code.
 * A command cut short would count nothing or run something else: the test
 * stops instead. */
static void counting_shell(char *buf, size_t cap, const char *then)
{
    int n = snprintf(buf, cap, "echo $CSCHED_ATTEMPT >> %s/$CSCHED_RUN_ID; %s", counts, then);
    assert_true(n >= 0 && (size_t)n < cap);
}

/* How many times run_id's command ran. */
static int executions(int64_t run_id)
{
    char path[4200], line[64];
    int n = 0;
    (void)snprintf(path, sizeof(path), "%s/%lld", counts, (long long)run_id);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        n++;
    fclose(f);
    return n;
}

static int64_t make_job_and_trigger(struct cs_e2e *e, const char *prefix, uint32_t max_attempts,
                                    const char *then)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64], shell[4300];
    cs_e2e_name(name, sizeof(name), prefix);
    counting_shell(shell, sizeof(shell), then);
    job.name = name;
    job.shell = shell;
    job.max_attempts = max_attempts;
    job.retry_backoff_ms = 50;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    return cs_e2e_trigger(e, name);
}

/* Waits until process pid is a zombie: it died by itself. */
static void wait_died(pid_t pid, int64_t timeout_ms)
{
    char path[64], text[256];
    int64_t until = cs_test_now_ms() + timeout_ms;
    (void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    while (cs_test_now_ms() < until) {
        FILE *f = fopen(path, "r");
        size_t n = f != NULL ? fread(text, 1, sizeof(text) - 1, f) : 0;
        if (f != NULL)
            fclose(f);
        text[n] = '\0';
        const char *p = strrchr(text, ')');
        if (f == NULL || (p != NULL && p[2] == 'Z'))
            return;
        cs_test_sleep_ms(20);
    }
    fail_msg("cschedd %d did not kill itself within %lld ms", (int)pid, (long long)timeout_ms);
}

/* Restarts the fixture's server with CSCHED_TEST_CRASH_AT=step. */
static void restart_with_crash_at(struct cs_e2e *e, const char *step)
{
    assert_int_equal(setenv(CRASH_AT_ENV, step, 1), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
    assert_int_equal(unsetenv(CRASH_AT_ENV), 0);
}

/* The server has died at its crash point: reap it and start a new one. */
static void restart_after_crash(struct cs_e2e *e)
{
    wait_died(cs_testd_pid(e->d), 10000);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
}

static Csched__V1__Run *wait_end_after_crash(struct cs_e2e *e, int64_t run_id)
{
    Csched__V1__Run *run = cs_e2e_wait_end(e, run_id);
    for (size_t i = 0; i < run->n_attempts; i++)
        assert_int_equal(run->attempts[i]->number, i + 1);
    return run;
}

/* Restarts the server with its crash point at step, triggers a new job of
 * max_attempts 1 running shell, and restarts it after it killed itself.
 * The run must end SUCCEEDED with its command run once, in its last
 * attempt of n_attempts: any attempt before it never started. */
static void crash_at(struct cs_e2e *e, const char *step, const char *shell, size_t n_attempts)
{
    restart_with_crash_at(e, step);
    int64_t id = make_job_and_trigger(e, step, 1, shell);
    restart_after_crash(e);
    Csched__V1__Run *run = wait_end_after_crash(e, id);
    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED || executions(id) != 1)
        fail_msg("%s: run %lld ended %s (\"%s\"), its command ran %d times, want SUCCEEDED once",
                 step, (long long)id, cs_test_run_state_name(run->state), run->message,
                 executions(id));
    assert_int_equal(run->n_attempts, n_attempts);
    for (size_t i = 0; i + 1 < n_attempts; i++) {
        assert_int_equal(run->attempts[i]->state, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
        if (strstr(run->attempts[i]->message, "never started") == NULL)
            fail_msg("%s: attempt %zu: \"%s\", want it to say it never started", step, i + 1,
                     run->attempts[i]->message);
    }
    csched__v1__run__free_unpacked(run, NULL);
}

/* Killed before the attempt's directory was made (the STARTING rows
 * committed): nothing ran, so the attempt ends as never started, which does
 * not count against max_attempts 1, and the next attempt runs. */
static void test_e2e_crash_before_mkdir(void **state)
{
    crash_at(*state, "before-mkdir", "exit 0", 2);
}

/* Killed with the directory made and synced but no minder started: the
 * restart claims the attempt, which never runs; as above. */
static void test_e2e_crash_before_spawn(void **state)
{
    crash_at(*state, "before-spawn", "exit 0", 2);
}

/* Killed right after the minder started, before the loop heard of it: the
 * minder published its own pid before starting the command, so the restart
 * finds and adopts it. */
static void test_e2e_crash_after_spawn(void **state)
{
    crash_at(*state, "after-spawn", "sleep 2; exit 0", 1);
}

/* Waits until run id's attempt 1 runs, then kills cschedd and its minder
 * (SIGKILL) and waits for the minder to be gone. */
static void kill_server_and_minder(struct cs_e2e *e, int64_t id)
{
    char path[4200];
    csched__v1__run__free_unpacked(
        cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, CS_E2E_RUN_TIMEOUT_MS),
        NULL);
    (void)snprintf(path, sizeof(path), "%s/attempts/%lld-1/pid", cs_testd_state_dir(e->d),
                   (long long)id);
    pid_t minder = cs_e2e_read_pgid(path, 5000);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(kill(minder, SIGKILL), 0);
    for (int64_t until = cs_test_now_ms() + 5000; kill(minder, 0) == 0;) {
        assert_true(cs_test_now_ms() < until);
        cs_test_sleep_ms(20);
    }
}

/* kill -9 of cschedd and then of the running attempt's minder: the restart
 * finds the minder's pid file naming a dead process and no note, so the
 * attempt is LOST, saying its command had started, and the command's group,
 * still running, is stopped. */
static void test_e2e_crash_with_the_minder(void **state)
{
    struct cs_e2e *e = *state;
    char then[4200], path[4200];
    (void)snprintf(then, sizeof(then), "cut -d' ' -f5 /proc/$$/stat > %s/pgid; sleep 30", counts);
    int64_t id = make_job_and_trigger(e, "with-minder", 1, then);
    /* Killed before it recorded the command's group, the minder would leave
     * no sign that the command had started. */
    (void)snprintf(path, sizeof(path), "%s/attempts/%lld-1/pgid", cs_testd_state_dir(e->d),
                   (long long)id);
    (void)cs_e2e_read_pgid(path, 5000);
    (void)snprintf(path, sizeof(path), "%s/pgid", counts);
    kill_server_and_minder(e, id);
    pid_t pgid = cs_e2e_read_pgid(path, 5000);
    assert_int_equal(cs_testd_restart(e->d), 0);
    Csched__V1__Run *run = wait_end_after_crash(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
    assert_int_equal(run->n_attempts, 1);
    if (strstr(run->attempts[0]->message, "its command had started") == NULL)
        fail_msg("attempt 1: \"%s\", want it to say its command had started",
                 run->attempts[0]->message);
    cs_e2e_assert_group_gone(pgid, 2000);
    assert_int_equal(executions(id), 1);
    csched__v1__run__free_unpacked(run, NULL);
}

/* A crash of the machine while attempt 1's command ran, before its pid file
 * reached the disk: cschedd, the minder and the command die, the pid file
 * and the group file are gone, and the directory's times are set to before
 * the boot. The restart must not take the attempt for one that never
 * started: it ends LOST, counted against max_attempts 1, and the command,
 * which ran in part, does not run a second time. */
static void test_e2e_crash_of_the_machine(void **state)
{
    struct cs_e2e *e = *state;
    char dir[4200], path[4300];
    int64_t id =
        make_job_and_trigger(e, "machine", 1, "[ \"$CSCHED_ATTEMPT\" = 1 ] && sleep 30; exit 0");
    (void)snprintf(dir, sizeof(dir), "%s/attempts/%lld-1", cs_testd_state_dir(e->d), (long long)id);
    (void)snprintf(path, sizeof(path), "%s/pgid", dir);
    pid_t pgid = cs_e2e_read_pgid(path, 5000);
    kill_server_and_minder(e, id);
    (void)kill(-pgid, SIGKILL);
    cs_e2e_assert_group_gone(pgid, 2000);
    const char *lost[] = {"pid", "pid.tmp", "pgid", "status", "status.tmp"};
    for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
        (void)snprintf(path, sizeof(path), "%s/%s", dir, lost[i]);
        assert_true(unlink(path) == 0 || errno == ENOENT);
    }
    struct timespec times[2] = {{.tv_sec = LONG_BEFORE_BOOT}, {.tv_sec = LONG_BEFORE_BOOT}};
    assert_int_equal(utimensat(AT_FDCWD, dir, times, 0), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
    Csched__V1__Run *run = wait_end_after_crash(e, id);
    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_LOST || run->n_attempts != 1 ||
        strstr(run->attempts[0]->message, "may have started before the machine restarted") == NULL)
        fail_msg("run %lld ended %s with %zu attempts (attempt 1: \"%s\"), want LOST with "
                 "one attempt whose command may have started before the machine restarted",
                 (long long)id, cs_test_run_state_name(run->state), run->n_attempts,
                 run->attempts[0]->message);
    assert_int_equal(executions(id), 1);
    csched__v1__run__free_unpacked(run, NULL);
}

/* Sends sig to the postmaster and to every process it started. */
static void signal_postgres(struct cs_e2e *e, int sig)
{
    assert_int_equal(cs_test_signal_tree(cs_e2e_embedded_postmaster(e), sig), 0);
}

/* Attempt 1 fails and attempt 2 runs while the database is frozen, so the
 * store never hears of them; then cschedd is killed. The restart finds both
 * directories, records both ends from their notes and runs nothing again. */
static void test_e2e_crash_retries_while_db_frozen(void **state)
{
    struct cs_e2e *e = *state;
    int64_t id = make_job_and_trigger(e, "db-frozen", 2, "sleep 0.3; exit 1");
    signal_postgres(e, SIGSTOP);
    int64_t until = cs_test_now_ms() + 10000;
    while (executions(id) < 2 && cs_test_now_ms() < until)
        cs_test_sleep_ms(20);
    int ran = executions(id);
    cs_test_sleep_ms(1000); /* attempt 2 ends and writes its note */
    assert_int_equal(cs_testd_kill(e->d), 0);
    signal_postgres(e, SIGCONT);
    assert_int_equal(cs_testd_restart(e->d), 0);
    Csched__V1__Run *run = wait_end_after_crash(e, id);
    assert_int_equal(ran, 2);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->n_attempts, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(run->attempts[i]->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
        assert_int_equal(run->attempts[i]->exit_code, 1);
    }
    if (executions(id) != 2)
        fail_msg("run %lld's command ran %d times for 2 attempts", (long long)id, executions(id));
    csched__v1__run__free_unpacked(run, NULL);
}

/* Whether a history may go from state from (UNSPECIFIED: before its first
 * event) to state to: an attempt goes STARTING, then RUNNING unless its
 * minder never ran, then ends; a run goes QUEUED, STARTING, RUNNING, back
 * to QUEUED for a retry (from STARTING too, after an attempt that never
 * started), and ends from any of them (docs/architecture.md, "Runs,
 * attempts and events"). */
static bool step_ok(bool of_run, Csched__V1__RunState from, Csched__V1__RunState to)
{
    const Csched__V1__RunState queued = CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED,
                               starting = CSCHED__V1__RUN_STATE__RUN_STATE_STARTING,
                               running = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
    switch (from) {
    case CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED:
        return to == (of_run ? queued : starting);
    case CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED:
        return to == starting || cs_test_run_state_is_terminal(to);
    case CSCHED__V1__RUN_STATE__RUN_STATE_STARTING:
        return to == running || (of_run && to == queued) || cs_test_run_state_is_terminal(to);
    case CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING:
        return (of_run && to == queued) || cs_test_run_state_is_terminal(to);
    default:
        return false; /* nothing comes after an end */
    }
}

/* Follows the history of run id on Watch from seq 0 to the run's end and
 * fails the test unless the run's and each of its (at most 8) attempts'
 * events are a path through the state machine that ends. Returns how many
 * events were recovered (Event.recovered). */
static int check_history(struct cs_e2e *e, int64_t id, const char *job)
{
    struct cs_stream *stream = cs_e2e_watch_job(e, job, 0);
    struct cs_status st = {0};
    Csched__V1__RunState at[9] = {0}; /* [0] the run, [n] attempt n */
    char path[9][256] = {""};
    int recovered = 0;
    struct cs_test_events events = {.stream = stream};
    const Csched__V1__Event *ev;
    do {
        if (cs_test_next_event(&events, &ev, &st) != 1)
            fail_msg("Watch ended before run %lld did: %s \"%s\"", (long long)id,
                     cs_status_code_name(st.code), st.message);
        if (ev->run_id != id)
            continue;
        assert_true(ev->attempt < 9);
        size_t len = strlen(path[ev->attempt]);
        (void)snprintf(path[ev->attempt] + len, sizeof(path[0]) - len, "%s%s%s", len > 0 ? " " : "",
                       cs_test_run_state_name(ev->state), ev->recovered ? "(recovered)" : "");
        if (!step_ok(ev->attempt == 0, at[ev->attempt], ev->state))
            fail_msg("run %lld attempt %u (0: the run): %s breaks the state machine", (long long)id,
                     ev->attempt, path[ev->attempt]);
        at[ev->attempt] = ev->state;
        recovered += ev->recovered;
    } while (ev->attempt != 0 || !cs_test_run_state_is_terminal(ev->state));
    cs_test_events_done(&events);
    cs_stream_free(stream);
    for (size_t i = 0; i < 9; i++)
        if (at[i] != 0 && !cs_test_run_state_is_terminal(at[i]))
            fail_msg("run %lld attempt %zu: %s does not end", (long long)id, i, path[i]);
    return recovered;
}

/* Waits until dir (an attempt's) holds the minder's status note. */
static void wait_note(const char *dir)
{
    char path[4300];
    (void)snprintf(path, sizeof(path), "%s/status", dir);
    for (int64_t until = cs_test_now_ms() + 10000; access(path, F_OK) != 0;) {
        if (cs_test_now_ms() > until)
            fail_msg("no status note in %s", dir);
        cs_test_sleep_ms(20);
    }
}

/* Attempt 1 runs with the database up; then the database freezes, attempt 1
 * fails, attempts 2 and 3 start, run and fail while it is down, and
 * cschedd is killed before any of it was written. After the database and
 * cschedd are back, Watch from seq 0 shows every attempt going STARTING,
 * RUNNING, FAILED: what the database never heard of is recovered from the
 * attempts' directories, at the times their notes give. */
static void test_e2e_crash_history_after_db_down(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[4200];
    int64_t after = cs_e2e_last_seq(e);
    int64_t id = make_job_and_trigger(e, "db-down", 3, "sleep 0.3; exit 1");
    Csched__V1__Run *run = cs_e2e_get_run(e, id);
    (void)snprintf(name, sizeof(name), "%s", run->job_name);
    csched__v1__run__free_unpacked(run, NULL);
    /* Attempt 1's RUNNING has committed once Watch shows it. */
    struct cs_stream *stream = cs_e2e_watch_job(e, name, after);
    struct cs_status st = {0};
    struct cs_test_events events = {.stream = stream};
    const Csched__V1__Event *ev;
    do
        assert_int_equal(cs_test_next_event(&events, &ev, &st), 1);
    while (ev->attempt != 1 || ev->state != CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    cs_test_events_done(&events);
    cs_stream_free(stream);

    signal_postgres(e, SIGSTOP);
    (void)snprintf(dir, sizeof(dir), "%s/attempts/%lld-3", cs_testd_state_dir(e->d), (long long)id);
    wait_note(dir);
    assert_int_equal(cs_testd_kill(e->d), 0);
    signal_postgres(e, SIGCONT);
    assert_int_equal(cs_testd_restart(e->d), 0);

    run = wait_end_after_crash(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->n_attempts, 3);
    assert_int_equal(executions(id), 3);
    csched__v1__run__free_unpacked(run, NULL);
    /* Attempt 1's end, and attempts 2 and 3 whole; but the batch in flight
     * when the database froze (attempt 1's end, attempt 2's start) may
     * commit when it thaws, though its sender is dead by then. */
    int recovered = check_history(e, id, name);
    if (recovered < 5 || recovered > 7)
        fail_msg("%d events recovered, want attempt 1's end and attempts 2 and 3 (7), less "
                 "the batch in flight when the database froze (at least 5)",
                 recovered);
}

/* kill -9 at the end of a burst of triggers of a short command, with runs
 * queued, starting, running and ending: every run ends SUCCEEDED, each
 * command ran once. */
static void test_e2e_crash_during_burst(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64], shell[4300];
    int64_t ids[BURST_RUNS];
    cs_e2e_name(name, sizeof(name), "burst");
    counting_shell(shell, sizeof(shell), "exit 0");
    job.name = name;
    job.shell = shell;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    for (size_t i = 0; i < BURST_RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
    int wrong = 0;
    for (size_t i = 0; i < BURST_RUNS; i++) {
        Csched__V1__Run *run = wait_end_after_crash(e, ids[i]);
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED || executions(ids[i]) != 1) {
            print_message("run %lld: %s (\"%s\"), %zu attempts, ran %d times\n", (long long)ids[i],
                          cs_test_run_state_name(run->state), run->message, run->n_attempts,
                          executions(ids[i]));
            wrong++;
        }
        csched__v1__run__free_unpacked(run, NULL);
    }
    assert_int_equal(wrong, 0);
}

static int setup(void **state)
{
    cs_e2e_tmpdir(counts);
    return cs_e2e_setup_embedded(state);
}

static int teardown(void **state)
{
    int rc = cs_e2e_teardown(state);
    cs_test_discard_dir("execution counts", counts);
    return rc;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_crash_before_mkdir),
        cmocka_unit_test(test_e2e_crash_before_spawn),
        cmocka_unit_test(test_e2e_crash_after_spawn),
        cmocka_unit_test(test_e2e_crash_with_the_minder),
        cmocka_unit_test(test_e2e_crash_of_the_machine),
        cmocka_unit_test(test_e2e_crash_retries_while_db_frozen),
        cmocka_unit_test(test_e2e_crash_history_after_db_down),
        cmocka_unit_test(test_e2e_crash_during_burst),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
