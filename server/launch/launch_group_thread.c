/* launch_group_thread: what a launch thread does with the group of launches
 * it took (launcher_thread.c), in order: makes their directories, syncs
 * them once for all, holds those due later until their time, starts the
 * others' minders and posts them back to the loop. Each step is an event
 * of the launch's state (launch_state.h), and the state says which step is
 * next. Invariant: a launch is posted only once its minder can be watched
 * (a pidfd) or is stopped and reaped: out of file descriptors, it waits
 * with the thread that took it, its minder running as our unreaped child,
 * and is tried again from the step its state names. */
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

/* --- directories ------------------------------------------------------ */

/* Makes the attempt's directory, which must be new: an attempt directory is
 * never used twice. One made ahead is renamed into place, which allocates
 * no inode and replaces nothing; without it (or where the file system
 * cannot rename so), a mkdir. */
static void make_dir(struct cs_launch *launch)
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
            goto out_made;
    }
    if (mkdir(launch->dir, 0700) != 0) {
        int err = errno;
        cs_launch_fail(launch, -err, "mkdir(%s) failed: %s%s", launch->dir, strerror(err),
                       err == EEXIST ? " (an attempt directory is never used twice)" : "");
        return;
    }
out_made:
    CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_DIR_MADE) == 0);
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

/* Whether launch's directory is made but not yet synced. */
static bool unsynced(const struct cs_launch *launch)
{
    enum cs_launch_state state = cs_launch_state(launch);
    return state == CS_LAUNCH_MADE || state == CS_LAUNCH_START_SYNC;
}

/* Makes the directories of the group's launches just taken, and syncs all
 * those made and not yet synced (just now, or before: that sync ran out of
 * fds) at once. Returns 0 or the sync's negative errno: out of fds, they
 * are left to be synced again; any other error fails them. */
static int make_dirs(struct cs_fd_reserve *r, struct cs_launch **group, size_t n)
{
    const char *to_sync = NULL;
    crash_point("before-mkdir");
    for (size_t i = 0; i < n; i++) {
        if (cs_launch_state(group[i]) == CS_LAUNCH_TAKEN)
            make_dir(group[i]);
        if (unsynced(group[i]))
            to_sync = group[i]->dir;
    }
    if (to_sync == NULL)
        return 0;
    reserve_release(r);
    int rc = sync_attempts_dir(to_sync);
    reserve_take(r);
    for (size_t i = 0; i < n; i++) {
        if (!unsynced(group[i]) || out_of_fds(rc))
            continue;
        if (rc == 0)
            CS_ASSERT(cs_launch_apply(group[i], CS_LAUNCH_EV_DIR_SYNCED) == 0);
        else
            cs_launch_fail(group[i], rc, "syncing the attempt directories failed: %s",
                           strerror(-rc));
    }
    return rc;
}

/* --- who it runs as ---------------------------------------------------- */

/* Resolves who launch runs as (cs_launch_prepare_user). Returns 0 when
 * that is done, or has failed it (its state says which), or -EMFILE or
 * -ENFILE when a lookup ran out of fds: its state is left as it was. */
static int resolve_user(struct cs_launch *launch)
{
    struct cs_err err;
    int rc = cs_launch_prepare_user(launch, &err);
    if (out_of_fds(rc))
        return rc;
    if (rc != 0)
        cs_launch_fail(launch, rc, "%s", err.msg);
    else
        CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_USER_RESOLVED) == 0);
    return 0;
}

/* Resolves who the group's launches due later run as now, so that at their
 * due time only their minders' starts are left. One whose lookup runs out
 * of fds is held all the same and resolved at its start; one that fails is
 * not held: it goes back to the loop failed at once. */
static void resolve_users_ahead(struct cs_fd_reserve *r, struct cs_launch **group, size_t n)
{
    int64_t now_ms = cs_now_unix_ms();
    for (size_t i = 0; i < n; i++) {
        struct cs_launch *launch = group[i];
        if (launch->due_unix_ms <= now_ms || cs_launch_state(launch) != CS_LAUNCH_SYNCED)
            continue;
        reserve_release(r);         /* NSS opens files */
        (void)resolve_user(launch); /* out of fds: resolved at its start */
        reserve_take(r);
    }
}

/* --- the hold ------------------------------------------------------------ */

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
    CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_HOLD) == 0);
}

/* Arms the minder started ahead for a launch just held, if there is one
 * and it was started as this launch would start it: at the due time its
 * gate opens, with those of all the launches due then. The lock is held. */
static void arm(struct cs_launcher *l, struct cs_launch *launch)
{
    if (cs_launch_state(launch) != CS_LAUNCH_HELD || launch->n_secrets > 0)
        return;
    int gate_fd = cs_release_gate_of(&l->gates, launch->due_unix_ms);
    if (gate_fd >= 0 && cs_ahead_minder_arm(&l->ahead, launch, gate_fd))
        CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_ARM) == 0);
}

/* Holds launch if it is due later and its directory is made and synced,
 * and says so; else it goes (or, taken back meanwhile, fails -ECANCELED):
 * one failed, or going already (come due, or back from waiting for fds),
 * goes on as it is. The lock is held, so no take-back comes meanwhile. */
static bool held(struct cs_launcher *l, struct cs_launch *launch, int64_t now_ms)
{
    switch (cs_launch_state(launch)) {
    case CS_LAUNCH_REVOKING:
        cs_launch_fail(launch, -ECANCELED, "taken back before its start");
        return false;
    case CS_LAUNCH_SYNCED:
    case CS_LAUNCH_RESOLVED:
        if (launch->due_unix_ms > now_ms) {
            hold(l, launch);
            arm(l, launch);
            return true;
        }
        /* fall through */
    case CS_LAUNCH_MADE:
        CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_GO) == 0);
        return false;
    default:
        return false;
    }
}

/* Holds those of a group's launches that are due later until their due
 * time; the rest move to the front of group. Returns how many those are. */
static size_t hold_later(struct cs_launcher *l, struct cs_launch **group, size_t n)
{
    int64_t now_ms = cs_now_unix_ms();
    size_t kept = 0;
    pthread_mutex_lock(&l->lock);
    const struct cs_qlink *was_first = l->held.head;
    int64_t first_gate_ms = cs_release_gates_first_due(&l->gates);
    for (size_t i = 0; i < n; i++)
        if (!held(l, group[i], now_ms))
            group[kept++] = group[i];
    /* A thread asleep until the old first one would wake too late. */
    if (l->held.head != NULL && l->held.head != was_first && l->n_idle > 0)
        pthread_cond_signal(&l->wake);
    if (cs_release_gates_first_due(&l->gates) != first_gate_ms)
        pthread_cond_signal(&l->release_wake);
    pthread_mutex_unlock(&l->lock);
    return kept;
}

/* --- the start ----------------------------------------------------------- */

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
    cs_launch_fail(launch, err, "out of file descriptors until shutdown (%s)%s", strerror(-err),
                   launch->pid > 0 ? ": its minder was stopped" : "");
    if (launch->pidfd >= 0)
        (void)close(launch->pidfd); /* a pidfd: nothing to lose */
    launch->pidfd = -1;
    if (launch->pid > 0)
        stop_minder(launch);
}

/* Sets launch's secrets into its environment; returns as resolve_user. */
static int set_secrets(struct cs_launch *launch)
{
    char message[sizeof(launch->message)];
    int rc = cs_secrets_resolve(&launch->envp, launch->secrets, launch->n_secrets,
                                launch->server_env, message, sizeof(message));
    if (out_of_fds(rc))
        return rc; /* tried again, as a spawn would be */
    if (rc != 0) {
        cs_launch_fail(launch, rc, "%s", message);
        return 0;
    }
    CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_SECRETS_SET) == 0);
    if (launch->n_secrets > 0)
        cs_log_debug("attempt %s: %zu secret_env variables set", launch->dir, launch->n_secrets);
    return 0;
}

/* Starts launch's minder: tells the one started ahead for it to go, if
 * one waits (or went at its gate), else spawns one. Returns as
 * resolve_user. */
static int start_minder(struct cs_launcher *l, struct cs_fd_reserve *r, struct cs_launch *launch)
{
    /* Read before the minder may go: its command cannot start earlier, so
     * an attempt never ends before it started, however late this thread
     * gets the CPU back after the spawn. */
    int64_t before_go_ms = cs_now_unix_ms();
    if (cs_ahead_minder_go(&l->ahead, launch) == 0) {
        /* One released at its gate went then. */
        launch->started_unix_ms =
            launch->released_unix_ms != 0 ? launch->released_unix_ms : before_go_ms;
    } else {
        reserve_release(r);
        int rc = cs_launch_spawn_minder(l->minder_path, launch, -1);
        if (rc != 0) {
            launch->pid = -1;
            if (out_of_fds(rc))
                return rc; /* nothing ran */
            cs_launch_fail(launch, rc, "starting %s failed: %s", l->minder_path, strerror(-rc));
            return 0;
        }
        launch->started_unix_ms = before_go_ms;
    }
    CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_MINDER_UP) == 0);
    return 0;
}

/* Opens the pidfd of launch's minder, which the loop watches; returns as
 * resolve_user. One that cannot be opened for good has its minder stopped. */
static int watch_minder(struct cs_launch *launch)
{
    /* The minder is our unreaped child, so its pid cannot be reused yet. */
    launch->pidfd = (int)syscall(SYS_pidfd_open, launch->pid, 0);
    if (launch->pidfd >= 0) {
        CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_WATCHED) == 0);
        return 0;
    }
    int rc = -errno;
    if (out_of_fds(rc))
        return rc; /* the minder runs its command meanwhile */
    cs_launch_fail(launch, rc, "pidfd_open(%d) failed: %s: its minder was stopped",
                   (int)launch->pid, strerror(-rc));
    stop_minder(launch);
    return 0;
}

/* Whether launch is still on its way, none of its steps having failed. */
static bool going(const struct cs_launch *launch)
{
    return cs_launch_state(launch) != CS_LAUNCH_FAILED;
}

/* Takes one launch whose directory is made and synced as far as it goes,
 * from the step its state names: who it runs as, its secrets, its minder,
 * the pidfd. Returns 0 when it is done (started or failed: its state says
 * which), or -EMFILE or -ENFILE when it ran out of fds on the way: it is
 * then tried again from the step that ran out. */
static int start_one(struct cs_launcher *l, struct cs_fd_reserve *r, struct cs_launch *launch)
{
    int rc = 0;

    if (cs_launch_state(launch) == CS_LAUNCH_START_USER) {
        reserve_release(r); /* NSS opens files */
        rc = resolve_user(launch);
        if (rc != 0 || !going(launch))
            goto out_take;
    }
    if (cs_launch_state(launch) == CS_LAUNCH_START_SECRETS) {
        reserve_release(r);
        rc = set_secrets(launch);
        reserve_take(r);
        if (rc != 0 || !going(launch))
            return rc;
    }
    if (cs_launch_state(launch) == CS_LAUNCH_START_MINDER) {
        rc = start_minder(l, r, launch);
        if (rc != 0 || !going(launch))
            goto out_take;
    }
    CS_ASSERT(cs_launch_state(launch) == CS_LAUNCH_START_WATCH);
    reserve_release(r);
    rc = watch_minder(launch);
out_take:
    reserve_take(r);
    return rc;
}

/* --- the post ------------------------------------------------------------ */

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

/* Starts up to LAUNCH_POST_MAX launches of a group that go now (sync_rc:
 * how the sync of their directories went) and posts them; those that ran
 * out of fds go to waiting, unless final (shutdown), when they are given
 * up. Returns whether any did. */
static bool start_and_post(struct cs_launcher *l, struct cs_fd_reserve *r, struct cs_launch **group,
                           size_t n, int sync_rc, struct cs_queue *waiting, bool final)
{
    int errs[LAUNCH_POST_MAX];
    bool any_waits = false;

    crash_point("before-spawn");
    for (size_t i = 0; i < n; i++) {
        enum cs_launch_state state = cs_launch_state(group[i]);
        errs[i] = 0;
        if (state == CS_LAUNCH_FAILED)
            continue;
        /* Its sync ran out of fds: nothing ran, and the sync is tried again. */
        errs[i] = state == CS_LAUNCH_START_SYNC ? sync_rc : start_one(l, r, group[i]);
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

bool cs_launch_group(struct cs_launcher *l, struct cs_fd_reserve *r, struct cs_launch **group,
                     size_t n, struct cs_queue *waiting, bool final)
{
    bool any_waits = false;
    int sync_rc = make_dirs(r, group, n);
    resolve_users_ahead(r, group, n);
    n = hold_later(l, group, n);
    for (size_t at = 0; at < n; at += LAUNCH_POST_MAX) {
        size_t part = n - at < LAUNCH_POST_MAX ? n - at : LAUNCH_POST_MAX;
        any_waits |= start_and_post(l, r, group + at, part, sync_rc, waiting, final);
    }
    return any_waits;
}
