/* http_call: the HTTP API's gRPC calls to cschedd itself (see http_call.h).
 * Each call has its own completion queue and three batches: the request
 * (metadata, message, half-close and the reply's initial metadata), the
 * next message, and the status. Only the thread that made a call uses it. */
#include <errno.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "auth.h"
#include "http_call.h"
#include "util.h"

enum { TAG_START, TAG_MESSAGE, TAG_STATUS, N_TAGS };

struct cs_http_call {
    grpc_call *call;
    grpc_completion_queue *cq;
    char tags[N_TAGS]; /* their addresses are the batches' tags */
    bool pending[N_TAGS];
    grpc_metadata auth;
    char *auth_value;
    grpc_metadata_array initial, trailing;
    grpc_byte_buffer *received;
    bool reads_done; /* the last message has been read */
    grpc_status_code code;
    grpc_slice details;
    bool ended; /* the status has arrived */
    struct cs_http_status status;
};

int cs_http_link_open(grpc_channel **out, int *server_fd)
{
    int fds[2];
    /* Non-blocking, as gRPC takes an fd: it reads it from its own pollers. */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
        return -errno;
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    /* The pair is this process's own: the channel never reconnects, so
     * gRPC must not give it up for idleness. */
    grpc_arg args[] = {
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS,
         .value.integer = INT32_MAX},
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, .value.integer = -1},
    };
    grpc_channel_args chargs = {CS_ARRAY_LEN(args), args};
    *out = grpc_channel_create_from_fd("cschedd-http", fds[0], creds, &chargs);
    grpc_channel_credentials_release(creds);
    *server_fd = fds[1];
    return 0;
}

static void start_batch(struct cs_http_call *c, int tag, const grpc_op *ops, size_t n)
{
    grpc_call_error rc = grpc_call_start_batch(c->call, ops, n, &c->tags[tag], NULL);
    CS_ASSERT(rc == GRPC_CALL_OK);
    c->pending[tag] = true;
}

static void read_next(struct cs_http_call *c)
{
    grpc_op op = {.op = GRPC_OP_RECV_MESSAGE};
    op.data.recv_message.recv_message = &c->received;
    start_batch(c, TAG_MESSAGE, &op, 1);
}

struct cs_http_call *cs_http_call_start(grpc_channel *channel, const char *path,
                                        const struct cs_http_caller *caller, const uint8_t *request,
                                        size_t len, int deadline_s)
{
    struct cs_http_call *c = cs_xcalloc(1, sizeof(*c));
    c->cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec deadline = deadline_s > 0
                                ? gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                               gpr_time_from_seconds(deadline_s, GPR_TIMESPAN))
                                : gpr_inf_future(GPR_CLOCK_MONOTONIC);
    grpc_slice method = grpc_slice_from_copied_string(path);
    c->call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, method, NULL,
                                       deadline, NULL);
    grpc_slice_unref(method);
    size_t n_md = 0;
    if (caller->token != NULL) {
        size_t n = strlen("Bearer ") + strlen(caller->token) + 1;
        c->auth_value = cs_xmalloc(n);
        (void)snprintf(c->auth_value, n, "Bearer %s", caller->token);
        c->auth.key = grpc_slice_from_static_string("authorization");
        n_md = 1;
    } else if (caller->token_sha256 != NULL) {
        c->auth_value = cs_xstrdup(caller->token_sha256);
        c->auth.key = grpc_slice_from_static_string(CS_AUTH_SESSION_KEY);
        n_md = 1;
    }
    if (n_md > 0)
        c->auth.value = grpc_slice_from_static_string(c->auth_value);
    grpc_slice body = grpc_slice_from_copied_buffer((const char *)request, len);
    grpc_byte_buffer *msg = grpc_raw_byte_buffer_create(&body, 1);
    grpc_slice_unref(body);
    grpc_op ops[4] = {{.op = GRPC_OP_SEND_INITIAL_METADATA},
                      {.op = GRPC_OP_SEND_MESSAGE},
                      {.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT},
                      {.op = GRPC_OP_RECV_INITIAL_METADATA}};
    ops[0].data.send_initial_metadata.count = n_md;
    ops[0].data.send_initial_metadata.metadata = n_md ? &c->auth : NULL;
    ops[1].data.send_message.send_message = msg;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->initial;
    start_batch(c, TAG_START, ops, CS_ARRAY_LEN(ops));
    grpc_byte_buffer_destroy(msg); /* gRPC holds its own reference */
    grpc_op st = {.op = GRPC_OP_RECV_STATUS_ON_CLIENT};
    st.data.recv_status_on_client.trailing_metadata = &c->trailing;
    st.data.recv_status_on_client.status = &c->code;
    st.data.recv_status_on_client.status_details = &c->details;
    start_batch(c, TAG_STATUS, &st, 1);
    read_next(c);
    return c;
}

/* The status's text and rich details, copied out of gRPC's. */
static void keep_status(struct cs_http_call *c)
{
    struct cs_http_status *s = &c->status;
    s->code = c->code;
    size_t n = GRPC_SLICE_LENGTH(c->details);
    if (n >= sizeof(s->message))
        n = sizeof(s->message) - 1;
    memcpy(s->message, GRPC_SLICE_START_PTR(c->details), n);
    s->message[n] = '\0';
    for (size_t i = 0; i < c->trailing.count; i++) {
        const grpc_metadata *md = &c->trailing.metadata[i];
        if (grpc_slice_str_cmp(md->key, "grpc-status-details-bin") != 0 || s->details != NULL)
            continue;
        s->details_len = GRPC_SLICE_LENGTH(md->value);
        s->details = cs_xmalloc(s->details_len + 1);
        memcpy(s->details, GRPC_SLICE_START_PTR(md->value), s->details_len);
    }
    c->ended = true;
}

static void take_message(struct cs_http_call *c, uint8_t **msg, size_t *len)
{
    grpc_byte_buffer_reader reader;
    CS_ASSERT(grpc_byte_buffer_reader_init(&reader, c->received));
    grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    grpc_byte_buffer_destroy(c->received);
    c->received = NULL;
    *len = GRPC_SLICE_LENGTH(all);
    *msg = cs_xmalloc(*len + 1);
    memcpy(*msg, GRPC_SLICE_START_PTR(all), *len);
    grpc_slice_unref(all);
}

int cs_http_call_next(struct cs_http_call *c, int wait_ms, uint8_t **msg, size_t *len)
{
    gpr_timespec deadline = wait_ms < 0 ? gpr_inf_future(GPR_CLOCK_MONOTONIC)
                                        : gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                                       gpr_time_from_millis(wait_ms, GPR_TIMESPAN));
    for (;;) {
        /* The status may come before the last messages are read: the call
         * has ended only once both are in. */
        if (c->ended && c->reads_done)
            return CS_HTTP_CALL_ENDED;
        if (!c->reads_done && !c->pending[TAG_MESSAGE])
            read_next(c);
        grpc_event ev = grpc_completion_queue_next(c->cq, deadline, NULL);
        if (ev.type == GRPC_QUEUE_TIMEOUT)
            return 0;
        CS_ASSERT(ev.type == GRPC_OP_COMPLETE);
        int tag = (int)((char *)ev.tag - c->tags);
        c->pending[tag] = false;
        if (tag == TAG_STATUS) {
            keep_status(c);
        } else if (tag == TAG_MESSAGE) {
            if (!ev.success || c->received == NULL) {
                c->reads_done = true;
                continue;
            }
            take_message(c, msg, len);
            return 1;
        }
    }
}

const struct cs_http_status *cs_http_call_status(const struct cs_http_call *c)
{
    return &c->status;
}

void cs_http_call_free(struct cs_http_call *c)
{
    if (c == NULL)
        return;
    if (!c->ended)
        grpc_call_cancel(c->call, NULL);
    while (c->pending[TAG_START] || c->pending[TAG_MESSAGE] || c->pending[TAG_STATUS]) {
        grpc_event ev =
            grpc_completion_queue_next(c->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        c->pending[(char *)ev.tag - c->tags] = false;
    }
    if (c->received != NULL)
        grpc_byte_buffer_destroy(c->received);
    grpc_call_unref(c->call);
    grpc_completion_queue_shutdown(c->cq);
    while (grpc_completion_queue_next(c->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(c->cq);
    grpc_metadata_array_destroy(&c->initial);
    grpc_metadata_array_destroy(&c->trailing);
    grpc_slice_unref(c->details);
    free(c->auth_value);
    free(c->status.details);
    free(c);
}
