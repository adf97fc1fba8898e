/* attempt: the minder's end (exit_watch), the backstop timer, the
 * hand-off to the pool for the note, and what the note says; see attempt.h. */
#define CS_LOG_COMPONENT "attempt"
#include "attempt.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"
#include "log.h"
#include "metrics.h"
#include "note_cached.h"
#include "remote_attempt.h"
#include "util.h"

/* A timer of its own, so that an attempt is still freed at once: the
 * timer, stopped by uv_close, is freed when it has closed. Until the
 * minder ends it is the backstop; after (or before it is adopted), the wait
 * before a read that found no free fd is tried again. */
struct cs_attempt_timer {
    uv_timer_t timer;
    struct cs_attempt *att;
};

static void timer_closed_cb(uv_handle_t *handle)
{
    free(CS_CONTAINER_OF(handle, struct cs_attempt_timer, timer));
}

static void timer_end(struct cs_attempt *att)
{
    if (att->timer == NULL)
        return;
    uv_close((uv_handle_t *)&att->timer->timer, timer_closed_cb);
    att->timer = NULL;
}

static int timer_start(struct cs_attempt *att, uint64_t in_ms, uv_timer_cb cb)
{
    CS_ASSERT(att->timer == NULL); /* the backstop has ended before any retry */
    struct cs_attempt_timer *t = cs_xcalloc(1, sizeof(*t));
    int rc = uv_timer_init(att->sched->loop, &t->timer);
    if (rc != 0) {
        free(t);
        return rc;
    }
    t->att = att;
    att->timer = t;
    rc = uv_timer_start(&t->timer, cb, in_ms, 0);
    if (rc != 0)
        timer_end(att);
    return rc;
}

static struct cs_attempt *timer_attempt(uv_timer_t *timer)
{
    return CS_CONTAINER_OF(timer, struct cs_attempt_timer, timer)->att;
}

static void backstop_cb(uv_timer_t *timer)
{
    struct cs_attempt *att = timer_attempt(timer);
    cs_log_warn("minder %d of run %lld attempt %u outlived its timeout and kill grace; killing it",
                (int)att->pid, (long long)att->run_id, att->number);
    att->backstop_fired = true;
    if (syscall(SYS_pidfd_send_signal, att->pidfd, SIGKILL, NULL, 0) != 0 && errno != ESRCH)
        cs_log_warn("killing minder %d of run %lld attempt %u: pidfd_send_signal failed: %s",
                    (int)att->pid, (long long)att->run_id, att->number, strerror(errno));
}

static void release(struct cs_attempt *att)
{
    free(att->earlier);
    free(att->dir);
    free(att);
}

static void queue_work(struct cs_attempt *att, uv_work_cb work_cb, uv_after_work_cb done_cb)
{
    att->in_pool = true;
    /* Only an invalid argument fails: there is no way on without the work. */
    int rc = uv_queue_work(att->sched->loop, &att->work, work_cb, done_cb);
    CS_ASSERT(rc == 0);
}

/* How often a work that found no free fd is queued again. Without end: a
 * note is on disk and a minder may still run, and neither may be taken for
 * gone because clients (or the runs) held every fd for a while. */
#define FD_RETRY_MS 100

static void same_work_again(struct cs_attempt *att)
{
    queue_work(att, att->work.work_cb, att->work.after_work_cb);
}

static void fd_retry_cb(uv_timer_t *timer)
{
    struct cs_attempt *att = timer_attempt(timer);
    timer_end(att);
    same_work_again(att);
}

/* Called first by each work's done callback: whether it goes on. Not if
 * the attempt was freed while its work was on the pool (freed now), nor if
 * the work found no free fd (fd_short): the same work is queued again in
 * FD_RETRY_MS, and no pool thread waits meanwhile. */
static bool work_goes_on(struct cs_attempt *att, int status, const char *to_do)
{
    att->in_pool = false;
    if (att->freed) {
        if (status == 0 && att->adopt_pidfd >= 0)
            (void)close(att->adopt_pidfd);
        release(att);
        return false;
    }
    if (status != 0 || !att->fd_short)
        return true;
    if (att->fd_waits++ == 0)
        cs_log_warn("run %lld attempt %u: cschedd is out of file descriptors to %s: trying again "
                    "every %d ms",
                    (long long)att->run_id, att->number, to_do, FD_RETRY_MS);
    if (timer_start(att, FD_RETRY_MS, fd_retry_cb) != 0)
        same_work_again(att);
    return false;
}

static void note_read_cb(uv_work_t *work, int status)
{
    struct cs_attempt *att = CS_CONTAINER_OF(work, struct cs_attempt, work);
    if (!work_goes_on(att, status, "read its status note"))
        return;
    if (status != 0)
        att->note_rc = status; /* cancelled at shutdown */
    else
        cs_metrics_count_note_read(false);
    att->ops->ended_cb(att);
}

/* Whether a minder that ended with wstatus left nothing of its attempt
 * alive: it exited 0 (its command and what that left were ended and reaped
 * before it wrote its note) or started nothing. A minder killed, or ended
 * by a system error, may leave its command running until the note read
 * stops its group. */
static bool exited_clean(int wstatus)
{
    if (!WIFEXITED(wstatus))
        return false;
    int code = WEXITSTATUS(wstatus);
    return code == 0 || code == CS_MINDER_EXIT_NO_SPACE || code == CS_MINDER_EXIT_GIVEN_UP;
}

struct cs_attempt *cs_attempt_new_placed(struct cs_sched *sched, int64_t run_id, uint32_t number,
                                         const char *dir, const struct cs_attempt_ops *ops)
{
    CS_ASSERT_LOOP();
    struct cs_attempt *att = cs_xcalloc(1, sizeof(*att));
    att->sched = sched;
    att->ops = ops;
    att->run_id = run_id;
    att->number = number;
    att->pidfd = -1;
    att->adopt_pidfd = -1;
    att->dir = cs_xstrdup(dir);
    return att;
}

struct cs_attempt *cs_attempt_new(struct cs_sched *sched, struct cs_run *run, uint32_t number,
                                  const char *dir, const struct cs_attempt_ops *ops)
{
    struct cs_attempt *att = cs_attempt_new_placed(sched, run->msg->id, number, dir, ops);
    att->run = run;
    return att;
}

void cs_attempt_exit_cb(void *ctx)
{
    CS_ASSERT_LOOP();
    struct cs_attempt *att = ctx;
    timer_end(att);
    bool clean = false;
    if (att->is_child) {
        /* Reap our own minder; the pidfd said it is gone, so this never waits. */
        int wstatus;
        if (waitpid(att->pid, &wstatus, WNOHANG) < 0)
            cs_log_warn("reaping minder %d of run %lld attempt %u: waitpid failed: %s",
                        (int)att->pid, (long long)att->run_id, att->number, strerror(errno));
        else {
            att->no_space = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == CS_MINDER_EXIT_NO_SPACE;
            clean = exited_clean(wstatus);
        }
    }
    att->exited = true;
    /* Nothing needs the pidfd now: its fd is free for the note's read. */
    (void)close(att->pidfd); /* out of the exit watch too */
    att->pidfd = -1;
    if (clean) {
        att->ops->exited_cb(att);
        /* The note it has just written is nearly always in the caches. */
        if (cs_note_read_cached(att->dir, &att->note) == 0) {
            cs_metrics_count_note_read(true);
            att->note_rc = 0;
            att->ops->ended_cb(att);
            return;
        }
    }
    queue_work(att, cs_attempt_read_note_work, note_read_cb);
}

int cs_attempt_watch(struct cs_attempt *att, int64_t deadline_unix_ms)
{
    CS_ASSERT_LOOP();
    if (att->remote != NULL) {
        /* Its replica watches it, and enforces its backstop. */
        cs_remote_await(att);
        return 0;
    }
    int rc = cs_exit_watch_add(&att->sched->exits, att->pidfd, att);
    int64_t in_ms = deadline_unix_ms - cs_now_unix_ms();
    if (rc == 0 && deadline_unix_ms != 0 &&
        timer_start(att, in_ms > 0 ? (uint64_t)in_ms : 0, backstop_cb) != 0)
        /* The minder enforces the timeout itself; the backstop is for when it cannot. */
        cs_log_warn("no backstop timer for minder %d of run %lld attempt %u: it is watched "
                    "without one",
                    (int)att->pid, (long long)att->run_id, att->number);
    return rc;
}

static void adopt_done_cb(uv_work_t *work, int status)
{
    struct cs_attempt *att = CS_CONTAINER_OF(work, struct cs_attempt, work);
    if (!work_goes_on(att, status, "tell whether its minder still runs"))
        return;
    if (status != 0)
        att->note_rc = status; /* cancelled at shutdown */
    else if (att->no_dir) {
        att->ops->not_started_cb(att);
        return;
    }
    if (status == 0 && att->adopt_pidfd >= 0) {
        att->pid = att->adopt_pid;
        att->pidfd = att->adopt_pidfd;
        att->adopt_pidfd = -1;
        att->is_child = false;
        att->ops->adopted_cb(att);
        return;
    }
    att->ops->ended_cb(att);
}

void cs_attempt_adopt(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    queue_work(att, cs_attempt_adopt_work, adopt_done_cb);
}

/* The remote attempt's deadline has passed: its minder has stopped its
 * command, and the attempt ends lost (cs_attempt_apply_note with no note),
 * saying why. */
static void remote_deadline_cb(uv_timer_t *timer)
{
    struct cs_attempt *att = timer_attempt(timer);
    timer_end(att);
    att->note_rc = -ENOENT;
    att->ops->ended_cb(att);
}

int cs_attempt_await_remote(struct cs_attempt *att, uint64_t wait_ms, const char *replica)
{
    CS_ASSERT_LOOP();
    (void)snprintf(att->remote_replica, sizeof(att->remote_replica), "%s", replica);
    (void)snprintf(att->note.message, sizeof(att->note.message),
                   "lost with replica %s, whose lease ran out: its minder stopped the command at "
                   "the lease's deadline, after which the attempt was taken for lost",
                   replica);
    return timer_start(att, wait_ms, remote_deadline_cb);
}

int cs_attempt_cancel(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    if (att->remote != NULL) {
        cs_remote_cancel(att);
        return 0;
    }
    if (att->pid <= 0 || att->exited)
        return 0;
    if (kill(att->pid, SIGTERM) == 0)
        return 0;
    int rc = -errno;
    cs_log_warn("cancelling run %lld attempt %u: kill(minder %d, SIGTERM) failed: %s",
                (long long)att->run_id, att->number, (int)att->pid, strerror(-rc));
    return rc;
}

void cs_attempt_free(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    cs_remote_free(att);
    timer_end(att);
    /* Closing the pidfd also takes it out of the exit watch. */
    if (att->pidfd >= 0)
        (void)close(att->pidfd);
    if (!att->in_pool) {
        release(att);
        return;
    }
    /* At shutdown, with its note or adoption still on the pool: freed
     * when that returns (at once if it had not begun). */
    att->freed = true;
    (void)uv_cancel((uv_req_t *)&att->work);
}

/* --- what the note says ----------------------------------------------- */

/* The attempt's message when the minder refused to run the command for want
 * of room in the state dir. */
static void set_no_space_message(Csched__V1__Attempt *a, const char *dir)
{
    char msg[4096 + 128]; /* the attempt's path, and the words */
    (void)snprintf(msg, sizeof(msg),
                   "no space to record the outcome: the state dir is full (ENOSPC or quota) "
                   "at %s; the command was not run",
                   dir);
    cs_message_set_str(&a->message, msg);
}

/* The attempt's message when it left no note (or none could be read). */
static void set_missing_note_message(Csched__V1__Attempt *a, const struct cs_note *note,
                                     int note_rc, bool backstop_fired)
{
    if (note->message[0] != '\0')
        cs_message_set_str(&a->message, note->message);
    else if (backstop_fired)
        cs_message_set_str(&a->message,
                           "the minder did not end within the job's timeout and the kill "
                           "grace; cschedd killed it and its command");
    else if (note_rc == -ENOENT)
        cs_message_set_str(&a->message, "the minder ended without writing a status note");
    else {
        char msg[200];
        (void)snprintf(msg, sizeof(msg), "the status note could not be read: %s",
                       strerror(-note_rc));
        cs_message_set_str(&a->message, msg);
    }
}

/* The state an attempt ends in, from its note's outcome. */
static Csched__V1__RunState note_state(const struct cs_note *note)
{
    switch (note->outcome) {
    case CS_NOTE_EXITED:
        return note->exit_code == 0 ? CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED
                                    : CSCHED__V1__RUN_STATE__RUN_STATE_FAILED;
    case CS_NOTE_TIMED_OUT:
        return CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT;
    case CS_NOTE_CANCELLED:
        return CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED;
    case CS_NOTE_FENCED:
        /* The replica's lease ran out: another may have taken the run. */
        return CSCHED__V1__RUN_STATE__RUN_STATE_LOST;
    case CS_NOTE_SIGNALED:
    case CS_NOTE_START_FAILED:
    default:
        return CSCHED__V1__RUN_STATE__RUN_STATE_FAILED;
    }
}

/* What the job's limits did to the attempt: the one that ended it, its
 * peak memory, and, under --limits-enforcement warn, the limits this host
 * did not hold. */
static void apply_limits(const struct cs_note *note, Csched__V1__Attempt *a)
{
    unsigned bits = (unsigned)note->unenforced_limits;

    a->limit_hit = (Csched__V1__LimitHit)note->limit_hit;
    a->peak_memory_bytes = note->peak_memory_bytes;
    if (bits == 0 || a->n_unenforced_limits > 0)
        return;
    a->unenforced_limits = cs_xcalloc(CS_LIMIT_COUNT, sizeof(char *));
    for (unsigned bit = 1; bit <= CS_LIMIT_ALL; bit <<= 1)
        if (bits & bit)
            a->unenforced_limits[a->n_unenforced_limits++] = cs_xstrdup(cs_limit_name(bit));
}

/* Fills a from a read note (note_rc 0) and returns its state. */
static Csched__V1__RunState apply_read_note(const struct cs_note *note, Csched__V1__Attempt *a)
{
    if (note->ended_unix_ms > 0)
        a->ended_unix_ms = note->ended_unix_ms;
    if (a->started_unix_ms == 0)
        a->started_unix_ms = note->started_unix_ms;
    a->user_cpu_ms = note->user_cpu_ms;
    a->system_cpu_ms = note->system_cpu_ms;
    a->max_rss_kb = note->max_rss_kb;
    a->leftover_processes = note->leftover_processes;
    a->stdout_written_bytes = note->stdout_written_bytes;
    a->stdout_kept_bytes = note->stdout_kept_bytes;
    a->stderr_written_bytes = note->stderr_written_bytes;
    a->stderr_kept_bytes = note->stderr_kept_bytes;
    apply_limits(note, a);
    /* Once per attempt: each one's note is applied when it ends. */
    cs_metrics_count_output_cut(note->stdout_truncated, note->stderr_truncated);
    cs_message_set_str(&a->message, note->message);
    /* A command fenced before it started has no exit code to tell. */
    bool ran = note->outcome != CS_NOTE_FENCED || note->started_unix_ms != 0;
    if (note->term_signal != 0)
        cs_outcome_set_attempt(a, (struct cs_outcome){CS_OUTCOME_TERM_SIGNAL, note->term_signal});
    else if (ran)
        cs_outcome_set_attempt(a, (struct cs_outcome){CS_OUTCOME_EXIT_CODE, note->exit_code});
    return note_state(note);
}

Csched__V1__RunState cs_attempt_apply_note(const struct cs_attempt *att, Csched__V1__Attempt *a)
{
    CS_ASSERT_LOOP();
    a->ended_unix_ms = cs_now_unix_ms();
    if (att->note_rc != 0) {
        if (att->no_space && att->note.message[0] == '\0')
            set_no_space_message(a, att->dir);
        else
            set_missing_note_message(a, &att->note, att->note_rc, att->backstop_fired);
        return att->launch_failed || att->no_space ? CSCHED__V1__RUN_STATE__RUN_STATE_FAILED
                                                   : CSCHED__V1__RUN_STATE__RUN_STATE_LOST;
    }
    return apply_read_note(&att->note, a);
}

Csched__V1__RunState cs_attempt_apply_earlier(const struct cs_attempt *att, uint32_t i,
                                              Csched__V1__Attempt *a)
{
    CS_ASSERT_LOOP();
    const struct cs_attempt_end *end = &att->earlier[i];
    a->ended_unix_ms = cs_now_unix_ms();
    if (end->note_rc != 0) {
        set_missing_note_message(a, &end->note, end->note_rc, false);
        return CSCHED__V1__RUN_STATE__RUN_STATE_LOST;
    }
    return apply_read_note(&end->note, a);
}
