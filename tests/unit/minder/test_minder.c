/* Tests of the real csched-minder binary (CS_MINDER_PATH) on real commands in
 * a temporary attempt directory: exit codes, signals, captured and capped
 * output, timeout and cancel killing the whole group, what a command leaves
 * behind (even out of its session) stopped and counted, start failures,
 * usage. These wait for real processes; each takes well under a second but
 * the one that waits out the leftover grace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "minder_contract.h"
#include "minder_spawn.h"
#include "note.h"

/* Longest any one minder may take before the test gives up on it. */
#define WAIT_LIMIT_MS 5000

static char dir[64];

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000};

    nanosleep(&ts, NULL);
}

static int make_dir(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/test_minder.XXXXXX");
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static void path_of(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static int remove_dir(void **state)
{
    static const char *const names[] = {CS_NOTE_FILE,           "status.tmp",
                                        CS_ATTEMPT_PID_FILE,    CS_ATTEMPT_STDOUT_FILE,
                                        CS_ATTEMPT_STDERR_FILE, CS_ATTEMPT_PGID_FILE};
    char path[128];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        path_of(names[i], path, sizeof(path));
        (void)unlink(path); /* not every test makes every file */
    }
    return rmdir(dir);
}

/* Waits for the minder to exit; returns its exit code. */
static int wait_minder(pid_t pid)
{
    int64_t give_up_ms = mono_ms() + WAIT_LIMIT_MS;
    int wstatus;
    pid_t got;

    while ((got = waitpid(pid, &wstatus, WNOHANG)) == 0) {
        if (mono_ms() > give_up_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &wstatus, 0);
            fail_msg("csched-minder still running after %d ms", WAIT_LIMIT_MS);
        }
        pause_ms(2);
    }
    assert_int_equal(got, pid);
    assert_true(WIFEXITED(wstatus));
    return WEXITSTATUS(wstatus);
}

static int run_minder(const char *const *args)
{
    char path[128];

    /* Each run is a new attempt, as the server never reuses a directory:
     * the start record of the one before goes. */
    path_of(CS_ATTEMPT_PID_FILE, path, sizeof(path));
    (void)unlink(path);
    return wait_minder(cs_test_minder_spawn(args, -1));
}

/* Runs the minder on this test's directory with opts and the command. */
#define RUN(...) run_minder((const char *const[]){"-d", dir, __VA_ARGS__, NULL})

static struct cs_note read_note(void)
{
    struct cs_note note;

    assert_int_equal(cs_note_read(dir, &note), 0);
    return note;
}

/* Reads a file of the attempt dir into buf (NUL-terminated); returns its size. */
static size_t read_file(const char *name, char *buf, size_t cap)
{
    char path[128];
    size_t n = 0;
    ssize_t got;
    int fd;

    path_of(name, path, sizeof(path));
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    while ((got = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)got;
    assert_true(got == 0);
    close(fd);
    buf[n] = '\0';
    return n;
}

static off_t file_size(const char *name)
{
    char path[128];
    struct stat st;

    path_of(name, path, sizeof(path));
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

static void assert_gone(pid_t pid)
{
    assert_true(pid > 0);
    if (kill(pid, 0) == 0 || errno != ESRCH)
        fail_msg("process %d is still there", (int)pid);
}

static void test_minder_exit_zero(void **state)
{
    const char *const args[] = {"-d", dir, "--", "true", NULL};
    struct cs_note note;
    char path[128], buf[64], want[32];
    pid_t pid;

    /* The minder records its start, its own pid, before the command runs. */
    pid = cs_test_minder_spawn(args, -1);
    assert_int_equal(wait_minder(pid), 0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 0);
    assert_int_equal(note.term_signal, 0);
    assert_true(note.started_unix_ms > 0);
    assert_true(note.ended_unix_ms >= note.started_unix_ms);
    assert_false(note.stdout_truncated);
    assert_false(note.stderr_truncated);
    assert_string_equal(note.message, "");
    assert_int_equal(file_size(CS_ATTEMPT_STDOUT_FILE), 0);
    assert_int_equal(file_size(CS_ATTEMPT_STDERR_FILE), 0);
    read_file(CS_ATTEMPT_PID_FILE, buf, sizeof(buf));
    snprintf(want, sizeof(want), "%d\n", (int)pid);
    assert_string_equal(buf, want);
    path_of(CS_ATTEMPT_PID_TMP_FILE, path, sizeof(path));
    assert_int_equal(access(path, F_OK), -1);
    path_of("status.tmp", path, sizeof(path));
    assert_int_equal(access(path, F_OK), -1);
}

/* A restart of the server that found no pid file claimed it: the minder,
 * come late, starts nothing and leaves no note. */
static void test_minder_given_up(void **state)
{
    const char *const args[] = {"-d", dir, "--", "sh", "-c", "echo ran", NULL};
    struct cs_note note;

    assert_int_equal(cs_attempt_pid_claim(dir), 0);
    assert_int_equal(cs_attempt_pid_claim(dir), -EEXIST);
    assert_int_equal(wait_minder(cs_test_minder_spawn(args, -1)), CS_MINDER_EXIT_GIVEN_UP);
    assert_int_equal(cs_note_read(dir, &note), -ENOENT);
    assert_int_equal(file_size(CS_ATTEMPT_PID_FILE), 0);
    assert_int_equal(cs_attempt_pid_publish(dir, 42), -EEXIST);
}

/* A minder started ahead (-w): fd 3 of the child is the socket's end. */
static pid_t spawn_waiting(int fd, const char *command)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (dup2(fd, 3) != 3)
            _exit(98);
        execl(CS_MINDER_PATH, "csched-minder", "-w", "3", "-d", dir, "--", "sh", "-c", command,
              (char *)NULL);
        _exit(99);
    }
    return pid;
}

static bool dir_is_empty(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool empty = true;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        empty = empty && (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0);
    closedir(d);
    return empty;
}

/* Until the byte comes, the minder touches nothing; then it runs as one
 * just started, and its command does not inherit the socket. */
static void test_minder_waits_for_go(void **state)
{
    int sv[2];
    char buf[64];
    const char go = CS_MINDER_GO;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    /* Field 41 of stat is the scheduling policy: the command's must be 0, SCHED_OTHER. */
    pid_t pid =
        spawn_waiting(sv[1], "if [ -e /proc/$$/fd/3 ]; then echo leaked; else echo ran; fi; "
                             "cut -d' ' -f41 /proc/$$/stat");
    close(sv[1]);
    pause_ms(200);
    assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
    assert_true(dir_is_empty());
    /* Waiting, a batch task: its wake-up does not preempt the server. */
    assert_int_equal(sched_getscheduler(pid), SCHED_BATCH);
    assert_int_equal(write(sv[0], &go, 1), 1);
    close(sv[0]);
    assert_int_equal(wait_minder(pid), 0);
    assert_int_equal(read_note().outcome, CS_NOTE_EXITED);
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_string_equal(buf, "ran\n0\n");
    read_file(CS_ATTEMPT_PID_FILE, buf, sizeof(buf));
    assert_int_equal(atoi(buf), pid);
}

/* Sent away (the socket closed without the byte, as when cschedd dies):
 * the minder exits having started nothing and written nothing. */
static void test_minder_sent_away(void **state)
{
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    pid_t pid = spawn_waiting(sv[1], "echo ran");
    close(sv[1]);
    close(sv[0]);
    assert_int_equal(wait_minder(pid), CS_MINDER_EXIT_GIVEN_UP);
    assert_true(dir_is_empty());
}

static void test_minder_exit_code(void **state)
{
    struct cs_note note;

    assert_int_equal(RUN("--", "sh", "-c", "exit 3"), 0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 3);
    assert_int_equal(note.term_signal, 0);
}

static void test_minder_signal_death(void **state)
{
    struct cs_note note;

    assert_int_equal(RUN("--", "sh", "-c", "kill -9 $$"), 0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_SIGNALED);
    assert_int_equal(note.term_signal, SIGKILL);
    assert_int_equal(note.exit_code, 0);
}

static void test_minder_output_captured(void **state)
{
    char buf[256];

    assert_int_equal(RUN("--", "sh", "-c", "echo out; echo err >&2; echo more"), 0);
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_string_equal(buf, "out\nmore\n");
    read_file(CS_ATTEMPT_STDERR_FILE, buf, sizeof(buf));
    assert_string_equal(buf, "err\n");
}

static void test_minder_output_capped(void **state)
{
    struct cs_note note;
    char buf[256];

    /* 300 KB through a 64 KiB pipe: the command finishes only if the minder
     * keeps draining past the cap. */
    assert_int_equal(
        RUN("-c", "1000", "--", "sh", "-c", "head -c 300000 /dev/zero; echo small >&2; echo ok"),
        0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 0);
    assert_true(note.stdout_truncated);
    assert_false(note.stderr_truncated);
    assert_int_equal(note.stdout_written_bytes, 300003);
    assert_int_equal(note.stdout_kept_bytes, 1000);
    assert_int_equal(note.stderr_written_bytes, 6);
    assert_int_equal(note.stderr_kept_bytes, 6);
    assert_int_equal(file_size(CS_ATTEMPT_STDOUT_FILE), 1000);
    read_file(CS_ATTEMPT_STDERR_FILE, buf, sizeof(buf));
    assert_string_equal(buf, "small\n");
}

static void test_minder_timeout_kills_group(void **state)
{
    struct cs_note note;
    int64_t start_ms = mono_ms();
    int leader = 0, background = 0;
    char buf[256];

    assert_int_equal(RUN("-t", "300", "--", "sh", "-c", "echo $$; sleep 100 & echo $!; wait"), 0);
    assert_true(mono_ms() - start_ms < 2000);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_TIMED_OUT);
    assert_int_equal(note.term_signal, SIGTERM);
    assert_string_equal(note.message, "timed out after 300 ms");

    /* On a loaded machine the timeout may beat the second echo; the leader's
     * pid alone still names the group. */
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_true(sscanf(buf, "%d %d", &leader, &background) >= 1);
    assert_gone(leader);
    if (background != 0)
        assert_gone(background);
    assert_int_equal(kill(-leader, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static void test_minder_timeout_escalates_to_kill(void **state)
{
    struct cs_note note;
    int64_t start_ms = mono_ms();

    /* Both the shell and its sleep ignore SIGTERM: only the KILL ends them. */
    assert_int_equal(RUN("-t", "300", "-g", "100", "--", "sh", "-c", "trap '' TERM; sleep 100; :"),
                     0);
    assert_true(mono_ms() - start_ms >= 400);
    assert_true(mono_ms() - start_ms < 2000);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_TIMED_OUT);
    assert_int_equal(note.term_signal, SIGKILL);
    assert_string_equal(note.message, "timed out after 300 ms; SIGKILL after 100 ms");
}

/* Starts a minder on script, which prints "ready" when it is set up, waits
 * for the line, sends sig to the minder and returns the note. */
static struct cs_note cancel_with(int sig, const char *script)
{
    const char *const args[] = {"-d", dir, "--", "sh", "-c", script, NULL};
    int64_t give_up_ms = mono_ms() + WAIT_LIMIT_MS;
    pid_t pid = cs_test_minder_spawn(args, -1);
    char path[128];
    struct stat st;

    path_of(CS_ATTEMPT_STDOUT_FILE, path, sizeof(path));
    while (stat(path, &st) < 0 || st.st_size == 0) {
        if (mono_ms() > give_up_ms) {
            kill(pid, SIGKILL);
            fail_msg("the command never said ready");
        }
        pause_ms(2);
    }
    assert_int_equal(kill(pid, sig), 0);
    assert_int_equal(wait_minder(pid), 0);
    return read_note();
}

static void test_minder_cancel_sigterm(void **state)
{
    struct cs_note note = cancel_with(SIGTERM, "echo ready; exec sleep 100");

    assert_int_equal(note.outcome, CS_NOTE_CANCELLED);
    assert_int_equal(note.term_signal, SIGTERM);
    assert_string_equal(note.message, "cancelled");
}

static void test_minder_cancel_sigint(void **state)
{
    struct cs_note note = cancel_with(SIGINT, "echo ready; exec sleep 100");

    assert_int_equal(note.outcome, CS_NOTE_CANCELLED);
    assert_int_equal(note.term_signal, SIGTERM);
}

static void test_minder_cancel_command_exits(void **state)
{
    /* A command that handles SIGTERM and exits: still cancelled, with its
     * exit code. */
    struct cs_note note = cancel_with(SIGTERM, "trap 'exit 7' TERM; echo ready; sleep 100 & wait");

    assert_int_equal(note.outcome, CS_NOTE_CANCELLED);
    assert_int_equal(note.exit_code, 7);
    assert_int_equal(note.term_signal, 0);
}

static void test_minder_exec_failure(void **state)
{
    struct cs_note note;

    assert_int_equal(RUN("--", "nosuch-command-for-csched"), 0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_int_equal(note.exit_code, 127);
    assert_string_equal(note.message,
                        "exec(\"nosuch-command-for-csched\"): No such file or directory");

    /* Not executable, even for root. */
    assert_int_equal(RUN("--", "/etc/passwd"), 0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_int_equal(note.exit_code, 127);
    assert_string_equal(note.message, "exec(\"/etc/passwd\"): Permission denied");
}

static void test_minder_bad_workdir(void **state)
{
    struct cs_note note;

    assert_int_equal(RUN("-C", "/nonexistent/workdir", "--", "true"), 0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_int_equal(note.exit_code, 127);
    assert_string_equal(note.message, "chdir(\"/nonexistent/workdir\"): No such file or directory");

    assert_int_equal(RUN("-C", "/etc/passwd", "--", "true"), 0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_string_equal(note.message, "chdir(\"/etc/passwd\"): Not a directory");
}

static void test_minder_workdir(void **state)
{
    char buf[PATH_MAX + 2], expected[PATH_MAX + 2];

    assert_int_equal(RUN("--", "pwd"), 0);
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    snprintf(expected, sizeof(expected), "%s\n", dir);
    assert_string_equal(buf, expected);

    assert_int_equal(RUN("-C", "/", "--", "pwd"), 0);
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_string_equal(buf, "/\n");
}

static void test_minder_environment_and_stdin(void **state)
{
    char buf[256];

    assert_int_equal(setenv("CS_TEST_MINDER_VAR", "passed through", 1), 0);
    assert_int_equal(RUN("--", "sh", "-c", "echo \"$CS_TEST_MINDER_VAR\"; cat; echo eof"), 0);
    assert_int_equal(unsetenv("CS_TEST_MINDER_VAR"), 0);
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_string_equal(buf, "passed through\neof\n");
}

static void test_minder_resets_ignored_signals(void **state)
{
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe, old_hup;
    unsigned long long blocked = 1, ignored = 1;
    char buf[4096];

    /* A server ignoring SIGPIPE, or started by nohup, must not hand that on
     * to the command. */
    assert_int_equal(sigaction(SIGPIPE, &ign, &old_pipe), 0);
    assert_int_equal(sigaction(SIGHUP, &ign, &old_hup), 0);
    assert_int_equal(RUN("--", "grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"), 0);
    assert_int_equal(sigaction(SIGPIPE, &old_pipe, NULL), 0);
    assert_int_equal(sigaction(SIGHUP, &old_hup, NULL), 0);
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_int_equal(sscanf(buf, "SigBlk: %llx SigIgn: %llx", &blocked, &ignored), 2);
    assert_int_equal(blocked, 0);
    /* Only signals 1-31: glibc (the build without musl) keeps its own two
     * internal real-time signals ignored in a spawned child. */
    assert_int_equal(ignored & 0x7fffffff, 0);
}

/* Asserts that the process whose pid the command printed first is gone. */
static void assert_printed_pid_gone(void)
{
    char buf[64];
    int pid = 0;

    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_int_equal(sscanf(buf, "%d", &pid), 1);
    assert_gone(pid);
}

static void test_minder_reaps_leftovers(void **state)
{
    struct cs_note note;
    int64_t start_ms = mono_ms();

    /* The shell exits at once; what it left in its group goes with it. */
    assert_int_equal(RUN("--", "sh", "-c", "sleep 100 & echo $!"), 0);
    assert_true(mono_ms() - start_ms < 1000);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 0);
    assert_int_equal(note.leftover_processes, 1);
    assert_printed_pid_gone();
}

/* A process that left the command's session (setsid) is still the minder's
 * child once its parent is gone: it is stopped, counted and reaped. */
static void test_minder_stops_escaped_processes(void **state)
{
    struct cs_note note;
    int64_t start_ms = mono_ms();

    assert_int_equal(
        RUN("--", "sh", "-c", "setsid sh -c 'echo $$; exec sleep 100' & sleep 0.2; exit 3"), 0);
    assert_true(mono_ms() - start_ms < 1500);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 3);
    assert_int_equal(note.leftover_processes, 1);
    assert_printed_pid_gone();
}

/* A leftover that ignores TERM is killed after the leftover grace; what it
 * leaves in turn (its own child, reparented to the minder) goes too. */
static void test_minder_kills_leftovers_ignoring_term(void **state)
{
    struct cs_note note;
    int64_t start_ms = mono_ms(), took_ms;

    assert_int_equal(RUN("--", "sh", "-c",
                         "setsid sh -c 'trap \"\" TERM; echo $$; while :; do sleep 0.05; done' &"
                         " sleep 0.2"),
                     0);
    took_ms = mono_ms() - start_ms;
    assert_true(took_ms >= CS_MINDER_LEFTOVER_GRACE_MS);
    /* Well under the minder's wait limit, with room for a loaded machine. */
    assert_true(took_ms < CS_MINDER_LEFTOVER_GRACE_MS + 2500);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 0);
    assert_true(note.leftover_processes >= 1);
    assert_printed_pid_gone();
}

/* On a timeout the group is stopped as before, and what escaped it too. The
 * group's own sleep may still be dying when the shell's end is seen, and
 * then it counts as left as well. */
static void test_minder_timeout_stops_escaped_processes(void **state)
{
    struct cs_note note;

    assert_int_equal(
        RUN("-t", "300", "--", "sh", "-c", "setsid sh -c 'echo $$; exec sleep 100' & sleep 100"),
        0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_TIMED_OUT);
    assert_in_range(note.leftover_processes, 1, 2);
    assert_printed_pid_gone();
}

/* A command that leaves nothing behind says so. */
static void test_minder_no_leftovers(void **state)
{
    assert_int_equal(RUN("--", "sh", "-c", "sleep 0.05 & wait; true"), 0);
    assert_int_equal(read_note().leftover_processes, 0);
}

static void test_minder_session_and_group(void **state)
{
    const char *const args[] = {"-d", dir, "--", "cat", "/proc/self/stat", NULL};
    int pid = 0, ppid = 0, pgrp = 0, session = 0;
    pid_t minder = cs_test_minder_spawn(args, -1);
    char buf[1024];

    assert_int_equal(wait_minder(minder), 0);
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_int_equal(sscanf(buf, "%d (cat) %*c %d %d %d", &pid, &ppid, &pgrp, &session), 4);
    /* The minder leads its own session, out of the test's process group; the
     * command leads its own group inside it. */
    assert_int_equal(ppid, minder);
    assert_int_equal(session, minder);
    assert_int_equal(pgrp, pid);
    assert_true(pgrp != getpgrp());
}

/* As another user, the command's child drops privileges before its exec
 * (sharing the minder's memory until then where fs.suid_dumpable allows):
 * the ids, the signal state and the group are what the command gets. Needs
 * root to drop. */
#define AS_NOBODY "-u", "65534", "-G", "65534", "-S", "-"

/* The attempt's DIR/work, which the minder makes for the user. */
static void remove_work_dir(void)
{
    char path[128];

    path_of("work", path, sizeof(path));
    assert_int_equal(rmdir(path), 0);
}

static void test_minder_as_another_user(void **state)
{
    char buf[4096];
    unsigned uid[4], gid[4];
    unsigned long long blocked = 1, ignored = 1;
    int pid = 0, pgrp = 0;

    if (geteuid() != 0)
        skip();
    assert_int_equal(RUN(AS_NOBODY, "--", "sh", "-c",
                         "cut -d' ' -f1,5 /proc/$$/stat; "
                         "grep -E '^(Uid|Gid|Groups|SigBlk|SigIgn):' /proc/self/status"),
                     0);
    remove_work_dir();
    assert_int_equal(read_note().outcome, CS_NOTE_EXITED);
    read_file(CS_ATTEMPT_STDOUT_FILE, buf, sizeof(buf));
    assert_int_equal(sscanf(buf, "%d %d Uid: %u %u %u %u Gid: %u %u %u %u", &pid, &pgrp, &uid[0],
                            &uid[1], &uid[2], &uid[3], &gid[0], &gid[1], &gid[2], &gid[3]),
                     10);
    /* The shell leads its own group. */
    assert_int_equal(pgrp, pid);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(uid[i], 65534);
        assert_int_equal(gid[i], 65534);
    }
    assert_non_null(strstr(buf, "Groups:\t \n")); /* none */
    assert_int_equal(
        sscanf(strstr(buf, "SigBlk:"), "SigBlk: %llx SigIgn: %llx", &blocked, &ignored), 2);
    assert_int_equal(blocked, 0);
    assert_int_equal(ignored & 0x7fffffff, 0);
}

/* A step of the child that fails is named in the note, and nothing runs. */
static void test_minder_as_another_user_start_failures(void **state)
{
    struct cs_note note;

    if (geteuid() != 0)
        skip();
    assert_int_equal(RUN(AS_NOBODY, "--", "/nonexistent/command"), 0);
    remove_work_dir();
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_int_equal(note.exit_code, 127);
    assert_string_equal(note.message, "exec(\"/nonexistent/command\"): No such file or directory");

    /* Entered after the drop: root's home is closed to nobody. */
    assert_int_equal(RUN(AS_NOBODY, "-C", "/root", "--", "true"), 0);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_string_equal(note.message, "chdir(\"/root\") as uid 65534: Permission denied");
}

/* Runs the minder on this test's directory with opts, then the command
 * and n_extra more arguments to it; returns the minder's exit code. */
static int run_with_arguments(const char *const *opts, size_t n_opts, const char *command,
                              size_t n_extra)
{
    const char **args = calloc(n_opts + n_extra + 5, sizeof(*args));
    size_t n = 0;

    assert_non_null(args);
    args[n++] = "-d";
    args[n++] = dir;
    for (size_t i = 0; i < n_opts; i++)
        args[n++] = opts[i];
    args[n++] = "--";
    args[n++] = command;
    for (size_t i = 0; i < n_extra; i++)
        args[n++] = "x";
    int rc = run_minder(args);
    free(args);
    return rc;
}

/* A command has at most CS_MINDER_COMMAND_ARGS_MAX arguments, the bound the
 * child that starts it is sized for; the largest goes through the child's
 * deepest path (glibc's execvp copies them for a script without "#!"; musl
 * refuses such a script) and the minder still records its end. */
static void test_minder_command_arguments_bounded(void **state)
{
    static const char *const as_nobody[] = {AS_NOBODY};
    char script[] = "/tmp/test_minder_script.XXXXXX";
    struct cs_note note;
    int fd = mkstemp(script);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, "exit 0\n", 7), 7);
    assert_int_equal(fchmod(fd, 0755), 0);
    assert_int_equal(close(fd), 0);
    assert_int_equal(run_with_arguments(NULL, 0, "true", CS_MINDER_COMMAND_ARGS_MAX - 1), 0);
    assert_int_equal(read_note().outcome, CS_NOTE_EXITED);
    assert_int_equal(run_with_arguments(NULL, 0, "true", CS_MINDER_COMMAND_ARGS_MAX), 100);
    if (geteuid() == 0) {
        assert_int_equal(run_with_arguments(as_nobody, 6, script, CS_MINDER_COMMAND_ARGS_MAX - 1),
                         0);
        remove_work_dir();
        note = read_note();
        if (note.outcome == CS_NOTE_START_FAILED)
            assert_non_null(strstr(note.message, "Exec format error"));
        else
            assert_true(note.outcome == CS_NOTE_EXITED && note.exit_code == 0);
    }
    assert_int_equal(unlink(script), 0);
}

static void test_minder_usage(void **state)
{
    const char *const none[] = {NULL};
    const char *const no_dir[] = {"--", "true", NULL};
    const char *const no_dashes[] = {"-d", dir, "true", NULL};
    const char *const no_command[] = {"-d", dir, "--", NULL};
    const char *const bad_timeout[] = {"-d", dir, "-t", "soon", "--", "true", NULL};
    const char *const negative_grace[] = {"-d", dir, "-g", "-1", "--", "true", NULL};
    const char *const bad_cap[] = {"-d", dir, "-c", "1k", "--", "true", NULL};
    const char *const unknown[] = {"-d", dir, "-x", "--", "true", NULL};
    const char *const missing_value[] = {"-d", NULL};
    const char *const wait_on_stderr[] = {"-w", "2", "-d", dir, "--", "true", NULL};
    const char *const wait_not_fd[] = {"-w", "three", "-d", dir, "--", "true", NULL};

    assert_int_equal(run_minder(none), 100);
    assert_int_equal(run_minder(no_dir), 100);
    assert_int_equal(run_minder(no_dashes), 100);
    assert_int_equal(run_minder(no_command), 100);
    assert_int_equal(run_minder(bad_timeout), 100);
    assert_int_equal(run_minder(negative_grace), 100);
    assert_int_equal(run_minder(bad_cap), 100);
    assert_int_equal(run_minder(unknown), 100);
    assert_int_equal(run_minder(missing_value), 100);
    assert_int_equal(run_minder(wait_on_stderr), 100);
    assert_int_equal(run_minder(wait_not_fd), 100);
    assert_int_equal(cs_note_read(dir, &(struct cs_note){0}), -ENOENT);
}

static void test_minder_missing_dir(void **state)
{
    const char *const args[] = {"-d", "/nonexistent/attempt", "--", "true", NULL};

    assert_int_equal(run_minder(args), 111);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, make_dir, remove_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_minder_exit_zero),
        TEST(test_minder_given_up),
        TEST(test_minder_waits_for_go),
        TEST(test_minder_sent_away),
        TEST(test_minder_exit_code),
        TEST(test_minder_signal_death),
        TEST(test_minder_output_captured),
        TEST(test_minder_output_capped),
        TEST(test_minder_timeout_kills_group),
        TEST(test_minder_timeout_escalates_to_kill),
        TEST(test_minder_cancel_sigterm),
        TEST(test_minder_cancel_sigint),
        TEST(test_minder_cancel_command_exits),
        TEST(test_minder_exec_failure),
        TEST(test_minder_bad_workdir),
        TEST(test_minder_workdir),
        TEST(test_minder_environment_and_stdin),
        TEST(test_minder_resets_ignored_signals),
        TEST(test_minder_reaps_leftovers),
        TEST(test_minder_stops_escaped_processes),
        TEST(test_minder_kills_leftovers_ignoring_term),
        TEST(test_minder_timeout_stops_escaped_processes),
        TEST(test_minder_no_leftovers),
        TEST(test_minder_session_and_group),
        TEST(test_minder_as_another_user),
        TEST(test_minder_as_another_user_start_failures),
        TEST(test_minder_command_arguments_bounded),
        TEST(test_minder_usage),
        TEST(test_minder_missing_dir),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
