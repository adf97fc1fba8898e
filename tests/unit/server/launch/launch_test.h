/* launch_test: what the unit tests of the launch threads' modules
 * (test_ahead_minder, test_launcher_hold) share: a launch built by hand as
 * dispatch would build it, with the real minder. Needs CS_MINDER_PATH. */
#ifndef CS_TEST_LAUNCH_TEST_H
#define CS_TEST_LAUNCH_TEST_H

#include <stdint.h>

#include "launcher.h"
#include "minder_contract.h"
#include "util.h"

/* A launch of shell in dir, due at due_unix_ms (0: at once), no minder yet. */
static inline struct cs_launch *launch_test_new(const char *dir, const char *shell,
                                                int64_t due_unix_ms)
{
    struct cs_minder_cmd cmd = {
        .minder_path = CS_MINDER_PATH, .dir = dir, .grace_ms = 1000, .shell = shell};
    struct cs_launch *launch = cs_xcalloc(1, sizeof(*launch));
    launch->dir = cs_xstrdup(dir);
    launch->argv = cs_minder_argv_new(&cmd);
    launch->envp = cs_xcalloc(2, sizeof(char *));
    launch->envp[0] = cs_xstrdup("PATH=/usr/bin:/bin");
    launch->run_as_user = cs_xstrdup("");
    launch->run_as_group = cs_xstrdup("");
    launch->due_unix_ms = due_unix_ms;
    launch->pid = -1;
    return launch;
}

#endif
