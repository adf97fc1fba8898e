/* rpc_unary: unary calls this replica makes to another one's Worker
 * service (docs/design/0036), on the bridge's completion queue, so that
 * their answers come back on the loop like any call's. Each carries the
 * cluster's key and this replica's id (rpc_forward.h's headers, with the
 * role "replica"), which the other replica requires of every Worker call.
 * One connection per target, made at its first call and kept. Shared by
 * the files of rpc; loop thread only. */
#ifndef CS_RPC_UNARY_H
#define CS_RPC_UNARY_H

#include <grpc/grpc.h>

#include "queue.h"
#include "rpc.h"
#include "rpc_forward.h"

struct cs_unary_channel;

struct cs_unary_peers {
    struct cs_forward_peers *forward; /* the queue, the key, the credentials */
    struct cs_unary_channel *channels;
    struct cs_queue calls; /* in flight */
    bool stopped;
};

void cs_unary_peers_init(struct cs_unary_peers *peers, struct cs_forward_peers *forward);
/* Cancels every call in flight (their callbacks say CANCELLED) and closes
 * the connections; no call may start after. */
void cs_unary_peers_stop(struct cs_unary_peers *peers);

struct cs_unary *cs_unary_call(struct cs_unary_peers *peers, const char *target, const char *method,
                               const ProtobufCMessage *request, int64_t timeout_ms,
                               cs_rpc_unary_done_cb done_cb, void *arg);
void cs_unary_abandon(struct cs_unary *u);
/* The connection to target, made at its first use and kept. */
grpc_channel *cs_unary_channel(struct cs_unary_peers *peers, const char *target);

#endif
