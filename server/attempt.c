/* attempt: the minder's end (exit_watch) and the hand-off to the pool for the note. */
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

void cs_attempt_on_exit(void *ctx)
{
    struct cs_attempt *att = ctx;
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
    return cs_exit_watch_add(&att->sched->exits, att->pidfd, att);
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

void cs_attempt_free(struct cs_attempt *att)
{
    /* Closing the pidfd also takes it out of the exit watch. */
    if (att->pidfd >= 0)
        (void)close(att->pidfd);
    free(att->dir);
    free(att);
}
