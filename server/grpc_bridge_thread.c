/* gRPC bridge thread: the only code that waits on the server's completion
 * queue. Each event becomes a mail for the loop thread; the loop runs the
 * tag's done callback. The thread ends on GRPC_QUEUE_SHUTDOWN after posting
 * a last mail that tells the loop the queue is drained. */
#define CS_LOG_COMPONENT "grpc"
#include "grpc_bridge_thread.h"

#include <pthread.h>
#include <stdlib.h>

#include "log.h"
#include "util.h"

struct completion {
    struct cs_mail mail;
    struct cs_tag *tag; /* NULL: the queue is drained */
    bool ok;
};

static void bridge_main(void *arg)
{
    struct cs_bridge *bridge = arg;
    pthread_setname_np(pthread_self(), "csched-grpc");
    for (;;) {
        grpc_event ev =
            grpc_completion_queue_next(bridge->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        struct completion *c = cs_xmalloc(sizeof(*c));
        c->tag = ev.type == GRPC_OP_COMPLETE ? ev.tag : NULL;
        c->ok = ev.success != 0;
        cs_mailbox_post(&bridge->box, &c->mail);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            return;
    }
}

static void on_mailbox_closed(uv_handle_t *handle)
{
    struct cs_bridge *bridge = CS_MAILBOX_OF(handle)->data;
    bridge->drained_cb(bridge);
}

static void on_completions(struct cs_mailbox *box, struct cs_mail *first)
{
    struct cs_bridge *bridge = box->data;
    bool drained = false;
    for (struct cs_mail *m = first, *next; m != NULL; m = next) {
        next = m->next;
        struct completion *c = (struct completion *)m;
        if (c->tag != NULL)
            c->tag->done(c->tag, c->ok);
        else
            drained = true;
        free(c);
    }
    if (drained) {
        /* The thread posted its last mail and is returning: the join is brief. */
        CS_ASSERT(uv_thread_join(&bridge->thread) == 0);
        grpc_completion_queue_destroy(bridge->cq);
        bridge->cq = NULL;
        cs_mailbox_close(&bridge->box, on_mailbox_closed);
    }
}

int cs_bridge_start(uv_loop_t *loop, struct cs_bridge *bridge)
{
    int rc = cs_mailbox_init(loop, &bridge->box, on_completions, bridge);
    if (rc != 0)
        return rc;
    bridge->cq = grpc_completion_queue_create_for_next(NULL);
    rc = uv_thread_create(&bridge->thread, bridge_main, bridge);
    if (rc != 0) {
        cs_log_error("uv_thread_create(grpc bridge) failed: %s", uv_strerror(rc));
        grpc_completion_queue_destroy(bridge->cq);
        cs_mailbox_close(&bridge->box, NULL);
        return rc;
    }
    return 0;
}

void cs_bridge_stop(struct cs_bridge *bridge, void (*drained_cb)(struct cs_bridge *bridge))
{
    bridge->drained_cb = drained_cb;
    grpc_completion_queue_shutdown(bridge->cq);
}
