/* metrics_http: the Prometheus endpoint, GET /metrics over HTTP (or HTTPS)
 * served by libmicrohttpd's own thread. Each scrape copies the snapshot the
 * loop published (metrics.h), reads /proc/self and formats the text on that
 * thread; it never touches loop state. Anything but GET or HEAD of /metrics
 * is answered 404 or 405 with a short text.
 *
 * With a tokens file, a scrape must carry "Authorization: Bearer TOKEN" of a
 * token whose role may read /metrics (access.c: viewer); otherwise 401, or
 * 403 for a lower role. The file is read again when it changes (its inode,
 * size or mtime), on the HTTP thread. Refusals are counted, not logged. */
#ifndef CS_METRICS_HTTP_H
#define CS_METRICS_HTTP_H

#include <stdbool.h>

#include "auth.h"
#include "util.h"

struct cs_metrics_http;

/* Where and how the endpoint serves: cschedd's --metrics-listen and the
 * flags that secure it. */
struct cs_metrics_http_config {
    const char *listen; /* "host:port" */
    bool loopback;      /* listen is a loopback address: plain HTTP, no token */
    bool insecure_tcp;  /* beyond loopback without TLS or tokens */
    const struct cs_auth_paths *auth;
};

/* Main thread, before the loop runs: serves config->listen. On
 * loopback it is plain HTTP with no token; beyond it, HTTPS with
 * --tls-cert/--tls-key and --tokens-file's tokens, or with --insecure-tcp
 * plain HTTP open to all (warned about). Reads the files, binds, starts the
 * HTTP thread and logs where it serves. 0 and *out, or a negative errno
 * with err saying why. config is borrowed for the endpoint's life. */
int cs_metrics_http_start(const struct cs_metrics_http_config *config, struct cs_metrics_http **out,
                          struct cs_err *err);
/* The port bound. */
int cs_metrics_http_port(const struct cs_metrics_http *http);
/* Main thread, once the loop has stopped: stops the thread (waiting for the
 * scrape being served) and frees http. NULL is allowed. */
void cs_metrics_http_stop(struct cs_metrics_http *http);

#endif
