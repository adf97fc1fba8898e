/* launch_spawn: what every start of a minder does on a launch thread,
 * started for its attempt or ahead of it (ahead_minder_thread.c): who the
 * command runs as, and the posix_spawn itself. */
#define CS_LOG_COMPONENT "launch"
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include "launcher_thread.h"
#include "log.h"
#include "minder_contract.h"
#include "runas.h"
#include "runas_cache.h"

int cs_launch_prepare_user(struct cs_launch *launch, struct cs_err *err)
{
    struct cs_runas r;
    int rc = cs_runas_cache_resolve(cs_runas_cache_shared(), launch->run_as_user,
                                    launch->run_as_group, launch->default_user, &r, err);
    if (rc != 0)
        return rc;
    if (!r.drop)
        goto out_clear;
    struct cs_minder_creds creds = {
        .uid = r.uid, .gid = r.gid, .groups = r.groups, .n_groups = r.n_groups};
    /* Out of memory: the server aborts, as cs_xmalloc does. */
    CS_ASSERT(cs_minder_argv_add_creds(&launch->argv, &creds) == 0);
    cs_runas_set_env(&launch->envp, &r);

out_clear:
    cs_runas_clear(&r);
    return rc;
}

int cs_launch_spawn_minder(const char *minder_path, struct cs_launch *launch, int wait_fd)
{
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t blocked, defaults;
    /* Born with every signal blocked and in our session, the minder makes
     * its own session first thing and keeps of what came before only a
     * cancel from us (minder_internal.h, enter_own_session): a session made
     * here, before the exec, would weigh the exec like one job among the
     * hundreds a burst starts, while this thread waits for it. A cancel sent
     * the moment the spawn returns waits for the minder's signalfd. */
    sigfillset(&blocked);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGHUP);
    sigaddset(&defaults, SIGCHLD);
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    /* Nothing of ours beyond stderr (the log): an fd cschedd inherited
     * without close-on-exec would otherwise reach every command. */
    int last_kept = STDERR_FILENO;
    if (wait_fd >= 0)
        posix_spawn_file_actions_adddup2(&actions, wait_fd, last_kept = CS_LAUNCH_WAIT_FD);
    posix_spawn_file_actions_addclosefrom_np(&actions, last_kept + 1);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&attr, &blocked);
    posix_spawnattr_setsigdefault(&attr, &defaults);

    int rc = posix_spawn(&launch->pid, minder_path, &actions, &attr, launch->argv, launch->envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return -rc; /* posix_spawn returns its error number, positive */
}
