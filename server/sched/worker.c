/* worker: the attempts placed on this machine (worker.h). */
#define CS_LOG_COMPONENT "worker"
#include "worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attempt.h"
#include "attempt_tail.h"
#include "job.h"
#include "launch_build.h"
#include "log.h"
#include "minder_contract.h"
#include "queue.h"
#include "util.h"

/* How often the Awaits held past their time are answered. */
#define SWEEP_MS 500
/* A minder ends by its timeout, its kill grace, the drain and its note;
 * past that and this margin the server kills it (as dispatch does). */
#define BACKSTOP_MARGIN_MS 5000

struct waiter {
    struct cs_qlink link;
    cs_worker_await_cb cb;
    void *arg;
    int64_t until_ms;
};

struct placed {
    struct cs_attempt *att;
    cs_worker_launch_cb launch_cb; /* while its launch is with the launcher */
    void *launch_arg;
    uint64_t timeout_ms, grace_ms;
    bool ended;
    bool tail_pending; /* its end waits for its tails' commit */
    bool not_started;
    bool cancel; /* asked before its minder ran */
    struct cs_queue waiters;
};

struct cs_worker {
    struct cs_sched *sched;
    struct cs_idmap placed; /* by run id: a run's attempts never overlap */
    uv_timer_t sweep;
    bool stopped;
};

static void attempt_exited_cb(struct cs_attempt *att);
static void attempt_ended_cb(struct cs_attempt *att);
static void attempt_adopted_cb(struct cs_attempt *att);
static void attempt_not_started_cb(struct cs_attempt *att);

static const struct cs_attempt_ops placed_ops = {
    .exited_cb = attempt_exited_cb,
    .ended_cb = attempt_ended_cb,
    .adopted_cb = attempt_adopted_cb,
    .not_started_cb = attempt_not_started_cb,
};

static struct placed *find(struct cs_worker *w, int64_t run_id)
{
    return cs_idmap_get(&w->placed, run_id);
}

static struct placed *placed_new(struct cs_worker *w, int64_t run_id, uint32_t number)
{
    char dir[4096];
    (void)cs_minder_dir_format(dir, sizeof(dir), w->sched->state_dir, run_id, number);
    struct placed *p = cs_xcalloc(1, sizeof(*p));
    p->att = cs_attempt_new_placed(w->sched, run_id, number, dir, &placed_ops);
    cs_queue_init(&p->waiters);
    cs_idmap_put(&w->placed, run_id, p);
    return p;
}

static void placed_free(struct cs_worker *w, struct placed *p)
{
    (void)cs_idmap_remove(&w->placed, p->att->run_id);
    cs_attempt_free(p->att);
    free(p);
}

/* The answer to an Await of p, once it has ended or never started. */
static void fill_end(const struct placed *p, Csched__V1__AwaitResponse *resp, char *note,
                     size_t cap)
{
    csched__v1__await_response__init(resp);
    resp->not_started = p->not_started;
    resp->note_rc = p->att->note_rc;
    resp->minder_pid = (int32_t)p->att->pid;
    int n = cs_note_format(&p->att->note, note, cap);
    resp->note.data = (uint8_t *)note;
    resp->note.len = n > 0 ? (size_t)n : 0;
}

/* Answers p's Awaits with its end, and forgets it once one was told. The
 * tails of its output are committed first, so that a ReadLogs through the
 * active replica finds them once the run has ended. */
static void answer_end(struct cs_worker *w, struct placed *p)
{
    if (cs_queue_is_empty(&p->waiters) || p->tail_pending)
        return;
    Csched__V1__AwaitResponse resp;
    char note[CS_NOTE_MAX_BYTES];
    fill_end(p, &resp, note, sizeof(note));
    for (struct cs_qlink *l; (l = cs_queue_pop(&p->waiters)) != NULL;) {
        struct waiter *wt = CS_CONTAINER_OF(l, struct waiter, link);
        wt->cb(wt->arg, &resp);
        free(wt);
    }
    placed_free(w, p);
}

static void answer_launch(struct placed *p, const Csched__V1__LaunchResponse *resp)
{
    cs_worker_launch_cb cb = p->launch_cb;
    p->launch_cb = NULL;
    if (cb != NULL)
        cb(p->launch_arg, resp);
}

/* --- the attempt's life ----------------------------------------------------- */

static void attempt_exited_cb(struct cs_attempt *att)
{
    (void)att; /* no slot here: the active replica counts them */
}

static void tail_kept_cb(struct cs_sched *s, int64_t run_id, uint32_t number)
{
    struct placed *p = s->worker != NULL ? find(s->worker, run_id) : NULL;
    if (p == NULL || p->att->number != number)
        return;
    p->tail_pending = false;
    answer_end(s->worker, p);
}

static void attempt_ended_cb(struct cs_attempt *att)
{
    struct cs_worker *w = att->sched->worker;
    struct placed *p = find(w, att->run_id);
    p->ended = true;
    /* What the tails need of the attempt's record: the sizes kept. */
    Csched__V1__Attempt a = CSCHED__V1__ATTEMPT__INIT;
    a.stdout_kept_bytes = att->note.stdout_kept_bytes;
    a.stderr_kept_bytes = att->note.stderr_kept_bytes;
    p->tail_pending = cs_attempt_tail_keep(att->sched, att, &a, tail_kept_cb);
    answer_end(w, p);
}

static void attempt_not_started_cb(struct cs_attempt *att)
{
    struct cs_worker *w = att->sched->worker;
    struct placed *p = find(w, att->run_id);
    p->ended = p->not_started = true;
    answer_end(w, p);
}

static void watch(struct placed *p, int64_t started_unix_ms)
{
    struct cs_attempt *att = p->att;
    int64_t deadline = 0;
    if (p->timeout_ms > 0)
        deadline = started_unix_ms + (int64_t)p->timeout_ms + CS_MINDER_LEFTOVER_GRACE_MS +
                   CS_MINDER_DRAIN_MS + BACKSTOP_MARGIN_MS + (int64_t)p->grace_ms;
    int rc = cs_attempt_watch(att, deadline);
    if (rc != 0) {
        cs_log_error("run %lld attempt %u: watching the pidfd of minder %d failed: %s",
                     (long long)att->run_id, att->number, (int)att->pid, strerror(-rc));
        att->note_rc = -EIO;
        attempt_ended_cb(att);
        return;
    }
    if (p->cancel)
        (void)cs_attempt_cancel(att);
}

static void attempt_adopted_cb(struct cs_attempt *att)
{
    struct placed *p = find(att->sched->worker, att->run_id);
    cs_log_info("adopted minder %d of run %lld attempt %u, placed here by the active replica",
                (int)att->pid, (long long)att->run_id, att->number);
    watch(p, cs_now_unix_ms());
}

void cs_worker_launch_done(struct cs_sched *s, struct cs_launch *launch)
{
    CS_ASSERT_LOOP();
    struct cs_worker *w = s->worker;
    struct placed *p = launch->owner;
    Csched__V1__LaunchResponse resp;
    csched__v1__launch_response__init(&resp);
    if (w == NULL || w->stopped) {
        /* Stopping: the minder, if it runs, stops at its lease's deadline,
         * and the active replica's Await finds it from the state dir. */
        if (launch->err == 0 && launch->pidfd >= 0)
            (void)close(launch->pidfd);
        cs_launch_free(launch);
        return;
    }
    p->att->launch = NULL;
    if (launch->err != 0) {
        cs_log_error("attempt %s: %s", p->att->dir, launch->message);
        resp.error = launch->err;
        resp.message = launch->message;
        answer_launch(p, &resp);
        cs_launch_free(launch);
        placed_free(w, p);
        return;
    }
    p->att->pid = launch->pid;
    p->att->pidfd = launch->pidfd;
    p->att->is_child = true;
    resp.minder_pid = launch->pid;
    resp.started_unix_ms = launch->started_unix_ms;
    int64_t started = launch->started_unix_ms;
    cs_launch_free(launch);
    answer_launch(p, &resp);
    watch(p, started);
}

/* --- the calls ------------------------------------------------------------------ */

static void refuse(cs_worker_launch_cb cb, void *arg, int err, const char *message)
{
    Csched__V1__LaunchResponse resp;
    csched__v1__launch_response__init(&resp);
    resp.refused = true;
    resp.error = err;
    resp.message = (char *)message;
    cb(arg, &resp);
}

void cs_worker_launch(struct cs_sched *s, const Csched__V1__LaunchRequest *req,
                      cs_worker_launch_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    struct cs_worker *w = s->worker;
    const Csched__V1__AttemptRef *ref = req->attempt;
    if (w == NULL || w->stopped || s->stopping || s->draining) {
        refuse(cb, arg, -ESHUTDOWN, "this replica is stopping");
        return;
    }
    if (!s->ops->may_run_placed_cb(s->store)) {
        refuse(cb, arg, -ENOLINK,
               "this replica's lease is not fresh: it starts nothing until its next renewal");
        return;
    }
    if (find(w, ref->run_id) != NULL) {
        /* The active replica asks once per attempt: a second ask is not
         * its, and the first one's attempt stays as it is. */
        refuse(cb, arg, -EALREADY, "an attempt of this run is already here");
        return;
    }
    struct placed *p = placed_new(w, ref->run_id, ref->number);
    p->timeout_ms = (uint64_t)req->timeout_ms;
    p->grace_ms = cs_job_kill_grace_ms(req->job);
    p->launch_cb = cb;
    p->launch_arg = arg;
    struct cs_launch *launch =
        cs_launch_build_from(s, req->job, req->run, ref->number, p->att->dir, p->timeout_ms);
    launch->due_unix_ms = req->start_unix_ms > cs_now_unix_ms() ? req->start_unix_ms : 0;
    launch->owner = p;
    launch->placed = true;
    p->att->launch = launch;
    cs_launcher_submit(s->launcher, launch);
}

void cs_worker_await(struct cs_sched *s, const Csched__V1__AwaitRequest *req, int64_t hold_ms,
                     cs_worker_await_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    struct cs_worker *w = s->worker;
    const Csched__V1__AttemptRef *ref = req->attempt;
    if (w == NULL || w->stopped) {
        cb(arg, NULL);
        return;
    }
    struct placed *p = find(w, ref->run_id);
    if (p != NULL && p->att->number < ref->number && p->ended && cs_queue_is_empty(&p->waiters)) {
        /* An earlier attempt whose end the active replica learned
         * otherwise (taken for lost): the one asked for is another. */
        placed_free(w, p);
        p = NULL;
    }
    if (p != NULL && p->att->number != ref->number) {
        cb(arg, NULL); /* asked again once the other has ended */
        return;
    }
    struct waiter *wt = cs_xcalloc(1, sizeof(*wt));
    wt->cb = cb;
    wt->arg = arg;
    wt->until_ms = cs_now_unix_ms() + hold_ms;
    if (p == NULL) {
        p = placed_new(w, ref->run_id, ref->number);
        cs_queue_push(&p->waiters, &wt->link);
        p->cancel = req->cancel;
        cs_attempt_adopt(p->att);
        return;
    }
    cs_queue_push(&p->waiters, &wt->link);
    if (req->cancel)
        (void)cs_worker_cancel(s, ref->run_id, ref->number);
    if (p->ended)
        answer_end(w, p);
}

uint32_t cs_worker_held(const struct cs_sched *s)
{
    return s->worker != NULL ? (uint32_t)s->worker->placed.count : 0;
}

bool cs_worker_runs(const struct cs_sched *s, int64_t run_id, uint32_t number)
{
    const struct placed *p = s->worker != NULL ? cs_idmap_get(&s->worker->placed, run_id) : NULL;
    return p != NULL && p->att->number == number && !p->ended;
}

int cs_worker_cancel(struct cs_sched *s, int64_t run_id, uint32_t number)
{
    CS_ASSERT_LOOP();
    struct placed *p = s->worker != NULL ? find(s->worker, run_id) : NULL;
    if (p == NULL || p->att->number != number)
        return -ENOENT;
    p->cancel = true;
    return cs_attempt_cancel(p->att);
}

/* --- start, stop ----------------------------------------------------------------- */

/* Answers with NULL the Awaits held past their time: the active replica
 * asks again, which keeps a dead connection from holding one for ever. */
static void sweep_cb(uv_timer_t *timer)
{
    struct cs_worker *w = timer->data;
    int64_t now = cs_now_unix_ms();
    void *value;
    for (size_t pos = 0; cs_idmap_next(&w->placed, &pos, &value) != 0;) {
        struct placed *p = value;
        struct cs_qlink **at = &p->waiters.head;
        while (*at != NULL) {
            struct waiter *wt = CS_CONTAINER_OF(*at, struct waiter, link);
            if (wt->until_ms > now) {
                at = &(*at)->next;
                continue;
            }
            cs_queue_remove(&p->waiters, &wt->link);
            wt->cb(wt->arg, NULL);
            free(wt);
        }
    }
}

int cs_worker_start(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    struct cs_worker *w = cs_xcalloc(1, sizeof(*w));
    w->sched = s;
    cs_idmap_init(&w->placed);
    int rc = uv_timer_init(s->loop, &w->sweep);
    if (rc != 0) {
        cs_idmap_close(&w->placed);
        free(w);
        return rc;
    }
    w->sweep.data = w;
    CS_ASSERT(uv_timer_start(&w->sweep, sweep_cb, SWEEP_MS, SWEEP_MS) == 0);
    s->worker = w;
    return 0;
}

static void sweep_closed_cb(uv_handle_t *handle)
{
    struct cs_worker *w = handle->data;
    cs_idmap_close(&w->placed);
    free(w);
}

void cs_worker_stop(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    struct cs_worker *w = s->worker;
    if (w == NULL || w->stopped)
        return;
    w->stopped = true;
    void *value;
    for (size_t pos = 0; cs_idmap_next(&w->placed, &pos, &value) != 0;) {
        struct placed *p = value;
        for (struct cs_qlink *l; (l = cs_queue_pop(&p->waiters)) != NULL;) {
            struct waiter *wt = CS_CONTAINER_OF(l, struct waiter, link);
            wt->cb(wt->arg, NULL);
            free(wt);
        }
        /* Whether its minder starts is not known yet: Await will tell. A
         * launch still with the launcher comes back to launch_done, which
         * frees it; its attempt goes now. */
        answer_launch(p, NULL);
        p->att->launch = NULL;
        cs_attempt_free(p->att);
        free(p);
    }
    s->worker = NULL;
    uv_close((uv_handle_t *)&w->sweep, sweep_closed_cb);
}
