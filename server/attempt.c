/* attempt: pidfd watch and the hand-off to the pool for the note. */
#define CS_LOG_COMPONENT "attempt"
#include "attempt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static void after_note(uv_work_t *work, int status)
{
    struct cs_attempt *att = work->data;
    if (status != 0)
        att->note_rc = status; /* cancelled at shutdown */
    cs_dispatch_attempt_ended(att);
}

static void on_exit_readable(uv_poll_t *poll, int status, int events)
{
    struct cs_attempt *att = poll->data;
    CS_ASSERT(uv_poll_stop(poll) == 0);
    if (att->is_child) {
        /* Reap our own minder; the pidfd said it is gone, so this never waits. */
        int wstatus;
        if (waitpid(att->pid, &wstatus, WNOHANG) < 0)
            cs_log_warn("waitpid(%d) failed: %s", (int)att->pid, strerror(errno));
    }
    att->work.data = att;
    int rc = uv_queue_work(att->sched->loop, &att->work, cs_attempt_read_note_work, after_note);
    CS_ASSERT(rc == 0);
}

int cs_attempt_watch(struct cs_attempt *att)
{
    int rc = uv_poll_init(att->sched->loop, &att->poll, att->pidfd);
    if (rc != 0)
        return rc;
    att->poll.data = att;
    att->polling = true;
    return uv_poll_start(&att->poll, UV_READABLE, on_exit_readable);
}

static void after_adopt(uv_work_t *work, int status)
{
    struct cs_attempt *att = work->data;
    if (status == 0 && att->adopt_pidfd >= 0) {
        att->pid = att->adopt_pid;
        att->pidfd = att->adopt_pidfd;
        att->is_child = false;
        cs_dispatch_attempt_adopted(att);
        return;
    }
    cs_dispatch_attempt_ended(att);
}

void cs_attempt_adopt(struct cs_attempt *att)
{
    att->work.data = att;
    int rc = uv_queue_work(att->sched->loop, &att->work, cs_attempt_adopt_work, after_adopt);
    CS_ASSERT(rc == 0);
}

static void on_closed(uv_handle_t *handle)
{
    struct cs_attempt *att = handle->data;
    (void)close(att->pidfd);
    free(att->dir);
    free(att);
}

void cs_attempt_free(struct cs_attempt *att)
{
    if (att->polling) {
        uv_close((uv_handle_t *)&att->poll, on_closed);
        return;
    }
    if (att->pidfd >= 0)
        (void)close(att->pidfd);
    free(att->dir);
    free(att);
}
