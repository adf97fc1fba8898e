/* The embedded PostgreSQL's start and stop as libuv pool work: they block
 * (initdb, pg_ctl), so they never run on the loop thread. store.c queues
 * them and takes their result, store->work_status, in its after-work
 * callbacks on the loop. */
#include "pg_embedded.h"
#include "store_internal.h"

static void start(struct cs_store *store, bool again)
{
    struct cs_pg_embedded_options opts = {
        .log_cb = store->log.cb, .log_arg = store->log.arg, .again = again};

    store->work_status = cs_pg_embedded_start(store->embedded_dir, &opts, store->work_conninfo,
                                              sizeof(store->work_conninfo));
}

void cs_store_embedded_start_work(uv_work_t *req)
{
    start(req->data, false);
}

void cs_store_embedded_restart_work(uv_work_t *req)
{
    start(req->data, true);
}

void cs_store_embedded_stop_work(uv_work_t *req)
{
    struct cs_store *store = req->data;
    struct cs_pg_embedded_options opts = {.log_cb = store->log.cb, .log_arg = store->log.arg};

    store->work_status = cs_pg_embedded_stop(store->embedded_dir, &opts);
}
