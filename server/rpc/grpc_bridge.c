/* grpc_bridge: the loop thread's side of the bridge. Starts the thread,
 * runs the callback of each tag it posts, in the order gRPC completed them,
 * and at shutdown joins the thread once it has posted its last mail. */
#define CS_LOG_COMPONENT "grpc"
#include "grpc_bridge.h"

#include <stdlib.h>

#include "log.h"
#include "queue.h"
#include "util.h"

static void mailbox_closed_cb(uv_handle_t *handle)
{
    struct cs_grpc_bridge *bridge = CS_MAILBOX_OF(handle)->data;
    bridge->drained_cb(bridge);
}

static void completions_cb(struct cs_mailbox *box, struct cs_queue *mails)
{
    struct cs_grpc_bridge *bridge = box->data;
    bool drained = false;
    for (struct cs_qlink *m; (m = cs_queue_pop(mails)) != NULL;) {
        struct cs_grpc_completion *c = CS_CONTAINER_OF(m, struct cs_grpc_completion, mail.link);
        if (c->tag != NULL)
            c->tag->done_cb(c->tag, c->ok);
        else
            drained = true;
        free(c);
    }
    if (drained) {
        /* The thread posted its last mail and is returning: the join is brief. */
        CS_ASSERT(uv_thread_join(&bridge->thread) == 0);
        grpc_completion_queue_destroy(bridge->cq);
        bridge->cq = NULL;
        cs_mailbox_close(&bridge->box, mailbox_closed_cb);
    }
}

int cs_grpc_bridge_start(uv_loop_t *loop, struct cs_grpc_bridge *bridge)
{
    CS_ASSERT_LOOP();
    int rc = cs_mailbox_init(loop, &bridge->box, completions_cb, bridge);
    if (rc != 0)
        return rc;
    bridge->cq = grpc_completion_queue_create_for_next(NULL);
    rc = uv_thread_create(&bridge->thread, cs_grpc_bridge_thread_main, bridge);
    if (rc != 0) {
        cs_log_error("uv_thread_create(grpc bridge) failed: %s", uv_strerror(rc));
        grpc_completion_queue_destroy(bridge->cq);
        cs_mailbox_close(&bridge->box, NULL);
        return rc;
    }
    return 0;
}

void cs_grpc_bridge_stop(struct cs_grpc_bridge *bridge, cs_grpc_bridge_drained_cb drained_cb)
{
    CS_ASSERT_LOOP();
    bridge->drained_cb = drained_cb;
    grpc_completion_queue_shutdown(bridge->cq);
}
