/* Mailbox: cross-thread hand-off to the loop thread. post() runs on any
 * thread; the async callback runs on the loop thread and works through the
 * items for at most CS_MAILBOX_SLICE_NS per turn. */
#include "mailbox.h"

#include <stdint.h>

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

void cs_mailbox_drain(struct cs_mailbox *box)
{
    CS_ASSERT_LOOP();
    struct cs_queue mails;
    cs_queue_init(&mails);
    (void)take(box, SIZE_MAX, &mails);
    deliver(box, &mails);
}

static void async_cb(uv_async_t *async)
{
    struct cs_mailbox *box = async->data;
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
    if (more)
        CS_ASSERT(uv_async_send(async) == 0);
}

int cs_mailbox_init(uv_loop_t *loop, struct cs_mailbox *box, cs_mailbox_cb cb, void *data)
{
    CS_ASSERT_LOOP();
    cs_queue_init(&box->queue);
    box->cb = cb;
    box->data = data;
    int rc = uv_async_init(loop, &box->async, async_cb);
    if (rc != 0)
        return rc;
    box->async.data = box;
    CS_ASSERT(pthread_mutex_init(&box->lock, NULL) == 0);
    return 0;
}

void cs_mailbox_post(struct cs_mailbox *box, struct cs_mail *mail)
{
    pthread_mutex_lock(&box->lock);
    cs_queue_push(&box->queue, &mail->link);
    pthread_mutex_unlock(&box->lock);
    CS_ASSERT(uv_async_send(&box->async) == 0);
}

void cs_mailbox_close(struct cs_mailbox *box, uv_close_cb close_cb)
{
    CS_ASSERT_LOOP();
    pthread_mutex_destroy(&box->lock);
    uv_close((uv_handle_t *)&box->async, close_cb);
}
