/* The gRPC bridge thread blocks in grpc_completion_queue_next and hands each
 * completed tag to the loop thread through a mailbox, so that every handler
 * runs on the loop. (A callback completion queue alone never polls the
 * sockets in gRPC 1.51: calls would hang.) */
#ifndef CS_GRPC_BRIDGE_THREAD_H
#define CS_GRPC_BRIDGE_THREAD_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <uv.h>

#include "mailbox.h"

/* A tag given to gRPC: done runs on the loop thread with the op's success. */
struct cs_tag {
    void (*done)(struct cs_tag *tag, bool ok);
};

struct cs_bridge {
    grpc_completion_queue *cq;
    struct cs_mailbox box;
    uv_thread_t thread;
    void (*drained_cb)(struct cs_bridge *bridge); /* after GRPC_QUEUE_SHUTDOWN */
    void *data;
};

/* Loop thread: creates the completion queue and starts the thread. */
int cs_bridge_start(uv_loop_t *loop, struct cs_bridge *bridge);
/* Loop thread: shuts the queue down; once it is drained, joins the thread,
 * destroys the queue and calls drained_cb. */
void cs_bridge_stop(struct cs_bridge *bridge, void (*drained_cb)(struct cs_bridge *bridge));

#endif
