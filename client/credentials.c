/* libcsched's channel credentials: plaintext, or TLS with an optional
 * client certificate (mTLS) and an optional bearer token that gRPC adds to
 * every call as "authorization: Bearer TOKEN". Runs on the caller's thread,
 * inside cs_client_new_opts; the PEM files are read here, whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <grpc/grpc_security.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call.h"

/* Far above any real certificate chain. */
#define PEM_MAX_BYTES (1024 * 1024)

/* Reads path (NULL: *out = NULL) whole into *out, NUL-terminated; the
 * caller frees it. 0 or a negative errno. */
static int read_pem(const char *path, char **out)
{
    struct stat st;
    char *buf;
    size_t have = 0;
    int fd, rc = 0;

    *out = NULL;
    if (path == NULL)
        return 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        goto err_close;
    }
    if (st.st_size > PEM_MAX_BYTES) {
        rc = -EFBIG;
        goto err_close;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        rc = -ENOMEM;
        goto err_close;
    }
    while (have < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + have, (size_t)st.st_size - have);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    buf[have] = '\0';
    *out = buf;
err_close:
    close(fd);
    return rc;
}

static void free_secret(char *s)
{
    if (s == NULL)
        return;
    /* volatile: the wipe must not be optimised away before free. */
    for (volatile char *p = s; *p != '\0'; p++)
        *p = '\0';
    free(s);
}

int cs__channel_credentials(const struct cs_client_opts *opts, grpc_channel_credentials **out)
{
    char *ca = NULL, *cert = NULL, *key = NULL;
    grpc_ssl_pem_key_cert_pair pair;
    grpc_channel_credentials *ssl;
    int rc;

    if (opts == NULL || (opts->ca_file == NULL && opts->cert_file == NULL &&
                         opts->key_file == NULL && opts->token == NULL)) {
        *out = grpc_insecure_credentials_create();
        return 0;
    }
    if ((opts->cert_file == NULL) != (opts->key_file == NULL) ||
        (opts->token != NULL && opts->token[0] == '\0'))
        return -EINVAL;
    if ((rc = read_pem(opts->ca_file, &ca)) != 0 || (rc = read_pem(opts->cert_file, &cert)) != 0 ||
        (rc = read_pem(opts->key_file, &key)) != 0)
        goto err_free;
    pair = (grpc_ssl_pem_key_cert_pair){.private_key = key, .cert_chain = cert};
    ssl = grpc_ssl_credentials_create(ca, cert != NULL ? &pair : NULL, NULL, NULL);
    if (opts->token != NULL) {
        grpc_call_credentials *token = grpc_access_token_credentials_create(opts->token, NULL);

        *out = grpc_composite_channel_credentials_create(ssl, token, NULL);
        grpc_call_credentials_release(token);
        grpc_channel_credentials_release(ssl);
    } else {
        *out = ssl;
    }
err_free:
    free_secret(key);
    free(cert);
    free(ca);
    return rc;
}
