/* local_listen_thread: the unix socket's accept thread. For each connection
 * it reads the peer's credentials (SO_PEERCRED: uid, gid; SO_PEERGROUPS:
 * the supplementary groups, so no group lookup is needed), maps them to a
 * role, looks the uid's name up (NSS, which may block: it is why this runs
 * on a thread and not on the loop), records the identity and only then
 * hands the fd to gRPC. Stops when a byte arrives on the wake pipe. */
#define CS_LOG_COMPONENT "local"
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local_listen.h"
#include "log.h"

/* The supplementary groups Linux may report (NGROUPS_MAX is 65536). */
#define MAX_GROUPS 65536

/* "unix:uid=1000(alice)", or "unix:uid=1000" for a uid with no name. */
static void name_peer(uid_t uid, char *name, size_t cap)
{
    char buf[16384];
    struct passwd pw, *found = NULL;
    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found != NULL)
        (void)snprintf(name, cap, "unix:uid=%u(%s)", (unsigned)uid, found->pw_name);
    else
        (void)snprintf(name, cap, "unix:uid=%u", (unsigned)uid);
}

/* The role of the peer on fd: 0, or a negative errno when the kernel would
 * not say who it is. */
static int peer_role(const struct cs_local_listen *l, int fd, struct ucred *cred,
                     enum cs_role *role)
{
    socklen_t len = sizeof(*cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) != 0)
        return -errno;
    gid_t small[64];
    gid_t *groups = small;
    len = sizeof(small);
    int rc = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0 ? -errno : 0;
    if (rc == -ERANGE && len <= MAX_GROUPS * sizeof(gid_t)) {
        groups = cs_xmalloc(len);
        rc = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0 ? -errno : 0;
    }
    /* Before Linux 4.13 there is no SO_PEERGROUPS: the primary gid still
     * counts, supplementary groups do not. */
    if (rc == -ENOPROTOOPT) {
        len = 0;
        rc = 0;
    }
    if (rc == 0)
        *role = cs_local_role(&l->roles, cred->uid, cred->gid, groups, len / sizeof(gid_t));
    if (groups != small)
        free(groups);
    return rc;
}

/* Closes a connection of a uid that has as many open as it may have: the
 * client sees the connection reset. Logged once a minute at most, as a
 * flood would otherwise flood the log too. */
static void refuse(struct cs_local_listen *l, int fd, uid_t uid)
{
    (void)close(fd);
    l->refused++;
    uint64_t now_ms = uv_hrtime() / 1000000;
    if (l->refused_logged_ms != 0 && now_ms - l->refused_logged_ms < 60 * 1000)
        return;
    cs_log_warn("refused a connection on %s: uid %u already has %d open, the most a user "
                "without role admin may have; refused=%" PRIu64,
                l->path, (unsigned)uid, CS_LOCAL_MAX_CONNECTIONS_PER_UID, l->refused);
    l->refused_logged_ms = now_ms;
}

/* Identifies the connection fd (non-blocking, as gRPC needs it), records it
 * and hands it over; a connection whose peer cannot be read is closed. */
static void take(struct cs_local_listen *l, int fd)
{
    struct ucred cred;
    struct cs_local_peer peer = {0};
    struct stat st;
    int rc = peer_role(l, fd, &cred, &peer.who.role);
    if (rc == 0 && fstat(fd, &st) != 0)
        rc = -errno;
    if (rc != 0) {
        cs_log_warn("reading the credentials of a peer on %s failed: %s", l->path, strerror(-rc));
        (void)close(fd);
        return;
    }
    if (peer.who.role != CS_ROLE_ADMIN &&
        cs_local_peers_count_open(&l->peers, cred.uid) >= CS_LOCAL_MAX_CONNECTIONS_PER_UID) {
        refuse(l, fd, cred.uid);
        return;
    }
    name_peer(cred.uid, peer.who.name, sizeof(peer.who.name));
    peer.ino = st.st_ino;
    peer.dev = st.st_dev;
    peer.uid = cred.uid;
    cs_local_peers_record(&l->peers, fd, &peer);
    l->handoff_cb(l->handoff_ctx, fd);
}

void cs_local_listen_thread_main(void *arg)
{
    struct cs_local_listen *l = arg;
    struct pollfd fds[2] = {{.fd = l->fd, .events = POLLIN}, {.fd = l->wake[0], .events = POLLIN}};
    bool starved = false; /* out of fds: said once until an accept works again */
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            CS_ASSERT(errno == EINTR);
            continue;
        }
        if (fds[1].revents != 0)
            return;
        int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
            starved = false;
            take(l, fd);
        } else if (errno == EMFILE || errno == ENFILE) {
            /* Out of fds: the connection waits in the backlog meanwhile, and
             * is taken once an fd is free again. */
            if (!starved)
                cs_log_warn("accept(%s) failed: %s; retrying every 100 ms", l->path,
                            strerror(errno));
            starved = true;
            (void)usleep(100 * 1000);
        } else if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN) {
            cs_log_error("accept(%s) failed: %s", l->path, strerror(errno));
            return;
        }
    }
}
