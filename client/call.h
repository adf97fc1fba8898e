/* libcsched's internal core: what the generated per-method functions call.
 *
 * Each call gets its own completion queue, so calls from many threads never
 * share a queue (and never meet gRPC's limit on concurrent plucks). Nothing
 * here is exported from libcsched.so; the names carry the cs__ prefix.
 */
#ifndef CS_CLIENT_CALL_H
#define CS_CLIENT_CALL_H

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>

#include "csched/client.h"

/* The client: one channel, shared by every thread. Owned by the caller of
 * cs_client_new. */
struct cs_client {
    grpc_channel *channel;
};

/* cs__channel_credentials makes the channel's credentials from opts (see
 * struct cs_client_opts; NULL: plaintext) into *out, which the caller
 * releases. Needs gRPC initialised. Returns 0 or an error as
 * cs_client_new_opts. */
int cs__channel_credentials(const struct cs_client_opts *opts, grpc_channel_credentials **out);

/* What every call holds, unary or streaming. Embedded in its owner, set up by
 * cs__call_state_init and released by cs__call_state_close. The RECV_STATUS
 * op writes code, details and error_string. */
struct cs__call_state {
    grpc_completion_queue *cq;
    grpc_call *call;
    grpc_byte_buffer *send_buf;
    grpc_byte_buffer *recv_buf;
    grpc_metadata_array initial_md;
    grpc_metadata_array trailing_md;
    grpc_status_code code;
    grpc_slice details;
    const char *error_string;
};

/* Default deadline of a unary call when opts leaves it at 0. */
#define CS_UNARY_DEFAULT_TIMEOUT_MS 30000

/* cs__call_unary sends request (NULL = the empty message of req_desc) to the
 * method at path ("/pkg.Service/Method") and waits for the reply. On OK it
 * stores a message of resp_desc in *response (the caller frees it).
 * Returns 0, a gRPC status code > 0, -EINVAL or -ENOMEM. */
int cs__call_unary(struct cs_client *client, const char *path,
                   const ProtobufCMessageDescriptor *req_desc, const ProtobufCMessage *request,
                   const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **response,
                   const struct cs_call_opts *opts, struct cs_status *status);

/* cs__stream_open starts a server-streaming call whose messages are of
 * msg_desc. Returns 0 with *out set, or an error as cs__call_unary. */
int cs__stream_open(struct cs_client *client, const char *path,
                    const ProtobufCMessageDescriptor *req_desc, const ProtobufCMessage *request,
                    const ProtobufCMessageDescriptor *msg_desc, struct cs_stream **out,
                    const struct cs_call_opts *opts, struct cs_status *status);

/* cs__stream_next waits for the next message. Returns 1 (message in *msg, the
 * caller frees it), 0 (stream over; status filled), -EINVAL (msg_desc is not
 * the stream's type) or -ENOMEM. */
int cs__stream_next(struct cs_stream *stream, const ProtobufCMessageDescriptor *msg_desc,
                    ProtobufCMessage **msg, struct cs_status *status);

/* Fills status (if not NULL) with code and a message, cut to fit. */
void cs__status_set(struct cs_status *status, int code, const char *message);

/* Fills status from what gRPC reported for a finished call: the details
 * slice, or error_string when the details are empty. */
void cs__status_from_grpc(struct cs_status *status, grpc_status_code code, grpc_slice details,
                          const char *error_string);

/* Reports a local failure (-EINVAL or -ENOMEM) in status and returns rc. */
int cs__status_local(struct cs_status *status, int rc, const char *what);

/* Checks opts and computes the call's deadline; default_ms <= 0 means none.
 * Returns 0 or -EINVAL (negative timeout). */
int cs__call_deadline(const struct cs_call_opts *opts, int64_t default_ms, gpr_timespec *out);

/* Readies st for a call that has not started yet: no queue, no call, code
 * UNKNOWN, empty details and metadata. Cannot fail. */
void cs__call_state_init(struct cs__call_state *st);

/* Creates st's own completion queue and the call to path on client's channel,
 * bounded by deadline. */
void cs__call_state_start(struct cs__call_state *st, struct cs_client *client, const char *path,
                          gpr_timespec deadline);

/* Releases everything st holds: unrefs the call, shuts down and drains the
 * queue, destroys buffers, metadata, details and error string. The caller
 * makes sure no batch is still pending. */
void cs__call_state_close(struct cs__call_state *st);

/* Flags for the SEND_INITIAL_METADATA op that opts asks for. */
uint32_t cs__call_md_flags(const struct cs_call_opts *opts);

/* Serialises request (NULL = empty message) into a new byte buffer.
 * Returns 0, -EINVAL (wrong message type) or -ENOMEM. */
int cs__message_pack(const ProtobufCMessageDescriptor *desc, const ProtobufCMessage *request,
                     grpc_byte_buffer **out);

/* Parses a received byte buffer as desc. Returns 0 or -EPROTO (not a valid
 * message, or no memory to hold it). */
int cs__message_unpack(const ProtobufCMessageDescriptor *desc, grpc_byte_buffer *buffer,
                       ProtobufCMessage **out);

#endif
