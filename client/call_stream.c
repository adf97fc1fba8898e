/* Server-streaming calls: the request and the status wait are started at
 * open; each next starts one RECV_MESSAGE and waits on the stream's own
 * completion queue. cs_stream_cancel may come from any thread, because
 * grpc_call_cancel is thread-safe and wakes the waiting next.
 *
 * Invariant: pending counts the batches started and not yet seen complete;
 * the call is released only when it is 0, so gRPC never writes into a freed
 * stream.
 */
#include <errno.h>
#include <grpc/support/time.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"

enum stream_tag {
    TAG_SEND = 1,
    TAG_STATUS,
    TAG_RECV,
};

/* An open stream. Owned by the caller of the open function. */
struct cs_stream {
    struct cs__call_state st;
    const ProtobufCMessageDescriptor *msg_desc;
    int pending;
    bool status_done;
    bool ended;
    atomic_bool cancelled;
};

static void *tag_of(enum stream_tag tag)
{
    return (void *)(intptr_t)tag;
}

/* Waits for one batch to complete and records what it finished. Returns its
 * tag. */
static enum stream_tag wait_one(struct cs_stream *s)
{
    grpc_event ev;
    enum stream_tag tag;

    do {
        ev = grpc_completion_queue_next(s->st.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    } while (ev.type != GRPC_OP_COMPLETE);
    s->pending--;
    tag = (enum stream_tag)(intptr_t)ev.tag;
    if (tag == TAG_STATUS)
        s->status_done = true;
    return tag;
}

static void stream_release(struct cs_stream *s)
{
    if (s->st.call != NULL) {
        if (!s->status_done)
            grpc_call_cancel(s->st.call, NULL);
        while (s->pending > 0)
            (void)wait_one(s);
    }
    cs__call_state_close(&s->st);
    free(s);
}

/* Starts the request batch and the status batch. Returns 0 or a gRPC code. */
static int stream_start(struct cs_stream *s, uint32_t md_flags)
{
    grpc_op ops[4];
    grpc_op status_op;

    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].flags = md_flags;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = s->st.send_buf;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &s->st.initial_md;
    if (grpc_call_start_batch(s->st.call, ops, 4, tag_of(TAG_SEND), NULL) != GRPC_CALL_OK)
        return GRPC_STATUS_INTERNAL;
    s->pending++;

    /* In a batch of its own, so that the end of the call is seen even while
     * no message is being read. */
    memset(&status_op, 0, sizeof(status_op));
    status_op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    status_op.data.recv_status_on_client.trailing_metadata = &s->st.trailing_md;
    status_op.data.recv_status_on_client.status = &s->st.code;
    status_op.data.recv_status_on_client.status_details = &s->st.details;
    status_op.data.recv_status_on_client.error_string = &s->st.error_string;
    if (grpc_call_start_batch(s->st.call, &status_op, 1, tag_of(TAG_STATUS), NULL) != GRPC_CALL_OK)
        return GRPC_STATUS_INTERNAL;
    s->pending++;
    return 0;
}

int cs__stream_open(struct cs_client *client, const char *path,
                    const ProtobufCMessageDescriptor *req_desc, const ProtobufCMessage *request,
                    const ProtobufCMessageDescriptor *msg_desc, struct cs_stream **out,
                    const struct cs_call_opts *opts, struct cs_status *status)
{
    struct cs_stream *s;
    gpr_timespec deadline;
    int rc;

    if (out != NULL)
        *out = NULL;
    if (client == NULL || out == NULL)
        return cs__status_local(status, -EINVAL, "NULL client or stream pointer");
    if (cs__call_deadline(opts, 0, &deadline) != 0)
        return cs__status_local(status, -EINVAL, "negative timeout_ms");
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return cs__status_local(status, -ENOMEM, "stream");
    cs__call_state_init(&s->st);
    s->msg_desc = msg_desc;
    atomic_init(&s->cancelled, false);
    rc = cs__message_pack(req_desc, request, &s->st.send_buf);
    if (rc != 0) {
        cs__status_local(status, rc, "request");
        goto err_release;
    }

    cs__call_state_start(&s->st, client, path, deadline);
    rc = stream_start(s, cs__call_md_flags(opts));
    if (rc != 0) {
        cs__status_set(status, rc, "libcsched: grpc_call_start_batch failed");
        goto err_release;
    }
    cs__status_set(status, GRPC_STATUS_OK, "");
    *out = s;
    return 0;

err_release:
    stream_release(s);
    return rc;
}

/* Waits for the final status and reports it. Always returns 0 (ended). */
static int stream_finish(struct cs_stream *s, struct cs_status *status)
{
    s->ended = true;
    while (!s->status_done)
        (void)wait_one(s);
    if (atomic_load(&s->cancelled) && s->st.code == GRPC_STATUS_CANCELLED)
        cs__status_set(status, GRPC_STATUS_CANCELLED, "cancelled by the client");
    else
        cs__status_from_grpc(status, s->st.code, s->st.details, s->st.error_string);
    return 0;
}

int cs__stream_next(struct cs_stream *stream, const ProtobufCMessageDescriptor *msg_desc,
                    ProtobufCMessage **msg, struct cs_status *status)
{
    grpc_op op;
    int rc;

    if (msg != NULL)
        *msg = NULL;
    if (stream == NULL || msg == NULL || msg_desc != stream->msg_desc)
        return cs__status_local(status, -EINVAL, "stream of another method, or NULL");
    if (stream->ended)
        return stream_finish(stream, status);

    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &stream->st.recv_buf;
    if (grpc_call_start_batch(stream->st.call, &op, 1, tag_of(TAG_RECV), NULL) != GRPC_CALL_OK) {
        /* Only possible when the call is already over. */
        return stream_finish(stream, status);
    }
    stream->pending++;
    while (wait_one(stream) != TAG_RECV)
        ;
    if (stream->st.recv_buf == NULL)
        return stream_finish(stream, status);

    rc = cs__message_unpack(msg_desc, stream->st.recv_buf, msg);
    grpc_byte_buffer_destroy(stream->st.recv_buf);
    stream->st.recv_buf = NULL;
    if (rc != 0) {
        grpc_call_cancel_with_status(stream->st.call, GRPC_STATUS_INTERNAL,
                                     "cannot parse a streamed message", NULL);
        stream_finish(stream, status);
        cs__status_set(status, GRPC_STATUS_INTERNAL, "cannot parse a streamed message");
        return 0;
    }
    cs__status_set(status, GRPC_STATUS_OK, "");
    return 1;
}

void cs_stream_cancel(struct cs_stream *stream)
{
    if (stream == NULL)
        return;
    atomic_store(&stream->cancelled, true);
    grpc_call_cancel(stream->st.call, NULL);
}

void cs_stream_free(struct cs_stream *stream)
{
    if (stream != NULL)
        stream_release(stream);
}
