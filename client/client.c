/* libcsched's client handle and the helpers every call shares: gRPC's
 * process-wide start and stop (refcounted over live clients), deadlines,
 * status records, the state every call holds, and message (de)serialisation.
 *
 * Runs on the caller's threads. Invariant: gRPC is initialised exactly while
 * at least one cs_client exists (init_refs > 0).
 */
#include <errno.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "grpc_locks.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned init_refs;

static const char *const status_names[] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

static void grpc_ref(void)
{
    pthread_mutex_lock(&init_lock);
    if (init_refs++ == 0) {
        cs_grpc_locks_unchecked();
        grpc_init();
    }
    pthread_mutex_unlock(&init_lock);
}

static void grpc_unref(void)
{
    pthread_mutex_lock(&init_lock);
    /* Blocking, so that no gRPC thread outlives the last client. */
    if (--init_refs == 0)
        grpc_shutdown_blocking();
    pthread_mutex_unlock(&init_lock);
}

int cs_client_default_target(char *buf, size_t cap)
{
    const char *path = getenv("CSCHED_SOCKET");
    if (path == NULL || path[0] == '\0')
        path = CS_CLIENT_DEFAULT_SOCKET;
    int n = snprintf(buf, cap, "unix:%s", path);
    return n >= 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

int cs_client_new(const char *target, struct cs_client **out)
{
    return cs_client_new_opts(target, NULL, out);
}

int cs_client_new_opts(const char *target, const struct cs_client_opts *opts,
                       struct cs_client **out)
{
    struct cs_client *client;
    grpc_channel_credentials *creds = NULL;
    int rc;

    if (out == NULL)
        return -EINVAL;
    *out = NULL;
    if (target == NULL || target[0] == '\0')
        return -EINVAL;

    client = calloc(1, sizeof(*client));
    if (client == NULL)
        return -ENOMEM;
    grpc_ref();
    rc = cs__channel_credentials(opts, &creds);
    if (rc != 0) {
        free(client);
        grpc_unref();
        return rc;
    }
    client->channel = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    *out = client;
    return 0;
}

void cs_client_free(struct cs_client *client)
{
    if (client == NULL)
        return;
    grpc_channel_destroy(client->channel);
    free(client);
    grpc_unref();
}

const char *cs_status_code_name(int code)
{
    if (code < 0 || (size_t)code >= sizeof(status_names) / sizeof(status_names[0]))
        return "UNKNOWN_CODE";
    return status_names[code];
}

const char *cs_run_state_name(int state)
{
    /* The proto's RunState names without their RUN_STATE_ prefix, in lower
     * case; unit_client checks them against the enum's descriptor. */
    static const char *const names[] = {
        "unspecified", "queued",    "starting",  "running", "succeeded",
        "failed",      "timed_out", "cancelled", "lost",
    };

    if (state < 0 || (size_t)state >= sizeof(names) / sizeof(names[0]))
        return "unknown";
    return names[state];
}

void cs__status_set(struct cs_status *status, int code, const char *message)
{
    if (status == NULL)
        return;
    status->code = code;
    snprintf(status->message, sizeof(status->message), "%s", message ? message : "");
}

void cs__status_from_grpc(struct cs_status *status, grpc_status_code code, grpc_slice details,
                          const char *error_string)
{
    size_t len = GRPC_SLICE_LENGTH(details);

    if (status == NULL)
        return;
    status->code = (int)code;
    if (len == 0 && code != GRPC_STATUS_OK && error_string != NULL) {
        snprintf(status->message, sizeof(status->message), "%s", error_string);
        return;
    }
    if (len >= sizeof(status->message))
        len = sizeof(status->message) - 1;
    memcpy(status->message, GRPC_SLICE_START_PTR(details), len);
    status->message[len] = '\0';
}

int cs__status_local(struct cs_status *status, int rc, const char *what)
{
    int code = rc == -ENOMEM ? GRPC_STATUS_RESOURCE_EXHAUSTED : GRPC_STATUS_INVALID_ARGUMENT;
    char msg[256];

    snprintf(msg, sizeof(msg), "libcsched: %s: %s", what, strerror(-rc));
    cs__status_set(status, code, msg);
    return rc;
}

int cs__call_deadline(const struct cs_call_opts *opts, int64_t default_ms, gpr_timespec *out)
{
    int64_t ms = opts != NULL ? opts->timeout_ms : 0;

    if (ms < 0)
        return -EINVAL;
    if (ms == 0)
        ms = default_ms;
    if (ms <= 0) {
        *out = gpr_inf_future(GPR_CLOCK_MONOTONIC);
        return 0;
    }
    *out = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
    return 0;
}

void cs__call_state_init(struct cs__call_state *st)
{
    memset(st, 0, sizeof(*st));
    st->code = GRPC_STATUS_UNKNOWN;
    st->details = grpc_empty_slice();
    grpc_metadata_array_init(&st->initial_md);
    grpc_metadata_array_init(&st->trailing_md);
}

void cs__call_state_start(struct cs__call_state *st, struct cs_client *client, const char *path,
                          gpr_timespec deadline)
{
    st->cq = grpc_completion_queue_create_for_next(NULL);
    st->call = grpc_channel_create_call(client->channel, NULL, GRPC_PROPAGATE_DEFAULTS, st->cq,
                                        grpc_slice_from_static_string(path), NULL, deadline, NULL);
}

void cs__call_state_close(struct cs__call_state *st)
{
    if (st->call != NULL)
        grpc_call_unref(st->call);
    if (st->cq != NULL) {
        grpc_completion_queue_shutdown(st->cq);
        while (grpc_completion_queue_next(st->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
               GRPC_QUEUE_SHUTDOWN)
            ;
        grpc_completion_queue_destroy(st->cq);
    }
    if (st->send_buf != NULL)
        grpc_byte_buffer_destroy(st->send_buf);
    if (st->recv_buf != NULL)
        grpc_byte_buffer_destroy(st->recv_buf);
    grpc_metadata_array_destroy(&st->initial_md);
    grpc_metadata_array_destroy(&st->trailing_md);
    grpc_slice_unref(st->details);
    gpr_free((void *)st->error_string);
}

uint32_t cs__call_md_flags(const struct cs_call_opts *opts)
{
    if (opts == NULL || !opts->wait_for_ready)
        return 0;
    return GRPC_INITIAL_METADATA_WAIT_FOR_READY |
           GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
}

int cs__message_pack(const ProtobufCMessageDescriptor *desc, const ProtobufCMessage *request,
                     grpc_byte_buffer **out)
{
    grpc_slice slice;
    size_t len;

    if (request != NULL && request->descriptor != desc)
        return -EINVAL;
    len = request != NULL ? protobuf_c_message_get_packed_size(request) : 0;
    /* grpc_slice_malloc would abort on exhaustion; a library must not. */
    if (len > 0) {
        uint8_t *buf = malloc(len);

        if (buf == NULL)
            return -ENOMEM;
        protobuf_c_message_pack(request, buf);
        slice = grpc_slice_new(buf, len, free);
    } else {
        slice = grpc_empty_slice();
    }
    *out = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return 0;
}

int cs__message_unpack(const ProtobufCMessageDescriptor *desc, grpc_byte_buffer *buffer,
                       ProtobufCMessage **out)
{
    grpc_byte_buffer_reader reader;
    grpc_slice all;

    if (!grpc_byte_buffer_reader_init(&reader, buffer))
        return -EPROTO;
    all = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    *out = protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    return *out != NULL ? 0 : -EPROTO;
}
