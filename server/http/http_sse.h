/* http_sse: a server stream of the API (Watch, ReadLogs) as server-sent
 * events. Each reply message is one event, "id: <ID>\ndata: <its JSON>\n\n";
 * Watch's ID is the seq of the last event in the batch, ReadLogs' is
 * "<stdout end>.<stderr end>", the bytes of each stream sent so far. A
 * request with Last-Event-ID resumes after it: Watch from after_seq = ID,
 * ReadLogs read again with what was sent skipped, so a browser's own
 * reconnect loses and repeats nothing. A quiet stream gets a comment line
 * every CS_HTTP_SSE_KEEPALIVE_MS (which also finds a reader gone). A stream
 * that ends with an error sends "event: error" with Connect's error JSON.
 *
 * The stream's connection thread blocks in cs_http_call_next, waking once a
 * second to see whether its client has gone: nothing spins while it is
 * idle; and it reads the next reply only once libmicrohttpd has
 * taken the last, so a reader that stalls stops the gRPC stream in its flow
 * control, where the server's own bound for slow Watch readers applies. */
#ifndef CS_HTTP_SSE_H
#define CS_HTTP_SSE_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "http_call.h"
#include "json_codec.h"

#define CS_HTTP_SSE_KEEPALIVE_MS 15000

struct cs_http_sse;

/* A stream of replies of type reply for request (the method's, which this
 * changes to resume after last_event_id, NULL for none), to the client on
 * client_fd (polled, to end the stream once the client has gone). NULL
 * with err set when last_event_id is not one such a stream gives. */
struct cs_http_sse *cs_http_sse_new(ProtobufCMessage *request,
                                    const ProtobufCMessageDescriptor *reply, int client_fd,
                                    const char *last_event_id, struct cs_json_error *err);
/* Waits up to wait_ms for the call's (taken) first reply: true when the
 * stream is under way, false when it ended at once with an error, whose
 * status cs_http_call_status(cs_http_sse_call(sse)) gives (free sse then). */
bool cs_http_sse_begin(struct cs_http_sse *sse, struct cs_http_call *call, int wait_ms);
struct cs_http_call *cs_http_sse_call(const struct cs_http_sse *sse);
/* libmicrohttpd's content reader and its free callback, cls the sse. */
ssize_t cs_http_sse_read_cb(void *cls, uint64_t pos, char *buf, size_t max);
void cs_http_sse_free_cb(void *cls);

#endif
