/* http_call: the HTTP API's calls, each made as a gRPC call to cschedd's own
 * server over one socketpair, so that every method runs through the same
 * path as any gRPC call: its identity (the caller's bearer token, known to
 * auth by the pair's server end), its role, limits, gate (a standby relays
 * it to the active replica) and audit. The server end goes to the gRPC
 * server (cs_rpc_server_add_fd); the client end is a gRPC channel here.
 *
 * A call runs on the libmicrohttpd thread of its HTTP connection and blocks
 * there on its own completion queue, never on the loop. */
#ifndef CS_HTTP_CALL_H
#define CS_HTTP_CALL_H

#include <grpc/grpc.h>
#include <stddef.h>
#include <stdint.h>

struct cs_http_call;

/* Makes the socketpair and the channel over its client end: 0 with the
 * channel in *out and the server end in *server_fd (for the gRPC server),
 * or a negative errno. Main thread, after grpc_init. */
int cs_http_link_open(grpc_channel **out, int *server_fd);

/* How a call ended. */
struct cs_http_status {
    grpc_status_code code;
    char message[512];
    /* grpc-status-details-bin as it came (a google.rpc.Status), or empty. */
    uint8_t *details;
    size_t details_len;
};

/* Who a call is made for: a bearer token, or the token hash of a session
 * (http_session.h), which auth takes from this connection only. */
struct cs_http_caller {
    const char *token;        /* sent as "authorization: Bearer TOKEN"; NULL: none */
    const char *token_sha256; /* else sent as CS_AUTH_SESSION_KEY; NULL: none */
};

/* Starts path's call with request (len bytes, copied) for caller; with
 * deadline_s > 0 it ends there. Returns the call (never NULL). */
struct cs_http_call *cs_http_call_start(grpc_channel *channel, const char *path,
                                        const struct cs_http_caller *caller, const uint8_t *request,
                                        size_t len, int deadline_s);
/* What cs_http_call_next returns when the call has ended. */
#define CS_HTTP_CALL_ENDED (-1)
/* Waits at most wait_ms (< 0: as long as it takes) for the call's next
 * message: 1 with it in *msg, *len (the caller frees *msg); 0 when the wait
 * ran out; CS_HTTP_CALL_ENDED when the call has ended, its status then in
 * cs_http_call_status. */
int cs_http_call_next(struct cs_http_call *call, int wait_ms, uint8_t **msg, size_t *len);
/* The status of a call cs_http_call_next saw end. */
const struct cs_http_status *cs_http_call_status(const struct cs_http_call *call);
/* Cancels the call unless it has ended, waits for gRPC to let it go, and
 * frees it. NULL is allowed. */
void cs_http_call_free(struct cs_http_call *call);

#endif
