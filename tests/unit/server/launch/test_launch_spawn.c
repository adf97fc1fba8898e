/* Unit tests of the spawn of a minder (server/launch/launch_spawn_thread.c,
 * declared in launcher_thread.h) with the real csched-minder: 0 with the
 * minder's pid, which runs its command; a minder that cannot be run is
 * a negative errno, as every function of the launch path returns, and
 * leaves no child behind. What the child is born with (its fds, its
 * signal mask and dispositions) is read from /proc, with sleep spawned
 * in the minder's place. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "launch_test.h"
#include "launcher_thread.h"

static char state_dir[64], dir[128];

static int setup(void **state)
{
    (void)state;
    strcpy(state_dir, "/tmp/test_launch_spawn.XXXXXX");
    assert_non_null(mkdtemp(state_dir));
    (void)snprintf(dir, sizeof(dir), "%s/1-1", state_dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", state_dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static void test_launch_spawn_runs_the_minder(void **state)
{
    (void)state;
    struct cs_launch *launch = launch_test_new(dir, "exit 0", 0);
    assert_int_equal(cs_launch_spawn_minder(CS_MINDER_PATH, launch, -1), 0);
    assert_true(launch->pid > 0);
    int wstatus;
    assert_int_equal(waitpid(launch->pid, &wstatus, 0), launch->pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    cs_launch_free(launch);
}

static void test_launch_spawn_failure_is_negative_errno(void **state)
{
    (void)state;
    char missing[160];
    (void)snprintf(missing, sizeof(missing), "%s/no-such-minder", state_dir);
    struct cs_launch *launch = launch_test_new(dir, "exit 0", 0);
    assert_int_equal(cs_launch_spawn_minder(missing, launch, -1), -ENOENT);
    assert_int_equal(launch->pid, -1);
    /* The child that failed its exec was reaped. */
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    cs_launch_free(launch);
}

/* The hex mask of /proc/PID/status's line that starts with key. */
static unsigned long long status_mask(pid_t pid, const char *key)
{
    char path[64], line[256];
    unsigned long long mask = 0;
    bool found = false;
    (void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, key, strlen(key)) == 0)
            found = sscanf(line + strlen(key), "%llx", &mask) == 1;
    (void)fclose(f);
    assert_true(found);
    return mask;
}

static bool has_signal(unsigned long long mask, int sig)
{
    return (mask >> (sig - 1)) & 1;
}

/* What the child is born with, read from /proc while it sleeps: its fds
 * 0-2 and the wait fd as 3, nothing else of ours; every signal blocked;
 * an ignored one of ours at its default. */
static void test_launch_spawn_child_keeps_only_its_fds_and_blocks_signals(void **state)
{
    (void)state;
    char *argv[] = {"sleep", "30", NULL};
    struct cs_launch *launch = launch_test_new(dir, "exit 0", 0);
    char **minder_argv = launch->argv;
    launch->argv = argv;
    int leaked = open("/dev/null", O_RDONLY); /* without close-on-exec */
    int wait_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(leaked > 2 && wait_fd > 2);
    struct sigaction ign = {.sa_handler = SIG_IGN}, was;
    assert_int_equal(sigaction(SIGPIPE, &ign, &was), 0);

    /* Its exec is done when the spawn returns. */
    assert_int_equal(cs_launch_spawn_minder("/bin/sleep", launch, wait_fd), 0);
    char path[64];
    for (int fd = 0; fd < 64; fd++) {
        (void)snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)launch->pid, fd);
        assert_int_equal(access(path, F_OK) == 0, fd <= 3);
    }
    unsigned long long blocked = status_mask(launch->pid, "SigBlk:");
    assert_true(has_signal(blocked, SIGTERM) && has_signal(blocked, SIGCHLD) &&
                has_signal(blocked, SIGINT) && has_signal(blocked, SIGHUP));
    assert_false(has_signal(status_mask(launch->pid, "SigIgn:"), SIGPIPE));

    assert_int_equal(kill(launch->pid, SIGKILL), 0);
    assert_int_equal(waitpid(launch->pid, NULL, 0), launch->pid);
    assert_int_equal(sigaction(SIGPIPE, &was, NULL), 0);
    (void)close(leaked);
    (void)close(wait_fd);
    launch->argv = minder_argv;
    cs_launch_free(launch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_launch_spawn_runs_the_minder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_spawn_failure_is_negative_errno, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_launch_spawn_child_keeps_only_its_fds_and_blocks_signals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
