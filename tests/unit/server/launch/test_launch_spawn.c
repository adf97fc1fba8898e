/* Unit tests of the spawn of a minder (server/launch/launch_spawn_thread.c,
 * declared in launcher_thread.h) with the real csched-minder: 0 with the
 * minder's pid, which runs its command; a minder that cannot be run is
 * a negative errno, as every function of the launch path returns. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

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
    cs_launch_free(launch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_launch_spawn_runs_the_minder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_spawn_failure_is_negative_errno, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
