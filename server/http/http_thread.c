/* http: the HTTP API's server (see http.h). libmicrohttpd runs one thread
 * per connection (at most CONNECTIONS_MAX), and each request runs on its
 * connection's thread from its first byte to its last: a call waits there
 * for cschedd's answer, a stream for its next event. Start and stop run on
 * the main thread outside the loop. */
#define CS_LOG_COMPONENT "http"
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csched/v1/scheduler.pb-c.h"
#include "http.h"
#include "http_call.h"
#include "http_error.h"
#include "http_session.h"
#include "http_sse.h"
#include "http_static.h"
#include "http_tls.h"
#include "json_codec.h"
#include "log.h"
#include "mhd_glue.h"
#include "net_addr.h"
#include "status_details.h"

/* Connections served at once, each with its thread: streams and calls
 * together. A browser keeps about six per origin. Each connection makes
 * one gRPC call at a time, all on the one connection to the server, which
 * takes CS_RPC_MAX_STREAMS_PER_CONNECTION at once: more would queue one
 * caller's call behind another's streams. */
#define CONNECTIONS_MAX 96
_Static_assert(CONNECTIONS_MAX <= CS_RPC_MAX_STREAMS_PER_CONNECTION,
               "every HTTP connection's call must fit on the API's gRPC connection at once");
/* Streams one caller (one token) may hold open at once: each holds a
 * connection, so no caller takes more than a small share of them. gRPC's
 * own bound per caller (CS_API_STREAMS_PER_CALLER) applies behind it. */
#define STREAMS_PER_CALLER 8
/* The stack of a connection's thread, rather than the default 8 MiB of
 * address space each: jansson's parser nests at most 2048 deep. */
#define THREAD_STACK_BYTES (1024 * 1024)
/* A connection quiet this long is closed; an open stream is never quiet
 * that long (it sends keep-alives every 15 s). */
#define CONNECTION_TIMEOUT_S 60
/* A unary call that has not been answered by then gets deadline_exceeded. */
#define CALL_DEADLINE_S 60
/* How long a new stream waits for its first reply or its refusal before
 * its headers go out: a refusal (role, limits) comes at once. */
#define STREAM_FIRST_WAIT_MS 300

#define API_PREFIX "/csched.v1.Scheduler/"
#define SESSION_COOKIE "csched_session"

/* Sent with every response: no inline script, no framing, no sniffing. */
static const struct {
    const char *name, *value;
} always_headers[] = {
    {"Content-Security-Policy",
     "default-src 'self'; script-src 'self'; object-src 'none'; frame-ancestors 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
};

/* The streams open per caller, by token (or a session's token hash). */
struct stream_count {
    char token[CS_HTTP_TOKEN_MAX + 1]; /* "" when the slot is free */
    unsigned n;
};

struct cs_http {
    const struct cs_http_config *config;
    pthread_mutex_t streams_lock;
    struct stream_count streams[CONNECTIONS_MAX];
    struct MHD_Daemon *daemon;
    grpc_channel *channel;
    struct cs_http_sessions *sessions;
    struct cs_http_static *files;
    struct cs_http_tls *tls; /* NULL: plain HTTP */
};

/* One request's body, gathered as it comes. */
struct request {
    char *body;
    size_t len;
    bool too_large;
    bool answered; /* its response has been queued */
};

static enum MHD_Result send_response(struct MHD_Connection *conn, unsigned status,
                                     struct MHD_Response *r)
{
    if (r == NULL)
        return MHD_NO;
    for (size_t i = 0; i < CS_ARRAY_LEN(always_headers); i++)
        (void)MHD_add_response_header(r, always_headers[i].name, always_headers[i].value);
    enum MHD_Result ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* Sends text (taken, from open_memstream) as an application/json body. */
static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, char *text,
                                 size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_UNAUTHORIZED)
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    return send_response(conn, status, r);
}

/* Connect's error JSON, under http_status (0: the code's own). */
static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned http_status,
                                  grpc_status_code code, const char *message,
                                  const uint8_t *details, size_t details_len)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CS_ASSERT(f != NULL);
    cs_http_error_write(f, code, message, details, details_len);
    fputc('\n', f);
    CS_ASSERT(fclose(f) == 0);
    return send_json(conn, http_status != 0 ? http_status : cs_http_error_status(code), text, len);
}

/* A call's error status. One the server refused as unauthenticated ends
 * the session it was made under: the session's token has been revoked
 * (removed from the tokens file, which SIGHUP rereads). */
static enum MHD_Result send_status(struct cs_http *h, struct MHD_Connection *conn,
                                   const struct cs_http_status *st)
{
    const char *id = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, SESSION_COOKIE);
    if (st->code == GRPC_STATUS_UNAUTHENTICATED && id != NULL &&
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization") == NULL)
        cs_http_session_close(h->sessions, id);
    return send_error(conn, 0, st->code, st->message, st->details, st->details_len);
}

/* invalid_argument naming field, with the BadRequest detail gRPC sends
 * for a field it refuses (status_details.h); field "" is the request as a
 * whole (not JSON, not an object). */
static enum MHD_Result send_bad_field(struct MHD_Connection *conn, const char *field,
                                      const char *why)
{
    char message[512];
    (void)snprintf(message, sizeof(message), "%s%s%s", field, field[0] ? " " : "", why);
    grpc_slice d = cs_status_details_pack(GRPC_STATUS_INVALID_ARGUMENT, message, field);
    enum MHD_Result ok = send_error(conn, 0, GRPC_STATUS_INVALID_ARGUMENT, message,
                                    GRPC_SLICE_START_PTR(d), GRPC_SLICE_LENGTH(d));
    grpc_slice_unref(d);
    return ok;
}

static enum MHD_Result send_plain_error(struct MHD_Connection *conn, unsigned http_status,
                                        grpc_status_code code, const char *message)
{
    return send_error(conn, http_status, code, message, NULL, 0);
}

/* The media type of the request's Content-Type is application/json. */
static bool is_json(struct MHD_Connection *conn)
{
    const char *type =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    size_t n = strlen("application/json");
    return type != NULL && strncasecmp(type, "application/json", n) == 0 &&
           (type[n] == '\0' || type[n] == ';' || type[n] == ' ');
}

/* A request another site's page could have made is refused: CSRF. A
 * mutating call must be a POST of application/json, which no form and no
 * CORS-simple request can send; and an Origin, when the browser sends one,
 * must be this server's own. No CORS header is ever sent, so a browser
 * lets no other origin read an answer either. NULL, or why it is refused. */
static const char *cross_site(const struct cs_http *h, struct MHD_Connection *conn, bool post)
{
    if (post && !is_json(conn))
        return "send Content-Type: application/json (a form or text/plain POST is refused as a "
               "cross-site request)";
    const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    if (origin == NULL)
        return NULL;
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    const char *scheme = h->tls != NULL ? "https://" : "http://";
    size_t sl = strlen(scheme);
    if (host != NULL && strncmp(origin, scheme, sl) == 0 && strcmp(origin + sl, host) == 0)
        return NULL;
    return "the request's Origin is not this server's: cross-origin calls are refused";
}

/* What every POST and stream is checked for first, CSRF then size: true
 * when the request is refused, *ok then the answer's result. */
static bool refuse_early(const struct cs_http *h, struct MHD_Connection *conn, bool post,
                         const struct request *req, enum MHD_Result *ok)
{
    const char *why = cross_site(h, conn, post);
    if (why != NULL)
        *ok = send_plain_error(conn, 0, GRPC_STATUS_PERMISSION_DENIED, why);
    else if (req->too_large)
        *ok = send_plain_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, GRPC_STATUS_RESOURCE_EXHAUSTED,
                               "the request is larger than the 1 MiB a call may send");
    return why != NULL || req->too_large;
}

/* Who a request is from: its bearer token, or its session's token hash. */
struct caller {
    char token[CS_HTTP_TOKEN_MAX + 1]; /* "" for a session */
    char token_sha256[CS_HTTP_TOKEN_HASH_LEN + 1];
    struct cs_http_caller call; /* points into the above */
    const char *key;            /* what its streams are counted by */
};

/* The caller, from "Authorization: Bearer TOKEN" or else the session
 * cookie: 0, or -EPERM (unauthenticated) or -EIO (the session could not be
 * looked up: unavailable) with why. */
static int find_caller(struct cs_http *h, struct MHD_Connection *conn, struct caller *c,
                       const char **why)
{
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    *c = (struct caller){0};
    if (auth != NULL) {
        if (strncasecmp(auth, "Bearer ", 7) != 0 || strlen(auth + 7) > CS_HTTP_TOKEN_MAX) {
            *why = "the Authorization header must be \"Bearer TOKEN\"";
            return -EPERM;
        }
        strcpy(c->token, auth + 7);
        c->call.token = c->key = c->token;
        return 0;
    }
    const char *id = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, SESSION_COOKIE);
    int rc = id != NULL ? cs_http_session_token(h->sessions, id, c->token_sha256) : -EPERM;
    if (rc == 0) {
        c->call.token_sha256 = c->key = c->token_sha256;
        return 0;
    }
    *why = rc == -EIO   ? "the session could not be looked up: the database does not answer; try "
                          "again"
           : id != NULL ? "the session has ended (expired or logged out): log in again"
                        : "the HTTP API needs \"Authorization: Bearer TOKEN\" or a session "
                          "from POST /login";
    return rc == -EIO ? -EIO : -EPERM;
}

/* A call's one reply, or its status. */
static enum MHD_Result call_unary(struct cs_http *h, struct MHD_Connection *conn, const char *path,
                                  const ProtobufCMessageDescriptor *output,
                                  const struct caller *caller, const uint8_t *req, size_t len)
{
    struct cs_http_call *call =
        cs_http_call_start(h->channel, path, &caller->call, req, len, CALL_DEADLINE_S);
    uint8_t *msg = NULL, *next;
    size_t msg_len = 0, next_len;
    while (cs_http_call_next(call, -1, &next, &next_len) == 1) {
        free(msg);
        msg = next;
        msg_len = next_len;
    }
    const struct cs_http_status *st = cs_http_call_status(call);
    ProtobufCMessage *reply = NULL;
    enum MHD_Result ok;
    if (st->code != GRPC_STATUS_OK) {
        ok = send_status(h, conn, st);
    } else if ((reply = protobuf_c_message_unpack(output, NULL, msg_len, msg)) == NULL) {
        ok = send_plain_error(conn, 0, GRPC_STATUS_INTERNAL, "the reply did not unpack");
    } else {
        char *text = NULL;
        size_t text_len = 0;
        FILE *f = open_memstream(&text, &text_len);
        CS_ASSERT(f != NULL);
        cs_json_write_message(f, reply);
        fputc('\n', f);
        CS_ASSERT(fclose(f) == 0);
        ok = send_json(conn, MHD_HTTP_OK, text, text_len);
    }
    if (reply != NULL)
        protobuf_c_message_free_unpacked(reply, NULL);
    free(msg);
    cs_http_call_free(call);
    return ok;
}

/* A stream being served: its events, and the caller's count it is in. */
struct open_stream {
    struct cs_http *h;
    struct stream_count *count;
    struct cs_http_sse *sse;
};

/* Counts one more stream for token: its slot, or NULL when the caller has
 * STREAMS_PER_CALLER open already. */
static struct stream_count *stream_take(struct cs_http *h, const char *token)
{
    struct stream_count *found = NULL, *free_slot = NULL;
    pthread_mutex_lock(&h->streams_lock);
    for (size_t i = 0; i < CONNECTIONS_MAX && found == NULL; i++) {
        struct stream_count *c = &h->streams[i];
        if (c->n > 0 && strcmp(c->token, token) == 0)
            found = c;
        else if (c->n == 0 && free_slot == NULL)
            free_slot = c;
    }
    if (found == NULL && free_slot != NULL) {
        found = free_slot;
        strcpy(found->token, token);
    }
    if (found != NULL && found->n >= STREAMS_PER_CALLER)
        found = NULL;
    else if (found != NULL)
        found->n++;
    pthread_mutex_unlock(&h->streams_lock);
    return found;
}

static void stream_done_cb(void *cls)
{
    struct open_stream *o = cls;
    cs_http_sse_free_cb(o->sse);
    pthread_mutex_lock(&o->h->streams_lock);
    if (--o->count->n == 0)
        explicit_bzero(o->count->token, sizeof(o->count->token));
    pthread_mutex_unlock(&o->h->streams_lock);
    free(o);
}

static ssize_t stream_read_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct open_stream *o = cls;
    return cs_http_sse_read_cb(o->sse, pos, buf, max);
}

/* A stream's events (http_sse.h), or its refusal as an error. */
static enum MHD_Result call_stream(struct cs_http *h, struct MHD_Connection *conn, const char *path,
                                   const ProtobufCMethodDescriptor *m, const struct caller *caller,
                                   ProtobufCMessage *request)
{
    struct cs_json_error err = {0};
    const char *last = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct cs_http_sse *sse = cs_http_sse_new(request, m->output, info->connect_fd, last, &err);
    if (sse == NULL)
        return send_bad_field(conn, err.field, err.why);
    struct open_stream *o = cs_xcalloc(1, sizeof(*o));
    *o = (struct open_stream){.h = h, .count = stream_take(h, caller->key), .sse = sse};
    if (o->count == NULL) {
        cs_http_sse_free_cb(sse);
        free(o);
        return send_plain_error(conn, 0, GRPC_STATUS_RESOURCE_EXHAUSTED,
                                "this caller has the most streams open that one caller may over "
                                "HTTP (8); close one");
    }
    size_t len = protobuf_c_message_get_packed_size(request);
    uint8_t *bytes = cs_xmalloc(len + 1);
    protobuf_c_message_pack(request, bytes);
    struct cs_http_call *call = cs_http_call_start(h->channel, path, &caller->call, bytes, len, 0);
    free(bytes);
    if (!cs_http_sse_begin(sse, call, STREAM_FIRST_WAIT_MS)) {
        enum MHD_Result ok = send_status(h, conn, cs_http_call_status(call));
        stream_done_cb(o);
        return ok;
    }
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024,
                                                               stream_read_cb, o, stream_done_cb);
    if (r == NULL) {
        stream_done_cb(o);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    return send_response(conn, MHD_HTTP_OK, r);
}

static bool is_stream(const struct cs_http *h, const char *path)
{
    for (size_t i = 0; i < h->config->n_methods; i++)
        if (strcmp(h->config->methods[i].path, path) == 0)
            return (h->config->methods[i].streaming & CS_STREAM_SERVER) != 0;
    return false;
}

/* POST /csched.v1.Scheduler/<Method> (unary) or GET of a stream. */
static enum MHD_Result serve_api(struct cs_http *h, struct MHD_Connection *conn, const char *url,
                                 const char *method, const struct request *req)
{
    const ProtobufCMethodDescriptor *m = protobuf_c_service_descriptor_get_method_by_name(
        &csched__v1__scheduler__descriptor, url + strlen(API_PREFIX));
    if (m == NULL)
        return send_plain_error(conn, MHD_HTTP_NOT_FOUND, GRPC_STATUS_UNIMPLEMENTED,
                                "no such method of csched.v1.Scheduler");
    bool stream = is_stream(h, url);
    bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    if (stream ? strcmp(method, MHD_HTTP_METHOD_GET) != 0 : !post)
        return send_plain_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, GRPC_STATUS_INVALID_ARGUMENT,
                                stream ? "a stream is a GET with ?encoding=json&message=REQUEST "
                                         "(server-sent events)"
                                       : "a call is a POST of its request's JSON");
    enum MHD_Result ok;
    if (refuse_early(h, conn, post, req, &ok))
        return ok;
    struct caller caller;
    const char *why = NULL;
    int rc = find_caller(h, conn, &caller, &why);
    if (rc != 0)
        return send_plain_error(
            conn, 0, rc == -EIO ? GRPC_STATUS_UNAVAILABLE : GRPC_STATUS_UNAUTHENTICATED, why);
    const char *text = req->body != NULL ? req->body : "{}";
    size_t text_len = req->body != NULL ? req->len : 2;
    if (stream) {
        const char *enc = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "encoding");
        text = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "message");
        if (enc != NULL && strcmp(enc, "json") != 0)
            return send_bad_field(conn, "encoding", "must be json");
        text = text != NULL ? text : "{}";
        text_len = strlen(text);
    }
    ProtobufCMessage *request = NULL;
    struct cs_json_error err = {0};
    if (cs_json_read_message(text, text_len, m->input, &request, &err) != 0)
        return send_bad_field(conn, err.field, err.why);
    if (stream) {
        ok = call_stream(h, conn, url, m, &caller, request);
    } else {
        size_t len = protobuf_c_message_get_packed_size(request);
        uint8_t *bytes = cs_xmalloc(len + 1);
        protobuf_c_message_pack(request, bytes);
        ok = call_unary(h, conn, url, m->output, &caller, bytes, len);
        free(bytes);
    }
    protobuf_c_message_free_unpacked(request, NULL);
    explicit_bzero(&caller, sizeof(caller));
    return ok;
}

static enum MHD_Result send_cookie(struct MHD_Connection *conn, const char *cookie)
{
    char *text = cs_xstrdup("{}\n");
    struct MHD_Response *r = MHD_create_response_from_buffer(3, text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, cookie);
    return send_response(conn, MHD_HTTP_OK, r);
}

/* POST /login {"token": "..."}: the token is checked by a call made with
 * it (GetStats, which every role may make), then a session is opened for
 * its hash. */
static enum MHD_Result login(struct cs_http *h, struct MHD_Connection *conn,
                             const struct request *req)
{
    json_t *root = req->body != NULL ? json_loadb(req->body, req->len, 0, NULL) : NULL;
    const char *token = json_string_value(json_object_get(root, "token"));
    enum MHD_Result ok;
    if (token == NULL || strlen(token) > CS_HTTP_TOKEN_MAX) {
        ok = send_bad_field(conn, "token", "must be given as {\"token\": \"...\"}");
        goto out;
    }
    Csched__V1__GetStatsRequest probe = CSCHED__V1__GET_STATS_REQUEST__INIT;
    uint8_t bytes[16];
    size_t len = protobuf_c_message_pack(&probe.base, bytes);
    struct cs_http_call *call =
        cs_http_call_start(h->channel, API_PREFIX "GetStats",
                           &(struct cs_http_caller){.token = token}, bytes, len, CALL_DEADLINE_S);
    uint8_t *msg;
    size_t msg_len;
    while (cs_http_call_next(call, -1, &msg, &msg_len) == 1)
        free(msg);
    const struct cs_http_status *st = cs_http_call_status(call);
    char id[CS_HTTP_SESSION_ID_LEN + 1], hash[CS_HTTP_TOKEN_HASH_LEN + 1];
    cs_sha256_hex(token, strlen(token), hash);
    int rc = st->code == GRPC_STATUS_OK ? cs_http_session_open(h->sessions, hash, id) : 0;
    if (st->code != GRPC_STATUS_OK) {
        ok = send_status(h, conn, st);
    } else if (rc == -EIO) {
        ok = send_plain_error(conn, 0, GRPC_STATUS_UNAVAILABLE,
                              "the session could not be stored: the database does not answer; "
                              "try again");
    } else if (rc != 0) {
        ok = send_plain_error(conn, 0, GRPC_STATUS_INTERNAL, "no session could be made");
    } else {
        char cookie[160];
        (void)snprintf(cookie, sizeof(cookie),
                       SESSION_COOKIE "=%s; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=%d",
                       id, CS_HTTP_SESSION_TTL_S);
        ok = send_cookie(conn, cookie);
    }
    cs_http_call_free(call);
out:
    json_decref(root);
    return ok;
}

static enum MHD_Result logout(struct cs_http *h, struct MHD_Connection *conn)
{
    const char *id = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, SESSION_COOKIE);
    if (id != NULL)
        cs_http_session_close(h->sessions, id);
    return send_cookie(conn,
                       SESSION_COOKIE "=; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=0");
}

static enum MHD_Result serve_session(struct cs_http *h, struct MHD_Connection *conn,
                                     const char *url, const char *method, const struct request *req)
{
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return send_plain_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, GRPC_STATUS_INVALID_ARGUMENT,
                                "use POST");
    enum MHD_Result ok;
    if (refuse_early(h, conn, true, req, &ok))
        return ok;
    return strcmp(url, "/login") == 0 ? login(h, conn, req) : logout(h, conn);
}

static enum MHD_Result serve_file(struct cs_http *h, struct MHD_Connection *conn, const char *url,
                                  const char *method)
{
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return send_plain_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, GRPC_STATUS_INVALID_ARGUMENT,
                                "the console's files take GET or HEAD");
    unsigned status;
    struct MHD_Response *r = cs_http_static_response(h->files, url, &status);
    return send_response(conn, status, r);
}

/* Gathers the body up to the largest request a call may send; past it the
 * rest is read and dropped, and the request is answered 413. */
static void take_body(struct request *req, const char *data, size_t n)
{
    if (req->too_large || req->len + n > CS_RPC_MAX_REQUEST_BYTES) {
        req->too_large = true;
        return;
    }
    req->body = cs_xrealloc(req->body, req->len + n + 1);
    memcpy(req->body + req->len, data, n);
    req->len += n;
    req->body[req->len] = '\0';
}

static enum MHD_Result request_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct cs_http *h = cls;
    struct request *req = *req_cls;
    if (req == NULL) {
        *req_cls = req = cs_xcalloc(1, sizeof(*req));
        /* A body announced too large is refused before it is read. */
        const char *length =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length == NULL || strtoull(length, NULL, 10) <= CS_RPC_MAX_REQUEST_BYTES)
            return MHD_YES;
        req->too_large = true;
    } else if (req->answered) {
        *upload_data_size = 0; /* the rest of a body refused before it came */
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        take_body(req, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    req->answered = true;
    if (strncmp(url, API_PREFIX, strlen(API_PREFIX)) == 0)
        return serve_api(h, conn, url, method, req);
    if (strcmp(url, "/login") == 0 || strcmp(url, "/logout") == 0)
        return serve_session(h, conn, url, method, req);
    return serve_file(h, conn, url, method);
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct request *req = *req_cls;
    if (req == NULL)
        return;
    free(req->body);
    free(req);
    *req_cls = NULL;
}

static void http_free(struct cs_http *h)
{
    if (h->channel != NULL)
        grpc_channel_destroy(h->channel);
    cs_http_sessions_free(h->sessions);
    pthread_mutex_destroy(&h->streams_lock);
    cs_http_static_close(h->files);
    cs_http_tls_free(h->tls);
    free(h);
}

static int start_daemon(struct cs_http *h, const struct sockaddr_storage *addr, struct cs_err *err)
{
    /* poll, not select: cschedd may hold more than FD_SETSIZE descriptors. */
    unsigned flags =
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
    if (addr->ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (h->tls != NULL)
        flags |= MHD_USE_TLS;
    /* The certificate comes from http_tls at each handshake: SIGHUP renews it. */
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)cs_http_tls_retrieve_cb},
        {MHD_OPTION_END, 0, NULL},
    };
    h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, request_cb, h, MHD_OPTION_EXTERNAL_LOGGER,
                                 cs_mhd_log_cb, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)addr,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS_MAX,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
                                 MHD_OPTION_NOTIFY_COMPLETED, completed_cb, h,
                                 MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK_BYTES,
                                 MHD_OPTION_ARRAY, h->tls != NULL ? tls : tls + 1, MHD_OPTION_END);
    if (h->daemon == NULL)
        return cs_err_set(err, -EADDRNOTAVAIL,
                          "--http-listen %s: cannot serve there (in use, or not an address of "
                          "this machine)",
                          h->config->listen);
    return 0;
}

int cs_http_start(const struct cs_http_config *config, cs_http_connect_cb connect_cb, void *arg,
                  struct cs_http **out, struct cs_err *err)
{
    struct sockaddr_storage addr;
    int rc = cs_net_addr_parse("--http-listen", config->listen, &addr, err);
    if (rc != 0)
        return rc;
    struct cs_http *h = cs_xcalloc(1, sizeof(*h));
    h->config = config;
    pthread_mutex_init(&h->streams_lock, NULL);
    const struct cs_auth_paths *a = config->auth;
    if (a->tls_cert != NULL && (rc = cs_http_tls_new(a->tls_cert, a->tls_key, &h->tls, err)) != 0)
        goto err_free;
    int server_fd;
    if ((rc = cs_http_link_open(&h->channel, &server_fd)) != 0) {
        rc = cs_err_set(err, rc, "socketpair() for the HTTP API failed: %s", strerror(-rc));
        goto err_free;
    }
    connect_cb(arg, server_fd);
    h->sessions = cs_http_sessions_new();
    h->files = cs_http_static_open(config->console_dir);
    if ((rc = start_daemon(h, &addr, err)) != 0)
        goto err_free;
    if (h->tls == NULL && !config->loopback)
        cs_log_warn("--insecure-tcp: the HTTP API on %s is served without TLS: its tokens and "
                    "session cookies cross the network in the clear",
                    config->listen);
    int host_len = (int)(strrchr(config->listen, ':') - config->listen);
    cs_log_info("serving the HTTP API and console on %s://%.*s:%d/",
                h->tls != NULL ? "https" : "http", host_len, config->listen, cs_http_port(h));
    *out = h;
    return 0;

err_free:
    http_free(h);
    return rc;
}

int cs_http_port(const struct cs_http *h)
{
    return cs_mhd_port(h->daemon);
}

void cs_http_tls_changed(struct cs_http *h)
{
    if (h->tls != NULL)
        cs_http_tls_reread(h->tls);
}

void cs_http_sessions_keep_in(struct cs_http *h, const char *conninfo)
{
    cs_http_sessions_database(h->sessions, conninfo);
}

void cs_http_stop(struct cs_http *h)
{
    if (h == NULL)
        return;
    MHD_stop_daemon(h->daemon);
    http_free(h);
}
