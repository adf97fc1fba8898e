/* http_tls: the HTTPS certificate of the HTTP API, given to GnuTLS at each
 * handshake (libmicrohttpd's MHD_OPTION_HTTPS_CERT_CALLBACK), so that a new
 * one is served without a restart. When auth has reread its files on
 * SIGHUP (and found the pair good), cs_http_tls_reread marks them changed;
 * the next handshake reads them again on its own connection's thread and
 * serves them from then on, while connections already up keep theirs. A
 * pair that fails to load leaves the one in use, and is logged.
 *
 * Credentials replaced are kept for CS_HTTP_TLS_RETIRED_S (a handshake
 * that took them may still be using them) and freed at a later reread.
 * Any thread: one mutex. */
#ifndef CS_HTTP_TLS_H
#define CS_HTTP_TLS_H

#include <gnutls/abstract.h>

#include "util.h"

/* How long credentials replaced are kept for the handshakes that took
 * them: longer than any connection takes to shake hands. */
#define CS_HTTP_TLS_RETIRED_S 600

struct cs_http_tls;

/* Reads cert_path and key_path (PEM; borrowed for the life of the
 * result): 0 with *out, or a negative errno with err naming the file and
 * why. Main thread. The one libmicrohttpd server of the process uses it
 * (GnuTLS's callback has no argument of its own). */
int cs_http_tls_new(const char *cert_path, const char *key_path, struct cs_http_tls **out,
                    struct cs_err *err);
/* MHD_OPTION_HTTPS_CERT_CALLBACK's callback: the newest pair, read again
 * first when it has been marked changed. A handshake's thread. */
int cs_http_tls_retrieve_cb(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                            const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                            gnutls_pcert_st **pcert, unsigned int *pcert_length,
                            gnutls_privkey_t *privkey);
/* The next handshake reads the files again. Any thread. */
void cs_http_tls_reread(struct cs_http_tls *t);
/* After the server has stopped. NULL is allowed. */
void cs_http_tls_free(struct cs_http_tls *t);

#endif
