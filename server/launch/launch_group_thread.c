/* launch_group_thread: what a launch thread does with the group of launches
 * it took (launcher_thread.c), in order: makes their directories, syncs
 * them once for all, holds those due later until their time (any thread
 * starts them then), spawns the others' minders and posts each one back
 * to the loop. Invariant: a launch is posted only once its minder can be
 * watched (a pidfd) or is stopped and reaped: out of file descriptors, it
 * waits with the thread that took it, its minder running as our unreaped
 * child, and is tried again. */
#define CS_LOG_COMPONENT "launch"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher_thread.h"
#include "log.h"
#include "secret_thread.h"
#include "util.h"

/* Of a group, how many are spawned (or told to go) before the loop hears
 * of them: their results are posted together, one wake-up of the loop. */
#define LAUNCH_POST_MAX 16

/* Fills the reserve as far as fds are free; the rest is tried next time.
 * A copy of an fd still held costs no path lookup, which an open would pay
 * at each of a launch's steps. */
static void reserve_take(struct cs_fd_reserve *r)
{
    int held = -1;

    for (int i = 0; i < CS_LAUNCH_RESERVE_FDS; i++)
        held = r->fd[i] >= 0 ? r->fd[i] : held;
    for (int i = 0; i < CS_LAUNCH_RESERVE_FDS; i++)
        if (r->fd[i] < 0)
            held = r->fd[i] = held >= 0 ? fcntl(held, F_DUPFD_CLOEXEC, 0)
                                        : open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Frees one reserved fd just before a call that needs one. Another thread
 * may still take it first: the call then fails with EMFILE, and is retried. */
static void reserve_release(struct cs_fd_reserve *r)
{
    for (int i = 0; i < CS_LAUNCH_RESERVE_FDS; i++) {
        if (r->fd[i] >= 0) {
            (void)close(r->fd[i]); /* /dev/null: nothing to lose */
            r->fd[i] = -1;
            return;
        }
    }
}

void cs_fd_reserve_init(struct cs_fd_reserve *r)
{
    for (int i = 0; i < CS_LAUNCH_RESERVE_FDS; i++)
        r->fd[i] = -1;
    reserve_take(r);
}

void cs_fd_reserve_close(struct cs_fd_reserve *r)
{
    for (int i = 0; i < CS_LAUNCH_RESERVE_FDS; i++)
        if (r->fd[i] >= 0)
            (void)close(r->fd[i]); /* /dev/null: nothing to lose */
}

/* Whether err (a negative errno) says that no fd was free. */
static bool out_of_fds(int err)
{
    return err == -EMFILE || err == -ENFILE;
}

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

/* Sets the failure of launch's user lookup, err, as its result. */
static void fail_user(struct cs_launch *launch, int rc, const struct cs_err *err)
{
    launch->err = rc;
    (void)snprintf(launch->message, sizeof(launch->message), "%s", err->msg);
}

/* Makes the attempt's directory, which must be new: an attempt directory is
 * never used twice. One made ahead is renamed into place, which allocates
 * no inode and replaces nothing; without it (or where the file system
 * cannot rename so), a mkdir. Returns 0 or a negative errno (the message
 * set). */
static int make_dir(struct cs_launch *launch)
{
    if (launch->ahead_dir != NULL) {
        int rc =
            renameat2(AT_FDCWD, launch->ahead_dir, AT_FDCWD, launch->dir, RENAME_NOREPLACE) == 0
                ? 0
                : errno;
        if (rc != 0 && rc != ENOENT) {
            cs_log_debug("attempt %s: renaming %s failed (%s): made anew", launch->dir,
                         launch->ahead_dir, strerror(rc));
            (void)rmdir(launch->ahead_dir); /* empty: nothing to lose */
        }
        free(launch->ahead_dir);
        launch->ahead_dir = NULL;
        if (rc == 0)
            return 0;
    }
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

/* Stops a minder that cannot be watched: TERM is its cancel, so it stops
 * its command's group and what the command left, writes its note and exits;
 * then it is reaped here, within its kill grace and drain (seconds). */
static void stop_minder(struct cs_launch *launch)
{
    int wstatus;

    /* Our unreaped child: its pid is still its own. */
    (void)kill(launch->pid, SIGTERM);
    while (waitpid(launch->pid, &wstatus, 0) < 0 && errno == EINTR)
        continue;
    launch->pid = -1;
}

/* Ends a launch that found no fds even at shutdown (err: -EMFILE or
 * -ENFILE): its minder is stopped, so nothing runs unseen, and the loop
 * hears that it failed, and why. */
static void give_up(struct cs_launch *launch, int err)
{
    launch->err = err;
    (void)snprintf(launch->message, sizeof(launch->message),
                   "out of file descriptors until shutdown (%s)%s", strerror(-err),
                   launch->pid > 0 ? ": its minder was stopped" : "");
    if (launch->pidfd >= 0)
        (void)close(launch->pidfd); /* a pidfd: nothing to lose */
    launch->pidfd = -1;
    if (launch->pid > 0)
        stop_minder(launch);
}

/* Takes one launch whose directory is made as far as it goes: its secrets
 * (set into its environment), its minder and the pidfd. Returns 0 when it
 * is done (launch->err says whether it failed), or -EMFILE or -ENFILE when
 * it ran out of fds on the way: it is then tried again from the step that
 * failed. */
static int spawn_one(struct cs_launcher *l, struct cs_fd_reserve *r, struct cs_launch *launch)
{
    struct cs_err err;
    int rc = 0;

    if (!launch->user_ready) {
        reserve_release(r); /* NSS opens files */
        rc = cs_launch_prepare_user(launch, &err);
        if (rc != 0) {
            if (!out_of_fds(rc)) {
                fail_user(launch, rc, &err);
                rc = 0; /* failed, the message set */
            }
            goto out_take;
        }
        launch->user_ready = true;
    }
    if (!launch->secrets_set) {
        reserve_release(r);
        rc = cs_secrets_resolve(&launch->envp, launch->secrets, launch->n_secrets,
                                launch->server_env, launch->message, sizeof(launch->message));
        reserve_take(r);
        if (out_of_fds(rc))
            return rc; /* tried again, as a spawn would be */
        if (rc != 0) {
            launch->err = rc;
            return 0;
        }
        launch->secrets_set = true;
        if (launch->n_secrets > 0)
            cs_log_debug("attempt %s: %zu secret_env variables set", launch->dir,
                         launch->n_secrets);
    }
    /* Read before the minder may go: its command cannot start earlier, so
     * an attempt never ends before it started, however late this thread
     * gets the CPU back after the spawn. */
    int64_t before_go_ms = cs_now_unix_ms();
    if (launch->pid <= 0 && cs_ahead_minder_go(&l->ahead, launch) == 0) {
        launch->started_unix_ms = launch->armed ? launch->released_unix_ms : before_go_ms;
    } else if (launch->pid <= 0) {
        reserve_release(r);
        rc = cs_launch_spawn_minder(l->minder_path, launch, -1);
        if (rc != 0) {
            launch->pid = -1;
            if (out_of_fds(rc))
                goto out_take; /* nothing ran */
            launch->err = rc;
            (void)snprintf(launch->message, sizeof(launch->message), "posix_spawn(%s) failed: %s",
                           l->minder_path, strerror(-rc));
            rc = 0;
            goto out_take;
        }
        launch->started_unix_ms = before_go_ms;
    }
    reserve_release(r);
    /* The minder is our unreaped child, so its pid cannot be reused yet. */
    launch->pidfd = (int)syscall(SYS_pidfd_open, launch->pid, 0);
    if (launch->pidfd < 0) {
        rc = -errno;
        if (out_of_fds(rc))
            goto out_take; /* the minder runs its command meanwhile */
        launch->err = rc;
        (void)snprintf(launch->message, sizeof(launch->message),
                       "pidfd_open(%d) failed: %s: its minder was stopped", (int)launch->pid,
                       strerror(-rc));
        stop_minder(launch);
        rc = 0;
    }
out_take:
    reserve_take(r);
    return rc;
}

/* Makes the directories of the group's launches that have none yet and
 * syncs those not yet synced, once for all. Returns 0 or a negative errno of
 * the sync; a launch whose mkdir failed has its err and message set. */
static int make_dirs(struct cs_fd_reserve *r, struct cs_launch **group, size_t n)
{
    const char *unsynced = NULL;
    crash_point("before-mkdir");
    for (size_t i = 0; i < n; i++) {
        if (!group[i]->dir_made && make_dir(group[i]) == 0)
            group[i]->dir_made = true;
        if (group[i]->dir_made && !group[i]->dir_synced)
            unsynced = group[i]->dir;
    }
    if (unsynced == NULL)
        return 0;
    reserve_release(r);
    int rc = sync_attempts_dir(unsynced);
    reserve_take(r);
    for (size_t i = 0; i < n && rc == 0; i++)
        group[i]->dir_synced = group[i]->dir_made;
    return rc;
}

/* Says once per launch that it waits for fds (err), and what runs
 * meanwhile. */
static void log_waiting(struct cs_launch *launch, int err)
{
    if (launch->fd_waits++ > 0)
        return;
    if (launch->pid > 0)
        cs_log_warn("attempt %s: out of file descriptors (%s): its minder %d runs, and is "
                    "watched once they are back",
                    launch->dir, strerror(-err), (int)launch->pid);
    else
        cs_log_warn("attempt %s: out of file descriptors (%s): its minder starts once they are "
                    "back",
                    launch->dir, strerror(-err));
}

/* Spawns up to LAUNCH_POST_MAX launches of a group whose directories are
 * made (sync_rc: how their sync went) and posts them; those that ran out of
 * fds go to waiting, unless final (shutdown), when they are given up.
 * Returns whether any did. */
static bool spawn_and_post(struct cs_launcher *l, struct cs_fd_reserve *r, struct cs_launch **group,
                           size_t n, int sync_rc, struct cs_queue *waiting, bool final)
{
    int errs[LAUNCH_POST_MAX];
    bool any_waits = false;

    crash_point("before-spawn");
    for (size_t i = 0; i < n; i++) {
        errs[i] = 0;
        if (group[i]->err != 0)
            continue;
        if (!group[i]->dir_synced && out_of_fds(sync_rc)) {
            errs[i] = sync_rc; /* nothing ran: the sync is tried again */
        } else if (!group[i]->dir_synced) {
            group[i]->err = sync_rc;
            (void)snprintf(group[i]->message, sizeof(group[i]->message),
                           "syncing the attempt directories failed: %s", strerror(-sync_rc));
            continue;
        } else {
            errs[i] = spawn_one(l, r, group[i]);
        }
        if (errs[i] != 0 && final) {
            give_up(group[i], errs[i]);
            errs[i] = 0;
        }
    }
    crash_point("after-spawn");
    for (size_t i = 0; i < n; i++) {
        if (errs[i] != 0) {
            log_waiting(group[i], errs[i]);
            cs_queue_push(waiting, &group[i]->link);
            any_waits = true;
            continue;
        }
        if (group[i]->fd_waits > 0)
            cs_log_info("attempt %s: file descriptors are back after %u tries", group[i]->dir,
                        group[i]->fd_waits);
        cs_mailbox_post(&l->done_box, &group[i]->mail);
    }
    return any_waits;
}

/* Puts launch in the held queue, in due order. Most come in that order, so
 * the walk from the head is only for the few that do not. The lock is held. */
static void hold(struct cs_launcher *l, struct cs_launch *launch)
{
    struct cs_qlink *prev = l->held.tail;
    if (prev != NULL &&
        CS_CONTAINER_OF(prev, struct cs_launch, link)->due_unix_ms > launch->due_unix_ms) {
        prev = NULL;
        for (struct cs_qlink *q = l->held.head;
             CS_CONTAINER_OF(q, struct cs_launch, link)->due_unix_ms <= launch->due_unix_ms;
             q = q->next)
            prev = q;
    }
    cs_queue_insert_after(&l->held, prev, &launch->link);
    launch->at = CS_LAUNCH_AT_HELD;
}

/* Arms the minder started ahead for a launch just held, if there is one
 * and it was started as this launch would start it: at the due time its
 * gate opens, with those of all the launches due then. The lock is held. */
static void arm(struct cs_launcher *l, struct cs_launch *launch)
{
    if (!launch->user_ready || launch->n_secrets > 0)
        return;
    int gate_fd = cs_release_gate_of(&l->gates, launch->due_unix_ms);
    launch->armed = gate_fd >= 0 && cs_ahead_minder_arm(&l->ahead, launch, gate_fd);
}

/* Holds those of a group's launches that are due later, their directories
 * made and synced, until their due time; the rest move to the front of
 * group. Returns how many those are. */
static size_t hold_later(struct cs_launcher *l, struct cs_launch **group, size_t n)
{
    int64_t now_ms = cs_now_unix_ms();
    size_t kept = 0;
    pthread_mutex_lock(&l->lock);
    const struct cs_qlink *was_first = l->held.head;
    int64_t first_gate_ms = cs_release_gates_first_due(&l->gates);
    for (size_t i = 0; i < n; i++) {
        struct cs_launch *launch = group[i];
        if (launch->revoked) {
            launch->err = -ECANCELED;
            (void)snprintf(launch->message, sizeof(launch->message), "taken back before its start");
        }
        if (launch->due_unix_ms > now_ms && launch->err == 0 && launch->dir_synced) {
            hold(l, launch);
            arm(l, launch);
            continue;
        }
        launch->at = CS_LAUNCH_AT_GOING;
        group[kept++] = launch;
    }
    /* A thread asleep until the old first one would wake too late. */
    if (l->held.head != NULL && l->held.head != was_first && l->n_idle > 0)
        pthread_cond_signal(&l->wake);
    if (cs_release_gates_first_due(&l->gates) != first_gate_ms)
        pthread_cond_signal(&l->release_wake);
    pthread_mutex_unlock(&l->lock);
    return kept;
}

/* Resolves the users of the group's launches due later now, so that at
 * their due time only their minders' starts are left. One that fails here
 * is tried again there, where its failure is told. */
static void prepare_users_ahead(struct cs_fd_reserve *r, struct cs_launch **group, size_t n)
{
    int64_t now_ms = cs_now_unix_ms();
    for (size_t i = 0; i < n; i++) {
        struct cs_launch *launch = group[i];
        if (launch->due_unix_ms <= now_ms || launch->err != 0 || launch->user_ready)
            continue;
        reserve_release(r); /* NSS opens files */
        struct cs_err err;
        int rc = cs_launch_prepare_user(launch, &err);
        reserve_take(r);
        launch->user_ready = rc == 0;
        if (rc != 0 && !out_of_fds(rc))
            fail_user(launch, rc, &err);
    }
}

bool cs_launch_group(struct cs_launcher *l, struct cs_fd_reserve *r, struct cs_launch **group,
                     size_t n, struct cs_queue *waiting, bool final)
{
    bool any_waits = false;
    int sync_rc = make_dirs(r, group, n);
    prepare_users_ahead(r, group, n);
    n = hold_later(l, group, n);
    for (size_t at = 0; at < n; at += LAUNCH_POST_MAX) {
        size_t part = n - at < LAUNCH_POST_MAX ? n - at : LAUNCH_POST_MAX;
        any_waits |= spawn_and_post(l, r, group + at, part, sync_rc, waiting, final);
    }
    return any_waits;
}
