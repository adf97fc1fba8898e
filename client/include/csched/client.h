/* libcsched: a C client for cschedd over gRPC's C core.
 *
 * This header holds the hand-written core: the client handle, call options,
 * the status record and the stream handle. The typed functions, one per RPC
 * method, are generated from proto/ into <csched/scheduler.h> and
 * <csched/health.h>. A cs_client may be used from several threads at once; a
 * cs_stream is used by one thread at a time, except cs_stream_cancel, which
 * any thread may call. No function here aborts: failures come back as
 * negative errno values (-ENOMEM, -EINVAL) or as gRPC status codes (> 0).
 */
#ifndef CSCHED_CLIENT_H
#define CSCHED_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's API; everything else in libcsched is hidden. */
#ifndef CS_EXPORT
#define CS_EXPORT __attribute__((visibility("default")))
#endif

/* A connection to one cschedd ("host:port"). Thread-safe. */
struct cs_client;

/* The outcome of a call as the server (or gRPC itself) reported it. code is a
 * grpc_status_code (0 = OK); message is a NUL-terminated text for a person,
 * cut to fit. */
struct cs_status {
    int code;
    char message[512];
};

/* Per-call options. A NULL pointer means all defaults. */
struct cs_call_opts {
    /* Deadline for the whole call. 0 = client default: 30 s for unary calls,
     * none for streams. Negative values are -EINVAL. */
    int64_t timeout_ms;
    /* Wait for the channel to connect (up to the deadline) instead of failing
     * at once with UNAVAILABLE while the server is not reachable. */
    bool wait_for_ready;
};

/* An open server-streaming call. Owned by the caller; free with
 * cs_stream_free. */
struct cs_stream;

/* The unix socket cschedd serves by default. */
#define CS_CLIENT_DEFAULT_SOCKET "/run/csched/csched.sock"

/* cs_client_default_target writes the local cschedd's address into buf (cap
 * bytes with the NUL): "unix:" and $CSCHED_SOCKET, or CS_CLIENT_DEFAULT_SOCKET
 * when that is unset or empty. Returns 0, or -ENAMETOOLONG. */
CS_EXPORT int cs_client_default_target(char *buf, size_t cap);

/* cs_client_new connects lazily to target ("unix:/path", as
 * cs_client_default_target gives, or "host:port", e.g. "127.0.0.1:50051")
 * and stores the new client in *out. The first client of a process
 * initialises gRPC; the last cs_client_free shuts it down.
 * Returns 0, -EINVAL (NULL or empty target), or -ENOMEM. */
CS_EXPORT int cs_client_new(const char *target, struct cs_client **out);

/* How cs_client_new_opts secures the connection. Every field may be NULL;
 * with all of them NULL the connection is plaintext, as cs_client_new's.
 * Any of them set makes it TLS. The strings are only read during the call. */
struct cs_client_opts {
    /* PEM file of the CAs that sign the server's certificate; NULL: the
     * system's roots. */
    const char *ca_file;
    /* PEM files of this client's certificate chain and its key, for a server
     * that requires client certificates (mTLS). Both or neither. */
    const char *cert_file;
    const char *key_file;
    /* A bearer token, sent as "authorization: Bearer TOKEN" on every call
     * (only over TLS). */
    const char *token;
};

/* cs_client_new_opts is cs_client_new with opts (NULL: plaintext). The
 * files are read now. Returns 0, -EINVAL (no target, a certificate without
 * its key or the reverse, an empty token), a negative errno from reading a
 * file (-ENOENT, -EACCES, -EFBIG over 1 MiB), or -ENOMEM. A bad PEM file is
 * only found at the first call, which then fails with UNAVAILABLE. */
CS_EXPORT int cs_client_new_opts(const char *target, const struct cs_client_opts *opts,
                                 struct cs_client **out);

/* cs_client_free closes the channel and frees the client. Every stream made
 * from it must have been freed first. NULL is allowed. */
CS_EXPORT void cs_client_free(struct cs_client *client);

/* cs_stream_cancel cancels the call from any thread: a next call that is
 * blocked (or the following one) returns 0 with status CANCELLED. */
CS_EXPORT void cs_stream_cancel(struct cs_stream *stream);

/* cs_stream_free cancels the call if it is still open, waits for gRPC to
 * release it, and frees the stream. NULL is allowed. */
CS_EXPORT void cs_stream_free(struct cs_stream *stream);

/* cs_status_code_name returns the canonical name of a gRPC status code
 * ("OK", "NOT_FOUND", ...), or "UNKNOWN_CODE" for a value outside 0..16.
 * The string is static. */
CS_EXPORT const char *cs_status_code_name(int code);

/* cs_run_state_name returns the short name of a run state
 * (Csched__V1__RunState): "queued", "running", "succeeded", "timed_out", ...,
 * "unspecified" for 0, or "unknown" for a value this library does not know.
 * The string is static. */
CS_EXPORT const char *cs_run_state_name(int state);

/* The generated functions follow this pattern (see <csched/scheduler.h>):
 *
 *   int cs_scheduler_create_job(struct cs_client *client,
 *                               const Csched__V1__CreateJobRequest *request,
 *                               Csched__V1__Job **response,
 *                               const struct cs_call_opts *opts,
 *                               struct cs_status *status);
 *
 * Unary: returns 0 on OK, with *response owned by the caller (free it with
 * csched__v1__job__free_unpacked(response, NULL)); > 0 is the gRPC status code
 * (status->message says why, *response is NULL); -ENOMEM / -EINVAL on a local
 * failure. opts and status may be NULL.
 *
 *   int cs_scheduler_watch(struct cs_client *client,
 *                          const Csched__V1__WatchRequest *request,
 *                          struct cs_stream **out,
 *                          const struct cs_call_opts *opts,
 *                          struct cs_status *status);
 *   int cs_scheduler_watch_next(struct cs_stream *stream,
 *                               Csched__V1__WatchResponse **msg,
 *                               struct cs_status *status);
 *
 * Server streaming: the open call returns 0 with *out set, or an error as
 * above. next returns 1 with *msg set (the caller frees it), 0 when the stream
 * has ended (status filled: code 0 or the error), or < 0 on a local error.
 * It blocks until a message, the end, or the call's deadline. A
 * WatchResponse is a batch of one or more events, in seq order.
 */

#ifdef __cplusplus
}
#endif

#endif
