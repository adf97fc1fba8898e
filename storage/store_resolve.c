/* Name resolution of the database host: libpq's PQconnectStartParams would
 * resolve a host name synchronously, so the name goes through uv_getaddrinfo
 * (on libuv's pool) first, and libpq is given the addresses as hostaddr.
 * Loop thread; the answer comes back through the caller's callback. */
#include <errno.h>
#include <stdlib.h>

#include "store_internal.h"

/* One resolution in flight; req.data points back at it. */
struct resolve {
    uv_getaddrinfo_t req;
    struct cs_store *store;
    cs_store_resolve_cb resolve_cb;
};

static void getaddrinfo_cb(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct resolve *r = req->data;
    struct cs_store *store = r->store;
    cs_store_resolve_cb resolve_cb = r->resolve_cb;
    struct cs_store_err err = {0};
    size_t n = 0;

    free(r);
    if (status == 0)
        n = cs_store_addr_lists(res, store->host, store->hostaddrs, sizeof(store->hostaddrs),
                                store->hosts, sizeof(store->hosts));
    uv_freeaddrinfo(res);
    if (n > 0) {
        cs_store_log(&store->log, CS_STORE_LOG_DEBUG, "database host %s is %s", store->host,
                     store->hostaddrs);
        resolve_cb(store, 0, NULL);
        return;
    }
    cs_store_err_set(&err, status != 0 ? status : -ENOENT, "cannot resolve %s: %s", store->host,
                     status != 0 ? uv_strerror(status) : "no address");
    resolve_cb(store, err.code, &err);
}

int cs_store_resolve(struct cs_store *store, cs_store_resolve_cb resolve_cb)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct resolve *r = cs_store_xmalloc(sizeof(*r));
    int rc;

    r->store = store;
    r->resolve_cb = resolve_cb;
    r->req.data = r;
    rc = uv_getaddrinfo(store->loop, &r->req, getaddrinfo_cb, store->host, NULL, &hints);
    if (rc != 0)
        free(r);
    return rc;
}
