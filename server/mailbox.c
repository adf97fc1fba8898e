/* Mailbox: cross-thread hand-off to the loop thread. post() runs on any
 * thread; the async callback runs on the loop thread and drains everything. */
#include "mailbox.h"

#include "util.h"

void cs_mailbox_drain(struct cs_mailbox *box)
{
    pthread_mutex_lock(&box->lock);
    struct cs_mail *first = box->head;
    box->head = box->tail = NULL;
    pthread_mutex_unlock(&box->lock);
    if (first != NULL)
        box->cb(box, first);
}

static void on_async(uv_async_t *async)
{
    cs_mailbox_drain(async->data);
}

int cs_mailbox_init(uv_loop_t *loop, struct cs_mailbox *box, cs_mailbox_cb cb, void *data)
{
    box->head = box->tail = NULL;
    box->cb = cb;
    box->data = data;
    int rc = uv_async_init(loop, &box->async, on_async);
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
    pthread_mutex_destroy(&box->lock);
    uv_close((uv_handle_t *)&box->async, close_cb);
}
