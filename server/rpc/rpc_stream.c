/* rpc_stream: the messages a streaming call queues, and the requests a
 * bidirectional one reads. One message is in flight at a time; the rest
 * wait in a FIFO, packed. Items pushed while a message is being sent are
 * merged into one message (field 1, repeated) so that a busy stream costs
 * one send per batch. When the queue empties the handler hears drained_cb,
 * or, if it has finished meanwhile, the final status goes out; a
 * bidirectional stream then reads its next request. Loop thread; sends and
 * reads complete through the bridge. */
#define CS_LOG_COMPONENT "rpc"
#include <errno.h>
#include <grpc/byte_buffer_reader.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_call.h"
#include "util.h"
#include "wire.h"

/* A message of merged items closes at this size; a larger item goes alone.
 * Far below gRPC's default 4 MiB receive limit, and small enough that one
 * pack never holds the loop. */
#define MERGE_MAX_BYTES (64 * 1024)

/* A stream message waiting to be sent: packed bytes, grown in place while
 * items are merged into it (cs_call_push_item). */
struct cs_outgoing {
    struct cs_qlink link; /* in the call's out queue */
    uint8_t *data;
    size_t len, cap;
    size_t items;   /* what it counts for in the backlog */
    bool mergeable; /* made of items: more may join it */
};

/* Hands o's bytes to gRPC without a copy, and frees o. */
static grpc_byte_buffer *outgoing_take_buffer(struct cs_outgoing *o)
{
    grpc_slice slice = grpc_slice_new(o->data, o->len, free);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    free(o);
    return bb;
}

static void outgoing_free(struct cs_outgoing *o)
{
    free(o->data);
    free(o);
}

/* Appends the bytes of field 1 (length-delimited) holding item. */
static void outgoing_append_item(struct cs_outgoing *o, const ProtobufCMessage *item, size_t size)
{
    uint8_t prefix[CS_WIRE_LEN_PREFIX_MAX];
    size_t n = cs_wire_put_len_prefix(prefix, 1, size);
    if (o->len + n + size > o->cap) {
        o->cap = o->len + n + size > 2 * o->cap ? o->len + n + size : 2 * o->cap;
        o->data = cs_xrealloc(o->data, o->cap);
    }
    memcpy(o->data + o->len, prefix, n);
    protobuf_c_message_pack(item, o->data + o->len + n);
    o->len += n + size;
    o->items++;
}

static void sent_cb(struct cs_tag *tag, bool ok);

/* Starts sending the next queued message; with none, sends a final status
 * waiting for the queue to drain, or tells the handler it has drained. */
static void send_next(struct cs_call *call)
{
    if (call->sending != NULL)
        return;
    struct cs_qlink *next = cs_queue_pop(&call->out);
    if (next == NULL) {
        if (call->final_message != NULL && !call->finishing) {
            cs_call_send_status(call, call->final_code, call->final_message, NULL);
            return;
        }
        if (call->ops != NULL && call->ops->drained_cb != NULL && !call->cancel_seen &&
            !call->finishing)
            call->ops->drained_cb(call, call->stream_ctx);
        cs_call_read(call);
        return;
    }
    struct cs_outgoing *o = CS_CONTAINER_OF(next, struct cs_outgoing, link);
    call->backlog -= o->items;
    call->sending_items = o->items;
    call->sending = outgoing_take_buffer(o);
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = call->sending;
    call->send_tag.done_cb = sent_cb;
    cs_call_start_batch(call, &op, 1, &call->send_tag);
}

static void sent_cb(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = CS_CONTAINER_OF(tag, struct cs_call, send_tag);
    call->pending--;
    grpc_byte_buffer_destroy(call->sending);
    call->sending = NULL;
    call->sending_items = 0;
    if (!ok) {
        /* The client is gone; the close batch reports it. Drop the backlog. */
        struct cs_qlink *link;
        while ((link = cs_queue_pop(&call->out)) != NULL)
            outgoing_free(CS_CONTAINER_OF(link, struct cs_outgoing, link));
        call->backlog = 0;
    }
    send_next(call);
    cs_call_maybe_free(call);
}

/* Hands a request to the handler, then reads on if it pushed nothing. */
static void deliver(struct cs_call *call, grpc_byte_buffer *payload)
{
    char why[300];
    if (call->request != NULL)
        protobuf_c_message_free_unpacked(call->request, NULL);
    call->request = NULL;
    if (cs_call_unpack(call, payload, why, sizeof(why)) != 0) {
        cs_call_fail(call, -EINVAL, "%s", why);
        return;
    }
    call->method->handler_cb(call, call->request, call->handler_ctx);
    cs_call_read(call);
}

static void received_cb(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = CS_CONTAINER_OF(tag, struct cs_call, recv_tag);
    call->pending--;
    call->reading = false;
    grpc_byte_buffer *payload = call->received;
    call->received = NULL;
    /* The handler may have ended the call while the read was in flight. No
     * message: the client half-closed, or the call is gone (its close batch
     * reports that); either way the stream is over. */
    bool ended = call->finishing || call->final_message != NULL;
    if (!ended && (!ok || payload == NULL))
        cs_call_finish(call, GRPC_STATUS_OK, "");
    else if (!ended)
        deliver(call, payload);
    if (payload != NULL)
        grpc_byte_buffer_destroy(payload);
    cs_call_maybe_free(call);
}

void cs_call_read(struct cs_call *call)
{
    if ((call->method->streaming & CS_STREAM_CLIENT) == 0 || call->reading ||
        call->sending != NULL || call->finishing || call->final_message != NULL)
        return;
    /* Gone while a reply was in flight: no read will fail to end the stream,
     * so end it here. */
    if (call->cancel_seen) {
        cs_call_finish(call, GRPC_STATUS_OK, "");
        return;
    }
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &call->received;
    call->reading = true;
    call->recv_tag.done_cb = received_cb;
    cs_call_start_batch(call, &op, 1, &call->recv_tag);
}

void cs_call_set_stream_ops(struct cs_call *call, const struct cs_stream_ops *ops, void *ctx)
{
    CS_ASSERT_LOOP();
    call->ops = ops;
    call->stream_ctx = ctx;
}

void *cs_call_stream_ctx(const struct cs_call *call)
{
    CS_ASSERT_LOOP();
    return call->stream_ctx;
}

static bool can_push(const struct cs_call *call)
{
    CS_ASSERT((call->method->streaming & CS_STREAM_SERVER) != 0 && call->final_message == NULL);
    return !call->cancel_seen && !call->finishing;
}

static void enqueue(struct cs_call *call, struct cs_outgoing *o)
{
    cs_queue_push(&call->out, &o->link);
    call->backlog += o->items;
    send_next(call);
}

void cs_call_push(struct cs_call *call, const ProtobufCMessage *msg)
{
    CS_ASSERT_LOOP();
    if (!can_push(call))
        return;
    struct cs_outgoing *o = cs_xcalloc(1, sizeof(*o));
    o->cap = o->len = protobuf_c_message_get_packed_size(msg);
    o->data = cs_xmalloc(o->len > 0 ? o->len : 1);
    protobuf_c_message_pack(msg, o->data);
    o->items = 1;
    enqueue(call, o);
}

bool cs_call_push_bytes(struct cs_call *call, grpc_byte_buffer *msg)
{
    CS_ASSERT_LOOP();
    if (!can_push(call))
        return false;
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, msg))
        return false;
    grpc_slice slice = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    struct cs_outgoing *o = cs_xcalloc(1, sizeof(*o));
    o->cap = o->len = GRPC_SLICE_LENGTH(slice);
    o->data = cs_xmalloc(o->len > 0 ? o->len : 1);
    memcpy(o->data, GRPC_SLICE_START_PTR(slice), o->len);
    grpc_slice_unref(slice);
    o->items = 1;
    enqueue(call, o);
    return true;
}

void cs_call_push_item(struct cs_call *call, const ProtobufCMessage *item)
{
    CS_ASSERT_LOOP();
    if (!can_push(call))
        return;
    size_t size = protobuf_c_message_get_packed_size(item);
    struct cs_outgoing *tail =
        call->out.tail != NULL ? CS_CONTAINER_OF(call->out.tail, struct cs_outgoing, link) : NULL;
    if (tail != NULL && tail->mergeable &&
        tail->len + size + CS_WIRE_LEN_PREFIX_MAX <= MERGE_MAX_BYTES) {
        outgoing_append_item(tail, item, size);
        call->backlog++;
        return;
    }
    struct cs_outgoing *o = cs_xcalloc(1, sizeof(*o));
    o->mergeable = true;
    outgoing_append_item(o, item, size);
    enqueue(call, o);
}

size_t cs_call_backlog(const struct cs_call *call)
{
    CS_ASSERT_LOOP();
    return call->backlog + call->sending_items;
}
