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
/* Ends told in one Await's answer: bounds its size (a note is at most
 * CS_NOTE_MAX_BYTES) and the loop's work for it. */
#define ANSWER_ENDS_MAX 256
/* A minder ends by its timeout, its kill grace, the drain and its note;
 * past that and this margin the server kills it (as dispatch does). */
#define BACKSTOP_MARGIN_MS 5000

/* An Await held until an attempt here has ended, or until until_ms. */
struct waiter {
    struct cs_qlink link;
    cs_worker_await_cb cb;
    void *arg;
    int64_t until_ms;
};

/* A Launch call: answered once each of its launches has its start. */
struct launch_batch {
    cs_worker_launch_cb cb;
    void *arg;
    size_t left;
    bool stopped; /* this replica stops: answered without the starts */
    Csched__V1__LaunchResponse resp;
    Csched__V1__AttemptStart *starts;
    Csched__V1__AttemptStart **start_ptrs;
    Csched__V1__AttemptRef *refs;
};

struct placed {
    struct cs_attempt *att;
    struct launch_batch *batch; /* while its launch is with the launcher */
    size_t batch_index;
    uint64_t timeout_ms, grace_ms;
    bool ended;
    bool tail_pending; /* its end waits for its tails' commit */
    bool not_started;
    bool cancel; /* asked before its minder ran */
};

struct cs_worker {
    struct cs_sched *sched;
    struct cs_idmap placed; /* by run id: a run's attempts never overlap */
    struct cs_queue waiters;
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
    cs_idmap_put(&w->placed, run_id, p);
    return p;
}

static void placed_free(struct cs_worker *w, struct placed *p)
{
    (void)cs_idmap_remove(&w->placed, p->att->run_id);
    cs_attempt_free(p->att);
    free(p);
}

/* Whether p's end can be told: it has ended, and its tails are committed,
 * so that a ReadLogs through the active replica finds them once the run
 * has ended. */
static bool end_ready(const struct placed *p)
{
    return p->ended && !p->tail_pending;
}

/* p's end, as Await tells it; note holds its text. */
static void fill_end(const struct placed *p, Csched__V1__AttemptEnd *end,
                     Csched__V1__AttemptRef *ref, char *note, size_t cap)
{
    csched__v1__attempt_end__init(end);
    csched__v1__attempt_ref__init(ref);
    ref->run_id = p->att->run_id;
    ref->number = p->att->number;
    end->attempt = ref;
    end->not_started = p->not_started;
    end->note_rc = p->att->note_rc;
    end->minder_pid = (int32_t)p->att->pid;
    int n = cs_note_format(&p->att->note, note, cap);
    end->note.data = (uint8_t *)note;
    end->note.len = n > 0 ? (size_t)n : 0;
}

/* Answers the Awaits held with the ends that can be told, at most
 * ANSWER_ENDS_MAX (the next Await, asked at once, takes the rest), and
 * forgets those attempts; nothing when none can. */
static void answer_ends(struct cs_worker *w)
{
    if (cs_queue_is_empty(&w->waiters))
        return;
    size_t cap = w->placed.count < ANSWER_ENDS_MAX ? w->placed.count : ANSWER_ENDS_MAX, n = 0;
    if (cap == 0)
        return;
    struct placed **told = cs_xcalloc(cap, sizeof(*told));
    void *value;
    for (size_t pos = 0; n < cap && cs_idmap_next(&w->placed, &pos, &value) != 0;)
        if (end_ready(value))
            told[n++] = value;
    if (n == 0) {
        free(told);
        return;
    }
    Csched__V1__AttemptEnd *ends = cs_xcalloc(n, sizeof(*ends));
    Csched__V1__AttemptEnd **end_ptrs = cs_xcalloc(n, sizeof(*end_ptrs));
    Csched__V1__AttemptRef *refs = cs_xcalloc(n, sizeof(*refs));
    char *notes = cs_xmalloc(n * CS_NOTE_MAX_BYTES);
    size_t i;
    for (i = 0; i < n; i++) {
        fill_end(told[i], &ends[i], &refs[i], notes + i * CS_NOTE_MAX_BYTES, CS_NOTE_MAX_BYTES);
        end_ptrs[i] = &ends[i];
    }
    Csched__V1__AwaitResponse resp = CSCHED__V1__AWAIT_RESPONSE__INIT;
    resp.n_ends = n;
    resp.ends = end_ptrs;
    for (struct cs_qlink *l; (l = cs_queue_pop(&w->waiters)) != NULL;) {
        struct waiter *wt = CS_CONTAINER_OF(l, struct waiter, link);
        wt->cb(wt->arg, &resp);
        free(wt);
    }
    for (i = 0; i < n; i++)
        placed_free(w, told[i]);
    free(told);
    free(ends);
    free(end_ptrs);
    free(refs);
    free(notes);
}

static void answer_turn_cb(struct cs_next_turn *turn)
{
    struct cs_sched *s = CS_CONTAINER_OF(turn, struct cs_sched, worker_answer);
    if (s->worker != NULL)
        answer_ends(s->worker);
}

/* An end is ready: the Awaits held are answered once this turn of the loop
 * is over, with every end it brought. */
static void ends_ready(struct cs_worker *w)
{
    if (!cs_queue_is_empty(&w->waiters))
        cs_next_turn_ask(&w->sched->worker_answer);
}

/* Gives the index-th launch of b its start (NULL: this replica stops); the
 * Launch call is answered with the last. */
static void batch_answer(struct launch_batch *b, size_t index,
                         const Csched__V1__AttemptStart *start)
{
    if (start == NULL) {
        b->stopped = true;
    } else {
        Csched__V1__AttemptStart *mine = &b->starts[index];
        Csched__V1__AttemptRef *ref = mine->attempt;
        *mine = *start;
        mine->attempt = ref;
        mine->message = cs_xstrdup(start->message != NULL ? start->message : "");
    }
    if (--b->left > 0)
        return;
    b->cb(b->arg, b->stopped ? NULL : &b->resp);
    for (size_t i = 0; i < b->resp.n_starts; i++)
        if (b->starts[i].message != protobuf_c_empty_string)
            free(b->starts[i].message);
    free(b->starts);
    free(b->start_ptrs);
    free(b->refs);
    free(b);
}

static void answer_launch(struct placed *p, const Csched__V1__AttemptStart *start)
{
    struct launch_batch *b = p->batch;
    p->batch = NULL;
    if (b != NULL)
        batch_answer(b, p->batch_index, start);
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
    ends_ready(s->worker);
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
    ends_ready(w);
}

static void attempt_not_started_cb(struct cs_attempt *att)
{
    struct cs_worker *w = att->sched->worker;
    struct placed *p = find(w, att->run_id);
    p->ended = p->not_started = true;
    ends_ready(w);
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
    if (w == NULL || w->stopped) {
        /* Stopping: the minder, if it runs, stops at its lease's deadline,
         * and the active replica's Await finds it from the state dir. */
        if (launch->err == 0 && launch->pidfd >= 0)
            (void)close(launch->pidfd);
        cs_launch_free(launch);
        return;
    }
    p->att->launch = NULL;
    Csched__V1__AttemptStart start = CSCHED__V1__ATTEMPT_START__INIT;
    if (launch->err != 0) {
        cs_log_error("attempt %s: %s", p->att->dir, launch->message);
        start.error = launch->err;
        start.message = launch->message;
        answer_launch(p, &start);
        cs_launch_free(launch);
        placed_free(w, p);
        return;
    }
    p->att->pid = launch->pid;
    p->att->pidfd = launch->pidfd;
    p->att->is_child = true;
    start.minder_pid = launch->pid;
    start.started_unix_ms = launch->started_unix_ms;
    int64_t started = launch->started_unix_ms;
    cs_launch_free(launch);
    answer_launch(p, &start);
    watch(p, started);
}

/* --- the calls ------------------------------------------------------------------ */

static struct launch_batch *batch_new(size_t n, cs_worker_launch_cb cb, void *arg)
{
    struct launch_batch *b = cs_xcalloc(1, sizeof(*b));
    b->cb = cb;
    b->arg = arg;
    b->left = n;
    csched__v1__launch_response__init(&b->resp);
    b->starts = cs_xcalloc(n, sizeof(*b->starts));
    b->start_ptrs = cs_xcalloc(n, sizeof(*b->start_ptrs));
    b->refs = cs_xcalloc(n, sizeof(*b->refs));
    b->resp.n_starts = n;
    b->resp.starts = b->start_ptrs;
    for (size_t i = 0; i < n; i++) {
        csched__v1__attempt_start__init(&b->starts[i]);
        csched__v1__attempt_ref__init(&b->refs[i]);
        b->starts[i].attempt = &b->refs[i];
        b->start_ptrs[i] = &b->starts[i];
    }
    return b;
}

/* Why nothing of an attempt may start here now, or NULL. */
static const char *refusal(struct cs_sched *s, int *err)
{
    struct cs_worker *w = s->worker;
    if (w == NULL || w->stopped || s->stopping || s->draining) {
        *err = -ESHUTDOWN;
        return "this replica is stopping";
    }
    if (!s->ops->may_run_placed_cb(s->store)) {
        *err = -ENOLINK;
        return "this replica's lease is not fresh: it starts nothing until its next renewal";
    }
    return NULL;
}

/* Starts one launch of b, the index-th. */
static void launch_one(struct cs_sched *s, const Csched__V1__AttemptLaunch *req,
                       struct launch_batch *b, size_t index)
{
    struct cs_worker *w = s->worker;
    const Csched__V1__AttemptRef *ref = req->attempt;
    b->refs[index].run_id = ref->run_id;
    b->refs[index].number = ref->number;
    Csched__V1__AttemptStart refused = CSCHED__V1__ATTEMPT_START__INIT;
    refused.refused = true;
    const char *why = refusal(s, &refused.error);
    if (why == NULL && find(w, ref->run_id) != NULL) {
        /* The active replica asks once per attempt: a second ask is not
         * its, and the first one's attempt stays as it is. */
        refused.error = -EALREADY;
        why = "an attempt of this run is already here";
    }
    if (why != NULL) {
        refused.message = (char *)why;
        batch_answer(b, index, &refused);
        return;
    }
    struct placed *p = placed_new(w, ref->run_id, ref->number);
    p->timeout_ms = (uint64_t)req->timeout_ms;
    p->grace_ms = cs_job_kill_grace_ms(req->job);
    p->batch = b;
    p->batch_index = index;
    struct cs_launch *launch =
        cs_launch_build_from(s, req->job, req->run, ref->number, p->att->dir, p->timeout_ms);
    launch->due_unix_ms = req->start_unix_ms > cs_now_unix_ms() ? req->start_unix_ms : 0;
    launch->owner = p;
    launch->placed = true;
    p->att->launch = launch;
    cs_launcher_submit(s->launcher, launch);
}

void cs_worker_launch(struct cs_sched *s, const Csched__V1__LaunchRequest *req,
                      cs_worker_launch_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    if (req->n_launches == 0) {
        Csched__V1__LaunchResponse none = CSCHED__V1__LAUNCH_RESPONSE__INIT;
        cb(arg, &none);
        return;
    }
    struct launch_batch *b = batch_new(req->n_launches, cb, arg);
    for (size_t i = 0; i < req->n_launches; i++)
        launch_one(s, req->launches[i], b, i);
}

static bool listed(const Csched__V1__AttemptRef *const *refs, size_t n, int64_t run_id,
                   uint32_t number)
{
    for (size_t i = 0; i < n; i++)
        if (refs[i]->run_id == run_id && refs[i]->number == number)
            return true;
    return false;
}

/* The attempt ref names, in memory here or adopted from the state dir. */
static void take_listed(struct cs_worker *w, const Csched__V1__AttemptRef *ref, bool cancel)
{
    struct placed *p = find(w, ref->run_id);
    if (p != NULL && p->att->number < ref->number && p->ended) {
        /* An earlier attempt whose end the active replica learned
         * otherwise (taken for lost): the one asked for is another. */
        placed_free(w, p);
        p = NULL;
    }
    if (p != NULL)
        return; /* another attempt of the run: asked for again once its end is told */
    p = placed_new(w, ref->run_id, ref->number);
    p->cancel = cancel;
    /* The active replica asks for it: it recorded its start. */
    p->att->recorded = true;
    cs_attempt_adopt(p->att);
}

void cs_worker_await(struct cs_sched *s, const Csched__V1__AwaitRequest *req, int64_t hold_ms,
                     cs_worker_await_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    struct cs_worker *w = s->worker;
    if (w == NULL || w->stopped) {
        cb(arg, NULL);
        return;
    }
    for (size_t i = 0; i < req->n_attempts; i++) {
        const Csched__V1__AttemptRef *ref = req->attempts[i];
        take_listed(w, ref,
                    listed((const Csched__V1__AttemptRef *const *)req->cancel, req->n_cancel,
                           ref->run_id, ref->number));
    }
    for (size_t i = 0; i < req->n_cancel; i++)
        (void)cs_worker_cancel(s, req->cancel[i]->run_id, req->cancel[i]->number);
    struct waiter *wt = cs_xcalloc(1, sizeof(*wt));
    wt->cb = cb;
    wt->arg = arg;
    wt->until_ms = cs_now_unix_ms() + hold_ms;
    cs_queue_push(&w->waiters, &wt->link);
    answer_ends(w);
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

/* Answers the Awaits held past their time with no end: the active replica
 * asks again, which keeps a dead connection from holding one for ever. */
static void sweep_cb(uv_timer_t *timer)
{
    struct cs_worker *w = timer->data;
    int64_t now = cs_now_unix_ms();
    Csched__V1__AwaitResponse none = CSCHED__V1__AWAIT_RESPONSE__INIT;
    struct cs_qlink **at = &w->waiters.head;
    while (*at != NULL) {
        struct waiter *wt = CS_CONTAINER_OF(*at, struct waiter, link);
        if (wt->until_ms > now) {
            at = &(*at)->next;
            continue;
        }
        cs_queue_remove(&w->waiters, &wt->link);
        wt->cb(wt->arg, &none);
        free(wt);
    }
}

int cs_worker_start(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    int rc = cs_next_turn_init(s->loop, &s->worker_answer, answer_turn_cb);
    if (rc != 0)
        return rc;
    struct cs_worker *w = cs_xcalloc(1, sizeof(*w));
    w->sched = s;
    cs_idmap_init(&w->placed);
    cs_queue_init(&w->waiters);
    rc = uv_timer_init(s->loop, &w->sweep);
    if (rc != 0) {
        cs_next_turn_close(&s->worker_answer);
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
    for (struct cs_qlink *l; (l = cs_queue_pop(&w->waiters)) != NULL;) {
        struct waiter *wt = CS_CONTAINER_OF(l, struct waiter, link);
        wt->cb(wt->arg, NULL);
        free(wt);
    }
    void *value;
    for (size_t pos = 0; cs_idmap_next(&w->placed, &pos, &value) != 0;) {
        struct placed *p = value;
        /* Whether its minder starts is not known yet: Await will tell. A
         * launch still with the launcher comes back to launch_done, which
         * frees it; its attempt goes now. */
        answer_launch(p, NULL);
        p->att->launch = NULL;
        cs_attempt_free(p->att);
        free(p);
    }
    s->worker = NULL;
    cs_next_turn_close(&s->worker_answer);
    uv_close((uv_handle_t *)&w->sweep, sweep_closed_cb);
}
