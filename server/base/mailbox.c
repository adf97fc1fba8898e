/* Mailbox: cross-thread hand-off to the loop thread. post() runs on any
 * thread; the poll callback runs on the loop thread and works through the
 * items for at most CS_MAILBOX_SLICE_NS per turn. */
#include "mailbox.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util.h"

/* Moves up to budget items into out (all of them for SIZE_MAX); returns
 * whether more are waiting. */
static bool take(struct cs_mailbox *box, size_t budget, struct cs_queue *out)
{
    pthread_mutex_lock(&box->lock);
    for (size_t n = 0; n < budget && !cs_queue_is_empty(&box->queue); n++)
        cs_queue_push(out, cs_queue_pop(&box->queue));
    bool more = !cs_queue_is_empty(&box->queue);
    pthread_mutex_unlock(&box->lock);
    return more;
}

/* Hands what take() moved to the callback, if anything. */
static void deliver(struct cs_mailbox *box, struct cs_queue *mails)
{
    if (!cs_queue_is_empty(mails))
        box->cb(box, mails);
    /* The callback takes them all: nothing may be left behind unowned. */
    CS_ASSERT(cs_queue_is_empty(mails));
}

/* The eventfd never blocks (EFD_NONBLOCK), so no call is interrupted. */
static void wake(struct cs_mailbox *box)
{
    CS_ASSERT(eventfd_write(box->wake_fd, 1) == 0);
}

void cs_mailbox_drain(struct cs_mailbox *box)
{
    CS_ASSERT_LOOP();
    struct cs_queue mails;
    cs_queue_init(&mails);
    (void)take(box, SIZE_MAX, &mails);
    deliver(box, &mails);
}

static void poll_cb(uv_poll_t *poll, int status, int events)
{
    struct cs_mailbox *box = poll->data;
    (void)events;
    CS_ASSERT(status == 0);
    /* Reset before taking: an item posted after the take finds the queue
     * empty and wakes us again; one posted before it is taken now. */
    eventfd_t count;
    CS_ASSERT(eventfd_read(box->wake_fd, &count) == 0 || errno == EAGAIN);
    /* A burst (200 requests at once) is handled over several turns: small
     * chunks until the time slice is used up, so that timers, the pump and
     * the probe get a go in between. */
    int64_t deadline_ns = cs_now_mono_ns() + CS_MAILBOX_SLICE_NS;
    bool more;
    do {
        struct cs_queue mails;
        cs_queue_init(&mails);
        more = take(box, CS_MAILBOX_CHUNK, &mails);
        deliver(box, &mails);
    } while (more && cs_now_mono_ns() < deadline_ns);
    /* Posters wake us only when the queue was empty: the rest is ours. */
    if (more)
        wake(box);
}

int cs_mailbox_init(uv_loop_t *loop, struct cs_mailbox *box, cs_mailbox_cb cb, void *data)
{
    CS_ASSERT_LOOP();
    cs_queue_init(&box->queue);
    box->cb = cb;
    box->data = data;
    box->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (box->wake_fd < 0)
        return -errno;
    int rc = uv_poll_init(loop, &box->poll, box->wake_fd);
    if (rc != 0) {
        (void)close(box->wake_fd);
        return rc;
    }
    box->poll.data = box;
    /* Fails only for events libuv does not know. */
    CS_ASSERT(uv_poll_start(&box->poll, UV_READABLE, poll_cb) == 0);
    CS_ASSERT(pthread_mutex_init(&box->lock, NULL) == 0);
    return 0;
}

void cs_mailbox_post(struct cs_mailbox *box, struct cs_mail *mail)
{
    pthread_mutex_lock(&box->lock);
    bool was_empty = cs_queue_is_empty(&box->queue);
    cs_queue_push(&box->queue, &mail->link);
    pthread_mutex_unlock(&box->lock);
    if (was_empty)
        wake(box);
}

void cs_mailbox_close(struct cs_mailbox *box, uv_close_cb close_cb)
{
    CS_ASSERT_LOOP();
    pthread_mutex_destroy(&box->lock);
    /* uv_close stops polling at once, so the fd may go now. */
    uv_close((uv_handle_t *)&box->poll, close_cb);
    (void)close(box->wake_fd);
    box->wake_fd = -1;
}
