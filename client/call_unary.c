/* Unary calls: one batch with every op, one private completion queue, and a
 * wait on the caller's thread until gRPC completes it (the call's deadline
 * bounds the wait).
 *
 * Runs on the caller's thread; shares nothing with other calls but the
 * channel, which gRPC makes thread-safe.
 */
#include <errno.h>
#include <grpc/support/time.h>
#include <string.h>

#include "call.h"

/* Fills the six ops of a unary call. */
static void call_ops(struct cs__call_state *uc, uint32_t md_flags, grpc_op ops[6])
{
    memset(ops, 0, 6 * sizeof(*ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].flags = md_flags;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = uc->send_buf;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &uc->initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &uc->recv_buf;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &uc->trailing_md;
    ops[5].data.recv_status_on_client.status = &uc->code;
    ops[5].data.recv_status_on_client.status_details = &uc->details;
    ops[5].data.recv_status_on_client.error_string = &uc->error_string;
}

int cs__call_unary(struct cs_client *client, const char *path,
                   const ProtobufCMessageDescriptor *req_desc, const ProtobufCMessage *request,
                   const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **response,
                   const struct cs_call_opts *opts, struct cs_status *status)
{
    struct cs__call_state uc;
    gpr_timespec deadline;
    grpc_op ops[6];
    grpc_event ev;
    int rc;

    cs__call_state_init(&uc);
    if (response != NULL)
        *response = NULL;
    if (client == NULL || response == NULL) {
        rc = cs__status_local(status, -EINVAL, "NULL client or response");
        goto out;
    }
    if (cs__call_deadline(opts, CS_UNARY_DEFAULT_TIMEOUT_MS, &deadline) != 0) {
        rc = cs__status_local(status, -EINVAL, "negative timeout_ms");
        goto out;
    }
    rc = cs__message_pack(req_desc, request, &uc.send_buf);
    if (rc != 0) {
        cs__status_local(status, rc, "request");
        goto out;
    }

    cs__call_state_start(&uc, client, path, deadline);
    call_ops(&uc, cs__call_md_flags(opts), ops);
    if (grpc_call_start_batch(uc.call, ops, 6, &uc, NULL) != GRPC_CALL_OK) {
        cs__status_set(status, GRPC_STATUS_INTERNAL, "libcsched: grpc_call_start_batch failed");
        rc = GRPC_STATUS_INTERNAL;
        goto out;
    }
    /* The deadline set on the call bounds this wait. */
    do {
        ev = grpc_completion_queue_next(uc.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    } while (ev.type != GRPC_OP_COMPLETE || ev.tag != &uc);

    if (uc.code != GRPC_STATUS_OK) {
        cs__status_from_grpc(status, uc.code, uc.details, uc.error_string);
        rc = (int)uc.code;
        goto out;
    }
    if (uc.recv_buf == NULL) {
        cs__status_set(status, GRPC_STATUS_INTERNAL, "server answered OK without a message");
        rc = GRPC_STATUS_INTERNAL;
        goto out;
    }
    if (cs__message_unpack(resp_desc, uc.recv_buf, response) != 0) {
        cs__status_set(status, GRPC_STATUS_INTERNAL, "cannot parse the server's reply");
        rc = GRPC_STATUS_INTERNAL;
        goto out;
    }
    cs__status_set(status, GRPC_STATUS_OK, "");
    rc = 0;
out:
    cs__call_state_close(&uc);
    return rc;
}
