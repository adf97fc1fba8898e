/* A mailbox carries items from any thread to the loop thread: a locked
 * queue (queue.h) plus an eventfd the loop polls. Sends coalesce: only a post
 * to an empty queue writes the eventfd, so the loop-side callback takes many
 * items at once (as libuv's uv__work_done does), for at most a time slice per
 * turn. Not a uv_async_t: its sender holds a flag across the write that wakes
 * the loop, and a loop woken while that sender is preempted spins, then
 * yields, until the sender runs again (libuv 1.44's uv__async_spin);
 * docs/design/0039.
 * Items are intrusive: each holds a struct cs_mail. */
#ifndef CS_MAILBOX_H
#define CS_MAILBOX_H

#include <pthread.h>
#include <uv.h>

#include "queue.h"

/* The loop spends at most this long on one mailbox per turn (it finishes the
 * chunk it started), handing items to the callback CS_MAILBOX_CHUNK at a time. */
#define CS_MAILBOX_SLICE_NS (1000 * 1000)
#define CS_MAILBOX_CHUNK 8

struct cs_mail {
    struct cs_qlink link;
};

struct cs_mailbox;
/* Called on the loop thread with the items in the order they were posted;
 * the callback takes every one of them off mails (cs_queue_pop) and owns it. */
typedef void (*cs_mailbox_cb)(struct cs_mailbox *box, struct cs_queue *mails);

struct cs_mailbox {
    uv_poll_t poll; /* of wake_fd */
    int wake_fd;    /* an eventfd, written when the queue stops being empty */
    pthread_mutex_t lock;
    struct cs_queue queue; /* of struct cs_mail; guarded by lock */
    cs_mailbox_cb cb;
    void *data;
};

/* Loop thread. 0 or a negative errno (eventfd, uv_poll_init). */
int cs_mailbox_init(uv_loop_t *loop, struct cs_mailbox *box, cs_mailbox_cb cb, void *data);
/* Any thread; the mailbox takes the item until cb hands it back. */
void cs_mailbox_post(struct cs_mailbox *box, struct cs_mail *mail);
/* Loop thread: hands whatever is waiting to the callback now (for a last
 * drain before closing: a closed handle never calls back). */
void cs_mailbox_drain(struct cs_mailbox *box);
/* The mailbox whose handle close_cb receives. */
#define CS_MAILBOX_OF(handle) CS_CONTAINER_OF((uv_poll_t *)(handle), struct cs_mailbox, poll)
/* Loop thread; close_cb (may be NULL) runs once the poll handle is closed. */
void cs_mailbox_close(struct cs_mailbox *box, uv_close_cb close_cb);

#endif
