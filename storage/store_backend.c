/* store_backend: see store_backend.h. */
#include "store_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The parent and the session of a process from /proc/PID/stat, read
 * through the process's directory so that it is the same process the
 * autogroup write then reaches. The command name, in parentheses, may hold
 * spaces and parentheses itself: the fields after it start after the last
 * ')'. */
static int read_parent_session(int proc_dir, pid_t *ppid, pid_t *sid)
{
    char buf[512];
    int fd = openat(proc_dir, "stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    int rc = n < 0 ? -errno : 0;
    (void)close(fd);
    if (rc != 0)
        return rc;
    buf[n] = '\0';
    const char *end = strrchr(buf, ')');
    int parent, group, session;
    char state;
    if (end == NULL || sscanf(end + 1, " %c %d %d %d", &state, &parent, &group, &session) != 4)
        return -EINVAL;
    *ppid = (pid_t)parent;
    *sid = (pid_t)session;
    return 0;
}

static int write_nice(int proc_dir, int nice)
{
    char text[16];
    int len = snprintf(text, sizeof(text), "%d", nice);
    int fd = openat(proc_dir, "autogroup", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write(fd, text, (size_t)len) == len ? 0 : -errno;
    (void)close(fd);
    return rc;
}

int cs_store_backend_nice(int fd, pid_t backend, int nice)
{
    struct sockaddr_storage addr;
    socklen_t addr_len = sizeof(addr);
    struct ucred peer;
    socklen_t peer_len = sizeof(peer);
    char path[32];
    pid_t ppid = 0, sid = 0;

    if (getsockname(fd, (struct sockaddr *)&addr, &addr_len) != 0)
        return -errno;
    if (addr.ss_family != AF_UNIX)
        return -EREMOTE;
    /* A listener in another pid namespace shows as pid 0. */
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) != 0)
        return -errno;
    if (peer.pid <= 0 || backend <= 0)
        return -ESRCH;
    (void)snprintf(path, sizeof(path), "/proc/%d", (int)backend);
    int proc_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc_dir < 0)
        return -ESRCH;
    /* A backend that does not lead its session (yet) shares its parent's,
     * which is not ours to change. */
    int rc = read_parent_session(proc_dir, &ppid, &sid) == 0 && ppid == peer.pid && sid == backend
                 ? write_nice(proc_dir, nice)
                 : -ESRCH;
    (void)close(proc_dir);
    return rc;
}
