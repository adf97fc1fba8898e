/* rpc_forward: a standby's call relayed to the active replica, and the
 * identity of a call another replica relayed here (rpc_forward.h). Loop
 * thread; the upstream call's batches complete through the bridge.
 *
 * A forward has three batches upstream: the start (metadata, the request,
 * the half-close, the initial metadata back), the status, and one message
 * read at a time. The call downstream ends once the status has come and
 * every message has been read: a unary reply goes out with its status, a
 * stream's messages through the call's queue (rpc_stream.c) and its status
 * after them. */
#define CS_LOG_COMPONENT "rpc"
#include "rpc_forward.h"

#include <errno.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rpc_call.h"
#include "status_details.h"

/* Reconnecting to another replica: 100 ms after a failure, growing to 1 s. */
#define PEER_RECONNECT_FIRST_MS 100
#define PEER_RECONNECT_MAX_MS 1000

struct forward {
    struct cs_qlink link; /* in peers->calls */
    struct cs_forward_peers *peers;
    struct cs_call *down;
    grpc_call *up;
    /* Counted in, unless dropped since; NULL for a relay to a worker, on a
     * channel of rpc_unary's. */
    struct cs_forward_channel *channel;
    unsigned generation;
    char target[CS_RPC_TARGET_MAX];
    struct cs_tag start_tag, status_tag, recv_tag;
    int pending; /* upstream batches in flight */
    grpc_metadata md[4];
    grpc_metadata_array initial, trailing;
    grpc_byte_buffer *request; /* until the start batch completes */
    grpc_byte_buffer *received;
    grpc_byte_buffer *reply; /* a unary call's, until its status */
    grpc_status_code status;
    grpc_slice details;
    bool status_done;
    bool messages_done; /* the last read found no message */
    bool ended;         /* the call downstream has been ended */
};

static const char *const role_names[] = {
    [CS_ROLE_NONE] = "none",   [CS_ROLE_VIEWER] = "viewer",   [CS_ROLE_OPERATOR] = "operator",
    [CS_ROLE_ADMIN] = "admin", [CS_ROLE_REPLICA] = "replica",
};

/* --- the side that takes forwarded calls ----------------------------------- */

static const char *cluster_key(const struct cs_forward_peers *peers)
{
    return peers->key_cb != NULL ? peers->key_cb(peers->key_arg) : "";
}

static const grpc_slice *find(const grpc_metadata_array *metadata, const char *key)
{
    for (size_t i = 0; i < metadata->count; i++)
        if (grpc_slice_str_cmp(metadata->metadata[i].key, key) == 0)
            return &metadata->metadata[i].value;
    return NULL;
}

/* Compares all of both, whatever differs first: the time says nothing of
 * the key. */
static bool key_matches(const char *key, const grpc_slice *offered)
{
    size_t len = strlen(key);
    unsigned diff = GRPC_SLICE_LENGTH(*offered) != len || len == 0;
    const uint8_t *p = GRPC_SLICE_START_PTR(*offered);
    for (size_t i = 0; i < len && i < GRPC_SLICE_LENGTH(*offered); i++)
        diff |= (unsigned)(p[i] ^ (uint8_t)key[i]);
    return diff == 0;
}

static void copy_slice(char *dst, size_t cap, const grpc_slice *s)
{
    size_t n = s != NULL ? GRPC_SLICE_LENGTH(*s) : 0;
    if (n >= cap)
        n = cap - 1;
    if (n > 0)
        memcpy(dst, GRPC_SLICE_START_PTR(*s), n);
    dst[n] = '\0';
}

int cs_forward_identify(const struct cs_forward_peers *peers, const grpc_metadata_array *metadata,
                        struct cs_identity *who, struct cs_err *err)
{
    const grpc_slice *key = find(metadata, CS_FORWARD_KEY_HEADER);
    if (key == NULL)
        return -ENOENT;
    if (!key_matches(cluster_key(peers), key))
        return cs_err_set(err, -EPERM,
                          "a forwarded call whose cluster key is not this replica's: only "
                          "replicas of this database forward calls");
    char role[16], name[200];
    copy_slice(role, sizeof(role), find(metadata, CS_FORWARD_ROLE_HEADER));
    copy_slice(name, sizeof(name), find(metadata, CS_FORWARD_NAME_HEADER));
    copy_slice(who->via, sizeof(who->via), find(metadata, CS_FORWARD_BY_HEADER));
    who->role = CS_ROLE_NONE;
    for (size_t r = 0; r < CS_ARRAY_LEN(role_names); r++)
        if (strcmp(role, role_names[r]) == 0)
            who->role = (enum cs_role)r;
    /* Cut to fit: the name is the audit trail's, not a key. */
    (void)snprintf(who->name, sizeof(who->name), "%.180s via %.63s", name, who->via);
    return 0;
}

/* --- the side that forwards ------------------------------------------------ */

static void forward_free(struct forward *f)
{
    cs_queue_remove(&f->peers->calls, &f->link);
    if (f->channel != NULL && f->generation == f->peers->generation)
        f->channel->calls--;
    grpc_call_unref(f->up);
    grpc_metadata_array_destroy(&f->initial);
    grpc_metadata_array_destroy(&f->trailing);
    for (size_t i = 0; i < CS_ARRAY_LEN(f->md); i++)
        grpc_slice_unref(f->md[i].value);
    grpc_slice_unref(f->details);
    if (f->reply != NULL)
        grpc_byte_buffer_destroy(f->reply);
    free(f);
}

/* The other replica's status, as the client should read it: a failure to
 * reach it says where the call went. */
static char *status_message(const struct forward *f)
{
    char *details = grpc_slice_to_c_string(f->details);
    char *msg;
    if (f->status == GRPC_STATUS_UNAVAILABLE || f->status == GRPC_STATUS_DEADLINE_EXCEEDED) {
        size_t cap = strlen(details) + sizeof(f->target) + 64;
        msg = cs_xmalloc(cap);
        (void)snprintf(msg, cap, "%s at %s: %s",
                       f->channel != NULL ? "forwarded to the active replica"
                                          : "relayed to the replica running it",
                       f->target, details);
    } else {
        msg = cs_xstrdup(details);
    }
    gpr_free(details);
    return msg;
}

/* Ends the call downstream once the status has come and every message has
 * been read; frees the forward once nothing upstream is in flight either. */
static void maybe_end(struct forward *f)
{
    if (!f->ended && f->status_done && f->messages_done) {
        f->ended = true;
        struct cs_call *down = f->down;
        const grpc_slice *rich = find(&f->trailing, CS_STATUS_DETAILS_KEY);
        if (rich != NULL && f->status != GRPC_STATUS_OK)
            cs_call_keep_details(down, *rich);
        char *msg = status_message(f);
        if ((down->method->streaming & CS_STREAM_SERVER) != 0) {
            cs_call_finish(down, f->status, msg);
        } else {
            grpc_status_code code = f->status;
            if (code == GRPC_STATUS_OK && f->reply == NULL)
                code = GRPC_STATUS_INTERNAL;
            cs_call_finish_with(down, code, code == GRPC_STATUS_OK ? "" : msg,
                                code == GRPC_STATUS_OK ? f->reply : NULL);
            f->reply = code == GRPC_STATUS_OK ? NULL : f->reply;
        }
        free(msg);
    }
    if (f->ended && f->pending == 0)
        forward_free(f);
}

static void read_next(struct forward *f)
{
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &f->received;
    CS_ASSERT(grpc_call_start_batch(f->up, &op, 1, &f->recv_tag, NULL) == GRPC_CALL_OK);
    f->pending++;
}

static void received_cb(struct cs_tag *tag, bool ok)
{
    struct forward *f = CS_CONTAINER_OF(tag, struct forward, recv_tag);
    grpc_byte_buffer *msg = f->received;
    f->received = NULL;
    f->pending--;
    if (!ok || msg == NULL) {
        f->messages_done = true;
    } else if ((f->down->method->streaming & CS_STREAM_SERVER) == 0) {
        f->reply = msg; /* a unary call's one reply */
        msg = NULL;
        f->messages_done = true;
    } else if (f->ended || !cs_call_push_bytes(f->down, msg)) {
        /* The client is gone: the status, cancelled, ends it. */
        grpc_call_cancel(f->up, NULL);
        f->messages_done = true;
    }
    /* Otherwise the next read waits for drained_cb: one message at a time. */
    if (msg != NULL)
        grpc_byte_buffer_destroy(msg);
    maybe_end(f);
}

static void drained_cb(struct cs_call *call, void *ctx)
{
    (void)call;
    struct forward *f = ctx;
    if (!f->messages_done && !f->ended)
        read_next(f);
}

static void cancel_cb(struct cs_call *call, void *ctx)
{
    (void)call;
    struct forward *f = ctx;
    grpc_call_cancel(f->up, NULL);
}

static const struct cs_stream_ops forward_stream_ops = {
    .drained_cb = drained_cb,
    .cancel_cb = cancel_cb,
};

static void status_cb(struct cs_tag *tag, bool ok)
{
    (void)ok;
    struct forward *f = CS_CONTAINER_OF(tag, struct forward, status_tag);
    f->pending--;
    f->status_done = true;
    maybe_end(f);
}

static void start_cb(struct cs_tag *tag, bool ok)
{
    (void)ok; /* a failure shows in the status */
    struct forward *f = CS_CONTAINER_OF(tag, struct forward, start_tag);
    f->pending--;
    grpc_byte_buffer_destroy(f->request);
    f->request = NULL;
    maybe_end(f);
}

static void drop_channels(struct cs_forward_peers *peers)
{
    for (size_t i = 0; i < CS_FORWARD_CONNECTIONS_MAX; i++) {
        if (peers->channels[i].channel != NULL)
            grpc_channel_destroy(peers->channels[i].channel); /* its calls keep what they need */
        peers->channels[i] = (struct cs_forward_channel){0};
    }
    peers->generation++;
}

/* A channel to target with room for one more call: the first with fewer
 * than CS_FORWARD_CALLS_PER_CONNECTION, else a new one, else the least
 * busy. Each has a connection of its own (a local subchannel pool). */
static struct cs_forward_channel *channel_to(struct cs_forward_peers *peers, const char *target)
{
    if (strcmp(peers->target, target) != 0) {
        drop_channels(peers);
        (void)snprintf(peers->target, sizeof(peers->target), "%s", target);
    }
    struct cs_forward_channel *least = &peers->channels[0];
    for (size_t i = 0; i < CS_FORWARD_CONNECTIONS_MAX; i++) {
        struct cs_forward_channel *c = &peers->channels[i];
        if (c->channel == NULL || c->calls < CS_FORWARD_CALLS_PER_CONNECTION) {
            least = c;
            break;
        }
        if (c->calls < least->calls)
            least = c;
    }
    if (least->channel == NULL) {
        grpc_arg arg = {.type = GRPC_ARG_INTEGER,
                        .key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
                        .value.integer = 1};
        grpc_channel_args args = {.num_args = 1, .args = &arg};
        least->channel = cs_forward_channel_new(peers, target, &args);
    }
    return least;
}

grpc_channel *cs_forward_channel_new(const struct cs_forward_peers *peers, const char *target,
                                     const grpc_channel_args *args)
{
    /* A unix socket is this machine's: no TLS. */
    bool local = strncmp(target, "unix:", 5) == 0;
    grpc_channel_credentials *creds =
        !local && peers->tcp_creds != NULL ? peers->tcp_creds : grpc_insecure_credentials_create();
    /* A replica killed and started again at the same address is reached
     * within a second: gRPC's own backoff grows to two minutes, past every
     * deadline of a call between replicas. */
    grpc_arg all[8] = {
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
         .value.integer = PEER_RECONNECT_FIRST_MS},
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
         .value.integer = PEER_RECONNECT_MAX_MS},
    };
    grpc_channel_args merged = {.num_args = 2, .args = all};
    for (size_t i = 0; args != NULL && i < args->num_args; i++) {
        CS_ASSERT(merged.num_args < CS_ARRAY_LEN(all));
        all[merged.num_args++] = args->args[i];
    }
    grpc_channel *channel = grpc_channel_create(target, creds, &merged);
    if (creds != peers->tcp_creds)
        grpc_channel_credentials_release(creds);
    return channel;
}

static void set_md(grpc_metadata *md, const char *key, const char *value)
{
    md->key = grpc_slice_from_static_string(key);
    md->value = grpc_slice_from_copied_string(value);
}

void cs_forward_md_fill(const struct cs_forward_peers *peers, grpc_metadata md[4], const char *role,
                        const char *name)
{
    set_md(&md[0], CS_FORWARD_KEY_HEADER, cluster_key(peers));
    set_md(&md[1], CS_FORWARD_BY_HEADER, peers->replica_id);
    set_md(&md[2], CS_FORWARD_ROLE_HEADER, role);
    set_md(&md[3], CS_FORWARD_NAME_HEADER, name);
}

/* Opens method at target on channel for call, with role and the caller's
 * name, and relays payload (taken) up and the replies down. */
static void forward_start(struct cs_forward_peers *peers, struct cs_call *call,
                          grpc_channel *channel, const char *target, const char *method,
                          enum cs_role role, grpc_byte_buffer *payload, gpr_timespec deadline,
                          struct forward *f)
{
    f->peers = peers;
    f->down = call;
    (void)snprintf(f->target, sizeof(f->target), "%s", target);
    f->start_tag.done_cb = start_cb;
    f->status_tag.done_cb = status_cb;
    f->recv_tag.done_cb = received_cb;
    f->details = grpc_empty_slice();
    grpc_metadata_array_init(&f->initial);
    grpc_metadata_array_init(&f->trailing);
    cs_queue_push(&peers->calls, &f->link);
    call->forwarded = true;
    if ((call->method->streaming & CS_STREAM_SERVER) != 0)
        cs_call_set_stream_ops(call, &forward_stream_ops, f);

    cs_forward_md_fill(peers, f->md, role_names[role], call->who.name);
    grpc_slice path = grpc_slice_from_static_string(method);
    f->up = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, peers->cq, path, NULL,
                                     deadline, NULL);

    grpc_op ops[4];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = CS_ARRAY_LEN(f->md);
    ops[0].data.send_initial_metadata.metadata = f->md;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    f->request = payload;
    ops[1].data.send_message.send_message = payload;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &f->initial;
    CS_ASSERT(grpc_call_start_batch(f->up, ops, 4, &f->start_tag, NULL) == GRPC_CALL_OK);
    f->pending++;

    grpc_op status;
    memset(&status, 0, sizeof(status));
    status.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    status.data.recv_status_on_client.trailing_metadata = &f->trailing;
    status.data.recv_status_on_client.status = &f->status;
    status.data.recv_status_on_client.status_details = &f->details;
    CS_ASSERT(grpc_call_start_batch(f->up, &status, 1, &f->status_tag, NULL) == GRPC_CALL_OK);
    f->pending++;
    read_next(f);
}

void cs_forward_call(struct cs_forward_peers *peers, struct cs_call *call, const char *target,
                     grpc_byte_buffer *payload, gpr_timespec deadline)
{
    struct forward *f = cs_xcalloc(1, sizeof(*f));
    f->channel = channel_to(peers, target);
    f->channel->calls++;
    f->generation = peers->generation;
    forward_start(peers, call, f->channel->channel, target, call->method->path, call->who.role,
                  payload, deadline, f);
}

void cs_forward_relay(struct cs_forward_peers *peers, struct cs_call *call, grpc_channel *channel,
                      const char *target, const char *method, grpc_byte_buffer *payload,
                      gpr_timespec deadline)
{
    forward_start(peers, call, channel, target, method, CS_ROLE_REPLICA, payload, deadline,
                  cs_xcalloc(1, sizeof(struct forward)));
}

void cs_forward_peers_stop(struct cs_forward_peers *peers)
{
    for (struct cs_qlink *l = peers->calls.head; l != NULL; l = l->next)
        grpc_call_cancel(CS_CONTAINER_OF(l, struct forward, link)->up, NULL);
    drop_channels(peers);
}

void cs_forward_peers_free(struct cs_forward_peers *peers)
{
    if (peers->tcp_creds != NULL)
        grpc_channel_credentials_release(peers->tcp_creds);
    peers->tcp_creds = NULL;
}
