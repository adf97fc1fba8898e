/* tls_fetch: hands new server certificates to gRPC without dropping
 * connections. gRPC asks its fetcher callback for a config at each new TLS
 * handshake, on its own threads; the loop offers a config, made on the pool
 * from the files, and the next handshake takes it; connections already up
 * keep theirs. The slot is guarded by its mutex: cs_tls_fetch_offer runs on
 * the loop (or before it, at start), cs_tls_fetch_cb on gRPC's threads.
 * Invariant: next is NULL or a config gRPC has not yet taken. */
#ifndef CS_TLS_FETCH_H
#define CS_TLS_FETCH_H

#include <grpc/grpc_security.h>
#include <pthread.h>

struct cs_tls_fetch {
    pthread_mutex_t lock;
    grpc_ssl_server_certificate_config *next; /* owned until taken */
};

void cs_tls_fetch_init(struct cs_tls_fetch *f);
/* Offers config (ownership passes) for the next handshake, replacing one not
 * yet taken. Cheap: one lock. */
void cs_tls_fetch_offer(struct cs_tls_fetch *f, grpc_ssl_server_certificate_config *config);
/* gRPC's fetcher (user_data: the struct cs_tls_fetch): NEW with the offered
 * config, else UNCHANGED. Any thread. */
grpc_ssl_certificate_config_reload_status
cs_tls_fetch_cb(void *user_data, grpc_ssl_server_certificate_config **config);
/* Frees a config not yet taken, once gRPC has shut down. */
void cs_tls_fetch_destroy(struct cs_tls_fetch *f);

#endif
