/* auth: the identities of TCP callers and the reload of their files (see
 * auth.h). Loop thread only. The sets in use are replaced whole, and only by
 * a load that read every file without an error, so a call always sees one
 * consistent set. */
#define CS_LOG_COMPONENT "auth"
#include "auth.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

/* --- loading ----------------------------------------------------------- */

static void load_free(struct cs_auth_load *l)
{
    cs_tokens_clear(&l->tokens);
    cs_cert_roles_clear(&l->cert_roles);
    if (l->tls != NULL)
        grpc_ssl_server_certificate_config_destroy(l->tls);
    if (l->peer != NULL)
        grpc_channel_credentials_release(l->peer);
    free(l);
}

static struct cs_auth_load *load_new(struct cs_auth *auth)
{
    struct cs_auth_load *l = cs_xcalloc(1, sizeof(*l));
    l->work.data = l;
    l->auth = auth;
    l->paths = auth->paths;
    return l;
}

/* Puts a good load's sets in use; the old ones go. */
static void install(struct cs_auth *auth, struct cs_auth_load *l)
{
    cs_tokens_clear(&auth->tokens);
    auth->tokens = l->tokens;
    l->tokens = (struct cs_tokens){0};
    cs_cert_roles_clear(&auth->cert_roles);
    auth->cert_roles = l->cert_roles;
    l->cert_roles = (struct cs_cert_roles){0};
    if (l->tls != NULL)
        cs_tls_fetch_offer(&auth->fetch, l->tls);
    l->tls = NULL;
}

static void reload(struct cs_auth *auth);

static void loaded_cb(uv_work_t *work, int status)
{
    struct cs_auth_load *l = work->data;
    struct cs_auth *auth = l->auth;
    auth->loading = NULL;
    if (auth->stopped) {
        load_free(l);
        return;
    }
    if (l->status != 0) {
        cs_log_error("reload failed, the files in use stay: %s", l->err.msg);
    } else {
        install(auth, l);
        cs_log_info("reloaded: %zu tokens, %zu client certificate roles%s", auth->tokens.n,
                    auth->cert_roles.n, auth->paths.tls_cert != NULL ? ", TLS files" : "");
        if (auth->reloaded_cb != NULL)
            auth->reloaded_cb(auth->reloaded_arg);
    }
    load_free(l);
    if (auth->again) {
        auth->again = false;
        reload(auth);
    }
}

static void reload(struct cs_auth *auth)
{
    if (auth->loading != NULL) {
        auth->again = true; /* the files may have changed after it read them */
        return;
    }
    auth->loading = load_new(auth);
    CS_ASSERT(uv_queue_work(auth->loop, &auth->loading->work, cs_auth_load_work, loaded_cb) == 0);
}

static void sighup_cb(uv_signal_t *handle, int signum)
{
    struct cs_auth *auth = handle->data;
    cs_log_info("received SIGHUP: rereading the TLS, tokens and client-roles files");
    reload(auth);
}

int cs_auth_start(struct cs_auth *auth, uv_loop_t *loop, const struct cs_auth_paths *paths,
                  struct cs_err *err)
{
    CS_ASSERT_LOOP();
    memset(auth, 0, sizeof(*auth));
    auth->loop = loop;
    auth->paths = *paths;
    cs_tls_fetch_init(&auth->fetch);
    struct cs_auth_load *l = load_new(auth);
    cs_auth_load_work(&l->work);
    int rc = l->status;
    if (rc != 0) {
        *err = l->err;
        load_free(l);
        return rc;
    }
    install(auth, l);
    /* Forwards use the first load's: a reload renews what is served. */
    auth->peer = l->peer;
    l->peer = NULL;
    load_free(l);
    if ((rc = uv_signal_init(loop, &auth->sighup)) != 0)
        return cs_err_set(err, rc, "watching SIGHUP failed: %s", uv_strerror(rc));
    auth->sighup.data = auth;
    auth->watching = true;
    if ((rc = uv_signal_start(&auth->sighup, sighup_cb, SIGHUP)) != 0)
        return cs_err_set(err, rc, "watching SIGHUP failed: %s", uv_strerror(rc));
    if (paths->tls_cert != NULL)
        cs_log_info("TLS on, %s; %zu tokens, %zu client certificate roles",
                    paths->tls_client_ca != NULL ? "client certificates required"
                                                 : "no client certificates",
                    auth->tokens.n, auth->cert_roles.n);
    return 0;
}

grpc_server_credentials *cs_auth_server_credentials(struct cs_auth *auth)
{
    CS_ASSERT_LOOP();
    if (auth->paths.tls_cert == NULL)
        return NULL;
    grpc_ssl_client_certificate_request_type request =
        auth->paths.tls_client_ca != NULL
            ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
            : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    grpc_ssl_server_credentials_options *opts =
        grpc_ssl_server_credentials_create_options_using_config_fetcher(request, cs_tls_fetch_cb,
                                                                        &auth->fetch);
    return grpc_ssl_server_credentials_create_with_options(opts);
}

grpc_channel_credentials *cs_auth_peer_credentials(struct cs_auth *auth)
{
    CS_ASSERT_LOOP();
    grpc_channel_credentials *peer = auth->peer;
    auth->peer = NULL;
    return peer;
}

void cs_auth_stop(struct cs_auth *auth)
{
    CS_ASSERT_LOOP();
    auth->stopped = true;
    if (auth->watching)
        uv_close((uv_handle_t *)&auth->sighup, NULL);
    auth->watching = false;
}

void cs_auth_free(struct cs_auth *auth)
{
    CS_ASSERT_LOOP();
    cs_tokens_clear(&auth->tokens);
    cs_cert_roles_clear(&auth->cert_roles);
    cs_tls_fetch_destroy(&auth->fetch);
    if (auth->peer != NULL)
        grpc_channel_credentials_release(auth->peer);
    auth->peer = NULL;
}

/* --- identities ---------------------------------------------------------- */

/* The value of the call's "authorization" metadata, or NULL. */
static const grpc_slice *metadata_value(const grpc_metadata_array *md, const char *key)
{
    for (size_t i = 0; i < md->count; i++)
        if (grpc_slice_str_cmp(md->metadata[i].key, key) == 0)
            return &md->metadata[i].value;
    return NULL;
}

static const grpc_slice *authorization(const grpc_metadata_array *md)
{
    return metadata_value(md, "authorization");
}

static void token_identity(const struct cs_token *t, struct cs_identity *who)
{
    who->role = t->role;
    (void)snprintf(who->name, sizeof(who->name), "token:%s", t->name);
}

/* A session's call of the HTTP API, by the hex SHA-256 of its token. */
static int by_token_hash(const struct cs_auth *auth, const grpc_slice *value,
                         struct cs_identity *who, struct cs_err *err)
{
    const struct cs_token *t = cs_tokens_find_hash(
        &auth->tokens, (const char *)GRPC_SLICE_START_PTR(*value), GRPC_SLICE_LENGTH(*value));
    if (t == NULL)
        return cs_err_set(err, -EPERM,
                          "the session's token is no longer one of this server's: "
                          "log in again");
    token_identity(t, who);
    return 0;
}

static int by_token(const struct cs_auth *auth, const grpc_slice *value, struct cs_identity *who,
                    struct cs_err *err)
{
    const char *v = (const char *)GRPC_SLICE_START_PTR(*value);
    size_t len = GRPC_SLICE_LENGTH(*value);
    if (len <= 7 || strncasecmp(v, "Bearer ", 7) != 0)
        return cs_err_set(err, -EPERM, "the authorization metadata must be \"Bearer TOKEN\"");
    const struct cs_token *t = cs_tokens_find(&auth->tokens, v + 7, len - 7);
    if (t == NULL)
        return cs_err_set(err, -EPERM, "the bearer token is not one of this server's");
    token_identity(t, who);
    return 0;
}

/* The first value of the auth context's property name, copied into out
 * (cut to fit); false if there is none. */
static bool property(grpc_auth_context *ctx, const char *name, char *out, size_t cap)
{
    grpc_auth_property_iterator it = grpc_auth_context_find_properties_by_name(ctx, name);
    const grpc_auth_property *p = grpc_auth_property_iterator_next(&it);
    if (p == NULL)
        return false;
    size_t n = p->value_length < cap - 1 ? p->value_length : cap - 1;
    memcpy(out, p->value, n);
    out[n] = '\0';
    return true;
}

/* From the client certificate, if the call came with one: 0, or -EPERM. */
static int by_certificate(const struct cs_auth *auth, grpc_call *call, struct cs_identity *who,
                          struct cs_err *err)
{
    grpc_auth_context *ctx = grpc_call_auth_context(call);
    char subject[CS_IDENTITY_NAME_MAX - 8], cn[CS_IDENTITY_NAME_MAX];
    bool has_subject =
        ctx != NULL && property(ctx, GRPC_X509_SUBJECT_PROPERTY_NAME, subject, sizeof(subject));
    bool has_cn = ctx != NULL && property(ctx, GRPC_X509_CN_PROPERTY_NAME, cn, sizeof(cn));
    grpc_auth_context_release(ctx);
    if (!has_subject)
        return cs_err_set(err, -EPERM,
                          "a call over TCP needs a client certificate or "
                          "\"authorization: Bearer TOKEN\" metadata");
    who->role = cs_cert_roles_find(&auth->cert_roles, subject, has_cn ? cn : NULL);
    (void)snprintf(who->name, sizeof(who->name), "x509:%s", subject);
    return 0;
}

void cs_auth_http_peer(struct cs_auth *auth, int fd)
{
    (void)snprintf(auth->http_peer, sizeof(auth->http_peer), "fd:%d", fd);
}

int cs_auth_identify_cb(void *ctx, grpc_call *call, const char *peer,
                        const grpc_metadata_array *metadata, struct cs_identity *who,
                        struct cs_err *err)
{
    CS_ASSERT_LOOP();
    const struct cs_auth *auth = ctx;
    if (auth->http_peer[0] != '\0' && strcmp(peer, auth->http_peer) == 0) {
        const grpc_slice *token = authorization(metadata);
        const grpc_slice *hash = metadata_value(metadata, CS_AUTH_SESSION_KEY);
        *who = (struct cs_identity){.role = CS_ROLE_NONE};
        if (token != NULL)
            return by_token(auth, token, who, err);
        return hash != NULL
                   ? by_token_hash(auth, hash, who, err)
                   : cs_err_set(err, -EPERM, "the HTTP API needs \"Authorization: Bearer TOKEN\"");
    }
    /* Plaintext TCP has nothing to know a caller by (rpc's --insecure-tcp
     * rule decides), and the unix socket's peers are not ours. */
    if (auth->paths.tls_cert == NULL || !cs_peer_is_tcp(peer))
        return -ENOENT;
    *who = (struct cs_identity){.role = CS_ROLE_NONE};
    const grpc_slice *token = authorization(metadata);
    return token != NULL ? by_token(auth, token, who, err) : by_certificate(auth, call, who, err);
}
