/* local_peers: the identities of the unix socket's connections, indexed by
 * fd. The accept thread records an entry before it hands the fd to gRPC;
 * the loop thread looks entries up per call. A mutex, held only to copy an
 * entry in or out, guards the table. */
#ifndef CS_LOCAL_PEERS_H
#define CS_LOCAL_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

#include "identity.h"

/* What the table holds of a connection. */
struct cs_local_peer {
    ino_t ino; /* of the socket: checked again at each call */
    dev_t dev; /* with ino: whether fd is still this connection */
    uid_t uid;
    struct cs_identity who;
    bool used;
};

struct cs_local_peers {
    uv_mutex_t lock;
    struct cs_local_peer *peers; /* indexed by fd; grows, never shrinks */
    size_t n_peers;
};

void cs_local_peers_init(struct cs_local_peers *t);
/* Frees the table; no thread may use it any more. */
void cs_local_peers_free(struct cs_local_peers *t);
/* Any thread: records peer as the connection fd, replacing what an earlier
 * connection with that fd number left. */
void cs_local_peers_record(struct cs_local_peers *t, int fd, const struct cs_local_peer *peer);
/* Any thread: how many recorded connections of uid are still open, their
 * fd still the socket recorded (one fstat each, under the lock). */
size_t cs_local_peers_count_open(struct cs_local_peers *t, uid_t uid);
/* Any thread: copies the entry of fd into *peer; false when there is none. */
bool cs_local_peers_lookup(struct cs_local_peers *t, int fd, struct cs_local_peer *peer);

#endif
