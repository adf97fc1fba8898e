/* http_tls: the HTTPS certificate (see http_tls.h). Its files are read on
 * the main thread at start and then on the thread of the handshake that
 * first follows a reread, under the one mutex. */
#define CS_LOG_COMPONENT "http"
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "http_tls.h"
#include "log.h"

/* The most certificates of a chain. */
#define CHAIN_MAX 8

/* One pair as GnuTLS serves it. */
struct creds {
    gnutls_pcert_st chain[CHAIN_MAX];
    unsigned int n;
    gnutls_privkey_t key;
    int64_t retired_s; /* CLOCK_MONOTONIC, once replaced */
    struct creds *next_retired;
};

struct cs_http_tls {
    pthread_mutex_t lock;
    const char *cert_path, *key_path;
    struct creds *current;
    struct creds *retired; /* newest first */
    bool changed;
};

/* GnuTLS's callback has no argument: the process's one HTTP server's. */
static struct cs_http_tls *the_tls;

static int64_t mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

static void creds_free(struct creds *c)
{
    for (unsigned int i = 0; i < c->n; i++)
        gnutls_pcert_deinit(&c->chain[i]);
    if (c->key != NULL)
        gnutls_privkey_deinit(c->key);
    free(c);
}

/* The files as GnuTLS's credentials: 0 with *out, or -EINVAL / -errno with
 * err saying which file and why. */
static int creds_load(const struct cs_http_tls *t, struct creds **out, struct cs_err *err)
{
    char *cert = NULL, *key = NULL;
    struct creds *c = cs_xcalloc(1, sizeof(*c));
    int rc = cs_auth_read_file(t->cert_path, false, &cert, err);
    if (rc == 0)
        rc = cs_auth_read_file(t->key_path, true, &key, err);
    if (rc != 0)
        goto out;
    gnutls_datum_t cd = {(unsigned char *)cert, (unsigned int)strlen(cert)};
    gnutls_datum_t kd = {(unsigned char *)key, (unsigned int)strlen(key)};
    c->n = CHAIN_MAX;
    int g = gnutls_pcert_list_import_x509_raw(c->chain, &c->n, &cd, GNUTLS_X509_FMT_PEM, 0);
    if (g < 0) {
        c->n = 0;
        rc = cs_err_set(err, -EINVAL, "%s: not a PEM certificate chain GnuTLS reads: %s",
                        t->cert_path, gnutls_strerror(g));
        goto out;
    }
    if ((g = gnutls_privkey_init(&c->key)) < 0 ||
        (g = gnutls_privkey_import_x509_raw(c->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0)
        rc = cs_err_set(err, -EINVAL, "%s: not a PEM private key GnuTLS reads: %s", t->key_path,
                        gnutls_strerror(g));
out:
    if (key != NULL)
        explicit_bzero(key, strlen(key));
    free(key);
    free(cert);
    if (rc != 0)
        creds_free(c);
    else
        *out = c;
    return rc;
}

int cs_http_tls_new(const char *cert_path, const char *key_path, struct cs_http_tls **out,
                    struct cs_err *err)
{
    struct cs_http_tls *t = cs_xcalloc(1, sizeof(*t));
    t->cert_path = cert_path;
    t->key_path = key_path;
    int rc = creds_load(t, &t->current, err);
    if (rc != 0) {
        free(t);
        return rc;
    }
    pthread_mutex_init(&t->lock, NULL);
    the_tls = t;
    *out = t;
    return 0;
}

/* Reads the files again and serves them from now on, keeping the pair
 * replaced for the handshakes that may hold it; frees those replaced long
 * enough ago. With the lock held. */
static void reread(struct cs_http_tls *t)
{
    struct cs_err err = {0};
    struct creds *fresh;
    if (creds_load(t, &fresh, &err) != 0) {
        cs_log_error("the HTTPS certificate in use stays: %s", err.msg);
        return;
    }
    int64_t now = mono_s();
    t->current->retired_s = now;
    t->current->next_retired = t->retired;
    t->retired = t->current;
    t->current = fresh;
    for (struct creds **p = &t->retired->next_retired; *p != NULL;) {
        struct creds *c = *p;
        if (now - c->retired_s < CS_HTTP_TLS_RETIRED_S) {
            p = &c->next_retired;
            continue;
        }
        *p = c->next_retired;
        creds_free(c);
    }
    cs_log_info("serving the HTTPS certificate read again from %s", t->cert_path);
}

int cs_http_tls_retrieve_cb(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                            const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                            gnutls_pcert_st **pcert, unsigned int *pcert_length,
                            gnutls_privkey_t *privkey)
{
    struct cs_http_tls *t = the_tls;
    pthread_mutex_lock(&t->lock);
    if (t->changed) {
        t->changed = false;
        reread(t);
    }
    *pcert = t->current->chain;
    *pcert_length = t->current->n;
    *privkey = t->current->key;
    pthread_mutex_unlock(&t->lock);
    return 0;
}

void cs_http_tls_reread(struct cs_http_tls *t)
{
    pthread_mutex_lock(&t->lock);
    t->changed = true;
    pthread_mutex_unlock(&t->lock);
}

void cs_http_tls_free(struct cs_http_tls *t)
{
    if (t == NULL)
        return;
    while (t->retired != NULL) {
        struct creds *c = t->retired;
        t->retired = c->next_retired;
        creds_free(c);
    }
    creds_free(t->current);
    pthread_mutex_destroy(&t->lock);
    if (the_tls == t)
        the_tls = NULL;
    free(t);
}
