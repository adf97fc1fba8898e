/* http_sse: server streams as server-sent events (see http_sse.h). Runs on
 * its connection's libmicrohttpd thread, and blocks there. */
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csched/v1/scheduler.pb-c.h"
#include "http_error.h"
#include "http_sse.h"
#include "util.h"

/* How often a waiting stream looks whether its client has gone. */
#define CLIENT_CHECK_MS 1000

struct cs_http_sse {
    struct cs_http_call *call;
    int client_fd; /* the connection's socket, only polled */
    bool gone;     /* the client has closed it */
    const ProtobufCMessageDescriptor *reply;
    bool logs;           /* ReadLogs, else Watch */
    int64_t sent_end[3]; /* ReadLogs: per LogStream, the bytes sent */
    char *text;          /* what waits to be written, or NULL */
    size_t len, off;
    bool ending; /* text is the stream's last */
};

static int parse_resume(struct cs_http_sse *s, ProtobufCMessage *request, const char *id)
{
    char *end;
    if (!s->logs) {
        Csched__V1__WatchRequest *w = (Csched__V1__WatchRequest *)request;
        long long seq = strtoll(id, &end, 10);
        if (*end != '\0' || end == id || seq < 0)
            return -EINVAL;
        w->start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
        w->after_seq = seq;
        return 0;
    }
    long long out = strtoll(id, &end, 10), err;
    if (*end != '.' || out < 0)
        return -EINVAL;
    const char *second = end + 1;
    err = strtoll(second, &end, 10);
    if (*end != '\0' || end == second || err < 0)
        return -EINVAL;
    s->sent_end[CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT] = out;
    s->sent_end[CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR] = err;
    return 0;
}

struct cs_http_sse *cs_http_sse_new(ProtobufCMessage *request,
                                    const ProtobufCMessageDescriptor *reply, int client_fd,
                                    const char *last_event_id, struct cs_json_error *err)
{
    struct cs_http_sse *s = cs_xcalloc(1, sizeof(*s));
    s->client_fd = client_fd;
    s->reply = reply;
    s->logs = reply == &csched__v1__log_chunk__descriptor;
    if (last_event_id != NULL && parse_resume(s, request, last_event_id) != 0) {
        (void)snprintf(err->field, sizeof(err->field), "Last-Event-ID");
        (void)snprintf(err->why, sizeof(err->why), "is not an id this stream gives (%s)",
                       s->logs ? "STDOUT_END.STDERR_END" : "an event seq");
        free(s);
        return NULL;
    }
    return s;
}

/* A log chunk with what was sent before cut off: false when nothing of it
 * is left to send. */
static bool trim_chunk(struct cs_http_sse *s, Csched__V1__LogChunk *c)
{
    if (c->stream != CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT &&
        c->stream != CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR)
        return true;
    int64_t *sent = &s->sent_end[c->stream];
    int64_t end = c->offset + (int64_t)c->data.len;
    if (end <= *sent && c->data.len > 0)
        return false;
    if (c->offset < *sent) {
        size_t skip = (size_t)(*sent - c->offset);
        memmove(c->data.data, c->data.data + skip, c->data.len - skip);
        c->data.len -= skip;
        c->offset = *sent;
    }
    if (end > *sent)
        *sent = end;
    return true;
}

/* The event of one reply into s->text; false when there is none to send. */
static bool event_of(struct cs_http_sse *s, const uint8_t *msg, size_t len, FILE *f)
{
    ProtobufCMessage *m = protobuf_c_message_unpack(s->reply, NULL, len, msg);
    if (m == NULL)
        return false;
    bool send = true;
    if (s->logs) {
        send = trim_chunk(s, (Csched__V1__LogChunk *)m);
        fprintf(f, "id: %" PRId64 ".%" PRId64 "\n",
                s->sent_end[CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT],
                s->sent_end[CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR]);
    } else {
        Csched__V1__WatchResponse *w = (Csched__V1__WatchResponse *)m;
        if (w->n_events > 0)
            fprintf(f, "id: %" PRId64 "\n", w->events[w->n_events - 1]->seq);
    }
    fputs("data: ", f);
    cs_json_write_message(f, m);
    fputs("\n\n", f);
    protobuf_c_message_free_unpacked(m, NULL);
    return send;
}

static bool client_gone(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

/* What next_reply returns when the client has gone. */
#define CLIENT_GONE (-2)

/* cs_http_call_next, looking every CLIENT_CHECK_MS whether the client has
 * gone: a browser that closed its stream frees the stream's thread and its
 * call within a second rather than at the next keep-alive (CLIENT_GONE). */
static int next_reply(struct cs_http_sse *s, int wait_ms, uint8_t **msg, size_t *len)
{
    for (int waited = 0;; waited += CLIENT_CHECK_MS) {
        int slice = wait_ms - waited < CLIENT_CHECK_MS ? wait_ms - waited : CLIENT_CHECK_MS;
        int rc = cs_http_call_next(s->call, slice, msg, len);
        if (rc != 0 || waited + slice >= wait_ms)
            return rc;
        if (client_gone(s->client_fd))
            return CLIENT_GONE;
    }
}

/* What comes next on the stream, waiting up to wait_ms: an event, a
 * keep-alive, or the end (an error event, or nothing after an OK). */
static void fill(struct cs_http_sse *s, int wait_ms)
{
    uint8_t *msg = NULL;
    size_t len = 0;
    char *text = NULL;
    size_t text_len = 0;
    FILE *f = open_memstream(&text, &text_len);
    CS_ASSERT(f != NULL);
    int rc;
    while ((rc = next_reply(s, wait_ms, &msg, &len)) == 1) {
        bool send = event_of(s, msg, len, f);
        free(msg);
        if (send)
            break;
        rewind(f);
    }
    if (rc == 0) {
        fputs(": keep-alive\n\n", f);
    } else if (rc == CLIENT_GONE) {
        s->gone = s->ending = true;
    } else if (rc == CS_HTTP_CALL_ENDED) {
        const struct cs_http_status *st = cs_http_call_status(s->call);
        s->ending = true;
        if (st->code != GRPC_STATUS_OK) {
            fputs("event: error\ndata: ", f);
            cs_http_error_write(f, st->code, st->message, st->details, st->details_len);
            fputs("\n\n", f);
        }
    }
    CS_ASSERT(fclose(f) == 0);
    free(s->text);
    s->text = text;
    s->len = text_len;
    s->off = 0;
}

bool cs_http_sse_begin(struct cs_http_sse *s, struct cs_http_call *call, int wait_ms)
{
    s->call = call;
    fill(s, wait_ms);
    if (s->ending && cs_http_call_status(call)->code != GRPC_STATUS_OK)
        return false;
    if (s->len > 0 && !s->ending && strncmp(s->text, ": keep-alive", 12) == 0)
        s->len = 0; /* the stream has only begun: nothing to keep alive */
    return true;
}

struct cs_http_call *cs_http_sse_call(const struct cs_http_sse *s)
{
    return s->call;
}

ssize_t cs_http_sse_read_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct cs_http_sse *s = cls;
    while (s->off == s->len) {
        if (s->ending)
            return s->gone ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
        fill(s, CS_HTTP_SSE_KEEPALIVE_MS);
    }
    size_t n = s->len - s->off < max ? s->len - s->off : max;
    memcpy(buf, s->text + s->off, n);
    s->off += n;
    return (ssize_t)n;
}

void cs_http_sse_free_cb(void *cls)
{
    struct cs_http_sse *s = cls;
    cs_http_call_free(s->call);
    free(s->text);
    free(s);
}
