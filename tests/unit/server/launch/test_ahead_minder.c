/* Unit tests of the minders started ahead (server/ahead_minder.h) with the
 * real csched-minder: one started ahead is told to go when the start is the
 * same, sent away and reaped when it differs or its time is past, and never
 * started for a launch with secrets or a due time gone; one armed with its
 * release gate (release_gate.h) goes when the gate opens, and never if it
 * is taken back first or its server dies. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "ahead_minder.h"
#include "launch_test.h"
#include "launcher_thread.h"
#include "minder_contract.h"
#include "note.h"
#include "release_gate.h"
#include "util.h"

static char state_dir[64], dir[128];
static struct cs_ahead_minders table;

static int setup(void **state)
{
    (void)state;
    strcpy(state_dir, "/tmp/test_ahead_minder.XXXXXX");
    assert_non_null(mkdtemp(state_dir));
    (void)snprintf(dir, sizeof(dir), "%s/1-1", state_dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    cs_ahead_minders_init(&table);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cs_ahead_minders_free(&table);
    char cmd[256];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", state_dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* A launch of shell in dir, due in due_in_ms, as the loop would build it. */
static struct cs_launch *launch_of(const char *shell, int64_t due_in_ms)
{
    return launch_test_new(dir, shell, cs_now_unix_ms() + due_in_ms);
}

/* The start of launch, as a launch thread makes it ready. */
static struct cs_launch *ready(struct cs_launch *launch)
{
    struct cs_err err;
    assert_int_equal(cs_launch_prepare_user(launch, &err), 0);
    return launch;
}

static bool no_children(void)
{
    return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static bool dir_is_empty(void)
{
    DIR *d = opendir(dir);
    bool empty = true;
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        empty = empty && e->d_name[0] == '.';
    closedir(d);
    return empty;
}

static void test_ahead_minder_goes_when_the_start_is_the_same(void **state)
{
    (void)state;
    int64_t expires = cs_ahead_minder_start(&table, CS_MINDER_PATH, launch_of("echo hi", 300));
    assert_true(expires > cs_now_mono_ns() / 1000000);
    assert_int_equal(table.n, 1);
    struct cs_launch *now = ready(launch_of("echo hi", 0));
    assert_int_equal(cs_ahead_minder_go(&table, now), 0);
    assert_true(now->pid > 0);
    assert_int_equal(table.n, 0);
    assert_int_equal(table.n_went, 1);

    int wstatus;
    assert_int_equal(waitpid(now->pid, &wstatus, 0), now->pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);
    struct cs_note note;
    assert_int_equal(cs_note_read(dir, &note), 0);
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 0);
    cs_launch_free(now);
}

static void test_ahead_minder_sent_away_when_the_start_differs(void **state)
{
    (void)state;
    assert_true(cs_ahead_minder_start(&table, CS_MINDER_PATH, launch_of("echo old", 300)) > 0);
    struct cs_launch *now = ready(launch_of("echo new", 0));
    assert_int_equal(cs_ahead_minder_go(&table, now), -ENOENT);
    assert_int_equal(now->pid, -1);
    assert_int_equal(table.n, 0);
    assert_int_equal(table.n_sent_away, 1);
    /* Reaped, and it touched nothing. */
    assert_true(no_children());
    assert_true(dir_is_empty());
    /* No second one for the same directory either. */
    assert_int_equal(cs_ahead_minder_go(&table, now), -ENOENT);
    cs_launch_free(now);
}

static void test_ahead_minder_sent_away_past_its_time(void **state)
{
    (void)state;
    int64_t expires = cs_ahead_minder_start(&table, CS_MINDER_PATH, launch_of("echo hi", 100));
    assert_true(expires > 0);
    assert_int_equal(cs_ahead_minders_expire(&table, expires - 1), expires);
    assert_int_equal(table.n, 1);
    assert_int_equal(cs_ahead_minders_expire(&table, expires), 0);
    assert_int_equal(table.n, 0);
    assert_true(no_children());
    assert_true(dir_is_empty());
}

static void test_ahead_minder_none_for_secrets_or_a_past_due_time(void **state)
{
    (void)state;
    struct cs_launch *secret = launch_of("echo hi", 300);
    secret->secrets = cs_xcalloc(1, sizeof(*secret->secrets));
    secret->secrets[0].name = cs_xstrdup("TOKEN");
    secret->secrets[0].ref = cs_xstrdup("/nonexistent");
    secret->secrets[0].is_file = true;
    secret->n_secrets = 1;
    assert_int_equal(cs_ahead_minder_start(&table, CS_MINDER_PATH, secret), 0);
    assert_int_equal(cs_ahead_minder_start(&table, CS_MINDER_PATH, launch_of("echo hi", -1)), 0);
    assert_int_equal(table.n, 0);
    assert_true(no_children());
}

/* This process's one child, the minder started ahead, read from /proc. */
static pid_t only_child(void)
{
    char path[96];
    (void)snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
    FILE *f = fopen(path, "re");
    int pid = 0;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    return (pid_t)pid;
}

/* One someone stopped never reads its end of file: sending it away still
 * returns at once, and reaps it. */
static void test_ahead_minder_sent_away_when_stopped(void **state)
{
    (void)state;
    int64_t expires = cs_ahead_minder_start(&table, CS_MINDER_PATH, launch_of("echo hi", 100));
    assert_true(expires > 0);
    assert_int_equal(kill(only_child(), SIGSTOP), 0);
    assert_int_equal(cs_ahead_minders_expire(&table, expires), 0);
    assert_true(no_children());
    assert_true(dir_is_empty());
}

/* The table's end sends away and reaps whatever still waits. */
static void test_ahead_minder_free_reaps_the_waiting(void **state)
{
    (void)state;
    assert_true(cs_ahead_minder_start(&table, CS_MINDER_PATH, launch_of("echo hi", 5000)) > 0);
    cs_ahead_minders_free(&table);
    assert_true(no_children());
    assert_true(dir_is_empty());
    cs_ahead_minders_init(&table); /* for the teardown */
}

/* Whether the minder has started its attempt: its start record is there. */
static bool minder_started(void)
{
    char pid_file[192];
    (void)snprintf(pid_file, sizeof(pid_file), "%s/%s", dir, CS_ATTEMPT_PID_FILE);
    return access(pid_file, F_OK) == 0;
}

/* What the armed minders run: the policy the command was started with. */
#define POLICY_SHELL "chrt -p $$"

/* A minder started ahead and armed for a launch due in due_in_ms, with its
 * gate in gates; returns the launch, which is the caller's. */
static struct cs_launch *armed(struct cs_release_gates *gates, int64_t due_in_ms)
{
    assert_true(cs_ahead_minder_start(&table, CS_MINDER_PATH, launch_of(POLICY_SHELL, due_in_ms)) >
                0);
    struct cs_launch *held = ready(launch_of(POLICY_SHELL, due_in_ms));
    int gate_fd = cs_release_gate_of(gates, held->due_unix_ms);
    assert_true(gate_fd >= 0);
    assert_true(cs_ahead_minder_arm(&table, held, gate_fd));
    return held;
}

static void test_ahead_minder_armed_goes_when_its_gate_opens(void **state)
{
    (void)state;
    struct cs_release_gates gates = {0};
    struct cs_launch *held = armed(&gates, 5000);
    /* Armed, it still waits: nothing of it starts before its gate opens. */
    (void)usleep(100 * 1000);
    assert_true(dir_is_empty());
    /* Not armed twice, and not sent away while it waits for its launch. */
    assert_false(cs_ahead_minder_arm(&table, held, cs_release_gate_of(&gates, held->due_unix_ms)));
    assert_int_equal(cs_ahead_minders_expire(&table, INT64_MAX - 1), 0);
    assert_int_equal(table.n, 1);

    cs_release_gates_open(&gates, held->due_unix_ms);
    assert_int_equal(cs_ahead_minder_go(&table, held), 0);
    assert_true(held->pid > 0);
    assert_int_equal(table.n_went, 1);
    int wstatus;
    assert_int_equal(waitpid(held->pid, &wstatus, 0), held->pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    struct cs_note note;
    assert_int_equal(cs_note_read(dir, &note), 0);
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 0);
    /* The minder waited as a batch task; its command has the usual policy. */
    char path[192], out[256] = "";
    (void)snprintf(path, sizeof(path), "%s/%s", dir, CS_ATTEMPT_STDOUT_FILE);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    (void)!fread(out, 1, sizeof(out) - 1, f);
    fclose(f);
    assert_non_null(strstr(out, "SCHED_OTHER"));
    cs_launch_free(held);
}

/* Taken back with its gate shut, it is killed: the gate that opens after
 * (for the others due then) starts nothing, and it is reaped at its expiry. */
static void test_ahead_minder_armed_and_taken_back_never_starts(void **state)
{
    (void)state;
    struct cs_release_gates gates = {0};
    struct cs_launch *held = armed(&gates, 300);
    cs_ahead_minder_take_back(&table, held->dir);
    cs_release_gates_open(&gates, held->due_unix_ms);
    (void)usleep(100 * 1000);
    assert_false(minder_started());
    assert_int_equal(table.n_sent_away, 1);
    /* Its launch finds none to take, and spawns one of its own. */
    assert_int_equal(cs_ahead_minder_go(&table, held), -ENOENT);
    assert_int_equal(table.n, 0);
    assert_true(no_children());
    assert_true(dir_is_empty());
    cs_launch_free(held);
}

/* An armed minder whose cschedd dies (here a child that arms it and exits
 * at once, as a SIGKILL would end it) exits at its socket's end of file,
 * having started nothing: its gate never opens. */
static void test_ahead_minder_armed_exits_when_its_server_dies(void **state)
{
    (void)state;
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    pid_t server = fork();
    assert_true(server >= 0);
    if (server == 0) {
        struct cs_release_gates gates = {0};
        (void)armed(&gates, 5000);
        _exit(0);
    }
    int wstatus, given_up = 0;
    for (pid_t pid; (pid = wait(&wstatus)) > 0;)
        if (pid != server && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == CS_MINDER_EXIT_GIVEN_UP)
            given_up++;
    assert_int_equal(given_up, 1);
    assert_true(dir_is_empty());
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_ahead_minder_goes_when_the_start_is_the_same),
        TEST(test_ahead_minder_sent_away_when_the_start_differs),
        TEST(test_ahead_minder_sent_away_past_its_time),
        TEST(test_ahead_minder_sent_away_when_stopped),
        TEST(test_ahead_minder_none_for_secrets_or_a_past_due_time),
        TEST(test_ahead_minder_free_reaps_the_waiting),
        TEST(test_ahead_minder_armed_goes_when_its_gate_opens),
        TEST(test_ahead_minder_armed_and_taken_back_never_starts),
        TEST(test_ahead_minder_armed_exits_when_its_server_dies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
