/* rpc_call: one call from the request gRPC hands over to its freeing: the
 * request unpacked, the close watched, the reply or final status sent.
 * Loop thread; each batch's completion arrives through the bridge. A
 * stream's final status waits for the messages queued before it
 * (rpc_stream.c sends it when they have gone). */
#define CS_LOG_COMPONENT "rpc"
#include "rpc_call.h"

#include <errno.h>
#include <grpc/byte_buffer_reader.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "metrics.h"
#include "request_decode.h"
#include "status.h"
#include "status_details.h"
#include "utf8.h"
#include "util.h"

grpc_byte_buffer *cs_call_pack(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    grpc_slice slice = grpc_slice_malloc(len);
    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(slice));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

int cs_call_unpack(struct cs_call *call, grpc_byte_buffer *payload, char *why, size_t cap)
{
    const ProtobufCMessageDescriptor *desc = call->method->input;
    /* A request is kept while its call lasts (a health Watch for good), and
     * a method open to every caller needs no more than a name or two. */
    size_t size = grpc_byte_buffer_length(payload);
    if (size > CS_RPC_MAX_OPEN_REQUEST_BYTES &&
        cs_access_needed(call->method->path) == CS_ROLE_NONE) {
        (void)snprintf(why, cap,
                       "the request is %zu bytes; %s, open to every caller, takes at most %d", size,
                       call->method->path, CS_RPC_MAX_OPEN_REQUEST_BYTES);
        return -EINVAL;
    }
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, payload)) {
        (void)snprintf(why, cap, "the request could not be decompressed");
        return -EINVAL;
    }
    grpc_slice slice = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    call->request =
        cs_request_decode(desc, GRPC_SLICE_START_PTR(slice), GRPC_SLICE_LENGTH(slice), why, cap);
    grpc_slice_unref(slice);
    return call->request != NULL ? 0 : -EINVAL;
}

void cs_call_start_batch(struct cs_call *call, const grpc_op *ops, size_t n, struct cs_tag *tag)
{
    grpc_call_error err = grpc_call_start_batch(call->call, ops, n, tag, NULL);
    CS_ASSERT(err == GRPC_CALL_OK);
    call->pending++;
}

void cs_call_maybe_free(struct cs_call *call)
{
    if (call->pending > 0 || !call->finishing)
        return;
    struct cs_call_count *count = call->open_calls;
    if (call->request != NULL)
        protobuf_c_message_free_unpacked(call->request, NULL);
    free(call->final_message);
    free(call->bad_field);
    grpc_slice_unref(call->kept_details);
    if (call->call != NULL)
        grpc_call_unref(call->call);
    free(call);
    /* Last: the callback may free the server, and the count with it. */
    if (--count->n == 0 && count->zero_cb != NULL)
        count->zero_cb(count);
}

static void close_done_cb(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = CS_CONTAINER_OF(tag, struct cs_call, close_tag);
    call->pending--;
    call->cancel_seen = true;
    if (!call->finishing && call->final_message == NULL && call->ops != NULL &&
        call->ops->cancel_cb != NULL)
        call->ops->cancel_cb(call, call->stream_ctx);
    cs_call_maybe_free(call);
}

static void final_done_cb(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = CS_CONTAINER_OF(tag, struct cs_call, final_tag);
    call->pending--;
    cs_call_maybe_free(call);
}

static void meta_done_cb(struct cs_tag *tag, bool ok)
{
    struct cs_call *call = CS_CONTAINER_OF(tag, struct cs_call, meta_tag);
    call->pending--;
    cs_call_maybe_free(call);
}

struct cs_call *cs_call_open(struct cs_call_count *open_calls, grpc_call *gcall,
                             const struct cs_method *method)
{
    struct cs_call *call = cs_xcalloc(1, sizeof(*call));
    call->open_calls = open_calls;
    open_calls->n++;
    call->opened_ns = cs_now_mono_ns();
    call->call = gcall;
    call->method = method;
    call->close_tag.done_cb = close_done_cb;
    call->final_tag.done_cb = final_done_cb;
    call->meta_tag.done_cb = meta_done_cb;
    cs_queue_init(&call->out);
    call->kept_details = grpc_empty_slice();

    /* A unary call learns nothing from its close that it would act on: the
     * close is received in its final batch, one batch and one completion
     * fewer per call. A stream watches it from the start, to stop on it. */
    if (method->streaming == 0)
        return call;
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &call->cancelled;
    cs_call_start_batch(call, &op, 1, &call->close_tag);
    if (method->streaming & CS_STREAM_SERVER) {
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_SEND_INITIAL_METADATA;
        cs_call_start_batch(call, &op, 1, &call->meta_tag);
    }
    return call;
}

const struct cs_identity *cs_call_identity(const struct cs_call *call)
{
    return &call->who;
}

const char *cs_call_method_path(const struct cs_call *call)
{
    return call->method->path;
}

const ProtobufCMessage *cs_call_request(const struct cs_call *call)
{
    return call->request;
}

const ProtobufCMessage *cs_call_request_late(struct cs_call *call)
{
    CS_ASSERT_LOOP();
    char why[256];
    grpc_byte_buffer *unread = call->unread;
    call->unread = NULL; /* tried once */
    /* A request that does not unpack names no target: nothing more to say. */
    if (call->request == NULL && unread != NULL)
        (void)cs_call_unpack(call, unread, why, sizeof(why));
    return call->request;
}

/* A unary call's last batch takes gRPC's part of the call with it: the
 * bridge thread releases that when the batch completes, and the loop frees
 * its own part once the code that replied has returned (a handler may read
 * its call after replying), without waiting for gRPC. The completion, which
 * says only that the reply has gone, woke the loop once for every call
 * (docs/design/0040). */
struct call_release {
    struct cs_tag tag;
    grpc_call *call;
    int cancelled; /* RECV_CLOSE_ON_SERVER's; a unary call acts on none */
};

/* Bridge thread. */
static void release_cb(struct cs_tag *tag)
{
    struct call_release *r = CS_CONTAINER_OF(tag, struct call_release, tag);
    grpc_call_unref(r->call);
    free(r);
}

/* Takes gRPC's part of call, for its last batch. */
static struct call_release *call_release_new(struct cs_call *call)
{
    struct call_release *r = cs_xcalloc(1, sizeof(*r));
    r->tag.release_cb = release_cb;
    r->call = call->call;
    call->call = NULL;
    return r;
}

static void start_unary_last_batch(struct cs_call *call, struct call_release *r, const grpc_op *ops,
                                   size_t n)
{
    /* r is the bridge thread's from here: it may be freed before this returns. */
    grpc_call_error err = grpc_call_start_batch(r->call, ops, n, &r->tag, NULL);
    CS_ASSERT(err == GRPC_CALL_OK);
    call->pending++;
    cs_grpc_bridge_post(call->open_calls->bridge, &call->final_tag, true);
}

void cs_call_send_status(struct cs_call *call, grpc_status_code code, const char *message,
                         grpc_byte_buffer *reply)
{
    grpc_slice details = grpc_slice_from_copied_string(message != NULL ? message : "");
    /* An error about a field also goes out as a google.rpc.Status with a
     * BadRequest, for clients that read the standard details. */
    grpc_metadata rich = {.key = grpc_slice_from_static_string(CS_STATUS_DETAILS_KEY)};
    bool has_rich = code != GRPC_STATUS_OK &&
                    (call->bad_field != NULL || GRPC_SLICE_LENGTH(call->kept_details) > 0);
    if (has_rich && call->bad_field != NULL)
        rich.value = cs_status_details_pack(code, message != NULL ? message : "", call->bad_field);
    else if (has_rich)
        rich.value = grpc_slice_ref(call->kept_details);
    grpc_op ops[4];
    size_t n = 0;
    memset(ops, 0, sizeof(ops));
    struct call_release *release = NULL;
    if (call->method->streaming == 0) {
        release = call_release_new(call);
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n++].data.recv_close_on_server.cancelled = &release->cancelled;
    }
    if ((call->method->streaming & CS_STREAM_SERVER) == 0) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        if (reply != NULL) {
            ops[n].op = GRPC_OP_SEND_MESSAGE;
            ops[n++].data.send_message.send_message = reply;
        }
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = code;
    ops[n].data.send_status_from_server.status_details = &details;
    if (has_rich) {
        ops[n].data.send_status_from_server.trailing_metadata_count = 1;
        ops[n].data.send_status_from_server.trailing_metadata = &rich;
    }
    n++;
    call->finishing = true;
    cs_metrics_count_grpc(call->method->path, code,
                          (double)(cs_now_mono_ns() - call->opened_ns) / 1e9);
    if (release != NULL)
        start_unary_last_batch(call, release, ops, n);
    else
        cs_call_start_batch(call, ops, n, &call->final_tag);
    grpc_slice_unref(details);
    if (has_rich)
        grpc_slice_unref(rich.value);
    if (reply != NULL)
        grpc_byte_buffer_destroy(reply);
}

void cs_call_reply(struct cs_call *call, const ProtobufCMessage *response)
{
    CS_ASSERT_LOOP();
    CS_ASSERT((call->method->streaming & CS_STREAM_SERVER) == 0 && !call->finishing);
    cs_call_send_status(call, GRPC_STATUS_OK, "", cs_call_pack(response));
}

void cs_call_finish(struct cs_call *call, grpc_status_code code, const char *message)
{
    CS_ASSERT_LOOP();
    CS_ASSERT(call->final_message == NULL && !call->finishing);
    /* A message quoting a client's string with "%.64s", or cut at its
     * buffer's end, may end inside a character: the audit row's text
     * column would refuse it, and with it the whole batch. */
    char *clean = cs_xstrdup(message);
    cs_utf8_scrub(clean);
    if (code != GRPC_STATUS_OK && call->refused != NULL && call->refused->cb != NULL &&
        !call->forwarded)
        call->refused->cb(call->refused->arg, call, code, clean);
    /* A stream keeps a message in flight while any is queued: the status
     * waits for them, and rpc_stream.c sends it once they have gone. */
    if (call->sending == NULL || call->cancel_seen) {
        cs_call_send_status(call, code, clean, NULL);
        free(clean);
        return;
    }
    call->final_code = code;
    call->final_message = clean;
}

void cs_call_finish_with(struct cs_call *call, grpc_status_code code, const char *message,
                         grpc_byte_buffer *reply)
{
    CS_ASSERT_LOOP();
    CS_ASSERT((call->method->streaming & CS_STREAM_SERVER) == 0 && !call->finishing);
    if (reply == NULL) {
        cs_call_finish(call, code, message);
        return;
    }
    cs_call_send_status(call, code, message, reply);
}

void cs_call_keep_details(struct cs_call *call, grpc_slice details)
{
    grpc_slice_unref(call->kept_details);
    call->kept_details = grpc_slice_dup(details);
}

void cs_call_fail(struct cs_call *call, int code, const char *fmt, ...)
{
    CS_ASSERT_LOOP();
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    cs_call_finish(call, cs_status_from_errno(code), message);
}

void cs_call_fail_field(struct cs_call *call, int code, const char *field, const char *fmt, ...)
{
    CS_ASSERT_LOOP();
    struct cs_err err;
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
    va_end(ap);
    err.code = code;
    (void)snprintf(err.field, sizeof(err.field), "%s", field);
    cs_call_fail_err(call, &err);
}

void cs_call_fail_err(struct cs_call *call, const struct cs_err *err)
{
    CS_ASSERT_LOOP();
    CS_ASSERT(call->bad_field == NULL);
    if (err->field[0] != '\0')
        call->bad_field = cs_xstrdup(err->field);
    cs_call_fail(call, err->code, "%s", err->msg);
}
