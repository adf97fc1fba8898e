/* launcher_thread: the launch thread. A queue guarded by a mutex and a
 * condition variable feeds it the launches; it makes their directories,
 * syncs them, spawns their minders and posts each one back to the loop. All its signals are blocked
 * so that SIGTERM and SIGINT reach the loop thread; the minder gets a clean mask. */
#define CS_LOG_COMPONENT "launch"
#include "launcher_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

/* Launches taken off the queue at once: their directories are made one by
 * one and synced together, so a burst pays for about one journal commit
 * instead of one per minder. */
#define LAUNCH_GROUP_MAX 16

/* For the crash tests only, off unless the variable is set:
 * CSCHED_TEST_CRASH_AT=<step> makes the launch thread, on reaching step,
 * wait a second (so the loop commits what it wrote in the meantime) and
 * kill the whole server with SIGKILL. docs/operations.md lists the steps. */
#define CRASH_AT_ENV "CSCHED_TEST_CRASH_AT"

static void crash_point(const char *step)
{
    const char *at = getenv(CRASH_AT_ENV);
    if (at == NULL || strcmp(at, step) != 0)
        return;
    cs_log_warn("%s=%s: killing the server", CRASH_AT_ENV, step);
    (void)usleep(1000000);
    (void)kill(getpid(), SIGKILL);
}

/* Makes the attempt's directory, which must be new: an attempt directory is
 * never used twice. Returns 0 or a negative errno (the message set). */
static int make_dir(struct cs_launch *launch)
{
    if (mkdir(launch->dir, 0700) == 0)
        return 0;
    launch->err = -errno;
    (void)snprintf(launch->message, sizeof(launch->message), "mkdir(%s) failed: %s%s", launch->dir,
                   strerror(errno),
                   errno == EEXIST ? " (an attempt directory is never used twice)" : "");
    return launch->err;
}

/* Syncs the folder that holds the attempt directories, so that each one made
 * is durable before its command can run: the restart finds every attempt
 * that may have started. Returns 0 or a negative errno. */
static int sync_attempts_dir(const char *attempt_dir)
{
    char parent[4096];
    const char *slash = strrchr(attempt_dir, '/');
    size_t len = slash != NULL ? (size_t)(slash - attempt_dir) : 0;
    if (len == 0 || len >= sizeof(parent))
        return -EINVAL;
    memcpy(parent, attempt_dir, len);
    parent[len] = '\0';
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) == 0 ? 0 : -errno;
    (void)close(fd); /* read-only */
    return rc;
}

/* posix_spawn of the minder: stdin and stdout on /dev/null, its own
 * session, a clean signal mask. Returns posix_spawn's error number. */
static int spawn_minder(const char *minder_path, struct cs_launch *launch)
{
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t blocked, defaults;
    /* Born with cancel and exit signals blocked: a cancel sent the moment the
     * spawn returns waits for the minder's signalfd instead of killing it
     * before it could write a note. The minder unblocks them for the command. */
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGCHLD);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGHUP);
    sigaddset(&defaults, SIGCHLD);
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_init(&attr);
    /* Its own session from the first instruction: a signal to our group never reaches it. */
    posix_spawnattr_setflags(&attr,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
    posix_spawnattr_setsigmask(&attr, &blocked);
    posix_spawnattr_setsigdefault(&attr, &defaults);

    int rc = posix_spawn(&launch->pid, minder_path, &actions, &attr, launch->argv, launch->envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

/* Starts the minder of a launch whose directory is made and synced. */
static void spawn_one(struct cs_launcher *l, struct cs_launch *launch)
{
    int rc = spawn_minder(l->minder_path, launch);
    if (rc != 0) {
        launch->err = -rc;
        launch->pid = -1;
        (void)snprintf(launch->message, sizeof(launch->message), "posix_spawn(%s) failed: %s",
                       l->minder_path, strerror(rc));
        return;
    }
    launch->started_unix_ms = cs_now_unix_ms();

    /* The minder is our unreaped child, so its pid cannot be reused yet. */
    launch->pidfd = (int)syscall(SYS_pidfd_open, launch->pid, 0);
    if (launch->pidfd < 0) {
        launch->err = -errno;
        (void)snprintf(launch->message, sizeof(launch->message), "pidfd_open(%d) failed: %s",
                       (int)launch->pid, strerror(errno));
    }
}

/* Makes the group's directories, syncs them once, then starts the minders
 * of those whose directory is there. */
static void launch_group(struct cs_launcher *l, struct cs_launch **group, size_t n)
{
    size_t made = 0;
    crash_point("before-mkdir");
    for (size_t i = 0; i < n; i++) {
        group[i]->pid = -1;
        group[i]->pidfd = -1;
        if (make_dir(group[i]) == 0)
            made++;
    }
    int rc = made > 0 ? sync_attempts_dir(group[0]->dir) : 0;
    crash_point("before-spawn");
    for (size_t i = 0; i < n; i++) {
        if (group[i]->err != 0)
            continue;
        if (rc != 0) {
            group[i]->err = rc;
            (void)snprintf(group[i]->message, sizeof(group[i]->message),
                           "syncing the attempt directories failed: %s", strerror(-rc));
            continue;
        }
        spawn_one(l, group[i]);
    }
    crash_point("after-spawn");
}

void cs_launcher_thread_main(void *arg)
{
    struct cs_launcher *l = arg;
    sigset_t all;
    /* The name shows in top -H and /proc, so an operator can tell the threads apart. */
    pthread_setname_np(pthread_self(), "csched-launch");
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);

    pthread_mutex_lock(&l->lock);
    for (;;) {
        while (cs_queue_is_empty(&l->queue) && !l->stop)
            pthread_cond_wait(&l->wake, &l->lock);
        if (cs_queue_is_empty(&l->queue))
            break;
        struct cs_launch *group[LAUNCH_GROUP_MAX];
        size_t n = 0;
        while (n < LAUNCH_GROUP_MAX && !cs_queue_is_empty(&l->queue))
            group[n++] = CS_CONTAINER_OF(cs_queue_pop(&l->queue), struct cs_launch, link);
        pthread_mutex_unlock(&l->lock);
        launch_group(l, group, n);
        for (size_t i = 0; i < n; i++)
            cs_mailbox_post(&l->done_box, &group[i]->mail);
        pthread_mutex_lock(&l->lock);
    }
    pthread_mutex_unlock(&l->lock);
}
