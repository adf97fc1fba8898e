/* attempt: the minder's end (exit_watch) and the hand-off to the pool for the note. */
#define CS_LOG_COMPONENT "attempt"
#include "attempt.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* A timer of its own, so that an attempt is still freed at once: the
 * timer, stopped by uv_close, is freed when it has closed. */
struct cs_backstop {
    uv_timer_t timer;
    struct cs_attempt *att;
};

static void on_backstop_closed(uv_handle_t *handle)
{
    free(handle->data);
}

static void on_backstop(uv_timer_t *timer)
{
    struct cs_backstop *b = timer->data;
    struct cs_attempt *att = b->att;
    cs_log_warn("minder %d of run %lld attempt %u outlived its timeout and kill grace; killing it",
                (int)att->pid, (long long)att->run->msg->id, att->number);
    att->backstop_fired = true;
    if (syscall(SYS_pidfd_send_signal, att->pidfd, SIGKILL, NULL, 0) != 0 && errno != ESRCH)
        cs_log_warn("pidfd_send_signal(minder %d, SIGKILL) failed: %s", (int)att->pid,
                    strerror(errno));
}

static void backstop_start(struct cs_attempt *att, int64_t deadline_unix_ms)
{
    struct cs_backstop *b = cs_xcalloc(1, sizeof(*b));
    int64_t in_ms = deadline_unix_ms - cs_now_unix_ms();
    CS_ASSERT(uv_timer_init(att->sched->loop, &b->timer) == 0);
    b->timer.data = b;
    b->att = att;
    att->backstop = b;
    CS_ASSERT(uv_timer_start(&b->timer, on_backstop, in_ms > 0 ? (uint64_t)in_ms : 0, 0) == 0);
}

static void backstop_end(struct cs_attempt *att)
{
    if (att->backstop == NULL)
        return;
    uv_close((uv_handle_t *)&att->backstop->timer, on_backstop_closed);
    att->backstop = NULL;
}

void cs_attempt_on_exit(void *ctx)
{
    struct cs_attempt *att = ctx;
    backstop_end(att);
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

int cs_attempt_watch(struct cs_attempt *att, int64_t deadline_unix_ms)
{
    int rc = cs_exit_watch_add(&att->sched->exits, att->pidfd, att);
    if (rc == 0 && deadline_unix_ms != 0)
        backstop_start(att, deadline_unix_ms);
    return rc;
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
    backstop_end(att);
    /* Closing the pidfd also takes it out of the exit watch. */
    if (att->pidfd >= 0)
        (void)close(att->pidfd);
    free(att->dir);
    free(att);
}
