/* launcher_thread: the launch thread. A queue guarded by a mutex and a
 * condition variable feeds it the launches; it spawns their minders and
 * posts each one back to the loop. All its signals are blocked so that
 * SIGTERM and SIGINT reach the loop thread; the minder gets a clean mask. */
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
#include "note.h"
#include "util.h"

/* Launches taken off the queue at once: their pid files are written one by
 * one and then fsynced together, so a burst pays for about one journal commit
 * instead of one per minder (the first fsync commits them all). */
#define LAUNCH_GROUP_MAX 16

/* Starts DIR/pid: written, not yet synced. Returns its fd or a negative errno.
 * No temp file: eight bytes land in one write, and a reader checks the pid
 * against /proc before trusting it. */
static int pid_file_write(const char *dir, pid_t pid)
{
    char path[4096], text[32];
    (void)snprintf(path, sizeof(path), "%s/%s", dir, CS_ATTEMPT_PID_FILE);
    int len = snprintf(text, sizeof(text), "%d\n", (int)pid);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    if (write(fd, text, (size_t)len) != len) {
        int rc = errno ? -errno : -EIO;
        (void)close(fd);
        return rc;
    }
    return fd;
}

static void pid_file_sync(struct cs_launch *launch, int fd)
{
    if (fsync(fd) != 0)
        /* The minder runs and is watched; only adoption after a crash would miss it. */
        cs_log_warn("fsync(%s/%s) failed: %s", launch->dir, CS_ATTEMPT_PID_FILE, strerror(errno));
    (void)close(fd);
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

/* Starts one minder; *pid_fd gets its unsynced pid file, or stays -1. */
static void spawn_one(struct cs_launcher *l, struct cs_launch *launch, int *pid_fd)
{
    launch->pid = -1;
    launch->pidfd = -1;
    if (mkdir(launch->dir, 0700) != 0 && errno != EEXIST) {
        launch->err = -errno;
        (void)snprintf(launch->message, sizeof(launch->message), "mkdir(%s) failed: %s",
                       launch->dir, strerror(errno));
        return;
    }
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
        return;
    }
    rc = pid_file_write(launch->dir, launch->pid);
    if (rc < 0)
        cs_log_warn("writing %s/%s failed: %s", launch->dir, CS_ATTEMPT_PID_FILE, strerror(-rc));
    else
        *pid_fd = rc;
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
        int pid_fds[LAUNCH_GROUP_MAX];
        size_t n = 0;
        while (n < LAUNCH_GROUP_MAX && !cs_queue_is_empty(&l->queue))
            group[n++] = CS_CONTAINER_OF(cs_queue_pop(&l->queue), struct cs_launch, link);
        pthread_mutex_unlock(&l->lock);
        for (size_t i = 0; i < n; i++) {
            pid_fds[i] = -1;
            spawn_one(l, group[i], &pid_fds[i]);
        }
        /* The loop hears "it's running" only once the pid file is durable. */
        for (size_t i = 0; i < n; i++) {
            if (pid_fds[i] >= 0)
                pid_file_sync(group[i], pid_fds[i]);
            cs_mailbox_post(&l->done_box, &group[i]->mail);
        }
        pthread_mutex_lock(&l->lock);
    }
    pthread_mutex_unlock(&l->lock);
}
