/* rpc_unary: unary calls to another replica (rpc_unary.h). A call is one
 * batch (metadata, the request, the half-close, the initial metadata, the
 * reply and the status back), so it ends with one completion: two batches
 * cost a completion more, and a turn of the loop more when they came apart. */
#define CS_LOG_COMPONENT "rpc"
#include "rpc_unary.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/support/alloc.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_call.h"
#include "util.h"

struct cs_unary_channel {
    struct cs_unary_channel *next;
    char target[CS_RPC_TARGET_MAX];
    grpc_channel *channel;
};

struct cs_unary {
    struct cs_qlink link; /* in peers->calls */
    struct cs_unary_peers *peers;
    grpc_call *call;
    cs_rpc_unary_done_cb done_cb; /* NULL once abandoned */
    void *arg;
    struct cs_tag tag;
    grpc_metadata md[4];
    grpc_metadata_array initial, trailing;
    grpc_byte_buffer *request, *reply;
    grpc_status_code status;
    grpc_slice details;
};

void cs_unary_peers_init(struct cs_unary_peers *peers, struct cs_forward_peers *forward)
{
    memset(peers, 0, sizeof(*peers));
    peers->forward = forward;
    cs_queue_init(&peers->calls);
}

grpc_channel *cs_unary_channel(struct cs_unary_peers *peers, const char *target)
{
    for (struct cs_unary_channel *c = peers->channels; c != NULL; c = c->next)
        if (strcmp(c->target, target) == 0)
            return c->channel;
    struct cs_unary_channel *c = cs_xcalloc(1, sizeof(*c));
    (void)snprintf(c->target, sizeof(c->target), "%s", target);
    c->channel = cs_forward_channel_new(peers->forward, target, NULL);
    c->next = peers->channels;
    peers->channels = c;
    return c->channel;
}

static void unary_free(struct cs_unary *u)
{
    cs_queue_remove(&u->peers->calls, &u->link);
    grpc_call_unref(u->call);
    grpc_metadata_array_destroy(&u->initial);
    grpc_metadata_array_destroy(&u->trailing);
    for (size_t i = 0; i < CS_ARRAY_LEN(u->md); i++)
        grpc_slice_unref(u->md[i].value);
    grpc_slice_unref(u->details);
    if (u->request != NULL)
        grpc_byte_buffer_destroy(u->request);
    if (u->reply != NULL)
        grpc_byte_buffer_destroy(u->reply);
    free(u);
}

/* The batch is done: the answer goes to the caller, unless abandoned. */
static void batch_done_cb(struct cs_tag *tag, bool ok)
{
    struct cs_unary *u = CS_CONTAINER_OF(tag, struct cs_unary, tag);
    (void)ok; /* a failure shows in the status */
    if (u->done_cb != NULL) {
        grpc_status_code code = u->status;
        grpc_slice bytes = grpc_empty_slice();
        if (code == GRPC_STATUS_OK && u->reply == NULL)
            code = GRPC_STATUS_INTERNAL;
        if (code == GRPC_STATUS_OK) {
            grpc_byte_buffer_reader reader;
            if (grpc_byte_buffer_reader_init(&reader, u->reply)) {
                bytes = grpc_byte_buffer_reader_readall(&reader);
                grpc_byte_buffer_reader_destroy(&reader);
            }
        }
        char *message = grpc_slice_to_c_string(u->details);
        u->done_cb(u->arg, code, code == GRPC_STATUS_OK ? "" : message, GRPC_SLICE_START_PTR(bytes),
                   GRPC_SLICE_LENGTH(bytes));
        gpr_free(message);
        grpc_slice_unref(bytes);
    }
    unary_free(u);
}

struct cs_unary *cs_unary_call(struct cs_unary_peers *peers, const char *target, const char *method,
                               const ProtobufCMessage *request, int64_t timeout_ms,
                               cs_rpc_unary_done_cb done_cb, void *arg)
{
    CS_ASSERT_LOOP();
    if (peers->stopped)
        return NULL;
    struct cs_unary *u = cs_xcalloc(1, sizeof(*u));
    u->peers = peers;
    u->done_cb = done_cb;
    u->arg = arg;
    u->tag.done_cb = batch_done_cb;
    u->details = grpc_empty_slice();
    grpc_metadata_array_init(&u->initial);
    grpc_metadata_array_init(&u->trailing);
    cs_queue_push(&peers->calls, &u->link);
    cs_forward_md_fill(peers->forward, u->md, "replica", "replica");
    gpr_timespec deadline =
        gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
    grpc_slice path = grpc_slice_from_copied_string(method);
    u->call =
        grpc_channel_create_call(cs_unary_channel(peers, target), NULL, GRPC_PROPAGATE_DEFAULTS,
                                 peers->forward->cq, path, NULL, deadline, NULL);
    grpc_slice_unref(path);
    u->request = cs_call_pack(request);

    grpc_op ops[6];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = CS_ARRAY_LEN(u->md);
    ops[0].data.send_initial_metadata.metadata = u->md;
    /* A replica started again is reconnected to within the deadline, not
     * failed at once while the connection to its last process is down. */
    ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = u->request;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &u->initial;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &u->reply;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &u->trailing;
    ops[5].data.recv_status_on_client.status = &u->status;
    ops[5].data.recv_status_on_client.status_details = &u->details;
    CS_ASSERT(grpc_call_start_batch(u->call, ops, CS_ARRAY_LEN(ops), &u->tag, NULL) ==
              GRPC_CALL_OK);
    return u;
}

void cs_unary_abandon(struct cs_unary *u)
{
    CS_ASSERT_LOOP();
    u->done_cb = NULL;
    grpc_call_cancel(u->call, NULL);
}

void cs_unary_peers_stop(struct cs_unary_peers *peers)
{
    peers->stopped = true;
    for (struct cs_qlink *l = peers->calls.head; l != NULL; l = l->next)
        grpc_call_cancel(CS_CONTAINER_OF(l, struct cs_unary, link)->call, NULL);
    while (peers->channels != NULL) {
        struct cs_unary_channel *c = peers->channels;
        peers->channels = c->next;
        grpc_channel_destroy(c->channel); /* its calls keep what they need */
        free(c);
    }
}
