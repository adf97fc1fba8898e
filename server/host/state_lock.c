/* state_lock: the state dir's lock file (see state_lock.h). flock, not
 * fcntl locks: a flock belongs to the open file description, so it is
 * neither shared with nor dropped by another descriptor of this process, and
 * it ends with the last descriptor, which O_CLOEXEC keeps in cschedd alone.
 * The pid in the file only names the holder; the lock is the flock. */
#define CS_LOG_COMPONENT "cschedd"
#include "state_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "log.h"

/* "pid N" from the holder's file, or "pid unknown" when it holds none yet
 * (the holder writes it just after taking the lock). */
static void describe_holder(int fd, char *buf, size_t cap)
{
    char text[32];
    ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
    char *end;
    long pid;

    text[n > 0 ? n : 0] = '\0';
    errno = 0;
    pid = strtol(text, &end, 10);
    if (errno != 0 || end == text || pid <= 0)
        (void)snprintf(buf, cap, "pid unknown");
    else
        (void)snprintf(buf, cap, "pid %ld", pid);
}

/* Replaces the file's text with this process's pid. A failure (a full disk)
 * only leaves the holder unnamed, so it is logged and start goes on. */
static void write_pid(int fd, const char *path)
{
    char text[32];
    int len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());

    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len)
        cs_log_warn("writing the pid into %s failed: %s", path, strerror(errno));
}

int cs_state_lock_take(struct cs_state_lock *lock, const char *state_dir, struct cs_err *err)
{
    char path[PATH_MAX];
    char holder[32];
    int fd;
    int rc;

    lock->fd = -1;
    if (snprintf(path, sizeof(path), "%s/%s", state_dir, CS_STATE_LOCK_FILE) >= (int)sizeof(path))
        return cs_err_set(err, -ENAMETOOLONG, "state dir %s: path too long", state_dir);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        rc = -errno;
        return cs_err_set(err, rc, "open(%s) failed: %s", path, strerror(-rc));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = -errno;
        if (rc == -EWOULDBLOCK) {
            describe_holder(fd, holder, sizeof(holder));
            rc = cs_err_set(err, -EBUSY,
                            "state dir %s is in use by another cschedd (%s); stop it or use "
                            "another --state-dir",
                            state_dir, holder);
        } else {
            rc = cs_err_set(err, rc, "flock(%s) failed: %s", path, strerror(-rc));
        }
        goto err_close_fd;
    }
    write_pid(fd, path);
    lock->fd = fd;
    return 0;

err_close_fd:
    (void)close(fd);
    return rc;
}

void cs_state_lock_release(struct cs_state_lock *lock)
{
    if (lock->fd < 0)
        return;
    /* The lock ends with the descriptor whatever close says. */
    (void)close(lock->fd);
    lock->fd = -1;
}
