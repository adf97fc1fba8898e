/* local_listen: the unix socket's life and the table of its connections'
 * identities. Open runs before the loop; start, stop, close and identify on
 * the loop thread; the table (local_peers.c) is shared with the accept
 * thread. */
#define CS_LOG_COMPONENT "local"
#include "local_listen.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* The socket's directory: made if missing, so that /run/csched works on a
 * machine where systemd has not made it. Only the last level is made. One
 * that exists must be root's or ours, and writable by no one else unless
 * sticky (as /tmp): whoever else may rename in it could put a link where
 * the socket was bound, for the chmod below to open up what it names. */
static int make_parent(const char *path, struct cs_err *err)
{
    char copy[sizeof(((struct sockaddr_un *)0)->sun_path)];
    (void)snprintf(copy, sizeof(copy), "%s", path);
    const char *dir = dirname(copy);
    bool made = mkdir(dir, 0755) == 0;
    if (!made && errno != EEXIST)
        return cs_err_set(err, -errno, "mkdir(%s) failed: %s", dir, strerror(errno));
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int rc =
            cs_err_set(err, -errno, "cannot open the socket's folder %s: %s", dir, strerror(errno));
        if (fd >= 0)
            (void)close(fd);
        return rc;
    }
    int rc = 0;
    if (st.st_uid != 0 && st.st_uid != geteuid())
        rc = cs_err_set(err, -EPERM,
                        "the socket's folder %s belongs to uid %u, not to root or to cschedd: "
                        "choose a folder of cschedd's own for --socket",
                        dir, (unsigned)st.st_uid);
    else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
        rc = cs_err_set(err, -EPERM,
                        "the socket's folder %s may be written by others (mode %o, not sticky): "
                        "run `chmod go-w %s`, or choose a folder of cschedd's own for --socket",
                        dir, (unsigned)(st.st_mode & 07777), dir);
    /* Exactly 0755 whatever the umask (systemd's UMask=0027 would make it
     * 0750 and keep other users from the socket). */
    else if (made && fchmod(fd, 0755) != 0)
        rc = cs_err_set(err, -errno, "chmod(%s) failed: %s", dir, strerror(errno));
    (void)close(fd);
    return rc;
}

/* A socket file at path from an earlier server is removed if no one answers
 * on it; a live one means another server: -EADDRINUSE. */
static int clear_stale(const struct sockaddr_un *addr, struct cs_err *err)
{
    struct stat st;
    if (lstat(addr->sun_path, &st) != 0)
        return 0;
    if (!S_ISSOCK(st.st_mode))
        return cs_err_set(err, -EEXIST, "%s exists and is not a socket", addr->sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cs_err_set(err, -errno, "socket(AF_UNIX) failed: %s", strerror(errno));
    int rc = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
    int saved = errno;
    (void)close(fd);
    if (rc == 0)
        return cs_err_set(err, -EADDRINUSE, "another server is listening on %s", addr->sun_path);
    if (saved != ECONNREFUSED)
        return cs_err_set(err, -saved, "connect(%s) failed: %s", addr->sun_path, strerror(saved));
    if (unlink(addr->sun_path) != 0 && errno != ENOENT)
        return cs_err_set(err, -errno, "unlink(%s) failed: %s", addr->sun_path, strerror(errno));
    return 0;
}

static int bind_and_listen(int fd, const struct sockaddr_un *addr, struct cs_err *err)
{
    if (bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) != 0)
        return cs_err_set(err, -errno, "bind(%s) failed: %s", addr->sun_path, strerror(errno));
    /* Everyone may connect: the role decides what a caller may do, and a
     * caller without one learns why instead of seeing EACCES. By path: the
     * folder is one no one else may rename in (make_parent). */
    if (chmod(addr->sun_path, 0666) != 0)
        return cs_err_set(err, -errno, "chmod(%s) failed: %s", addr->sun_path, strerror(errno));
    if (listen(fd, SOMAXCONN) != 0)
        return cs_err_set(err, -errno, "listen(%s) failed: %s", addr->sun_path, strerror(errno));
    return 0;
}

int cs_local_listen_open(struct cs_local_listen *l, const char *path,
                         const struct cs_local_roles *roles, struct cs_err *err)
{
    CS_ASSERT_LOOP();
    memset(l, 0, sizeof(*l));
    l->fd = -1;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (path[0] != '/' || strlen(path) >= sizeof(addr.sun_path))
        return cs_err_set(err, -EINVAL,
                          "--socket \"%s\" must be an absolute path of under %zu bytes", path,
                          sizeof(addr.sun_path));
    memcpy(addr.sun_path, path, strlen(path) + 1);
    int rc = make_parent(path, err);
    if (rc == 0)
        rc = clear_stale(&addr, err);
    if (rc != 0)
        return rc;
    /* Non-blocking, so that a connection gone between poll and accept makes
     * accept fail with EAGAIN rather than wait for the next one. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return cs_err_set(err, -errno, "socket(AF_UNIX) failed: %s", strerror(errno));
    rc = bind_and_listen(fd, &addr, err);
    if (rc != 0)
        goto err_close;
    cs_local_peers_init(&l->peers);
    l->fd = fd;
    memcpy(l->path, path, strlen(path) + 1);
    l->roles = *roles;
    return 0;

err_close:
    (void)close(fd);
    return rc;
}

int cs_local_listen_start(struct cs_local_listen *l, cs_local_handoff_cb handoff_cb, void *ctx)
{
    CS_ASSERT_LOOP();
    l->handoff_cb = handoff_cb;
    l->handoff_ctx = ctx;
    if (pipe2(l->wake, O_CLOEXEC) != 0)
        return -errno;
    int rc = uv_thread_create(&l->thread, cs_local_listen_thread_main, l);
    if (rc != 0) {
        (void)close(l->wake[0]);
        (void)close(l->wake[1]);
        return rc;
    }
    l->running = true;
    return 0;
}

void cs_local_listen_stop(struct cs_local_listen *l)
{
    CS_ASSERT_LOOP();
    if (l->running) {
        /* A pipe with room for a byte never blocks this write. */
        ssize_t n = write(l->wake[1], "x", 1);
        CS_ASSERT(n == 1);
        CS_ASSERT(uv_thread_join(&l->thread) == 0);
        (void)close(l->wake[0]);
        (void)close(l->wake[1]);
        l->running = false;
    }
    if (l->fd >= 0) {
        (void)close(l->fd);
        l->fd = -1;
        if (unlink(l->path) != 0)
            cs_log_warn("unlink(%s) failed: %s", l->path, strerror(errno));
    }
}

void cs_local_listen_close(struct cs_local_listen *l)
{
    CS_ASSERT_LOOP();
    cs_local_peers_free(&l->peers);
}

int cs_local_listen_identify_cb(void *ctx, grpc_call *call, const char *peer,
                                const grpc_metadata_array *metadata, struct cs_identity *who,
                                struct cs_err *err)
{
    CS_ASSERT_LOOP();
    struct cs_local_listen *l = ctx;
    char *end;
    if (strncmp(peer, "fd:", 3) != 0)
        return -ENOENT;
    long fd = strtol(peer + 3, &end, 10);
    if (*end != '\0' || end == peer + 3 || fd < 0)
        return -ENOENT;
    struct cs_local_peer entry;
    /* The entry must still describe the socket gRPC holds as fd: if it did
     * not (see the invariant in local_listen.h), the call gets no identity
     * rather than another connection's. */
    struct stat st;
    if (fd > INT_MAX || !cs_local_peers_lookup(&l->peers, (int)fd, &entry) ||
        fstat((int)fd, &st) != 0 || st.st_ino != entry.ino)
        return -ENOENT;
    *who = entry.who;
    return 0;
}
