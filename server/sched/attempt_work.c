/* attempt work: the blocking parts of watching a minder, run on libuv's
 * pool: reading the status note, and after a restart walking a run's
 * attempt directories and telling its last attempt apart (never started,
 * running, ended, gone, or made before the machine last booted). Each call
 * works on its own attempt, which the loop leaves alone until the work's
 * done callback. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attempt.h"
#include "minder_contract.h"
#include "util.h"

/* Reads up to cap - 1 bytes of a small file and NUL-terminates them.
 * Returns the length, or a negative errno (-ENODATA for an empty file). */
static ssize_t read_small_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, cap - 1);
    int rc = n < 0 ? -errno : -ENODATA;
    (void)close(fd); /* read-only: nothing to lose */
    if (n <= 0)
        return rc;
    buf[n] = '\0';
    return n;
}

/* Reads a small decimal number from DIR/NAME: the number, 0 for an empty
 * file or one without a positive number, or a negative errno. */
static pid_t read_number(const char *dir, const char *name)
{
    char path[4096], text[32];
    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    ssize_t n = read_small_file(path, text, sizeof(text));
    if (n == -ENODATA)
        return 0;
    if (n < 0)
        return (pid_t)n;
    long pid = strtol(text, NULL, 10);
    return pid > 0 ? (pid_t)pid : 0;
}

/* Whether a call failed for want of a free fd, the one failure that passes:
 * what depends on it is tried again, never taken for an answer. */
static bool fds_short(long rc)
{
    return rc == -EMFILE || rc == -ENFILE;
}

/* The session of process pid (field 6 of /proc/PID/stat), or a negative
 * errno (-EINVAL if the file does not read as one). */
static pid_t session_of(pid_t pid)
{
    char path[64], text[512];
    (void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    ssize_t n = read_small_file(path, text, sizeof(text));
    if (n < 0)
        return (pid_t)n;
    /* The command name may hold spaces: the fields after it follow the last ')'. */
    const char *p = strrchr(text, ')');
    int ppid, pgrp, session;
    char state;
    if (p == NULL || sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) != 4)
        return -EINVAL;
    return (pid_t)session;
}

/* A minder that died without a note (killed outright) leaves its command
 * running. Its group is stopped if its leader is still in the minder's
 * session, which a recycled pid would not be. 0, or -EMFILE/-ENFILE if
 * that could not be told for want of an fd. */
static int stop_orphaned_group(const char *dir, pid_t minder_pid)
{
    pid_t pgid = read_number(dir, CS_ATTEMPT_PGID_FILE);
    if (fds_short(pgid))
        return pgid;
    if (pgid <= 0 || minder_pid <= 0)
        return 0;
    pid_t session = session_of(pgid);
    if (fds_short(session))
        return session;
    if (session == minder_pid)
        (void)kill(-pgid, SIGKILL);
    return 0;
}

void cs_attempt_read_note_work(uv_work_t *work)
{
    struct cs_attempt *att = CS_CONTAINER_OF(work, struct cs_attempt, work);
    att->note_rc = cs_note_read(att->dir, &att->note);
    /* The loop tries again a little later. */
    att->fd_short = fds_short(att->note_rc) ||
                    (att->note_rc == -ENOENT && fds_short(stop_orphaned_group(att->dir, att->pid)));
}

/* 1 if pid is a csched-minder working in dir, else 0: guards against a
 * recycled pid after the machine or the minder went away. -EMFILE or
 * -ENFILE when that cannot be told for want of an fd. */
static int is_our_minder(pid_t pid, const char *dir)
{
    char path[64], args[8192];
    (void)snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    ssize_t n = read_small_file(path, args, sizeof(args));
    if (n < 0)
        return fds_short(n) ? (int)n : 0;
    if (strstr(args, CS_MINDER_NAME) == NULL)
        return 0;
    /* argv is NUL-separated: look for the -d value among the arguments. */
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(args + i) + 1)
        if (strcmp(args + i, dir) == 0)
            return 1;
    return 0;
}

/* The message of a minder gone without a note, saying how far it got. */
static void set_gone_message(struct cs_attempt *att, pid_t pid)
{
    bool started = read_number(att->dir, CS_ATTEMPT_PGID_FILE) > 0;
    (void)snprintf(att->note.message, sizeof(att->note.message),
                   "the minder (pid %d) ended without writing a status note while cschedd was "
                   "away; %s",
                   (int)pid,
                   started ? "its command had started" : "its command may not have started");
}

enum cs_attempt_left cs_attempt_left_classify(bool has_note, bool has_pid, int64_t dir_mtime_s,
                                              int64_t boot_time_s)
{
    if (has_note)
        return CS_ATTEMPT_LEFT_NOTE;
    if (has_pid)
        return CS_ATTEMPT_LEFT_PID;
    return dir_mtime_s < boot_time_s ? CS_ATTEMPT_LEFT_PRE_BOOT : CS_ATTEMPT_LEFT_NOTHING;
}

static int64_t boot_time_s;
static pthread_once_t boot_time_once = PTHREAD_ONCE_INIT;

/* The machine's boot time (btime in /proc/stat) into boot_time_s; left 0
 * when unknown, which takes every directory for this boot's. */
static void read_boot_time(void)
{
    FILE *f = fopen("/proc/stat", "re");
    char line[256];
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "btime %" SCNd64, &boot_time_s) == 1)
            break;
    if (f != NULL)
        (void)fclose(f); /* read-only: nothing to lose */
}

/* The last modification of dir in seconds since the epoch, or INT64_MAX
 * (this boot's) when it cannot be read. */
static int64_t dir_mtime_s(const char *dir)
{
    struct stat st;
    return stat(dir, &st) == 0 ? (int64_t)st.st_mtim.tv_sec : INT64_MAX;
}

/* Claims the pid file of an attempt no minder has published, so that none
 * will start its command. False, with the message set, if the claim failed;
 * else *pid is 0 (claimed) or the pid a minder published just now (or
 * -EMFILE/-ENFILE: it could not be read). Sets fd_short, returning true,
 * if it could not be made for want of an fd. */
static bool claim(struct cs_attempt *att, pid_t *pid)
{
    int rc = cs_attempt_pid_claim(att->dir);
    *pid = rc == -EEXIST ? read_number(att->dir, CS_ATTEMPT_PID_FILE) : 0;
    att->fd_short = fds_short(rc);
    if (rc == 0 || rc == -EEXIST || att->fd_short)
        return true;
    (void)snprintf(att->note.message, sizeof(att->note.message),
                   "neither a note nor a pid file, and claiming the pid file failed: "
                   "%s; whether its command started is unknown",
                   strerror(-rc));
    return false;
}

/* The last attempt, its directory there: ended (a note, a minder gone
 * without one, or a directory from before the last boot with no pid file),
 * running (adopt_pidfd), or never to start (claimed); or, with fd_short
 * set, not told yet for want of an fd. The directory's time is read before
 * the claim, which changes it. */
static void classify_last(struct cs_attempt *att)
{
    att->note_rc = cs_note_read(att->dir, &att->note);
    pid_t pid = att->note_rc == -ENOENT ? read_number(att->dir, CS_ATTEMPT_PID_FILE) : 0;
    att->fd_short = fds_short(att->note_rc) || fds_short(pid);
    if (att->fd_short)
        return;
    (void)pthread_once(&boot_time_once, read_boot_time);
    switch (cs_attempt_left_classify(att->note_rc != -ENOENT, pid != -ENOENT, dir_mtime_s(att->dir),
                                     boot_time_s)) {
    case CS_ATTEMPT_LEFT_NOTE:
        return;
    case CS_ATTEMPT_LEFT_PRE_BOOT:
        (void)snprintf(att->note.message, sizeof(att->note.message), "%s",
                       CS_ATTEMPT_PRE_BOOT_MESSAGE);
        return;
    case CS_ATTEMPT_LEFT_NOTHING:
        if (!claim(att, &pid) || att->fd_short)
            return;
        if (fds_short(pid)) {
            att->fd_short = true; /* claimed by a minder: read its pid again */
            return;
        }
        break;
    case CS_ATTEMPT_LEFT_PID:
        break;
    }
    if (pid <= 0) {
        /* Claimed, now or by an earlier restart: no minder starts it. */
        (void)snprintf(att->note.message, sizeof(att->note.message), "%s",
                       CS_ATTEMPT_NEVER_STARTED_MESSAGE);
        return;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int ours = pidfd >= 0 ? is_our_minder(pid, att->dir) : -errno;
    if (ours == 1) {
        /* It may have finished between the note read and pidfd_open: the
         * pidfd then polls readable at once and the note is read again. */
        att->adopt_pid = pid;
        att->adopt_pidfd = pidfd;
        return;
    }
    if (pidfd >= 0)
        (void)close(pidfd);
    /* A minder not told apart for want of an fd is never taken for gone:
     * that would stop the group of a live command. */
    att->fd_short = fds_short(ours);
    if (att->fd_short)
        return;
    /* A minder writes its note before it exits: one that ended since the
     * first read left its note now. */
    att->note_rc = cs_note_read(att->dir, &att->note);
    att->fd_short = fds_short(att->note_rc);
    if (att->note_rc != -ENOENT)
        return;
    att->fd_short = fds_short(stop_orphaned_group(att->dir, pid));
    if (!att->fd_short)
        set_gone_message(att, pid);
}

static bool dir_exists(const char *dir)
{
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* An attempt with no directory never started here. Its directory is made
 * now with its pid file claimed, so that a launch of it that comes later
 * (sent by an active replica whose lease has since been taken over, and
 * held in transit until it woke) finds the directory used and starts
 * nothing: what was told "never started" stays so. True when the tombstone
 * stands (or could not be made for another reason than a launch making the
 * directory first, which the classification then sees); sets fd_short for
 * want of an fd. */
static bool leave_tombstone(struct cs_attempt *att)
{
    if (mkdir(att->dir, 0700) != 0) {
        int err = errno;
        att->fd_short = fds_short(-err);
        return err != EEXIST;
    }
    /* A launch's mkdir fails now; the claim says why to a later adoption,
     * which an empty directory would say too. */
    att->fd_short = fds_short(cs_attempt_pid_claim(att->dir));
    return true;
}

void cs_attempt_adopt_work(uv_work_t *work)
{
    struct cs_attempt *att = CS_CONTAINER_OF(work, struct cs_attempt, work);
    const char *state_dir = att->sched->state_dir;
    int64_t run_id = att->run_id;
    char next[4096];
    att->adopt_pidfd = -1;
    att->fd_short = false;
    att->no_dir = !dir_exists(att->dir) && (!att->recorded || leave_tombstone(att));
    if (att->no_dir || att->fd_short)
        return;
    /* Attempts start one after the other: every directory but the last one
     * belongs to an attempt that has ended. */
    while (cs_minder_dir_format(next, sizeof(next), state_dir, run_id, att->number + 1) == 0 &&
           dir_exists(next)) {
        struct cs_attempt_end end = {0};
        end.note_rc = cs_note_read(att->dir, &end.note);
        /* Tried again from this attempt: the ones before it are kept. */
        att->fd_short = fds_short(end.note_rc);
        if (att->fd_short)
            return;
        att->earlier = cs_xrealloc(att->earlier, (att->n_earlier + 1) * sizeof(*att->earlier));
        att->earlier[att->n_earlier++] = end;
        free(att->dir);
        att->dir = cs_xstrdup(next);
        att->number++;
    }
    classify_last(att);
}
