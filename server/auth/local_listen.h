/* local_listen: cschedd's unix socket. cschedd accepts each connection
 * itself, on a thread of its own (local_listen_thread.c), reads the peer's
 * credentials from the kernel (SO_PEERCRED, SO_PEERGROUPS), maps them to a
 * role (local_role.h), records the identity under the connection's fd, and
 * only then hands the fd to gRPC, whose calls on it show the peer "fd:N".
 * The identity source (cs_local_listen_identify_cb) runs on the loop thread.
 *
 * Invariant: the entry for fd N is the identity of the connection gRPC
 * holds as N. gRPC closes a connection's fd only when its transport is
 * destroyed, after every call of that connection has been freed; a call
 * being identified is held by cschedd, so N cannot have been closed and
 * accepted again meanwhile (docs/security.md gives the full argument). */
#ifndef CS_LOCAL_LISTEN_H
#define CS_LOCAL_LISTEN_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>
#include <uv.h>

#include "identity.h"
#include "local_peers.h"
#include "local_role.h"
#include "util.h"

/* Connections a uid without role admin may have open at once: more are
 * closed as soon as accepted, so one local user cannot take all of
 * cschedd's fds or grow its memory with connections (each may also hold
 * CS_RPC_MAX_STREAMS_PER_CONNECTION streams). */
#define CS_LOCAL_MAX_CONNECTIONS_PER_UID 64

/* Takes a connected socket (any thread: the accept thread calls it). */
typedef void (*cs_local_handoff_cb)(void *ctx, int fd);

struct cs_local_listen {
    int fd; /* the listening socket; -1 before open and after stop */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct cs_local_roles roles;
    cs_local_handoff_cb handoff_cb;
    void *handoff_ctx;
    struct cs_local_peers peers;
    uv_thread_t thread;
    int wake[2]; /* the thread's stop signal: a byte written to wake[1] */
    bool running;
    uint64_t refused;           /* connections over their uid's limit (accept thread) */
    uint64_t refused_logged_ms; /* when the last was logged; 0: never */
};

/* Before the loop runs: creates path's directory if missing (mode 0755),
 * removes a stale socket left by a server that is gone, binds and listens
 * (socket mode 0666: who may do what is decided per call, by role). 0 or a
 * negative errno with err saying what went wrong; on failure nothing is
 * left open. roles is copied. */
int cs_local_listen_open(struct cs_local_listen *l, const char *path,
                         const struct cs_local_roles *roles, struct cs_err *err);
/* Loop thread: starts accepting; each connection goes to handoff_cb. 0 or a
 * negative errno from libuv. */
int cs_local_listen_start(struct cs_local_listen *l, cs_local_handoff_cb handoff_cb, void *ctx);
/* Loop thread: stops accepting (joins the thread), closes and removes the
 * socket. Calls still identify until cs_local_listen_close. */
void cs_local_listen_stop(struct cs_local_listen *l);
/* Loop thread, once no call can be identified any more: frees the table. */
void cs_local_listen_close(struct cs_local_listen *l);

/* The identity source (struct cs_identity_source) for peers "fd:N": 0 with
 * who filled, or -ENOENT when peer is not a connection of this socket. */
int cs_local_listen_identify_cb(void *ctx, grpc_call *call, const char *peer,
                                const grpc_metadata_array *metadata, struct cs_identity *who,
                                struct cs_err *err);

/* The accept thread's body (arg: the listener). */
void cs_local_listen_thread_main(void *arg);

#endif
