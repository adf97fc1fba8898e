/* grpc_bridge: carries gRPC's completions to the loop thread. A thread of
 * its own (grpc_bridge_thread.c) blocks in grpc_completion_queue_next and
 * posts each completed tag to a mailbox; the loop side (grpc_bridge.c) runs
 * the tag's callback, so every handler runs on the loop. (A callback
 * completion queue alone never polls the sockets in gRPC 1.51: calls would
 * hang.) Start and stop on the loop thread; the thread owns nothing but its
 * wait on the queue. */
#ifndef CS_GRPC_BRIDGE_H
#define CS_GRPC_BRIDGE_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <uv.h>

#include "mailbox.h"
#include "util.h"

/* A tag given to gRPC: done_cb runs on the loop thread with the op's
 * success. A tag with release_cb instead is one whose completion the loop
 * has nothing to learn from (a unary call's last batch): the bridge thread
 * runs it, to give back what gRPC held, and the loop is not woken for it. */
struct cs_tag {
    void (*done_cb)(struct cs_tag *tag, bool ok);
    void (*release_cb)(struct cs_tag *tag);
};

struct cs_grpc_bridge;
typedef void (*cs_grpc_bridge_drained_cb)(struct cs_grpc_bridge *bridge);

struct cs_grpc_bridge {
    grpc_completion_queue *cq;
    struct cs_mailbox box;
    uv_thread_t thread;
    cs_grpc_bridge_drained_cb drained_cb; /* after GRPC_QUEUE_SHUTDOWN */
    void *data;
};

/* Loop thread: creates the completion queue and starts the thread. 0 or a
 * negative errno from libuv. */
int cs_grpc_bridge_start(uv_loop_t *loop, struct cs_grpc_bridge *bridge);
/* Loop thread: shuts the queue down; once it is drained, joins the thread,
 * destroys the queue and calls drained_cb. */
void cs_grpc_bridge_stop(struct cs_grpc_bridge *bridge, cs_grpc_bridge_drained_cb drained_cb);

/* The bridge thread's body (arg: the bridge): waits on the queue and posts
 * each event (or releases it, for a tag with release_cb), until the queue
 * has shut down. */
void cs_grpc_bridge_thread_main(void *arg);

/* What the thread posts for each event: tag is NULL once the queue is drained. */
struct cs_grpc_completion {
    struct cs_mail mail;
    struct cs_tag *tag;
    bool ok;
};

/* Any thread: has tag's done_cb run on the loop with ok (tag NULL: the
 * queue is drained), after the completions posted before. Posted from the
 * loop itself, it runs once the code that posted it has returned (the
 * mailbox takes it after the callback it came from). */
static inline void cs_grpc_bridge_post(struct cs_grpc_bridge *bridge, struct cs_tag *tag, bool ok)
{
    struct cs_grpc_completion *c = cs_xmalloc(sizeof(*c));
    c->tag = tag;
    c->ok = ok;
    cs_mailbox_post(&bridge->box, &c->mail);
}

#endif
