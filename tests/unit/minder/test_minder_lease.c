/* Tests of the real csched-minder binary (CS_MINDER_PATH) fencing itself by
 * cschedd's lease (-L), end to end on one machine: the lease file is the
 * server's own (host/lease_file.h), its deadline set and renewed as cschedd
 * does, on the real CLOCK_BOOTTIME. A deadline that passes while the
 * command runs stops it (the stop signal, KILL after the grace); one
 * renewed keeps it running to its end; one passed at the start, or by the
 * time a minder started ahead is released, keeps it from ever running (a
 * marker file it would make stays missing); a lease file that cannot be
 * used is refused, nothing run. Every wait is for a condition, with a
 * generous limit. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "lease_file.h"
#include "minder_spawn.h"
#include "note.h"
#include "util.h"

/* Longest any one minder may take before the test gives up on it. */
#define WAIT_LIMIT_MS 10000
#define MS (INT64_C(1000000))

static char root[256];       /* the state dir: the lease file and the attempt */
static char dir[320];        /* the attempt's directory */
static char marker[384];     /* what the command makes if it ever runs */
static char lease_path[320]; /* root/lease, as cschedd passes it */
static struct cs_lease_file lease;

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static int setup(void **state)
{
    const char *tmp = getenv("TMPDIR");
    struct cs_err err = {0};

    (void)state;
    snprintf(root, sizeof(root), "%s/test_minder_lease.XXXXXX", tmp != NULL ? tmp : "/tmp");
    if (mkdtemp(root) == NULL)
        return -1;
    snprintf(dir, sizeof(dir), "%s/attempt", root);
    snprintf(marker, sizeof(marker), "%s/marker", dir);
    snprintf(lease_path, sizeof(lease_path), "%s/" CS_LEASE_FILE, root);
    if (mkdir(dir, 0700) != 0 || cs_lease_file_open(&lease, root, &err) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    char cmd[320];

    (void)state;
    cs_lease_file_close(&lease);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* A minder given up on: it, and the command's group it recorded, which
 * would outlive it (these commands never end on their own). */
static void kill_minder(pid_t pid)
{
    char path[384], text[24] = "";
    FILE *f;

    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    snprintf(path, sizeof(path), "%s/" CS_ATTEMPT_PGID_FILE, dir);
    if ((f = fopen(path, "r")) != NULL) {
        if (fgets(text, sizeof(text), f) != NULL && atoi(text) > 0)
            kill(-atoi(text), SIGKILL);
        fclose(f);
    }
}

/* Waits for the minder to exit; returns its exit code. */
static int wait_minder(pid_t pid)
{
    int64_t give_up_ns = cs_now_mono_ns() + WAIT_LIMIT_MS * MS;
    int wstatus;
    pid_t got;

    while ((got = waitpid(pid, &wstatus, WNOHANG)) == 0) {
        if (cs_now_mono_ns() > give_up_ns) {
            kill_minder(pid);
            fail_msg("csched-minder still running after %d ms", WAIT_LIMIT_MS);
        }
        pause_ms(2);
    }
    assert_int_equal(got, pid);
    assert_true(WIFEXITED(wstatus));
    return WEXITSTATUS(wstatus);
}

/* Runs the minder with -L LEASE on script and returns its exit code. */
static int run_leased(const char *lease_arg, const char *grace_ms, const char *script)
{
    const char *const args[] = {"-d", dir,  "-L", lease_arg, "-g", grace_ms,
                                "--", "sh", "-c", script,    NULL};
    return wait_minder(cs_test_minder_spawn(args, -1));
}

static struct cs_note read_note(void)
{
    struct cs_note note;

    assert_int_equal(cs_note_read(dir, &note), 0);
    return note;
}

/* Reads the attempt's stdout into buf (NUL-terminated). */
static void read_stdout(char *buf, size_t cap)
{
    char path[512];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "%s/" CS_ATTEMPT_STDOUT_FILE, dir);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    n = read(fd, buf, cap - 1);
    assert_true(n >= 0);
    buf[n] = '\0';
    close(fd);
}

/* Empties the attempt's directory, for the next attempt: the server never
 * reuses one (a minder finding a pid file starts nothing). */
static void new_attempt(void)
{
    char cmd[384];

    snprintf(cmd, sizeof(cmd), "rm -f '%s'/*", dir);
    assert_int_equal(system(cmd), 0);
}

static bool marker_made(void)
{
    return access(marker, F_OK) == 0;
}

static void assert_prefix(const char *s, const char *prefix)
{
    if (strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("\"%s\" does not begin with \"%s\"", s, prefix);
}

static void assert_suffix(const char *s, const char *suffix)
{
    size_t len = strlen(s), n = strlen(suffix);

    if (len < n || strcmp(s + len - n, suffix) != 0)
        fail_msg("\"%s\" does not end with \"%s\"", s, suffix);
}

/* Keeps the deadline lease_ms ahead, renewed every renew_ms, in a forked
 * child (cschedd's renewals, through the mapping the fork shares), for
 * for_ms (0: until killed). */
static pid_t start_renewer(int64_t lease_ms, long renew_ms, int64_t for_ms)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid != 0)
        return pid;
    int64_t stop_ns = for_ms > 0 ? cs_now_boot_ns() + for_ms * MS : INT64_MAX;
    for (int64_t now_ns; (now_ns = cs_now_boot_ns()) < stop_ns; pause_ms(renew_ms))
        cs_lease_file_set(&lease, now_ns + lease_ms * MS);
    _exit(0);
}

static void stop_renewer(pid_t pid)
{
    (void)kill(pid, SIGKILL); /* one renewing for a while may be gone */
    assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* The deadline passes while the command runs: the stop signal first, which
 * this command only notes, then KILL after the grace. Not before the
 * deadline, and the note says why, for the server to end it LOST. */
static void test_minder_lease_fence_stops_command(void **state)
{
    int64_t deadline_ns = cs_now_boot_ns() + 800 * MS;
    struct cs_note note;
    char out[256];

    cs_lease_file_set(&lease, deadline_ns);
    assert_int_equal(
        run_leased(lease_path, "300",
                   "trap 'echo stop-signal' TERM; echo ready; while :; do sleep 0.05; done"),
        0);
    assert_true(cs_now_boot_ns() >= deadline_ns + 300 * MS);
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_FENCED);
    assert_int_equal(note.term_signal, SIGKILL);
    assert_true(note.started_unix_ms > 0);
    assert_prefix(note.message, "stopped: cschedd's lease on this machine ran out at ");
    assert_suffix(note.message, "Z (it stopped renewing; another replica may retry the run); "
                                "SIGKILL after 300 ms");
    read_stdout(out, sizeof(out));
    assert_prefix(out, "ready\n");
    assert_non_null(strstr(out, "stop-signal\n"));
}

/* The time in the message is the deadline's, on the wall clock (UTC, to
 * the millisecond; the test reads its two clocks a moment apart). */
static void test_minder_lease_message_names_the_time(void **state)
{
    int64_t deadline_ns = cs_now_boot_ns() + 300 * MS;
    int64_t deadline_unix_ms = cs_now_unix_ms() + 300;
    struct tm tm = {0};
    int ms = -1;

    cs_lease_file_set(&lease, deadline_ns);
    assert_int_equal(run_leased(lease_path, "10000", "exec sleep 100"), 0);
    struct cs_note note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_FENCED);
    assert_int_equal(note.term_signal, SIGTERM);
    const char *at = strstr(note.message, "ran out at ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "ran out at %d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon,
                            &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms),
                     7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    int64_t said_ms = (int64_t)timegm(&tm) * 1000 + ms;
    assert_in_range(said_ms, deadline_unix_ms - 100, deadline_unix_ms + 100);
}

/* Renewed again and again, the deadline never passes: the command runs to
 * its own end, several lease periods long, untouched. */
static void test_minder_lease_renewed_runs_to_end(void **state)
{
    pid_t renewer;
    char out[64];

    cs_lease_file_set(&lease, cs_now_boot_ns() + 600 * MS);
    renewer = start_renewer(600, 100, 0);
    assert_int_equal(run_leased(lease_path, "300", "sleep 2; echo done"), 0);
    stop_renewer(renewer);
    struct cs_note note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 0);
    assert_int_equal(note.term_signal, 0);
    assert_string_equal(note.message, "");
    read_stdout(out, sizeof(out));
    assert_string_equal(out, "done\n");
}

/* Renewed for a while, then no more (cschedd paused, killed, cut off): the
 * minder followed the renewals, and stops the command once the last
 * deadline has passed, not before. */
static void test_minder_lease_fence_after_renewals(void **state)
{
    int64_t started_ns = cs_now_boot_ns();
    pid_t renewer;

    cs_lease_file_set(&lease, started_ns + 500 * MS);
    renewer = start_renewer(500, 100, 1500);
    assert_int_equal(run_leased(lease_path, "300", "exec sleep 100"), 0);
    stop_renewer(renewer);
    int64_t last_deadline_ns = cs_lease_file_get(&lease);
    assert_true(last_deadline_ns >= started_ns + 1500 * MS);
    assert_true(cs_now_boot_ns() >= last_deadline_ns);
    struct cs_note note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_FENCED);
    assert_int_equal(note.term_signal, SIGTERM);
    assert_prefix(note.message, "stopped: cschedd's lease on this machine ran out at ");
}

/* A deadline already passed at the start: the command never runs, and the
 * note says it was not started. */
static void test_minder_lease_passed_never_starts(void **state)
{
    cs_lease_file_set(&lease, cs_now_boot_ns() - 1);
    assert_int_equal(run_leased(lease_path, "300", "touch marker"), 0);
    assert_false(marker_made());
    struct cs_note note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_FENCED);
    assert_int_equal(note.started_unix_ms, 0);
    assert_int_equal(note.exit_code, 0);
    assert_int_equal(note.term_signal, 0);
    assert_prefix(note.message, "not started: cschedd's lease on this machine ran out at ");

    /* No deadline set yet counts as passed. */
    new_attempt();
    cs_lease_file_set(&lease, 0);
    assert_int_equal(run_leased(lease_path, "300", "touch marker"), 0);
    assert_false(marker_made());
    note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_FENCED);
    assert_prefix(note.message, "not started: the lease file ");
    assert_non_null(strstr(note.message, "holds no deadline"));
}

/* A minder started ahead, armed: its release gate (an eventfd) and its
 * end of the wait socket, which must stay open until the gate opens. */
struct armed {
    pid_t pid;
    int gate, sock;
};

/* Starts a minder ahead (-w) on "touch marker", armed with its gate. */
static struct armed start_armed(void)
{
    const char *const args[] = {"-w", "3",  "-d",           dir, "-L", lease_path, "--",
                                "sh", "-c", "touch marker", NULL};
    struct cs_minder_word w;
    struct armed a;
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    a.gate = eventfd(0, EFD_CLOEXEC);
    assert_true(a.gate >= 0);
    a.pid = cs_test_minder_spawn(args, sv[1]);
    close(sv[1]);
    a.sock = sv[0];
    cs_minder_word_init(&w, CS_MINDER_ARM, a.gate);
    assert_int_equal(sendmsg(a.sock, &w.msg, 0), 1);
    return a;
}

/* Releases it, the gate first, as cschedd does, then waits for its end. */
static int release(struct armed a)
{
    uint64_t one = 1;

    assert_int_equal(write(a.gate, &one, sizeof(one)), sizeof(one));
    close(a.gate);
    close(a.sock);
    return wait_minder(a.pid);
}

/* Started ahead, released at its gate once the deadline has passed: the
 * command never runs. Released before it, the same minder's command runs. */
static void test_minder_lease_released_after_deadline(void **state)
{
    cs_lease_file_set(&lease, cs_now_boot_ns() + 60000 * MS);
    assert_int_equal(release(start_armed()), 0);
    assert_true(marker_made());
    assert_int_equal(read_note().outcome, CS_NOTE_EXITED);

    new_attempt();
    int64_t deadline_ns = cs_now_boot_ns() + 300 * MS;
    cs_lease_file_set(&lease, deadline_ns);
    struct armed a = start_armed();
    while (cs_now_boot_ns() < deadline_ns)
        pause_ms(10);
    assert_int_equal(release(a), 0);
    assert_false(marker_made());
    struct cs_note note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_FENCED);
    assert_int_equal(note.started_unix_ms, 0);
    assert_prefix(note.message, "not started: cschedd's lease on this machine ran out at ");
}

/* Runs the minder with -L path on "touch marker"; asserts that nothing ran
 * and that the note is a start failure naming why (why). */
static void assert_refused(const char *path, const char *why)
{
    new_attempt();
    assert_int_equal(run_leased(path, "300", "touch marker"), 0);
    assert_false(marker_made());
    struct cs_note note = read_note();
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_int_equal(note.exit_code, 127);
    assert_prefix(note.message, "lease file ");
    assert_non_null(strstr(note.message, path));
    if (strstr(note.message, why) == NULL)
        fail_msg("\"%s\" does not say \"%s\"", note.message, why);
    assert_suffix(note.message, "; the command was not started, as it could not be stopped once "
                                "cschedd's lease ran out");
}

/* A lease file that cannot be used: nothing runs unfenced. */
static void test_minder_lease_file_refused(void **state)
{
    char path[512];

    cs_lease_file_set(&lease, cs_now_boot_ns() + 60000 * MS);
    snprintf(path, sizeof(path), "%s/missing", root);
    assert_refused(path, "open: No such file or directory");

    /* A link to the real, valid lease file. */
    snprintf(path, sizeof(path), "%s/link", root);
    assert_int_equal(symlink(lease_path, path), 0);
    assert_refused(path, "(links are refused)");

    /* A link on the way to it. */
    char via[640];
    snprintf(path, sizeof(path), "%s/dirlink", root);
    assert_int_equal(symlink(root, path), 0);
    snprintf(via, sizeof(via), "%s/" CS_LEASE_FILE, path);
    assert_refused(via, "(links are refused)");

    snprintf(path, sizeof(path), "%s/short", root);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "1234", 4), 4);
    close(fd);
    assert_refused(path, "shorter than the 8 bytes of a deadline");

    assert_refused(dir, "not a regular file");
}

static void test_minder_lease_usage(void **state)
{
    const char *const empty[] = {"-d", dir, "-L", "", "--", "true", NULL};
    const char *const no_value[] = {"-d", dir, "-L", NULL};

    assert_int_equal(wait_minder(cs_test_minder_spawn(empty, -1)), 100);
    assert_int_equal(wait_minder(cs_test_minder_spawn(no_value, -1)), 100);
    assert_int_equal(cs_note_read(dir, &(struct cs_note){0}), -ENOENT);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_minder_lease_fence_stops_command),
        TEST(test_minder_lease_message_names_the_time),
        TEST(test_minder_lease_renewed_runs_to_end),
        TEST(test_minder_lease_fence_after_renewals),
        TEST(test_minder_lease_passed_never_starts),
        TEST(test_minder_lease_released_after_deadline),
        TEST(test_minder_lease_file_refused),
        TEST(test_minder_lease_usage),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
