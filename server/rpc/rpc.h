/* rpc: the server side of gRPC's C core, run on the loop thread. It keeps
 * request slots open for every registered method, unpacks each request,
 * calls the method's handler on the loop, and sends replies and streams.
 * Three files: rpc.c (the server's life and its request slots), rpc_call.c
 * (one call: its batches, its reply or final status, its end) and
 * rpc_stream.c (the messages a streaming call queues). Every function here
 * is for the loop thread only.
 *
 * A call lives until its reply or final status has gone out and gRPC has
 * reported the call closed; handlers never free calls. A unary handler must
 * end every call with cs_call_reply or cs_call_fail, now or later (e.g. after
 * a commit). A streaming handler pushes messages with cs_call_push (or the
 * items of a batched message with cs_call_push_item) and ends with
 * cs_call_finish or cs_call_fail. A bidirectional stream's handler runs once
 * per request message and pushes its replies; the call ends with OK when the
 * client half-closes, unless the handler ended it before. */
#ifndef CS_RPC_H
#define CS_RPC_H

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "identity.h"
#include "util.h"

struct cs_call;
struct cs_rpc_server;

/* Requests larger than this are refused by gRPC itself (RESOURCE_EXHAUSTED)
 * before they reach the loop: no job needs more (a command line is bounded by
 * the kernel's ARG_MAX of 2 MiB), and unpacking megabytes would stall it. */
#define CS_RPC_MAX_REQUEST_BYTES (1024 * 1024)
/* Streams one connection may have open at once (HTTP/2's
 * SETTINGS_MAX_CONCURRENT_STREAMS, at the 100 RFC 9113 recommends as the
 * least): enough for any client's parallel calls, and a client with more
 * waits for its own to end rather than growing cschedd's memory. */
#define CS_RPC_MAX_STREAMS_PER_CONNECTION 100
/* The largest request (each message of a stream) a method open to every
 * caller takes (health, reflection): a request lives as long as its call,
 * and one of a megabyte held by each of a role-less user's thousands of
 * health Watch or reflection streams would be gigabytes. */
#define CS_RPC_MAX_OPEN_REQUEST_BYTES 4096

/* Runs a method on the loop thread; request is borrowed until the call ends
 * (a bidirectional stream's: until its next message arrives). */
typedef void (*cs_method_handler_cb)(struct cs_call *call, const ProtobufCMessage *request,
                                     void *ctx);

/* What a method streams: bits, so that a table row's false and true read
 * as unary and server streaming. */
enum {
    CS_STREAM_SERVER = 1,
    /* With CS_STREAM_SERVER: a bidirectional stream. Its next request is
     * read only once every reply pushed for the last has been sent, so a
     * client that writes faster than it reads waits in gRPC's flow control,
     * not in cschedd's memory. */
    CS_STREAM_CLIENT = 2,
    CS_STREAM_BIDI = CS_STREAM_SERVER | CS_STREAM_CLIENT,
};

struct cs_method {
    const char *path; /* "/csched.v1.Scheduler/CreateJob" */
    const ProtobufCMessageDescriptor *input;
    unsigned streaming; /* CS_STREAM_* */
    cs_method_handler_cb handler_cb;
};

/* Stream callbacks, both optional: drained_cb runs when every pushed message
 * has been sent; cancel_cb once, when the client goes away or the server
 * shuts down (the handler must then stop pushing and call cs_call_finish). */
struct cs_stream_ops {
    void (*drained_cb)(struct cs_call *call, void *ctx);
    void (*cancel_cb)(struct cs_call *call, void *ctx);
};

/* Who a call comes from. Asked per call, in order, before its request is
 * unpacked: identify_cb fills who for a call from peer (gRPC's peer string,
 * e.g. "fd:7" or "ipv4:127.0.0.1:40000"; metadata: the call's request
 * headers, borrowed) and returns 0; -ENOENT when the caller is not its to
 * know; or -EPERM with err saying why, when the caller offered credentials
 * that do not hold (the call is then UNAUTHENTICATED, unless its method is
 * open to all). Loop thread; must not block. */
struct cs_identity_source {
    int (*identify_cb)(void *ctx, grpc_call *call, const char *peer,
                       const grpc_metadata_array *metadata, struct cs_identity *who,
                       struct cs_err *err);
    void *ctx;
};

/* Where and how the server listens (all borrowed for the server's life). */
struct cs_rpc_listen {
    const char *tcp_addr; /* "host:port" (port 0 picks one); NULL: no TCP port */
    /* TLS, used only while binding (the caller may release it after
     * cs_rpc_server_new); NULL: plaintext, for insecure_tcp. */
    grpc_server_credentials *tcp_creds;
    /* TCP without TLS or authentication: a TCP peer no source knows is
     * admin, named "insecure-tcp:<peer>". */
    bool insecure_tcp;
    const struct cs_identity_source *sources;
    size_t n_sources;
};

/* Creates and starts a server, with a TCP port if listen asks for one (more
 * connections come through cs_rpc_server_add_fd). methods (borrowed for the
 * server's life) and ctx are passed to handlers. If the address cannot be
 * bound, logs it and returns a server whose port is 0, to be shut down. */
struct cs_rpc_server *cs_rpc_server_new(uv_loop_t *loop, const struct cs_rpc_listen *listen,
                                        const struct cs_method *methods, size_t n_methods,
                                        void *ctx);
/* The TCP port bound: > 0; 0 when listen's address could not be bound; -1
 * when listen asked for none. */
int cs_rpc_server_port(const struct cs_rpc_server *server);
/* Any thread, from cs_rpc_server_new until cs_rpc_server_shutdown begins:
 * hands gRPC a connected socket (taken), served as one more connection whose
 * calls show the peer "fd:<fd>". */
void cs_rpc_server_add_fd(struct cs_rpc_server *server, int fd);
/* Starts taking calls (until then they wait). 0 or a negative errno. */
int cs_rpc_server_serve(struct cs_rpc_server *server);
typedef void (*cs_rpc_server_done_cb)(void *arg);
/* Stops accepting calls and cancels the open ones; done_cb runs once no
 * call can arrive. A call whose handler still waits (on a commit) is
 * answered after that, when its handler ends it; once the last has gone,
 * the server's threads stop and it frees itself. */
void cs_rpc_server_shutdown(struct cs_rpc_server *server, cs_rpc_server_done_cb done_cb, void *arg);

/* Who made the call (valid for the call's life). */
const struct cs_identity *cs_call_identity(const struct cs_call *call);
/* The method's path ("/csched.v1.Scheduler/CreateJob"), and the request
 * unpacked (NULL when it did not unpack); both valid for the call's life. */
const char *cs_call_method_path(const struct cs_call *call);
const ProtobufCMessage *cs_call_request(const struct cs_call *call);
/* The request of a call refused before it was unpacked (for its caller's
 * identity or role), unpacked now; as cs_call_request for any other. Only
 * inside the refused hook, which alone may want a refused caller's request:
 * to name its target in the audit row. NULL when it does not unpack. */
const ProtobufCMessage *cs_call_request_late(struct cs_call *call);

/* Told of every call that ends with a status other than OK, just before the
 * status goes out, with the call still readable (its method, request and
 * identity): the audit trail's way to see refusals, wherever they are made. */
typedef void (*cs_rpc_refused_cb)(void *arg, struct cs_call *call, grpc_status_code code,
                                  const char *message);
struct cs_rpc_refused_hook {
    cs_rpc_refused_cb cb;
    void *arg;
};
/* Sets the server's hook (before it serves); calls begun after it see it. */
void cs_rpc_server_on_refused(struct cs_rpc_server *server, cs_rpc_refused_cb cb, void *arg);

/* Asked for each call once its caller may make it, before the handler:
 * 0 lets it through; a negative errno refuses it with why (the status
 * cs_call_fail gives that errno); CS_RPC_GATE_FORWARD relays it to the
 * replica whose address it wrote into why (rpc_forward.h). For calls a
 * server cannot answer in its current phase (a replica standing by, say). */
#define CS_RPC_GATE_FORWARD 1
typedef int (*cs_rpc_gate_cb)(void *arg, const char *path, char *why, size_t cap);
/* Sets the server's gate (before it serves); NULL lets every call through. */
void cs_rpc_server_gate(struct cs_rpc_server *server, cs_rpc_gate_cb gate_cb, void *arg);

/* The sizes of a forward's strings, each with its NUL. */
#define CS_RPC_REPLICA_ID_MAX 64
#define CS_RPC_TARGET_MAX 300

/* The cluster's key, which forwarded calls carry and which a forwarded call
 * must carry to be believed; "" (before the replica joined) believes none.
 * Asked for each forwarded call; loop thread. */
typedef const char *(*cs_rpc_cluster_key_cb)(void *arg);
/* Sets what forwarding needs: this replica's id, the credentials for a TCP
 * target (taken; NULL: plaintext) and where the cluster's key is read.
 * Before the server serves. */
void cs_rpc_server_peers(struct cs_rpc_server *server, const char *replica_id,
                         grpc_channel_credentials *tcp_creds, cs_rpc_cluster_key_cb key_cb,
                         void *key_arg);

/* A unary call to another replica's Worker service (docs/design/0036),
 * made with the cluster's key: done_cb gets, on the loop, the status, its
 * message ("" when OK) and the reply's bytes (NULL and 0 unless OK), which
 * are borrowed for the callback. */
typedef void (*cs_rpc_unary_done_cb)(void *arg, int code, const char *message, const uint8_t *reply,
                                     size_t len);
struct cs_unary;
/* Starts the call to method at target, request packed before it returns;
 * NULL once the server is stopping (done_cb is then never called). */
struct cs_unary *cs_rpc_unary(struct cs_rpc_server *server, const char *target, const char *method,
                              const ProtobufCMessage *request, int64_t timeout_ms,
                              cs_rpc_unary_done_cb done_cb, void *arg);
/* Cancels the call; its done_cb is never called. */
void cs_rpc_unary_abandon(struct cs_unary *u);
/* Hands call (a server stream, its role checked) to method, a static
 * string, of another replica's Worker service at target, with request
 * (borrowed: packed before returning): that replica's replies and status
 * become the call's. */
void cs_rpc_relay(struct cs_rpc_server *server, struct cs_call *call, const char *target,
                  const char *method, const ProtobufCMessage *request);

/* Ends a unary call with response (borrowed: packed before returning). */
void cs_call_reply(struct cs_call *call, const ProtobufCMessage *response);
/* Ends a call with an error: code is a negative errno mapped by status.c. */
void cs_call_fail(struct cs_call *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Ends a call with an error about the request's field (a path such as
 * "to_unix_ms" or "job.env"): the status carries it as a
 * google.rpc.BadRequest, as cs_call_fail_err's. Every INVALID_ARGUMENT of
 * the API about a field goes through this or cs_call_fail_err
 * (tests/check_errors.sh). */
void cs_call_fail_field(struct cs_call *call, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Ends a call with err's code and message; when err names a field of the
 * request (util.h's cs_err_set), the status also carries it as a
 * google.rpc.BadRequest in grpc-status-details-bin (status_details.h). */
void cs_call_fail_err(struct cs_call *call, const struct cs_err *err);
/* Ends a call with an explicit gRPC status (message copied). A stream's
 * status goes out once the messages pushed before it have been sent. */
void cs_call_finish(struct cs_call *call, grpc_status_code code, const char *message);

/* Attaches a stream's callbacks (ops borrowed for the call's life) and
 * their ctx. A cancel that comes first is not reported; pushes after it are
 * dropped and cs_call_finish sends at once. */
void cs_call_set_stream_ops(struct cs_call *call, const struct cs_stream_ops *ops, void *ctx);
/* Queues msg (packed now) to be sent on a streaming call. */
void cs_call_push(struct cs_call *call, const ProtobufCMessage *msg);
/* Queues item (packed now) as one element of field 1 of the stream's
 * message, a repeated message field. While a message is being sent, the
 * items pushed meanwhile join one message (up to 64 KiB), sent when the
 * first completes: a busy stream costs one send per batch of items rather
 * than one per item, and a quiet one adds no delay. */
void cs_call_push_item(struct cs_call *call, const ProtobufCMessage *item);
/* Messages and items pushed but not yet sent. */
size_t cs_call_backlog(const struct cs_call *call);
/* The user data a handler attached with cs_call_set_stream_ops. */
void *cs_call_stream_ctx(const struct cs_call *call);

#endif
