/* tls_fetch: the slot between the loop and gRPC's handshakes (see
 * tls_fetch.h). The callback runs on gRPC's threads, the rest on the loop. */
#include <stddef.h>

#include "tls_fetch.h"

void cs_tls_fetch_init(struct cs_tls_fetch *f)
{
    (void)pthread_mutex_init(&f->lock, NULL); /* default attributes: cannot fail */
    f->next = NULL;
}

void cs_tls_fetch_offer(struct cs_tls_fetch *f, grpc_ssl_server_certificate_config *config)
{
    pthread_mutex_lock(&f->lock);
    grpc_ssl_server_certificate_config *old = f->next;
    f->next = config;
    pthread_mutex_unlock(&f->lock);
    if (old != NULL)
        grpc_ssl_server_certificate_config_destroy(old);
}

grpc_ssl_certificate_config_reload_status
cs_tls_fetch_cb(void *user_data, grpc_ssl_server_certificate_config **config)
{
    struct cs_tls_fetch *f = user_data;
    pthread_mutex_lock(&f->lock);
    grpc_ssl_server_certificate_config *next = f->next;
    f->next = NULL;
    pthread_mutex_unlock(&f->lock);
    if (next == NULL)
        return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
    *config = next;
    return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW;
}

void cs_tls_fetch_destroy(struct cs_tls_fetch *f)
{
    cs_tls_fetch_offer(f, NULL);
    (void)pthread_mutex_destroy(&f->lock); /* unlocked by now: cannot fail */
}
