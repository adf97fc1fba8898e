/* auth work: reading the TLS, tokens and client-roles files, on libuv's pool
 * (or on the main thread once at start, before the loop runs). A load is its
 * own record, which the loop leaves alone until the work's after callback.
 * The certificate and key are checked here with libcrypto (they parse and
 * belong together), so a bad file is reported by name and never reaches a
 * handshake. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"

/* Far above any real certificate chain or token list. */
#define FILE_MAX_BYTES (1024 * 1024)

/* The whole of path into *out (NUL-terminated, the caller frees it). With
 * private set, a file others may read is refused. 0 or a negative errno,
 * err set. */
int cs_auth_read_file(const char *path, bool private, char **out, struct cs_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cs_err_set(err, -errno, "%s: %s", path, strerror(errno));
    int rc = 0;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = cs_err_set(err, -errno, "%s: %s", path, strerror(errno));
        goto err_close;
    }
    if (private && (st.st_mode & S_IRWXO) != 0) {
        rc = cs_err_set(err, -EPERM, "%s: mode %04o lets others read it; chmod o-rwx %s", path,
                        (unsigned)(st.st_mode & 07777), path);
        goto err_close;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > FILE_MAX_BYTES) {
        rc = cs_err_set(err, -EINVAL, "%s: not a regular file of at most %d bytes", path,
                        FILE_MAX_BYTES);
        goto err_close;
    }
    char *text = cs_xmalloc((size_t)st.st_size + 1);
    size_t have = 0;
    while (have < (size_t)st.st_size) {
        ssize_t n = read(fd, text + have, (size_t)st.st_size - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = cs_err_set(err, n < 0 ? -errno : -EIO, "%s: %s", path,
                            n < 0 ? strerror(errno) : "shorter than its size");
            free(text);
            goto err_close;
        }
        have += (size_t)n;
    }
    text[have] = '\0';
    *out = text;
err_close:
    close(fd);
    return rc;
}

/* libcrypto's reason for the last failure, for a message. */
static const char *crypto_why(void)
{
    const char *why = ERR_reason_error_string(ERR_peek_last_error());
    return why != NULL ? why : "no PEM data";
}

/* The certificate chain's first certificate matches key: 0 or -EINVAL. */
static int check_pair(const char *cert_path, const char *cert_pem, const char *key_path,
                      const char *key_pem, struct cs_err *err)
{
    int rc = -EINVAL;
    ERR_clear_error();
    BIO *cb = BIO_new_mem_buf(cert_pem, -1);
    BIO *kb = BIO_new_mem_buf(key_pem, -1);
    CS_ASSERT(cb != NULL && kb != NULL);
    X509 *cert = PEM_read_bio_X509(cb, NULL, NULL, NULL);
    EVP_PKEY *key = PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL);
    if (cert == NULL)
        cs_err_set(err, rc, "%s: not a PEM certificate: %s", cert_path, crypto_why());
    else if (key == NULL)
        cs_err_set(err, rc, "%s: not a PEM private key: %s", key_path, crypto_why());
    else if (X509_check_private_key(cert, key) != 1)
        cs_err_set(err, rc, "%s is not the key of %s", key_path, cert_path);
    else
        rc = 0;
    EVP_PKEY_free(key);
    X509_free(cert);
    BIO_free(kb);
    BIO_free(cb);
    return rc;
}

static int check_ca(const char *path, const char *pem, struct cs_err *err)
{
    ERR_clear_error();
    BIO *b = BIO_new_mem_buf(pem, -1);
    CS_ASSERT(b != NULL);
    X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    if (ca == NULL)
        return cs_err_set(err, -EINVAL, "%s: not a PEM certificate: %s", path, crypto_why());
    X509_free(ca);
    return 0;
}

static int load_tls(struct cs_auth_load *l)
{
    const struct cs_auth_paths *p = &l->paths;
    char *cert = NULL, *key = NULL, *ca = NULL, *peer_ca = NULL;
    int rc = cs_auth_read_file(p->tls_cert, false, &cert, &l->err);
    if (rc != 0)
        return rc;
    if ((rc = cs_auth_read_file(p->tls_key, true, &key, &l->err)) != 0)
        goto err_free_cert;
    if ((rc = check_pair(p->tls_cert, cert, p->tls_key, key, &l->err)) != 0)
        goto err_free_key;
    if (p->tls_client_ca != NULL &&
        ((rc = cs_auth_read_file(p->tls_client_ca, false, &ca, &l->err)) != 0 ||
         (rc = check_ca(p->tls_client_ca, ca, &l->err)) != 0))
        goto err_free_ca;
    if (p->peer_ca != NULL &&
        ((rc = cs_auth_read_file(p->peer_ca, false, &peer_ca, &l->err)) != 0 ||
         (rc = check_ca(p->peer_ca, peer_ca, &l->err)) != 0))
        goto err_free_ca;
    grpc_ssl_pem_key_cert_pair pair = {.private_key = key, .cert_chain = cert};
    /* gRPC's fetcher path asserts some roots even when no client certificate
     * is asked for; then they are never used, and the chain stands in. */
    l->tls = grpc_ssl_server_certificate_config_create(ca != NULL ? ca : cert, &pair, 1);
    /* A forward presents the replica's own certificate, for a peer that
     * requires one (gRPC copies both). */
    l->peer = grpc_ssl_credentials_create(peer_ca, &pair, NULL, NULL);
err_free_ca:
    free(peer_ca);
    free(ca);
err_free_key:
    /* The key's copy made by gRPC stays; this one is wiped. */
    OPENSSL_cleanse(key, strlen(key));
    free(key);
err_free_cert:
    free(cert);
    return rc;
}

void cs_auth_load_work(uv_work_t *work)
{
    struct cs_auth_load *l = work->data;
    const struct cs_auth_paths *p = &l->paths;
    char *text = NULL;
    int rc = p->tls_cert != NULL ? load_tls(l) : 0;
    if (rc == 0 && p->tokens != NULL &&
        (rc = cs_auth_read_file(p->tokens, true, &text, &l->err)) == 0) {
        rc = cs_tokens_parse(p->tokens, text, &l->tokens, &l->err);
        OPENSSL_cleanse(text, strlen(text));
        free(text);
    }
    if (rc == 0 && p->client_roles != NULL &&
        (rc = cs_auth_read_file(p->client_roles, false, &text, &l->err)) == 0) {
        rc = cs_cert_roles_parse(p->client_roles, text, &l->cert_roles, &l->err);
        free(text);
    }
    l->status = rc;
}
