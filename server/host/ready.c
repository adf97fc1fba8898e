/* ready: the ready file's write and its retries, on the loop (see ready.h). */
#define CS_LOG_COMPONENT "cschedd"
#include "ready.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "queue.h"
#include "util.h"

#define READY_FD_RETRY_MS 100

static void written_cb(uv_work_t *work, int status);

static void queue_write(struct cs_ready *r)
{
    /* Only an invalid argument fails. */
    CS_ASSERT(uv_queue_work(r->retry.loop, &r->write.work, cs_ready_write_work, written_cb) == 0);
}

static void retry_cb(uv_timer_t *timer)
{
    queue_write(timer->data);
}

static void written_cb(uv_work_t *work, int status)
{
    struct cs_ready *r = CS_CONTAINER_OF(work, struct cs_ready, write.work);
    int rc = r->write.rc;
    if (status != 0 || r->stopped || (rc != -EMFILE && rc != -ENFILE))
        return;
    if (r->fd_waits++ == 0)
        cs_log_warn("out of file descriptors to write the ready file %s: trying again every "
                    "%d ms",
                    r->write.path, READY_FD_RETRY_MS);
    /* Fails only for a closing handle or a NULL callback. */
    CS_ASSERT(uv_timer_start(&r->retry, retry_cb, READY_FD_RETRY_MS, 0) == 0);
}

void cs_ready_start(struct cs_ready *r, uv_loop_t *loop, const char *path, const char *text)
{
    CS_ASSERT_LOOP();
    memset(r, 0, sizeof(*r));
    r->write.path = path;
    r->write.work.data = &r->write;
    (void)snprintf(r->write.text, sizeof(r->write.text), "%s", text);
    CS_ASSERT(uv_timer_init(loop, &r->retry) == 0); /* cannot fail on Linux */
    r->retry.data = r;
    r->started = true;
    queue_write(r);
}

void cs_ready_stop(struct cs_ready *r)
{
    CS_ASSERT_LOOP();
    if (!r->started || r->stopped)
        return;
    r->stopped = true;
    uv_close((uv_handle_t *)&r->retry, NULL);
}
