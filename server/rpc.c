/* rpc: registered methods, request slots, calls and their batches. Runs on
 * the loop thread; completions arrive through the bridge thread's mailbox.
 *
 * Each registered method keeps SLOTS_* requests open with gRPC; a slot that
 * completes becomes a call and a fresh slot takes its place. Unknown methods
 * are answered UNIMPLEMENTED from their own slots, so they never wait for a
 * deadline. A call is freed when its final batch and its close have both
 * completed (pending == 0 after finishing). */
#define CS_LOG_COMPONENT "rpc"
#include "rpc.h"

#include <errno.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_bridge_thread.h"
#include "log.h"
#include "status.h"
#include "util.h"
#include "wire_check.h"

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

/* A stream message waiting to be sent: packed bytes, grown in place while
 * items are merged into it (cs_call_push_item). */
struct outgoing {
    struct outgoing *next;
    uint8_t *data;
    size_t len, cap;
    size_t items;   /* what it counts for in the backlog */
    bool mergeable; /* made of items: more may join it */
};

/* A message of merged items closes at this size; a larger item goes alone.
 * Far below gRPC's default 4 MiB receive limit, and small enough that one
 * pack never holds the loop. */
#define MERGE_MAX_BYTES (64 * 1024)

struct cs_call {
    struct cs_rpc_server *server;
    grpc_call *call;
    const struct cs_method *method;
    ProtobufCMessage *request;
    struct cs_tag close_tag; /* RECV_CLOSE_ON_SERVER */
    struct cs_tag send_tag;  /* the one SEND_MESSAGE in flight */
    struct cs_tag meta_tag;  /* SEND_INITIAL_METADATA of a stream */
    struct cs_tag final_tag; /* SEND_STATUS (with the reply, if unary) */
    int cancelled;           /* written by gRPC on close */
    int pending;             /* batches started and not yet completed */
    bool finishing;          /* the final batch has been started */
    bool cancel_seen;
    struct outgoing *out_head, *out_tail;
    size_t backlog;       /* items queued, not yet being sent */
    size_t sending_items; /* items of the message being sent */
    grpc_byte_buffer *sending;
    const struct cs_stream_ops *ops;
    void *stream_ctx;
    grpc_status_code final_code; /* for a stream: sent once the backlog drains */
    char *final_message;
    struct cs_call *prev, *next; /* the server's list of open calls */
};

struct cs_rpc_server {
    uv_loop_t *loop;
    grpc_server *server;
    struct cs_bridge bridge;
    struct registered *regs;
    size_t n_regs;
    void *ctx;
    int port;
    bool shutting_down;
    struct cs_tag shutdown_tag;
    void (*done_cb)(void *arg);
    void *done_arg;
    struct cs_call *calls; /* open calls */
    size_t open_slots;
};

static void arm_slot(struct cs_rpc_server *server, struct registered *reg);
static void call_maybe_free(struct cs_call *call);
static void send_next(struct cs_call *call);

static grpc_byte_buffer *pack(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    grpc_slice slice = grpc_slice_malloc(len);
    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(slice));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

/* Hands o's bytes to gRPC without a copy, and frees o. */
static grpc_byte_buffer *outgoing_take_buffer(struct outgoing *o)
{
    grpc_slice slice = grpc_slice_new(o->data, o->len, free);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    free(o);
    return bb;
}

static void outgoing_free(struct outgoing *o)
{
    free(o->data);
    free(o);
}

/* Appends the bytes of field 1 (length-delimited) holding item. */
static void outgoing_append_item(struct outgoing *o, const ProtobufCMessage *item, size_t size)
{
    uint8_t prefix[11];
    size_t n = 0;
    prefix[n++] = (1 << 3) | 2; /* field 1, wire type 2 */
    for (size_t v = size; n == 1 || v != 0; v >>= 7)
        prefix[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (o->len + n + size > o->cap) {
        o->cap = o->len + n + size > 2 * o->cap ? o->len + n + size : 2 * o->cap;
        o->data = cs_xrealloc(o->data, o->cap);
    }
    memcpy(o->data + o->len, prefix, n);
    protobuf_c_message_pack(item, o->data + o->len + n);
    o->len += n + size;
    o->items++;
}

/* Unpacks a request; on failure returns NULL with a message for the client. */
static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *desc, grpc_byte_buffer *bb,
                                char *why, size_t cap)
{
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb)) {
        (void)snprintf(why, cap, "the request could not be decompressed");
        return NULL;
    }
    grpc_slice slice = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    const uint8_t *data = GRPC_SLICE_START_PTR(slice);
    size_t len = GRPC_SLICE_LENGTH(slice);
    ProtobufCMessage *msg = NULL;
    char field[200];
    if (cs_wire_check_strings(desc, data, len, field, sizeof(field)) != 0)
        (void)snprintf(why, cap, "field %s holds a NUL byte or is not valid UTF-8", field);
    else if ((msg = protobuf_c_message_unpack(desc, NULL, len, data)) == NULL)
        (void)snprintf(why, cap, "the request is not a valid %s message", desc->name);
    grpc_slice_unref(slice);
    return msg;
}

static void start_batch(struct cs_call *call, const grpc_op *ops, size_t n, struct cs_tag *tag)
{
    grpc_call_error err = grpc_call_start_batch(call->call, ops, n, tag, NULL);
    CS_ASSERT(err == GRPC_CALL_OK);
    call->pending++;
}

/* --- call completion ---------------------------------------------------- */

static void on_close(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = (struct cs_call *)((char *)tag - offsetof(struct cs_call, close_tag));
    call->pending--;
    call->cancel_seen = true;
    if (!call->finishing && call->final_message == NULL && call->ops != NULL &&
        call->ops->on_cancel != NULL)
        call->ops->on_cancel(call, call->stream_ctx);
    call_maybe_free(call);
}

static void on_final(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = (struct cs_call *)((char *)tag - offsetof(struct cs_call, final_tag));
    call->pending--;
    call_maybe_free(call);
}

static void on_meta(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = (struct cs_call *)((char *)tag - offsetof(struct cs_call, meta_tag));
    call->pending--;
    call_maybe_free(call);
}

static void on_sent(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = (struct cs_call *)((char *)tag - offsetof(struct cs_call, send_tag));
    call->pending--;
    grpc_byte_buffer_destroy(call->sending);
    call->sending = NULL;
    call->sending_items = 0;
    if (!ok) {
        /* The client is gone; the close batch reports it. Drop the backlog. */
        while (call->out_head != NULL) {
            struct outgoing *o = call->out_head;
            call->out_head = o->next;
            outgoing_free(o);
        }
        call->out_tail = NULL;
        call->backlog = 0;
    }
    send_next(call);
    call_maybe_free(call);
}

static void call_maybe_free(struct cs_call *call)
{
    if (call->pending > 0 || !call->finishing)
        return;
    struct cs_rpc_server *server = call->server;
    if (call->prev != NULL)
        call->prev->next = call->next;
    else
        server->calls = call->next;
    if (call->next != NULL)
        call->next->prev = call->prev;
    if (call->request != NULL)
        protobuf_c_message_free_unpacked(call->request, NULL);
    free(call->final_message);
    grpc_call_unref(call->call);
    free(call);
}

static void send_status(struct cs_call *call, grpc_status_code code, const char *message,
                        grpc_byte_buffer *reply)
{
    grpc_slice details = grpc_slice_from_copied_string(message != NULL ? message : "");
    grpc_op ops[3];
    size_t n = 0;
    memset(ops, 0, sizeof(ops));
    if (!call->method->server_streaming) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        if (reply != NULL) {
            ops[n].op = GRPC_OP_SEND_MESSAGE;
            ops[n++].data.send_message.send_message = reply;
        }
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = code;
    ops[n].data.send_status_from_server.status_details = &details;
    n++;
    call->finishing = true;
    start_batch(call, ops, n, &call->final_tag);
    grpc_slice_unref(details);
    if (reply != NULL)
        grpc_byte_buffer_destroy(reply);
}

static void send_next(struct cs_call *call)
{
    if (call->sending != NULL)
        return;
    if (call->out_head == NULL) {
        if (call->final_message != NULL && !call->finishing) {
            send_status(call, call->final_code, call->final_message, NULL);
            return;
        }
        if (call->ops != NULL && call->ops->on_drained != NULL && !call->cancel_seen &&
            !call->finishing)
            call->ops->on_drained(call, call->stream_ctx);
        return;
    }
    struct outgoing *o = call->out_head;
    call->out_head = o->next;
    if (call->out_head == NULL)
        call->out_tail = NULL;
    call->backlog -= o->items;
    call->sending_items = o->items;
    call->sending = outgoing_take_buffer(o);
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = call->sending;
    start_batch(call, &op, 1, &call->send_tag);
}

/* --- handler API -------------------------------------------------------- */

void cs_call_reply(struct cs_call *call, const ProtobufCMessage *response)
{
    CS_ASSERT(!call->method->server_streaming && !call->finishing);
    send_status(call, GRPC_STATUS_OK, "", pack(response));
}

void cs_call_finish(struct cs_call *call, grpc_status_code code, const char *message)
{
    CS_ASSERT(call->final_message == NULL && !call->finishing);
    if (!call->method->server_streaming || call->cancel_seen) {
        send_status(call, code, message, NULL);
        return;
    }
    /* Let the messages already pushed go out first. */
    call->final_code = code;
    call->final_message = cs_xstrdup(message);
    send_next(call);
}

void cs_call_fail(struct cs_call *call, int code, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    cs_call_finish(call, cs_status_from_errno(code), message);
}

void cs_call_set_stream_ops(struct cs_call *call, const struct cs_stream_ops *ops, void *ctx)
{
    call->ops = ops;
    call->stream_ctx = ctx;
}

void *cs_call_stream_ctx(const struct cs_call *call)
{
    return call->stream_ctx;
}

static bool can_push(const struct cs_call *call)
{
    CS_ASSERT(call->method->server_streaming && call->final_message == NULL);
    return !call->cancel_seen && !call->finishing;
}

static void enqueue(struct cs_call *call, struct outgoing *o)
{
    if (call->out_tail != NULL)
        call->out_tail->next = o;
    else
        call->out_head = o;
    call->out_tail = o;
    call->backlog += o->items;
    send_next(call);
}

void cs_call_push(struct cs_call *call, const ProtobufCMessage *msg)
{
    if (!can_push(call))
        return;
    struct outgoing *o = cs_xcalloc(1, sizeof(*o));
    o->cap = o->len = protobuf_c_message_get_packed_size(msg);
    o->data = cs_xmalloc(o->len > 0 ? o->len : 1);
    protobuf_c_message_pack(msg, o->data);
    o->items = 1;
    enqueue(call, o);
}

void cs_call_push_item(struct cs_call *call, const ProtobufCMessage *item)
{
    if (!can_push(call))
        return;
    size_t size = protobuf_c_message_get_packed_size(item);
    struct outgoing *tail = call->out_tail;
    if (tail != NULL && tail->mergeable && tail->len + size + 11 <= MERGE_MAX_BYTES) {
        outgoing_append_item(tail, item, size);
        call->backlog++;
        return;
    }
    struct outgoing *o = cs_xcalloc(1, sizeof(*o));
    o->mergeable = true;
    outgoing_append_item(o, item, size);
    enqueue(call, o);
}

size_t cs_call_backlog(const struct cs_call *call)
{
    return call->backlog + call->sending_items;
}

/* --- slots ----------------------------------------------------------------- */

/* Makes the call record for an arrived slot and starts watching for its
 * close (a cancel or the end), as every call needs. */
static struct cs_call *call_open(struct slot *slot, const struct cs_method *method)
{
    struct cs_rpc_server *server = slot->server;
    struct cs_call *call = cs_xcalloc(1, sizeof(*call));
    call->server = server;
    call->call = slot->call;
    call->method = method;
    call->close_tag.done = on_close;
    call->send_tag.done = on_sent;
    call->final_tag.done = on_final;
    call->meta_tag.done = on_meta;
    call->next = server->calls;
    if (server->calls != NULL)
        server->calls->prev = call;
    server->calls = call;

    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &call->cancelled;
    start_batch(call, &op, 1, &call->close_tag);
    return call;
}

static void begin_call(struct slot *slot)
{
    struct cs_call *call = call_open(slot, slot->reg->method);
    if (call->method->server_streaming) {
        grpc_op op;
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_SEND_INITIAL_METADATA;
        start_batch(call, &op, 1, &call->meta_tag);
    }
    if (slot->payload == NULL) {
        cs_call_fail(call, -EINVAL, "the request carried no message");
        return;
    }
    char why[300];
    call->request = unpack(call->method->input, slot->payload, why, sizeof(why));
    if (call->request == NULL) {
        cs_call_fail(call, -EINVAL, "%s", why);
        return;
    }
    call->method->handler(call, call->request, slot->server->ctx);
}

static void answer_unknown(struct slot *slot)
{
    /* A method record for the call, so the batch machinery serves it too. */
    static const struct cs_method unknown = {.path = "", .server_streaming = false};
    struct cs_call *call = call_open(slot, &unknown);
    char *method = grpc_slice_to_c_string(slot->details.method);
    char message[300];
    (void)snprintf(message, sizeof(message), "method %.200s is not served by cschedd", method);
    gpr_free(method);
    send_status(call, GRPC_STATUS_UNIMPLEMENTED, message, NULL);
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

static void on_slot(struct cs_tag *tag, bool ok)
{
    struct slot *slot = (struct slot *)tag;
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
    slot->tag.done = on_slot;
    slot->server = server;
    slot->reg = reg;
    grpc_metadata_array_init(&slot->metadata);
    grpc_call_error err;
    grpc_completion_queue *cq = server->bridge.cq;
    if (reg != NULL) {
        err = grpc_server_request_registered_call(server->server, reg->handle, &slot->call,
                                                  &slot->deadline, &slot->metadata, &slot->payload,
                                                  cq, cq, &slot->tag);
    } else {
        grpc_call_details_init(&slot->details);
        err = grpc_server_request_call(server->server, &slot->call, &slot->details, &slot->metadata,
                                       cq, cq, &slot->tag);
    }
    CS_ASSERT(err == GRPC_CALL_OK);
    server->open_slots++;
}

/* --- server ------------------------------------------------------------- */

struct cs_rpc_server *cs_rpc_server_new(uv_loop_t *loop, const char *addr,
                                        const struct cs_method *methods, size_t n_methods,
                                        void *ctx)
{
    struct cs_rpc_server *server = cs_xcalloc(1, sizeof(*server));
    server->loop = loop;
    server->ctx = ctx;
    if (cs_bridge_start(loop, &server->bridge) != 0) {
        free(server);
        return NULL;
    }
    server->bridge.data = server;

    /* Refuse to share a port with another process (SO_REUSEPORT is gRPC's default). */
    grpc_arg arg[] = {
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ALLOW_REUSEPORT, .value.integer = 0},
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
         .value.integer = CS_RPC_MAX_REQUEST_BYTES},
    };
    grpc_channel_args args = {.num_args = CS_ARRAY_LEN(arg), .args = arg};
    server->server = grpc_server_create(&args, NULL);
    grpc_server_register_completion_queue(server->server, server->bridge.cq, NULL);

    server->regs = cs_xcalloc(n_methods, sizeof(*server->regs));
    server->n_regs = n_methods;
    for (size_t i = 0; i < n_methods; i++) {
        server->regs[i].method = &methods[i];
        server->regs[i].handle = grpc_server_register_method(
            server->server, methods[i].path, NULL, GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    }

    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    server->port = grpc_server_add_http2_port(server->server, addr, creds);
    grpc_server_credentials_release(creds);
    if (server->port == 0) {
        cs_log_error("grpc_server_add_http2_port(%s) failed: address in use or invalid", addr);
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
    return server->port;
}

int cs_rpc_server_serve(struct cs_rpc_server *server)
{
    if (server->server == NULL)
        return -EADDRINUSE;
    for (size_t i = 0; i < server->n_regs; i++) {
        int n = server->regs[i].method->server_streaming ? SLOTS_STREAMING : SLOTS_UNARY;
        for (int k = 0; k < n; k++)
            arm_slot(server, &server->regs[i]);
    }
    for (int k = 0; k < SLOTS_UNKNOWN; k++)
        arm_slot(server, NULL);
    return 0;
}

static void on_bridge_drained(struct cs_bridge *bridge)
{
    struct cs_rpc_server *server = bridge->data;
    CS_ASSERT(server->calls == NULL && server->open_slots == 0);
    free(server->regs);
    void (*done_cb)(void *) = server->done_cb;
    void *done_arg = server->done_arg;
    free(server);
    done_cb(done_arg);
}

static void on_server_shutdown(struct cs_tag *tag, bool ok)
{
    struct cs_rpc_server *server =
        (struct cs_rpc_server *)((char *)tag - offsetof(struct cs_rpc_server, shutdown_tag));
    grpc_server_destroy(server->server);
    server->server = NULL;
    cs_bridge_stop(&server->bridge, on_bridge_drained);
}

void cs_rpc_server_shutdown(struct cs_rpc_server *server, void (*done_cb)(void *arg), void *arg)
{
    server->shutting_down = true;
    server->done_cb = done_cb;
    server->done_arg = arg;
    if (server->server == NULL) {
        cs_bridge_stop(&server->bridge, on_bridge_drained);
        return;
    }
    server->shutdown_tag.done = on_server_shutdown;
    grpc_server_shutdown_and_notify(server->server, server->bridge.cq, &server->shutdown_tag);
    grpc_server_cancel_all_calls(server->server);
}
