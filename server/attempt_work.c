/* attempt work: the blocking parts of watching a minder, run on libuv's
 * pool: reading the status note, and finding a minder after a restart. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attempt.h"

void cs_attempt_read_note_work(uv_work_t *work)
{
    struct cs_attempt *att = work->data;
    att->note_rc = cs_note_read(att->dir, &att->note);
}

static pid_t read_pid_file(const char *dir)
{
    char path[4096], text[32];
    (void)snprintf(path, sizeof(path), "%s/%s", dir, CS_ATTEMPT_PID_FILE);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    (void)close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    long pid = strtol(text, NULL, 10);
    return pid > 0 ? (pid_t)pid : -1;
}

/* True if pid is a csched-minder working in dir: guards against a recycled
 * pid after the machine or the minder went away. */
static bool is_our_minder(pid_t pid, const char *dir)
{
    char path[64], args[8192];
    (void)snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, args, sizeof(args) - 1);
    (void)close(fd);
    if (n <= 0)
        return false;
    args[n] = '\0';
    if (strstr(args, "csched-minder") == NULL)
        return false;
    /* argv is NUL-separated: look for the -d value among the arguments. */
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(args + i) + 1)
        if (strcmp(args + i, dir) == 0)
            return true;
    return false;
}

void cs_attempt_adopt_work(uv_work_t *work)
{
    struct cs_attempt *att = work->data;
    att->adopt_pidfd = -1;
    att->note_rc = cs_note_read(att->dir, &att->note);
    if (att->note_rc != -ENOENT)
        return;
    /* The pid file is fsynced before the loop hears of the minder; the row
     * may still have the pid when the file does not (a full disk). */
    pid_t pid = read_pid_file(att->dir);
    if (pid <= 0)
        pid = att->stored_pid;
    if (pid <= 0)
        return;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return;
    if (!is_our_minder(pid, att->dir)) {
        (void)close(pidfd);
        return;
    }
    /* It may have finished between the note read and pidfd_open: the pidfd
     * then polls readable at once and the note is read again. */
    att->adopt_pid = pid;
    att->adopt_pidfd = pidfd;
}
