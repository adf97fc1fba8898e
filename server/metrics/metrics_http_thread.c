/* metrics_http: libmicrohttpd's thread serving /metrics (see
 * metrics_http.h). Start and stop run on the main thread outside the loop;
 * the request handler and everything it calls run on libmicrohttpd's single
 * internal thread, which owns the token set and the scrape counts. */
#define CS_LOG_COMPONENT "metrics"
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "access.h"
#include "auth.h"
#include "auth_file.h"
#include "log.h"
#include "metrics_format.h"
#include "metrics_http.h"
#include "mhd_glue.h"
#include "net_addr.h"
#include "proc_facts.h"

#define CONNECTIONS_MAX 32
#define CONNECTION_TIMEOUT_S 10

struct cs_metrics_http {
    const char *listen;
    const char *tls_cert, *tls_key; /* NULL: plain HTTP */
    const char *tokens;             /* NULL: no authentication */
    struct MHD_Daemon *daemon;
    char *cert_pem, *key_pem;
    /* The HTTP thread's own: */
    struct cs_tokens token_set;
    struct stat tokens_st; /* of the file as last read */
    struct cs_scrape_counts counts;
};

/* Reads the tokens file if it changed since it was last read (its inode,
 * size or mtime): 0, or a negative errno with err saying why, the set in
 * use kept. */
static int tokens_load(struct cs_metrics_http *h, struct cs_err *err)
{
    struct stat st;
    if (stat(h->tokens, &st) != 0)
        return cs_err_set(err, -errno, "%s: %s", h->tokens, strerror(errno));
    if (st.st_ino == h->tokens_st.st_ino && st.st_size == h->tokens_st.st_size &&
        st.st_mtim.tv_sec == h->tokens_st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == h->tokens_st.st_mtim.tv_nsec)
        return 0;
    char *text = NULL;
    struct cs_tokens fresh = {0};
    int rc = cs_auth_read_file(h->tokens, true, &text, err);
    if (rc == 0)
        rc = cs_tokens_parse(h->tokens, text, &fresh, err);
    if (rc == 0) {
        cs_tokens_clear(&h->token_set);
        h->token_set = fresh;
        h->tokens_st = st;
    }
    free(text);
    return rc;
}

/* At each scrape: a file that fails keeps the set in use, as SIGHUP does
 * for the gRPC side, and says so. */
static void tokens_refresh(struct cs_metrics_http *h)
{
    struct cs_err err = {0};
    if (tokens_load(h, &err) != 0)
        cs_log_warn("the metrics endpoint keeps its tokens: %s", err.msg);
}

/* 0 when the request may be served; else the HTTP status to refuse with. */
static unsigned authorize(struct cs_metrics_http *h, struct MHD_Connection *conn)
{
    if (h->tokens == NULL)
        return 0;
    tokens_refresh(h);
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    const struct cs_token *tok = NULL;
    if (auth != NULL && strncasecmp(auth, "Bearer ", 7) == 0)
        tok = cs_tokens_find(&h->token_set, auth + 7, strlen(auth + 7));
    if (tok == NULL) {
        h->counts.unauthenticated++;
        return MHD_HTTP_UNAUTHORIZED;
    }
    if (tok->role < cs_access_needed("/metrics")) {
        h->counts.forbidden++;
        return MHD_HTTP_FORBIDDEN;
    }
    return 0;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
                             char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    if (r == NULL)
        return MHD_NO;
    enum MHD_Result ok = MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        ok = MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (status == MHD_HTTP_UNAUTHORIZED)
        ok = MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (ok == MHD_YES)
        ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, const char *text)
{
    return reply(conn, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
                 MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result scrape(struct cs_metrics_http *h, struct MHD_Connection *conn)
{
    struct cs_metrics_snapshot *snap = cs_xmalloc(sizeof(*snap));
    cs_metrics_snapshot_read(snap);
    struct cs_proc_facts proc;
    cs_proc_facts_read(&proc);
    h->counts.served++;
    struct cs_text text = {0};
    cs_metrics_format(&text, snap, &proc, &h->counts);
    free(snap);
    return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text.buf, text.len,
                 MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result request_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct cs_metrics_http *h = cls;
    if (strcmp(url, "/metrics") != 0)
        return refuse(conn, MHD_HTTP_NOT_FOUND, "not found: cschedd serves only /metrics\n");
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: use GET\n");
    unsigned refused = authorize(h, conn);
    if (refused == MHD_HTTP_UNAUTHORIZED)
        return refuse(conn, refused, "unauthorized: send Authorization: Bearer TOKEN\n");
    if (refused != 0)
        return refuse(conn, refused, "forbidden: reading /metrics needs role viewer\n");
    return scrape(h, conn);
}

static void http_free(struct cs_metrics_http *h)
{
    free(h->cert_pem);
    free(h->key_pem);
    cs_tokens_clear(&h->token_set);
    free(h);
}

/* The TLS pair and the first tokens, read before the thread starts. */
static int read_files(struct cs_metrics_http *h, struct cs_err *err)
{
    int rc = 0;
    if (h->tls_cert != NULL && (rc = cs_auth_read_file(h->tls_cert, false, &h->cert_pem, err)) == 0)
        rc = cs_auth_read_file(h->tls_key, true, &h->key_pem, err);
    if (rc == 0 && h->tokens != NULL)
        rc = tokens_load(h, err);
    return rc;
}

int cs_metrics_http_start(const struct cs_metrics_http_config *config, struct cs_metrics_http **out,
                          struct cs_err *err)
{
    struct sockaddr_storage addr;
    int rc = cs_net_addr_parse("--metrics-listen", config->listen, &addr, err);
    if (rc != 0)
        return rc;
    struct cs_metrics_http *h = cs_xcalloc(1, sizeof(*h));
    h->listen = config->listen;
    /* config.c has refused beyond loopback what is neither secured nor
     * --insecure-tcp. */
    if (!config->loopback && !config->insecure_tcp) {
        h->tls_cert = config->auth->tls_cert;
        h->tls_key = config->auth->tls_key;
        h->tokens = config->auth->tokens;
    }
    if ((rc = read_files(h, err)) != 0)
        goto err_free;
    /* epoll (libmicrohttpd's choice on Linux), not select: cschedd may hold
     * far more than FD_SETSIZE descriptors, and a scrape's socket can get a
     * number above it. */
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (h->cert_pem != NULL)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert_pem},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, h->key_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    /* The logger first, so that libmicrohttpd's complaints about the
     * options below reach cschedd's log too. */
    h->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, request_cb, h, MHD_OPTION_EXTERNAL_LOGGER, cs_mhd_log_cb, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)CONNECTIONS_MAX, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
        MHD_OPTION_ARRAY, h->cert_pem != NULL ? tls : tls + 2, MHD_OPTION_END);
    if (h->daemon == NULL) {
        rc = cs_err_set(err, -EADDRNOTAVAIL,
                        "--metrics-listen %s: cannot serve there (in use, or not an address of "
                        "this machine)",
                        h->listen);
        goto err_free;
    }
    if (!config->loopback && config->insecure_tcp)
        cs_log_warn("--insecure-tcp: metrics on %s are served without TLS or authentication",
                    h->listen);
    int host_len = (int)(strrchr(h->listen, ':') - h->listen);
    cs_log_info("serving metrics on %s://%.*s:%d/metrics", h->cert_pem != NULL ? "https" : "http",
                host_len, h->listen, cs_metrics_http_port(h));
    *out = h;
    return 0;

err_free:
    http_free(h);
    return rc;
}

int cs_metrics_http_port(const struct cs_metrics_http *h)
{
    return cs_mhd_port(h->daemon);
}

void cs_metrics_http_stop(struct cs_metrics_http *h)
{
    if (h == NULL)
        return;
    MHD_stop_daemon(h->daemon);
    http_free(h);
}
