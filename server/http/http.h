/* http: cschedd's HTTP/JSON API and its browser console, off by default
 * (--http-listen), served by libmicrohttpd's threads, one per connection,
 * never the loop's. The API follows the Connect protocol (docs/http.md):
 * POST /csched.v1.Scheduler/<Method> with the request's proto3 JSON, or
 * for the streams (Watch, ReadLogs) GET with ?encoding=json&message=...
 * answered as server-sent events. Each call is made as a gRPC call to
 * cschedd's own server (http_call.h), so identity, roles, limits, the
 * standby's relay and the audit are gRPC's, one code path per method.
 *
 * Callers are known only by bearer token: "Authorization: Bearer TOKEN", or
 * the session cookie POST /login gives a browser (http_session.h). Every
 * other path serves the console's files from console_dir (http_static.h). */
#ifndef CS_HTTP_H
#define CS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "auth.h"
#include "rpc.h"
#include "util.h"

struct cs_http;

struct cs_http_config {
    const char *listen; /* "host:port" */
    bool loopback;      /* listen is a loopback address: plain HTTP allowed */
    bool insecure_tcp;  /* beyond loopback without TLS */
    const struct cs_auth_paths *auth;
    const char *console_dir;         /* the console's built files */
    const struct cs_method *methods; /* the gRPC server's (which stream) */
    size_t n_methods;
};

/* Hands the server end of the API's connection to the gRPC server (the
 * callee registers it as the HTTP API's peer with auth and serves it). */
typedef void (*cs_http_connect_cb)(void *arg, int fd);

/* Main thread, after the gRPC server is made and before the loop runs:
 * reads the TLS files (with --tls-cert; reread by cs_http_tls_changed), opens the API's gRPC
 * connection through connect_cb, binds and starts serving. 0 and *out, or a negative errno with err
 * saying why. config is borrowed for the server's life. */
int cs_http_start(const struct cs_http_config *config, cs_http_connect_cb connect_cb, void *arg,
                  struct cs_http **out, struct cs_err *err);
/* The port bound. */
int cs_http_port(const struct cs_http *http);
/* Auth has reread the TLS files (SIGHUP): the next HTTPS handshake reads
 * the certificate and key again and serves them (http_tls.h). Any thread. */
void cs_http_tls_changed(struct cs_http *http);
/* Keeps the browsers' sessions in the database conninfo (copied) from now
 * on, shared with every replica (http_session.h); until then they are in
 * this process's memory only. Any thread. */
void cs_http_sessions_keep_in(struct cs_http *http, const char *conninfo);
/* Main thread, once the loop has stopped and before grpc_shutdown: stops
 * serving (ending open streams) and frees http. NULL is allowed. */
void cs_http_stop(struct cs_http *http);

#endif
