/* rpc_call: one call's record, shared by the files of rpc (see rpc.h) and
 * by no one else. Loop thread only.
 *
 * A call is made when a request slot completes (rpc.c) and freed when its
 * final batch and its close have both completed (two batches for a stream:
 * pending == 0 once finishing); nothing else frees it. A unary call's one
 * last batch takes gRPC's part of the call to the bridge thread, which
 * releases it, and the loop tells itself the batch is done as soon as it is
 * started (cs_grpc_bridge_post). rpc_stream.c queues a streaming call's
 * messages on top of these functions; they never call into it. */
#ifndef CS_RPC_CALL_H
#define CS_RPC_CALL_H

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

#include "grpc_bridge.h"
#include "identity.h"
#include "queue.h"
#include "rpc.h"

struct cs_outgoing; /* a stream message waiting to be sent (rpc_stream.c) */

/* The server's count of the calls made and not yet freed. */
struct cs_call_count {
    size_t n;
    /* Run when a freed call brings n to 0. */
    void (*zero_cb)(struct cs_call_count *count);
    struct cs_grpc_bridge *bridge; /* the server's, which completes its calls' batches */
};

struct cs_call {
    struct cs_call_count *open_calls; /* the server's count, which this call is in */
    grpc_call *call;                  /* NULL once a unary call's last batch has taken it */
    const struct cs_method *method;
    struct cs_identity who;                    /* set before the handler runs */
    gpr_timespec deadline;                     /* the client's */
    int64_t opened_ns;                         /* cs_now_mono_ns() when made, for metrics */
    const struct cs_rpc_refused_hook *refused; /* the server's, or NULL */
    ProtobufCMessage *request;
    /* The request of a call refused before it was unpacked, borrowed while
     * the refusal is told (cs_call_request_late); else NULL. */
    grpc_byte_buffer *unread;
    struct cs_tag close_tag;    /* RECV_CLOSE_ON_SERVER */
    struct cs_tag send_tag;     /* the one SEND_MESSAGE in flight */
    struct cs_tag meta_tag;     /* SEND_INITIAL_METADATA of a stream */
    struct cs_tag final_tag;    /* SEND_STATUS (with the reply, if unary) */
    struct cs_tag recv_tag;     /* the RECV_MESSAGE of a bidirectional stream */
    grpc_byte_buffer *received; /* what recv_tag's batch fills */
    bool reading;               /* recv_tag's batch is in flight */
    void *handler_ctx;          /* the server's, for each request of a stream */
    int cancelled;              /* written by gRPC on close */
    int pending;                /* batches started and not yet completed */
    bool finishing;             /* the final batch has been started */
    bool cancel_seen;
    struct cs_queue out;       /* of struct cs_outgoing, waiting to be sent */
    size_t backlog;            /* items queued, not yet being sent */
    size_t sending_items;      /* items of the message being sent */
    grpc_byte_buffer *sending; /* NULL unless a message is in flight */
    const struct cs_stream_ops *ops;
    void *stream_ctx;
    grpc_status_code final_code; /* for a stream: sent once the backlog drains */
    char *final_message;
    char *bad_field; /* the request field an error is about (status_details.h), or NULL */
    /* Relayed from the active replica (rpc_forward.h): its refusals were
     * told there, and its rich error details go out as they came. */
    bool forwarded;
    grpc_slice kept_details; /* empty unless cs_call_keep_details */
};

/* Makes the record for a call gRPC handed over (call taken), counts it in
 * open_calls until it is freed; a stream starts watching for its close
 * and sends its initial metadata now (a unary call's close comes with its
 * final batch). */
struct cs_call *cs_call_open(struct cs_call_count *open_calls, grpc_call *call,
                             const struct cs_method *method);
/* msg packed into a new byte buffer, the caller's. */
grpc_byte_buffer *cs_call_pack(const ProtobufCMessage *msg);
/* Unpacks payload (borrowed) as the method's request into call->request: 0,
 * or -EINVAL with a message for the client in why. */
int cs_call_unpack(struct cs_call *call, grpc_byte_buffer *payload, char *why, size_t cap);
/* Starts a batch of n ops on call, completed through tag. */
void cs_call_start_batch(struct cs_call *call, const grpc_op *ops, size_t n, struct cs_tag *tag);
/* Starts the final batch: status (and for a unary call its initial metadata,
 * its reply, which is taken, and the receipt of its close). */
void cs_call_send_status(struct cs_call *call, grpc_status_code code, const char *message,
                         grpc_byte_buffer *reply);
/* Reads the next request of a bidirectional stream, unless one is being
 * read, a reply is being sent (the read starts when it has gone) or the
 * call is ending; a stream whose client is gone ends here (rpc_stream.c). */
void cs_call_read(struct cs_call *call);
/* Ends a unary call with code, message and reply (taken; NULL for none),
 * as cs_call_finish does. */
void cs_call_finish_with(struct cs_call *call, grpc_status_code code, const char *message,
                         grpc_byte_buffer *reply);
/* The grpc-status-details-bin a forwarded call's status carries (copied). */
void cs_call_keep_details(struct cs_call *call, grpc_slice details);
/* Queues a message already packed (copied) on a streaming call: false when
 * the call takes no more (its client gone, or it is ending). */
bool cs_call_push_bytes(struct cs_call *call, grpc_byte_buffer *msg);
/* Frees call once it is finishing and no batch is pending. */
void cs_call_maybe_free(struct cs_call *call);

#endif
