/* The oracles alone, with no cschedd: commands built by cs_oracle_command
 * run by /bin/sh as the job user a root cschedd would use (nobody), with
 * CSCHED_RUN_ID and CSCHED_ATTEMPT set as cschedd sets them. Within the
 * limits they record nothing; one command over a job's limit or over the
 * cluster's is recorded once; a command killed with SIGKILL frees its
 * locks; the marks count executions and see two attempts of one run alive
 * at once, both when they ended and when the first was killed. */
#include <errno.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "oracle.h"
#include "testlib_int.h"

#define COMMAND_BYTES 4096
#define WAIT_MS 10000

/* spawn_command starts command as run_id's attempt, in a session of its
 * own (so its group can be killed), as nobody when the test is root. */
static pid_t spawn_command(const char *command, int64_t run_id, uint32_t attempt)
{
    char run[40], att[32];
    const char *argv[] = {"/usr/bin/env", run, att, "/bin/sh", "-c", command, NULL};
    struct cs_test__spawn s = {.argv = argv, .new_session = true};
    pid_t pid;

    snprintf(run, sizeof(run), "CSCHED_RUN_ID=%lld", (long long)run_id);
    snprintf(att, sizeof(att), "CSCHED_ATTEMPT=%u", attempt);
    if (geteuid() == 0) {
        struct passwd *pw = getpwnam("nobody");
        assert_non_null(pw);
        s.set_user = true;
        s.uid = pw->pw_uid;
        s.gid = pw->pw_gid;
    }
    assert_int_equal(cs_test__spawn(&s, &pid), 0);
    return pid;
}

static void wait_ok(pid_t pid)
{
    int wstatus;

    assert_int_equal(cs_test__wait(pid, WAIT_MS, &wstatus), 0);
    assert_int_equal(cs_test__exit_code(wstatus), 0);
}

/* run_together runs n commands of job at once (runs first_run, ...,
 * attempt 1 each) and waits for them all. */
static void run_together(struct cs_oracle *o, const char *job, unsigned max_running, unsigned n,
                         int64_t first_run)
{
    char command[COMMAND_BYTES];
    pid_t pids[8];

    assert_true(n <= 8);
    assert_int_equal(cs_oracle_command(o, job, max_running, "sleep 1", command, sizeof(command)),
                     0);
    for (unsigned i = 0; i < n; i++)
        pids[i] = spawn_command(command, first_run + i, 1);
    for (unsigned i = 0; i < n; i++)
        wait_ok(pids[i]);
}

static void assert_excess(struct cs_oracle *o, long want, const char *prefix)
{
    char first[256];
    long n = cs_oracle_excess(o, first, sizeof(first));

    if (n != want)
        fail_msg("%ld excess lines, want %ld; first \"%s\"", n, want, first);
    if (prefix != NULL && strncmp(first, prefix, strlen(prefix)) != 0)
        fail_msg("excess line \"%s\", want one of \"%s\"", first, prefix);
}

static void test_oracle_within_limits(void **state)
{
    struct cs_oracle o;
    struct cs_oracle_run r;

    assert_int_equal(cs_oracle_init(&o, 3), 0);
    run_together(&o, "within", 2, 2, 1);
    run_together(&o, "within", 2, 2, 3); /* the first two's locks are free again */
    assert_excess(&o, 0, NULL);
    assert_int_equal(cs_oracle_run(&o, 1, &r), 0);
    assert_int_equal(r.executions, 1);
    assert_int_equal(r.ended, 1);
    assert_false(r.overlap);
    cs_oracle_close(&o);
}

static void test_oracle_job_limit_exceeded(void **state)
{
    struct cs_oracle o;

    assert_int_equal(cs_oracle_init(&o, 8), 0);
    run_together(&o, "tight", 2, 3, 1);
    assert_excess(&o, 1, "job:tight ");
    cs_oracle_close(&o);
}

static void test_oracle_cluster_limit_exceeded(void **state)
{
    char a[COMMAND_BYTES], b[COMMAND_BYTES];
    struct cs_oracle o;
    pid_t pids[4];

    assert_int_equal(cs_oracle_init(&o, 3), 0);
    assert_int_equal(cs_oracle_command(&o, "one", 2, "sleep 1", a, sizeof(a)), 0);
    assert_int_equal(cs_oracle_command(&o, "two", 2, "sleep 1", b, sizeof(b)), 0);
    for (int i = 0; i < 4; i++)
        pids[i] = spawn_command(i % 2 == 0 ? a : b, i + 1, 1);
    for (int i = 0; i < 4; i++)
        wait_ok(pids[i]);
    assert_excess(&o, 1, "cluster ");
    cs_oracle_close(&o);
}

/* wait_started waits for run_id's first start mark. */
static void wait_started(struct cs_oracle *o, int64_t run_id)
{
    int64_t deadline = cs_test_now_ms() + WAIT_MS;
    struct cs_oracle_run r;

    for (;;) {
        assert_int_equal(cs_oracle_run(o, run_id, &r), 0);
        if (r.executions > 0)
            return;
        if (cs_test_now_ms() > deadline)
            fail_msg("run %lld never started", (long long)run_id);
        cs_test_sleep_ms(10);
    }
}

/* kill_group kills pid's group with SIGKILL and waits until none of it is
 * left: the payload's sleep holds the locks as long as the shell. */
static void kill_group(pid_t pid)
{
    int64_t deadline = cs_test_now_ms() + WAIT_MS;
    int wstatus;

    assert_int_equal(kill(-pid, SIGKILL), 0);
    assert_int_equal(cs_test__wait(pid, WAIT_MS, &wstatus), 0);
    while (cs_test_group_live(pid) != 0) {
        if (cs_test_now_ms() > deadline)
            fail_msg("group %d still alive after SIGKILL", (int)pid);
        cs_test_sleep_ms(10);
    }
}

static void test_oracle_sigkill_frees_locks(void **state)
{
    char slow[COMMAND_BYTES], quick[COMMAND_BYTES];
    struct cs_oracle o;
    struct cs_oracle_run r;

    assert_int_equal(cs_oracle_init(&o, 1), 0);
    assert_int_equal(cs_oracle_command(&o, "single", 1, "sleep 30", slow, sizeof(slow)), 0);
    assert_int_equal(cs_oracle_command(&o, "single", 1, "true", quick, sizeof(quick)), 0);
    pid_t pid = spawn_command(slow, 1, 1);
    wait_started(&o, 1);
    kill_group(pid);
    wait_ok(spawn_command(quick, 2, 1));
    assert_excess(&o, 0, NULL);
    assert_int_equal(cs_oracle_run(&o, 1, &r), 0);
    assert_int_equal(r.executions, 1);
    assert_int_equal(r.ended, 0);
    cs_oracle_close(&o);
}

static void test_oracle_marks_count_and_overlap(void **state)
{
    char quick[COMMAND_BYTES], slow[COMMAND_BYTES];
    struct cs_oracle o;
    struct cs_oracle_run r;

    assert_int_equal(cs_oracle_init(&o, 4), 0);
    assert_int_equal(cs_oracle_command(&o, "marks", 4, "sleep 0.2", quick, sizeof(quick)), 0);
    assert_int_equal(cs_oracle_command(&o, "marks", 4, "sleep 30", slow, sizeof(slow)), 0);

    /* Run 7: attempt 2 after attempt 1, as a retry. */
    wait_ok(spawn_command(quick, 7, 1));
    wait_ok(spawn_command(quick, 7, 2));
    assert_int_equal(cs_oracle_run(&o, 7, &r), 0);
    assert_int_equal(r.executions, 2);
    assert_int_equal(r.ended, 2);
    assert_int_equal(r.last_attempt, 2);
    assert_false(r.overlap);

    /* Run 8: both at once, both ending. */
    pid_t a = spawn_command(quick, 8, 1), b = spawn_command(quick, 8, 2);
    wait_ok(a);
    wait_ok(b);
    assert_int_equal(cs_oracle_run(&o, 8, &r), 0);
    assert_int_equal(r.executions, 2);
    if (!r.overlap)
        fail_msg("two attempts of run 8 at once not seen");

    /* Run 9: attempt 2 while attempt 1 lives, then attempt 1 killed: only
     * the lock can tell. */
    pid_t first = spawn_command(slow, 9, 1);
    wait_started(&o, 9);
    wait_ok(spawn_command(quick, 9, 2));
    kill_group(first);
    assert_int_equal(cs_oracle_run(&o, 9, &r), 0);
    assert_int_equal(r.executions, 2);
    assert_int_equal(r.ended, 1);
    if (!r.overlap)
        fail_msg("attempt 2 of run 9 while attempt 1 lived not seen");
    assert_non_null(strstr(r.why, "run:9 2 "));

    /* A run with no marks. */
    assert_int_equal(cs_oracle_run(&o, 10, &r), 0);
    assert_int_equal(r.executions, 0);
    assert_false(r.overlap);
    cs_oracle_close(&o);
}

static void test_oracle_refuses_bad_names(void **state)
{
    struct cs_oracle o;
    char buf[COMMAND_BYTES];

    assert_int_equal(cs_oracle_init(&o, 1), 0);
    assert_int_equal(cs_oracle_command(&o, "a b", 1, "true", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cs_oracle_command(&o, "x/../y", 1, "true", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cs_oracle_command(&o, "ok", 0, "true", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cs_oracle_command(&o, "ok", 1, "true", buf, 16), -ENAMETOOLONG);
    cs_oracle_close(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_within_limits),
        cmocka_unit_test(test_oracle_job_limit_exceeded),
        cmocka_unit_test(test_oracle_cluster_limit_exceeded),
        cmocka_unit_test(test_oracle_sigkill_frees_locks),
        cmocka_unit_test(test_oracle_marks_count_and_overlap),
        cmocka_unit_test(test_oracle_refuses_bad_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
