/* The connection's socket: one uv_poll watching it, libpq's output flushed
 * to it, and telling a broken connection from a statement's error. Loop
 * thread. The poll callback is the connection layer's (store->poll_cb);
 * failures come back as -errno with the reason, for that layer to act on. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

static void poll_closed_cb(uv_handle_t *handle)
{
    free(handle);
}

/* The poll handle must stop before libpq closes the socket. */
void cs_store_unwatch(struct cs_store *store)
{
    if (store->poll != NULL) {
        uv_close((uv_handle_t *)store->poll, poll_closed_cb);
        store->poll = NULL;
    }
}

/* During connect the socket may be closed and another opened under the
 * same number, so a new poll handle is made each time (renew); afterwards
 * only the events change. */
int cs_store_watch(struct cs_store *store, int events, bool renew, struct cs_store_err *err)
{
    int fd = PQsocket(store->conn);
    int rc;

    if (renew)
        cs_store_unwatch(store);
    if (fd < 0)
        return cs_store_err_set(err, -EBADF, "the database connection has no socket");
    if (store->poll == NULL) {
        store->poll = cs_store_xmalloc(sizeof(*store->poll));
        rc = uv_poll_init(store->loop, store->poll, fd);
        if (rc != 0) {
            free(store->poll);
            store->poll = NULL;
            return cs_store_err_set(err, rc, "cannot watch the database socket: %s",
                                    uv_strerror(rc));
        }
        store->poll->data = store;
        store->poll_events = 0;
    }
    if (events != store->poll_events) {
        rc = uv_poll_start(store->poll, events, store->poll_cb);
        if (rc != 0)
            return cs_store_err_set(err, rc, "cannot watch the database socket: %s",
                                    uv_strerror(rc));
        store->poll_events = events;
    }
    return 0;
}

int cs_store_flush_out(struct cs_store *store, struct cs_store_err *err)
{
    int rc = PQflush(store->conn);

    if (rc < 0)
        return cs_store_err_set(err, -ENOTCONN, "%s", PQerrorMessage(store->conn));
    rc = cs_store_watch(store, UV_READABLE | (rc == 1 ? UV_WRITABLE : 0), false, err);
    return rc != 0 ? -ENOTCONN : 0;
}

/* Errors that mean the connection, not the batch, is at fault. */
bool cs_store_is_conn_error(const struct cs_store *store, const PGresult *res)
{
    const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

    if (PQstatus(store->conn) == CONNECTION_BAD || state == NULL)
        return true;
    return strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0;
}
