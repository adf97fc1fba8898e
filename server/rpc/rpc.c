/* rpc: the server's life and its request slots. Runs on the loop thread;
 * completions arrive through the bridge thread's mailbox.
 *
 * Each registered method keeps SLOTS_* requests open with gRPC; a slot that
 * completes becomes a call (rpc_call.c) and a fresh slot takes its place.
 * Unknown methods are answered UNIMPLEMENTED from their own slots, so they
 * never wait for a deadline. Before a request is unpacked, the identity
 * sources name its caller and access.c decides whether that caller may call
 * the method. The server is freed once gRPC has shut down, every call has
 * ended and the bridge has drained. */
#define CS_LOG_COMPONENT "rpc"
#include "rpc.h"

#include <errno.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "grpc_bridge.h"
#include "log.h"
#include "net_addr.h"
#include "queue.h"
#include "rpc_call.h"
#include "rpc_forward.h"
#include "rpc_unary.h"
#include "util.h"

#define SLOTS_UNARY 32
#define SLOTS_STREAMING 4
#define SLOTS_UNKNOWN 2

struct registered {
    const struct cs_method *method;
    void *handle; /* from grpc_server_register_method */
};

/* An open request: a call gRPC may hand us. */
struct slot {
    struct cs_tag tag;
    struct cs_rpc_server *server;
    struct registered *reg; /* NULL: the catch-all for unknown methods */
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array metadata;
    grpc_call_details details;
    grpc_byte_buffer *payload;
};

struct cs_rpc_server {
    uv_loop_t *loop;
    grpc_server *server;
    struct cs_grpc_bridge bridge;
    struct registered *regs;
    size_t n_regs;
    struct cs_rpc_listen listen;
    void *ctx;
    int port;
    bool shutting_down;
    bool bridge_stopping;
    struct cs_tag shutdown_tag;
    cs_rpc_server_done_cb done_cb;
    void *done_arg;
    struct cs_call_count open_calls;
    struct cs_rpc_refused_hook refused;
    cs_rpc_gate_cb gate_cb;
    void *gate_arg;
    size_t open_slots;
    struct cs_forward_peers peers;
    struct cs_unary_peers unary;
};

static void arm_slot(struct cs_rpc_server *server, struct registered *reg);
static void calls_ended_cb(struct cs_call_count *count);

/* --- slots ----------------------------------------------------------------- */

/* Fills call->who from the first identity source that knows the call's
 * peer: 0 if one did, -ENOENT if none did (who then names the peer by its
 * address, without the port, with no role), or a source's refusal (-EPERM,
 * err saying why). Only a TCP peer can be trusted by --insecure-tcp: a
 * unix-socket connection the sources do not know stays unidentified. A
 * call another replica forwarded is its caller's, when its key holds. */
static int identify(const struct cs_rpc_server *server, struct cs_call *call,
                    const grpc_metadata_array *metadata, struct cs_err *err)
{
    char *peer = grpc_call_get_peer(call->call);
    int rc = cs_forward_identify(&server->peers, metadata, &call->who, err);
    for (size_t i = 0; i < server->listen.n_sources && rc == -ENOENT; i++) {
        const struct cs_identity_source *src = &server->listen.sources[i];
        rc = src->identify_cb(src->ctx, call->call, peer, metadata, &call->who, err);
    }
    if (rc == -ENOENT && server->listen.insecure_tcp && cs_peer_is_tcp(peer)) {
        call->who.role = CS_ROLE_ADMIN;
        (void)snprintf(call->who.name, sizeof(call->who.name), "insecure-tcp:%s", peer);
        rc = 0;
    }
    if (rc != 0) {
        call->who.role = CS_ROLE_NONE;
        if (cs_net_addr_of_peer(peer, call->who.name, sizeof(call->who.name)) != 0)
            (void)snprintf(call->who.name, sizeof(call->who.name), "%s", peer);
    }
    call->who.known = rc == 0;
    gpr_free(peer);
    return rc;
}

/* Refuses a call before its request is unpacked. The request stays at hand
 * while the refusal is told, for the audit row to name its target. */
static void refuse(struct slot *slot, struct cs_call *call, int rc, const char *why)
{
    call->unread = slot->payload;
    cs_call_fail(call, rc, "%s", why);
    call->unread = NULL;
}

static void begin_call(struct slot *slot)
{
    struct cs_call *call = cs_call_open(&slot->server->open_calls, slot->call, slot->reg->method);
    call->refused = &slot->server->refused; /* a refusal below is audited */
    call->deadline = slot->deadline;
    char why[CS_IDENTITY_NAME_MAX + 100];
    struct cs_err err = {0};
    int rc = identify(slot->server, call, &slot->metadata, &err);
    if (rc == -EPERM && cs_access_needed(call->method->path) != CS_ROLE_NONE) {
        refuse(slot, call, rc, err.msg);
        return;
    }
    rc = cs_access_check(call->method->path, &call->who, rc == 0, why, sizeof(why));
    if (rc == 0 && slot->server->gate_cb != NULL)
        rc = slot->server->gate_cb(slot->server->gate_arg, call->method->path, why, sizeof(why));
    if (rc == CS_RPC_GATE_FORWARD && call->who.via[0] != '\0') {
        /* Forwarded once already: the replicas disagree about which one is
         * active, for a heartbeat; the client tries again. */
        (void)snprintf(why, sizeof(why),
                       "this replica is not the active one, and the call came forwarded from "
                       "%s: try again",
                       call->who.via);
        rc = -ENOTCONN;
    } else if (rc == CS_RPC_GATE_FORWARD) {
        /* Only a request read whole is relayed: no gate forwards a client
         * stream. */
        CS_ASSERT((call->method->streaming & CS_STREAM_CLIENT) == 0);
        if (slot->payload == NULL) {
            cs_call_fail(call, -EINVAL, "the request carried no message");
            return;
        }
        cs_forward_call(&slot->server->peers, call, why, slot->payload, slot->deadline);
        slot->payload = NULL;
        return;
    }
    if (rc != 0) {
        refuse(slot, call, rc, why);
        return;
    }
    if (call->method->streaming & CS_STREAM_CLIENT) {
        call->handler_ctx = slot->server->ctx;
        cs_call_read(call);
        return;
    }
    if (slot->payload == NULL) {
        cs_call_fail(call, -EINVAL, "the request carried no message");
        return;
    }
    if (cs_call_unpack(call, slot->payload, why, sizeof(why)) != 0) {
        cs_call_fail(call, -EINVAL, "%s", why);
        return;
    }
    call->method->handler_cb(call, call->request, slot->server->ctx);
}

static void answer_unknown(struct slot *slot)
{
    /* A method record for the call, so the batch machinery serves it too. */
    static const struct cs_method unknown = {.path = "", .streaming = 0};
    struct cs_call *call = cs_call_open(&slot->server->open_calls, slot->call, &unknown);
    char *method = grpc_slice_to_c_string(slot->details.method);
    char message[300];
    (void)snprintf(message, sizeof(message), "method %.200s is not served by cschedd", method);
    gpr_free(method);
    cs_call_send_status(call, GRPC_STATUS_UNIMPLEMENTED, message, NULL);
}

static void free_slot(struct slot *slot)
{
    grpc_metadata_array_destroy(&slot->metadata);
    if (slot->reg == NULL)
        grpc_call_details_destroy(&slot->details);
    if (slot->payload != NULL)
        grpc_byte_buffer_destroy(slot->payload);
    slot->server->open_slots--;
    free(slot);
}

static void slot_done_cb(struct cs_tag *tag, bool ok)
{
    struct slot *slot = CS_CONTAINER_OF(tag, struct slot, tag);
    struct cs_rpc_server *server = slot->server;
    if (!ok || server->shutting_down) {
        if (ok && slot->call != NULL)
            grpc_call_unref(slot->call);
        free_slot(slot);
        return;
    }
    arm_slot(server, slot->reg);
    if (slot->reg != NULL)
        begin_call(slot);
    else
        answer_unknown(slot);
    free_slot(slot);
}

static void arm_slot(struct cs_rpc_server *server, struct registered *reg)
{
    struct slot *slot = cs_xcalloc(1, sizeof(*slot));
    slot->tag.done_cb = slot_done_cb;
    slot->server = server;
    slot->reg = reg;
    grpc_metadata_array_init(&slot->metadata);
    grpc_call_error err;
    grpc_completion_queue *cq = server->bridge.cq;
    if (reg != NULL) {
        err = grpc_server_request_registered_call(
            server->server, reg->handle, &slot->call, &slot->deadline, &slot->metadata,
            (reg->method->streaming & CS_STREAM_CLIENT) != 0 ? NULL : &slot->payload, cq, cq,
            &slot->tag);
    } else {
        grpc_call_details_init(&slot->details);
        err = grpc_server_request_call(server->server, &slot->call, &slot->details, &slot->metadata,
                                       cq, cq, &slot->tag);
    }
    CS_ASSERT(err == GRPC_CALL_OK);
    server->open_slots++;
}

/* --- server ------------------------------------------------------------- */

/* Makes the gRPC server with our limits and registers every method. */
static void create_grpc_server(struct cs_rpc_server *server, const struct cs_method *methods,
                               size_t n_methods)
{
    /* Refuse to share a port with another process (SO_REUSEPORT is gRPC's default). */
    grpc_arg arg[] = {
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ALLOW_REUSEPORT, .value.integer = 0},
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
         .value.integer = CS_RPC_MAX_REQUEST_BYTES},
        /* gRPC's default is no limit, so one connection could hold any
         * number of streams (Watch streams, each with its buffers); a
         * client past it waits for one of its own streams to end. */
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_MAX_CONCURRENT_STREAMS,
         .value.integer = CS_RPC_MAX_STREAMS_PER_CONNECTION},
        /* A compressed request is inflated whole before its size is
         * checked, so a small one can make cschedd hold a great deal
         * (docs/security.md has the figures), and any local user may send
         * one to any method. Requests are small; none is
         * taken compressed (UNIMPLEMENTED, before its message is read). */
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET,
         .value.integer = 1u << GRPC_COMPRESS_NONE},
    };
    grpc_channel_args args = {.num_args = CS_ARRAY_LEN(arg), .args = arg};
    server->server = grpc_server_create(&args, NULL);
    grpc_server_register_completion_queue(server->server, server->bridge.cq, NULL);

    server->regs = cs_xcalloc(n_methods, sizeof(*server->regs));
    server->n_regs = n_methods;
    for (size_t i = 0; i < n_methods; i++) {
        server->regs[i].method = &methods[i];
        /* A client stream's messages are read one by one (rpc_stream.c). */
        grpc_server_register_method_payload_handling payload =
            (methods[i].streaming & CS_STREAM_CLIENT) != 0
                ? GRPC_SRM_PAYLOAD_NONE
                : GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER;
        server->regs[i].handle =
            grpc_server_register_method(server->server, methods[i].path, NULL, payload, 0);
    }
}

/* Binds the TCP port listen asks for: 0, or -EADDRINUSE (logged) when it
 * cannot be bound. */
static int add_tcp_port(struct cs_rpc_server *server)
{
    const char *addr = server->listen.tcp_addr;
    grpc_server_credentials *creds = server->listen.tcp_creds;
    if (creds == NULL)
        creds = grpc_insecure_server_credentials_create();
    server->port = grpc_server_add_http2_port(server->server, addr, creds);
    if (creds != server->listen.tcp_creds)
        grpc_server_credentials_release(creds);
    server->listen.tcp_creds = NULL; /* the caller's, and gRPC keeps its own reference */
    if (server->port != 0)
        return 0;
    cs_log_error("grpc_server_add_http2_port(%s) failed: address in use or invalid", addr);
    return -EADDRINUSE;
}

struct cs_rpc_server *cs_rpc_server_new(uv_loop_t *loop, const struct cs_rpc_listen *listen,
                                        const struct cs_method *methods, size_t n_methods,
                                        void *ctx)
{
    CS_ASSERT_LOOP();
    struct cs_rpc_server *server = cs_xcalloc(1, sizeof(*server));
    server->loop = loop;
    server->ctx = ctx;
    server->listen = *listen;
    server->port = -1;
    server->open_calls.zero_cb = calls_ended_cb;
    if (cs_grpc_bridge_start(loop, &server->bridge) != 0) {
        free(server);
        return NULL;
    }
    server->bridge.data = server;
    server->open_calls.bridge = &server->bridge;
    server->peers.cq = server->bridge.cq;
    cs_queue_init(&server->peers.calls);
    cs_unary_peers_init(&server->unary, &server->peers);
    create_grpc_server(server, methods, n_methods);

    if (listen->tcp_addr != NULL && add_tcp_port(server) != 0) {
        grpc_server_destroy(server->server);
        /* The queue was never used by a started server: shut it down directly. */
        server->server = NULL;
        return server; /* caller sees port 0 via cs_rpc_server_port and shuts down */
    }
    /* Started now, but no call is taken until cs_rpc_server_serve: calls that
     * arrive before wait in gRPC's own queue. */
    grpc_server_start(server->server);
    return server;
}

int cs_rpc_server_port(const struct cs_rpc_server *server)
{
    CS_ASSERT_LOOP();
    return server->port;
}

void cs_rpc_server_add_fd(struct cs_rpc_server *server, int fd)
{
    /* gRPC serves such a connection only with insecure credentials: who the
     * peer is comes from the identity sources instead. */
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    grpc_server_add_channel_from_fd(server->server, fd, creds);
    grpc_server_credentials_release(creds);
}

void cs_rpc_server_on_refused(struct cs_rpc_server *server, cs_rpc_refused_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    server->refused = (struct cs_rpc_refused_hook){cb, arg};
}

void cs_rpc_server_gate(struct cs_rpc_server *server, cs_rpc_gate_cb gate_cb, void *arg)
{
    CS_ASSERT_LOOP();
    server->gate_cb = gate_cb;
    server->gate_arg = arg;
}

void cs_rpc_server_peers(struct cs_rpc_server *server, const char *replica_id,
                         grpc_channel_credentials *tcp_creds, cs_rpc_cluster_key_cb key_cb,
                         void *key_arg)
{
    CS_ASSERT_LOOP();
    (void)snprintf(server->peers.replica_id, sizeof(server->peers.replica_id), "%s", replica_id);
    if (server->peers.tcp_creds != NULL)
        grpc_channel_credentials_release(server->peers.tcp_creds);
    server->peers.tcp_creds = tcp_creds;
    server->peers.key_cb = key_cb;
    server->peers.key_arg = key_arg;
}

struct cs_unary *cs_rpc_unary(struct cs_rpc_server *server, const char *target, const char *method,
                              const ProtobufCMessage *request, int64_t timeout_ms,
                              cs_rpc_unary_done_cb done_cb, void *arg)
{
    return cs_unary_call(&server->unary, target, method, request, timeout_ms, done_cb, arg);
}

void cs_rpc_relay(struct cs_rpc_server *server, struct cs_call *call, const char *target,
                  const char *method, const ProtobufCMessage *request)
{
    if (server->unary.stopped) {
        cs_call_fail(call, -ENOTCONN, "this replica is stopping");
        return;
    }
    cs_forward_relay(&server->peers, call, cs_unary_channel(&server->unary, target), target, method,
                     cs_call_pack(request), call->deadline);
}

void cs_rpc_unary_abandon(struct cs_unary *u)
{
    cs_unary_abandon(u);
}

int cs_rpc_server_serve(struct cs_rpc_server *server)
{
    CS_ASSERT_LOOP();
    if (server->server == NULL)
        return -EADDRINUSE;
    for (size_t i = 0; i < server->n_regs; i++) {
        int n = (server->regs[i].method->streaming & CS_STREAM_SERVER) != 0 ? SLOTS_STREAMING
                                                                            : SLOTS_UNARY;
        for (int k = 0; k < n; k++)
            arm_slot(server, &server->regs[i]);
    }
    for (int k = 0; k < SLOTS_UNKNOWN; k++)
        arm_slot(server, NULL);
    return 0;
}

static void bridge_drained_cb(struct cs_grpc_bridge *bridge)
{
    struct cs_rpc_server *server = bridge->data;
    CS_ASSERT(server->open_calls.n == 0 && server->open_slots == 0);
    cs_forward_peers_free(&server->peers);
    free(server->regs);
    free(server);
}

/* A call whose handler still waits (a commit while the database is away)
 * is answered through the bridge, so the bridge stops after the last. */
static void stop_bridge_once_idle(struct cs_rpc_server *server)
{
    if (!server->shutting_down || server->server != NULL || server->open_calls.n > 0 ||
        server->bridge_stopping)
        return;
    server->bridge_stopping = true;
    cs_grpc_bridge_stop(&server->bridge, bridge_drained_cb);
}

static void calls_ended_cb(struct cs_call_count *count)
{
    stop_bridge_once_idle(CS_CONTAINER_OF(count, struct cs_rpc_server, open_calls));
}

/* No call can arrive any more: the server's owner may close what the
 * handlers of the calls still open wait for (the store fails its writes). */
static void server_stopped(struct cs_rpc_server *server)
{
    server->done_cb(server->done_arg);
    stop_bridge_once_idle(server);
}

static void server_shutdown_cb(struct cs_tag *tag, bool ok)
{
    struct cs_rpc_server *server = CS_CONTAINER_OF(tag, struct cs_rpc_server, shutdown_tag);
    grpc_server_destroy(server->server);
    server->server = NULL;
    server_stopped(server);
}

void cs_rpc_server_shutdown(struct cs_rpc_server *server, cs_rpc_server_done_cb done_cb, void *arg)
{
    CS_ASSERT_LOOP();
    server->shutting_down = true;
    server->done_cb = done_cb;
    server->done_arg = arg;
    cs_forward_peers_stop(&server->peers);
    cs_unary_peers_stop(&server->unary);
    if (server->server == NULL) {
        server_stopped(server);
        return;
    }
    server->shutdown_tag.done_cb = server_shutdown_cb;
    grpc_server_shutdown_and_notify(server->server, server->bridge.cq, &server->shutdown_tag);
    grpc_server_cancel_all_calls(server->server);
}
