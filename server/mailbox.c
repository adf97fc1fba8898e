/* Mailbox: cross-thread hand-off to the loop thread. post() runs on any
 * thread; the async callback runs on the loop thread and works through the
 * items for at most CS_MAILBOX_SLICE_NS per turn. */
#include "mailbox.h"

#include <stdint.h>

#include "util.h"

/* Takes up to budget items off the list (all of them for SIZE_MAX). */
static struct cs_mail *take(struct cs_mailbox *box, size_t budget, bool *more)
{
    pthread_mutex_lock(&box->lock);
    struct cs_mail *first = box->head, *last = NULL;
    size_t n = 0;
    for (struct cs_mail *m = first; m != NULL && n < budget; m = m->next, n++)
        last = m;
    if (last != NULL) {
        box->head = last->next;
        last->next = NULL;
        if (box->head == NULL)
            box->tail = NULL;
    }
    *more = box->head != NULL;
    pthread_mutex_unlock(&box->lock);
    return last != NULL ? first : NULL;
}

void cs_mailbox_drain(struct cs_mailbox *box)
{
    CS_ASSERT_LOOP();
    bool more;
    struct cs_mail *first = take(box, SIZE_MAX, &more);
    if (first != NULL)
        box->cb(box, first);
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
        struct cs_mail *first = take(box, CS_MAILBOX_CHUNK, &more);
        if (first != NULL)
            box->cb(box, first);
    } while (more && cs_now_mono_ns() < deadline_ns);
    if (more)
        CS_ASSERT(uv_async_send(async) == 0);
}

int cs_mailbox_init(uv_loop_t *loop, struct cs_mailbox *box, cs_mailbox_cb cb, void *data)
{
    CS_ASSERT_LOOP();
    box->head = box->tail = NULL;
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
    mail->next = NULL;
    pthread_mutex_lock(&box->lock);
    if (box->tail != NULL)
        box->tail->next = mail;
    else
        box->head = mail;
    box->tail = mail;
    pthread_mutex_unlock(&box->lock);
    CS_ASSERT(uv_async_send(&box->async) == 0);
}

void cs_mailbox_close(struct cs_mailbox *box, uv_close_cb close_cb)
{
    CS_ASSERT_LOOP();
    pthread_mutex_destroy(&box->lock);
    uv_close((uv_handle_t *)&box->async, close_cb);
}
