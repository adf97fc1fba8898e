/* gRPC bridge thread: the only code that waits on the server's completion
 * queue. Each event becomes a mail for the loop thread; the loop runs the
 * tag's callback (grpc_bridge.c). A tag with release_cb is released here
 * instead: it holds nothing of the loop's. The thread ends on
 * GRPC_QUEUE_SHUTDOWN after posting a last mail that tells the loop the
 * queue is drained. It touches nothing of the loop's but the mailbox. */
#include <pthread.h>

#include "grpc_bridge.h"

void cs_grpc_bridge_thread_main(void *arg)
{
    struct cs_grpc_bridge *bridge = arg;
    /* The name only helps a person reading top or a core file. */
    (void)pthread_setname_np(pthread_self(), "csched-grpc");
    for (;;) {
        grpc_event ev =
            grpc_completion_queue_next(bridge->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        struct cs_tag *tag = ev.type == GRPC_OP_COMPLETE ? ev.tag : NULL;
        if (tag != NULL && tag->release_cb != NULL) {
            tag->release_cb(tag);
            continue;
        }
        cs_grpc_bridge_post(bridge, tag, ev.success != 0);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            return;
    }
}
