/* rpc_forward: a call a standby cannot answer, forwarded to the active
 * replica (docs/architecture.md, "Replicas"). Shared by the files of rpc and
 * by no one else; loop thread only.
 *
 * The standby has identified the caller and checked its role as for any
 * call; it then opens the same method on the active replica, with the
 * caller's role and name and the cluster's key in the metadata, relays the
 * request, and relays the replies and the final status back (a stream
 * message by message, each read from the active replica once the last has
 * gone out to the client, so a slow client slows the relay, not the
 * standby's memory). The active replica believes the forwarded caller only
 * when the key is its own (cs_forward_identify). A forwarded call is never
 * forwarded again. */
#ifndef CS_RPC_FORWARD_H
#define CS_RPC_FORWARD_H

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>

#include "identity.h"
#include "queue.h"
#include "rpc.h"
#include "util.h"

/* Metadata of a forwarded call. */
#define CS_FORWARD_KEY_HEADER "csched-cluster-key"
#define CS_FORWARD_BY_HEADER "csched-forwarded-by"
#define CS_FORWARD_ROLE_HEADER "csched-forwarded-role"
#define CS_FORWARD_NAME_HEADER "csched-forwarded-name-bin"

/* A connection to the active replica carries at most this many forwarded
 * calls: its server takes CS_RPC_MAX_STREAMS_PER_CONNECTION at once, and
 * Watch streams hold theirs for long; more calls open more connections, up
 * to CS_FORWARD_CONNECTIONS_MAX (then the least busy one queues them). */
#define CS_FORWARD_CALLS_PER_CONNECTION 64
#define CS_FORWARD_CONNECTIONS_MAX 32

struct cs_forward_channel {
    grpc_channel *channel; /* NULL until needed */
    unsigned calls;        /* forwards in flight on it */
};

/* What a server needs to forward calls and to take forwarded ones. */
struct cs_forward_peers {
    grpc_completion_queue *cq;    /* the bridge's */
    cs_rpc_cluster_key_cb key_cb; /* NULL: no key, nothing forwarded believed */
    void *key_arg;
    char replica_id[CS_RPC_REPLICA_ID_MAX]; /* this replica's */
    grpc_channel_credentials *tcp_creds;    /* for a TCP target; NULL: plaintext */
    char target[CS_RPC_TARGET_MAX];         /* the channels' */
    unsigned generation;                    /* bumped when the target changes */
    struct cs_forward_channel channels[CS_FORWARD_CONNECTIONS_MAX];
    struct cs_queue calls; /* the forwards in flight */
};

/* The identity of a call forwarded by another replica: 0 with who filled
 * (who->via names that replica); -ENOENT when the call was not forwarded;
 * -EPERM with err saying why when its key is not this replica's. */
int cs_forward_identify(const struct cs_forward_peers *peers, const grpc_metadata_array *metadata,
                        struct cs_identity *who, struct cs_err *err);
/* A new channel to target: plaintext to a unix socket (this machine's),
 * else with the peers' TCP credentials. */
grpc_channel *cs_forward_channel_new(const struct cs_forward_peers *peers, const char *target,
                                     const grpc_channel_args *args);
/* The four headers a call to another replica carries: the cluster's key,
 * this replica's id, and the caller's role and name (copied). */
void cs_forward_md_fill(const struct cs_forward_peers *peers, grpc_metadata md[4], const char *role,
                        const char *name);
/* Forwards call (identified, its role checked) to target, with its request
 * (payload, taken) and its deadline; the call ends when the target's does. */
void cs_forward_call(struct cs_forward_peers *peers, struct cs_call *call, const char *target,
                     grpc_byte_buffer *payload, gpr_timespec deadline);
/* Relays call (identified, its role checked) to another replica's Worker
 * method on channel, as that replica's peer (the role "replica", the
 * caller's name), with its request (payload, taken); the call ends when
 * the other's does. */
void cs_forward_relay(struct cs_forward_peers *peers, struct cs_call *call, grpc_channel *channel,
                      const char *target, const char *method, grpc_byte_buffer *payload,
                      gpr_timespec deadline);
/* Cancels every forward in flight (each still ends its call) and drops the
 * channels: the server is shutting down. */
void cs_forward_peers_stop(struct cs_forward_peers *peers);
/* Releases the credentials, once no forward is left. */
void cs_forward_peers_free(struct cs_forward_peers *peers);

#endif
