/* attempt work: the blocking parts of watching a minder, run on libuv's
 * pool: reading the status note, and finding a minder after a restart. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attempt.h"

/* Reads up to cap - 1 bytes of a small file and NUL-terminates them.
 * Returns the length, or -1 if the file cannot be read or is empty. */
static ssize_t read_small_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    (void)close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* Reads a small decimal number from DIR/NAME; -1 if there is none. */
static pid_t read_pid(const char *dir, const char *name)
{
    char path[4096], text[32];
    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (read_small_file(path, text, sizeof(text)) < 0)
        return -1;
    long pid = strtol(text, NULL, 10);
    return pid > 0 ? (pid_t)pid : -1;
}

/* The session of process pid (field 6 of /proc/PID/stat), or -1. */
static pid_t session_of(pid_t pid)
{
    char path[64], text[512];
    (void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (read_small_file(path, text, sizeof(text)) < 0)
        return -1;
    /* The command name may hold spaces: the fields after it follow the last ')'. */
    const char *p = strrchr(text, ')');
    int ppid, pgrp, session;
    char state;
    if (p == NULL || sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) != 4)
        return -1;
    return (pid_t)session;
}

/* A minder that died without a note (killed outright) leaves its command
 * running. Its group is stopped if its leader is still in the minder's
 * session, which a recycled pid would not be. */
static void stop_orphaned_group(const char *dir, pid_t minder_pid)
{
    pid_t pgid = read_pid(dir, CS_ATTEMPT_PGID_FILE);
    if (pgid > 0 && minder_pid > 0 && session_of(pgid) == minder_pid)
        (void)kill(-pgid, SIGKILL);
}

void cs_attempt_read_note_work(uv_work_t *work)
{
    struct cs_attempt *att = CS_CONTAINER_OF(work, struct cs_attempt, work);
    att->note_rc = cs_note_read(att->dir, &att->note);
    if (att->note_rc == -ENOENT)
        stop_orphaned_group(att->dir, att->pid);
}

/* True if pid is a csched-minder working in dir: guards against a recycled
 * pid after the machine or the minder went away. */
static bool is_our_minder(pid_t pid, const char *dir)
{
    char path[64], args[8192];
    (void)snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    ssize_t n = read_small_file(path, args, sizeof(args));
    if (n < 0)
        return false;
    if (strstr(args, CS_MINDER_NAME) == NULL)
        return false;
    /* argv is NUL-separated: look for the -d value among the arguments. */
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(args + i) + 1)
        if (strcmp(args + i, dir) == 0)
            return true;
    return false;
}

void cs_attempt_adopt_work(uv_work_t *work)
{
    struct cs_attempt *att = CS_CONTAINER_OF(work, struct cs_attempt, work);
    att->adopt_pidfd = -1;
    att->note_rc = cs_note_read(att->dir, &att->note);
    if (att->note_rc != -ENOENT)
        return;
    /* The pid file is fsynced before the loop hears of the minder; the row
     * may still have the pid when the file does not (a full disk). */
    pid_t pid = read_pid(att->dir, CS_ATTEMPT_PID_FILE);
    if (pid <= 0)
        pid = att->stored_pid;
    if (pid <= 0)
        return;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        stop_orphaned_group(att->dir, pid);
        return;
    }
    if (!is_our_minder(pid, att->dir)) {
        (void)close(pidfd);
        return;
    }
    /* It may have finished between the note read and pidfd_open: the pidfd
     * then polls readable at once and the note is read again. */
    att->adopt_pid = pid;
    att->adopt_pidfd = pidfd;
}
