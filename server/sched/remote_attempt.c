/* remote_attempt: attempts on other replicas' machines (see
 * remote_attempt.h). The calls to one replica go through its peer: the
 * launches placed there in one turn of the loop leave in one Launch, and
 * one Await at a time, held there, brings back the ends of all of them. */
#define CS_LOG_COMPONENT "placement"
#include "remote_attempt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csched/v1/worker.pb-c.h"
#include "idmap.h"
#include "job.h"
#include "log.h"
#include "minder_contract.h"
#include "placement.h"
#include "retry.h"
#include "util.h"

#define WORKER(m) "/csched.v1.Worker/" m
/* The worker holds an Await this long (worker.h's callers) before it
 * answers with no end; the call's own deadline is later. */
#define AWAIT_CALL_MS 30000
/* A launch waits this long for a connection to its replica: past it, the
 * replica is asked whether it started it, and the run goes elsewhere. */
#define LAUNCH_CALL_MS 5000
/* Launches in flight to one replica at once; more wait for the next call. */
#define LAUNCH_CALLS_MAX 4
/* After a call that failed: 100 ms, doubled up to 5 s. */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000
/* gRPC's OK (grpc/status.h, not included by the loop). */
#define CODE_OK 0

/* The calls to one replica. */
struct peer {
    struct cs_qlink link; /* in sched->remote_peers */
    struct cs_sched *sched;
    char id[64];
    struct cs_queue remotes; /* the attempts placed there */
    size_t n_remotes;
    struct cs_queue queued; /* launches not sent yet (sched->remote_flush sends them) */
    unsigned launch_calls;  /* in flight */
    struct cs_unary *await; /* in flight, or NULL */
    uv_timer_t *backoff;    /* before the next Await, or NULL */
    uint64_t backoff_ms;
    bool answering; /* in a call's answer: freed after it, not during */
};

/* A Launch in flight: its attempts in the request's order, each NULL once
 * freed. */
struct launch_call {
    struct peer *peer;
    size_t n;
    struct cs_remote *remotes[];
};

/* An end that came before the attempt's launch was answered. */
struct early_end {
    bool not_started;
    int note_rc;
    pid_t pid;
    struct cs_note note;
};

struct cs_remote {
    struct cs_qlink link;        /* in sched->remotes */
    struct cs_qlink peer_link;   /* in peer->remotes */
    struct cs_qlink queued_link; /* in peer->queued until sent */
    struct cs_qlink ready_link;  /* in sched->remote_ready: see ready() */
    struct cs_attempt *att;
    struct peer *peer;
    cs_launch_done_cb launch_done_cb;
    struct launch_call *launch; /* its Launch in flight, or NULL */
    size_t launch_index;
    bool queued;
    bool awaited; /* its end goes to att->ops as soon as it is known */
    bool cancel;  /* asked for: told in each Await until its end */
    struct early_end *early;
    struct cs_unary *cancel_call;
    uv_timer_t *deadline; /* cs_remote_resume's, or NULL */
};

static const struct cs_room *room_of(const struct cs_attempt *att)
{
    return cs_placement_room(att->sched, att->remote_replica);
}

static void ref_init(Csched__V1__AttemptRef *ref, const struct cs_attempt *att)
{
    csched__v1__attempt_ref__init(ref);
    ref->run_id = att->run_id;
    ref->number = att->number;
}

/* --- timers ------------------------------------------------------------------- */

static void timer_closed_cb(uv_handle_t *handle)
{
    free(handle);
}

static void timer_stop(uv_timer_t **timer)
{
    if (*timer != NULL)
        uv_close((uv_handle_t *)*timer, timer_closed_cb);
    *timer = NULL;
}

static uv_timer_t *timer_start(struct cs_sched *s, void *data, uint64_t in_ms, uv_timer_cb cb)
{
    uv_timer_t *timer = cs_xmalloc(sizeof(*timer));
    CS_ASSERT(uv_timer_init(s->loop, timer) == 0);
    timer->data = data;
    CS_ASSERT(uv_timer_start(timer, cb, in_ms, 0) == 0);
    return timer;
}

/* --- peers -------------------------------------------------------------------- */

static struct peer *peer_of(struct cs_sched *s, const char *id)
{
    for (struct cs_qlink *l = s->remote_peers.head; l != NULL; l = l->next) {
        struct peer *p = CS_CONTAINER_OF(l, struct peer, link);
        if (strcmp(p->id, id) == 0)
            return p;
    }
    struct peer *p = cs_xcalloc(1, sizeof(*p));
    p->sched = s;
    (void)snprintf(p->id, sizeof(p->id), "%s", id);
    cs_queue_init(&p->remotes);
    cs_queue_init(&p->queued);
    cs_queue_push(&s->remote_peers, &p->link);
    return p;
}

/* Frees p once it has no attempt left and no Launch in flight; an Await
 * in flight is abandoned: nothing waits for its answer. */
static void peer_maybe_free(struct peer *p)
{
    if (p->n_remotes > 0 || p->launch_calls > 0 || p->answering)
        return;
    if (p->await != NULL)
        p->sched->remote_abandon_cb(p->await);
    timer_stop(&p->backoff);
    cs_queue_remove(&p->sched->remote_peers, &p->link);
    free(p);
}

static struct cs_unary *peer_call(struct peer *p, const char *method,
                                  const ProtobufCMessage *request, int64_t timeout_ms,
                                  cs_remote_done_cb done_cb, void *arg)
{
    struct cs_sched *s = p->sched;
    const struct cs_room *room = cs_placement_room(s, p->id);
    if (s->remote_call_cb == NULL || room->address[0] == '\0')
        return NULL;
    return s->remote_call_cb(s->remote_call_ctx, room->address, method, request, timeout_ms,
                             done_cb, arg);
}

/* --- Cancel ------------------------------------------------------------------- */

static void cancel_done_cb(void *arg, int code, const char *message, const uint8_t *reply,
                           size_t len)
{
    (void)reply;
    (void)len;
    struct cs_remote *r = arg;
    r->cancel_call = NULL;
    /* Not reached: each Await carries the cancel until the attempt's end. */
    if (code != CODE_OK)
        cs_log_debug("run %lld attempt %u: cancel on replica %s: %d: %s", (long long)r->att->run_id,
                     r->att->number, r->att->remote_replica, code, message);
}

static void cancel_send(struct cs_remote *r)
{
    if (r->cancel_call != NULL)
        return;
    Csched__V1__AttemptRef ref;
    ref_init(&ref, r->att);
    r->cancel_call =
        peer_call(r->peer, WORKER("Cancel"), &ref.base, LAUNCH_CALL_MS, cancel_done_cb, r);
}

/* --- Await -------------------------------------------------------------------- */

static void await_send(struct peer *p);

static void backoff_cb(uv_timer_t *timer)
{
    struct peer *p = timer->data;
    timer_stop(&p->backoff);
    await_send(p);
}

/* Asks again after the backoff, which grows while the calls fail. */
static void await_later(struct peer *p, int code, const char *message)
{
    p->backoff_ms = p->backoff_ms == 0 ? BACKOFF_FIRST_MS : p->backoff_ms * 2;
    if (p->backoff_ms > BACKOFF_MAX_MS)
        p->backoff_ms = BACKOFF_MAX_MS;
    if (p->backoff_ms == BACKOFF_MAX_MS)
        cs_log_warn("replica %s: no answer about the %zu attempts placed there (%d: %s); asking "
                    "again",
                    p->id, p->n_remotes, code, message);
    p->backoff = timer_start(p->sched, p, p->backoff_ms, backoff_cb);
}

/* Whether r's end waits in sched->remote_ready: one that came before r
 * was awaited waits in r->early, and is taken out of it when told. */
static bool ready(const struct cs_remote *r)
{
    return r->awaited && r->early != NULL;
}

static void deliver(struct cs_remote *r)
{
    struct cs_attempt *att = r->att;
    struct early_end *end = r->early;
    r->early = NULL;
    if (end->not_started) {
        free(end);
        att->ops->not_started_cb(att);
        return;
    }
    att->note_rc = end->note_rc;
    att->pid = end->pid;
    att->note = end->note;
    free(end);
    att->ops->ended_cb(att);
}

/* Takes one end of the answer: to its attempt now, or once its launch has
 * been answered. An end of an attempt not placed from here (an earlier
 * active replica's, or one ended otherwise) is dropped. */
static void take_end(struct peer *p, const Csched__V1__AttemptEnd *end)
{
    if (end->attempt == NULL)
        return;
    const struct cs_run *run = cs_idmap_get(&p->sched->runs, end->attempt->run_id);
    struct cs_remote *r = run != NULL && run->attempt != NULL ? run->attempt->remote : NULL;
    if (r == NULL || r->peer != p || r->att->number != end->attempt->number || r->early != NULL)
        return;
    struct early_end *e = cs_xcalloc(1, sizeof(*e));
    e->not_started = end->not_started;
    e->note_rc = end->note_rc;
    e->pid = end->minder_pid;
    if (cs_note_parse((const char *)end->note.data, end->note.len, &e->note) != 0)
        (void)snprintf(e->note.message, sizeof(e->note.message), "%s",
                       "the replica's note of the attempt does not parse");
    r->early = e;
    if (r->awaited)
        deliver(r);
}

static void await_done_cb(void *arg, int code, const char *message, const uint8_t *reply,
                          size_t len)
{
    struct peer *p = arg;
    p->await = NULL;
    Csched__V1__AwaitResponse *resp =
        code == CODE_OK ? csched__v1__await_response__unpack(NULL, len, reply) : NULL;
    if (resp == NULL) {
        if (code == CODE_OK)
            cs_log_error("replica %s's answer to Await does not unpack", p->id);
        await_later(p, code, message);
        return;
    }
    p->backoff_ms = 0;
    p->answering = true;
    for (size_t i = 0; i < resp->n_ends; i++)
        take_end(p, resp->ends[i]);
    csched__v1__await_response__free_unpacked(resp, NULL);
    p->answering = false;
    await_send(p);
    peer_maybe_free(p);
}

/* Lists, into refs, the attempts of p awaited (those the worker may have
 * to adopt) or, with cancel, those whose cancel it may have missed. */
static size_t list_refs(struct peer *p, bool cancel, Csched__V1__AttemptRef *refs,
                        Csched__V1__AttemptRef **ptrs)
{
    size_t n = 0;
    for (struct cs_qlink *l = p->remotes.head; l != NULL; l = l->next) {
        struct cs_remote *r = CS_CONTAINER_OF(l, struct cs_remote, peer_link);
        if (!r->awaited || r->early != NULL || (cancel && !r->cancel))
            continue;
        ref_init(&refs[n], r->att);
        ptrs[n] = &refs[n];
        n++;
    }
    return n;
}

/* Keeps one Await in flight while p has attempts. */
static void await_send(struct peer *p)
{
    if (p->await != NULL || p->backoff != NULL || p->n_remotes == 0)
        return;
    size_t cap = p->n_remotes;
    Csched__V1__AttemptRef *refs = cs_xcalloc(2 * cap, sizeof(*refs));
    Csched__V1__AttemptRef **ptrs = cs_xcalloc(2 * cap, sizeof(*ptrs));
    Csched__V1__AwaitRequest req = CSCHED__V1__AWAIT_REQUEST__INIT;
    req.attempts = ptrs;
    req.n_attempts = list_refs(p, false, refs, ptrs);
    req.cancel = ptrs + cap;
    req.n_cancel = list_refs(p, true, refs + cap, ptrs + cap);
    p->await = peer_call(p, WORKER("Await"), &req.base, AWAIT_CALL_MS, await_done_cb, p);
    free(refs);
    free(ptrs);
    if (p->await == NULL)
        await_later(p, -1, "the replica's address is not known yet");
}

void cs_remote_await(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = att->remote;
    r->awaited = true;
    if (r->early != NULL) {
        /* Told once this turn is over, not now: the caller goes on with
         * the attempt and its run, which the end may free. */
        cs_queue_push(&att->sched->remote_ready, &r->ready_link);
        cs_next_turn_ask(&att->sched->remote_flush);
        return;
    }
    if (r->cancel)
        cancel_send(r);
    await_send(r->peer);
}

/* --- Launch ------------------------------------------------------------------- */

static struct cs_remote *remote_new(struct cs_attempt *att)
{
    struct cs_remote *r = cs_xcalloc(1, sizeof(*r));
    r->att = att;
    r->peer = peer_of(att->sched, att->remote_replica);
    att->remote = r;
    cs_queue_push(&att->sched->remotes, &r->link);
    cs_queue_push(&r->peer->remotes, &r->peer_link);
    r->peer->n_remotes++;
    return r;
}

/* Hands the launch back to dispatch with start's result (NULL: no answer,
 * whether it started is not known). */
static void launch_answered(struct cs_remote *r, const Csched__V1__AttemptStart *start, int code,
                            const char *message)
{
    struct cs_attempt *att = r->att;
    struct cs_launch *launch = att->launch;
    r->launch = NULL;
    if (start == NULL) {
        /* It runs as far as anyone here can tell, and Await will say. */
        cs_log_warn("run %lld attempt %u: the launch on replica %s was not answered (%d: %s): "
                    "asking it for the attempt's end",
                    (long long)att->run_id, att->number, att->remote_replica, code, message);
        launch->pid = 0;
        launch->started_unix_ms = cs_now_unix_ms();
        /* Nothing more goes there until its row is read again. */
        cs_placement_room_down(att->sched, att->remote_replica);
    } else if (start->refused) {
        /* Nothing of it exists there: it never started, which the job's
         * max_attempts does not count, and it runs again elsewhere. */
        cs_placement_room_down(att->sched, att->remote_replica);
        att->launch = NULL;
        cs_launch_free(launch);
        att->note_rc = -ENOENT;
        (void)snprintf(att->note.message, sizeof(att->note.message),
                       CS_ATTEMPT_NEVER_STARTED_PREFIX "replica %s took no attempt: %s",
                       att->remote_replica, start->message);
        att->ops->not_started_cb(att);
        return;
    } else if (start->error != 0) {
        launch->err = start->error;
        (void)snprintf(launch->message, sizeof(launch->message), "on replica %s: %s",
                       att->remote_replica, start->message);
    } else {
        launch->pid = start->minder_pid;
        launch->started_unix_ms = start->started_unix_ms;
    }
    launch->pidfd = -1;
    r->launch_done_cb(launch, att->sched);
}

static void launch_done_cb(void *arg, int code, const char *message, const uint8_t *reply,
                           size_t len)
{
    struct launch_call *lc = arg;
    struct peer *p = lc->peer;
    p->launch_calls--;
    p->answering = true;
    Csched__V1__LaunchResponse *resp =
        code == CODE_OK ? csched__v1__launch_response__unpack(NULL, len, reply) : NULL;
    if (resp != NULL && resp->n_starts != lc->n) {
        cs_log_error("replica %s answered %zu starts to a Launch of %zu", p->id, resp->n_starts,
                     lc->n);
        csched__v1__launch_response__free_unpacked(resp, NULL);
        resp = NULL;
    }
    for (size_t i = 0; i < lc->n; i++)
        if (lc->remotes[i] != NULL)
            launch_answered(lc->remotes[i], resp != NULL ? resp->starts[i] : NULL, code, message);
    if (resp != NULL)
        csched__v1__launch_response__free_unpacked(resp, NULL);
    free(lc);
    p->answering = false;
    if (!cs_queue_is_empty(&p->queued))
        cs_next_turn_ask(&p->sched->remote_flush);
    peer_maybe_free(p);
}

static void launch_fill(Csched__V1__AttemptLaunch *l, Csched__V1__AttemptRef *ref,
                        const struct cs_attempt *att)
{
    struct cs_run *run = att->run;
    csched__v1__attempt_launch__init(l);
    ref_init(ref, att);
    l->attempt = ref;
    l->job = (Csched__V1__Job *)run->job->spec;
    l->run = run->msg;
    l->timeout_ms = (int64_t)cs_retry_attempt_timeout_ms(run, cs_now_unix_ms());
    l->start_unix_ms = att->launch->due_unix_ms;
}

/* Whether r's launch waits for a time to come (a run for later, let go
 * ahead of it): those go in a call of their own, whose answer waits for
 * their time, so that it delays no launch for now. */
static bool held(const struct cs_remote *r)
{
    return r->att->launch->due_unix_ms != 0;
}

/* Sends, in one call, the launches queued for p that are held or not. */
static void launches_send(struct peer *p, bool want_held)
{
    size_t n = 0;
    for (struct cs_qlink *l = p->queued.head; l != NULL; l = l->next)
        n += held(CS_CONTAINER_OF(l, struct cs_remote, queued_link)) == want_held;
    if (n == 0)
        return;
    struct launch_call *lc = cs_xcalloc(1, sizeof(*lc) + n * sizeof(lc->remotes[0]));
    Csched__V1__AttemptLaunch *launches = cs_xcalloc(n, sizeof(*launches));
    Csched__V1__AttemptLaunch **ptrs = cs_xcalloc(n, sizeof(*ptrs));
    Csched__V1__AttemptRef *refs = cs_xcalloc(n, sizeof(*refs));
    lc->peer = p;
    struct cs_queue others;
    cs_queue_init(&others);
    for (struct cs_qlink *l; (l = cs_queue_pop(&p->queued)) != NULL;) {
        struct cs_remote *r = CS_CONTAINER_OF(l, struct cs_remote, queued_link);
        if (held(r) != want_held) {
            cs_queue_push(&others, l);
            continue;
        }
        r->queued = false;
        r->launch = lc;
        r->launch_index = lc->n;
        launch_fill(&launches[lc->n], &refs[lc->n], r->att);
        ptrs[lc->n] = &launches[lc->n];
        lc->remotes[lc->n++] = r;
    }
    p->queued = others;
    Csched__V1__LaunchRequest req = CSCHED__V1__LAUNCH_REQUEST__INIT;
    req.n_launches = n;
    req.launches = ptrs;
    struct cs_unary *call =
        peer_call(p, WORKER("Launch"), &req.base, LAUNCH_CALL_MS, launch_done_cb, lc);
    free(launches);
    free(ptrs);
    free(refs);
    if (call != NULL) {
        p->launch_calls++;
        await_send(p); /* an end may come before the launch's answer */
        return;
    }
    p->answering = true;
    for (size_t i = 0; i < n; i++) {
        if (lc->remotes[i] == NULL)
            continue;
        struct cs_attempt *att = lc->remotes[i]->att;
        lc->remotes[i]->launch = NULL;
        att->launch->err = -EHOSTUNREACH;
        (void)snprintf(att->launch->message, sizeof(att->launch->message),
                       "replica %s could not be called: its command was not started",
                       att->remote_replica);
        lc->remotes[i]->launch_done_cb(att->launch, p->sched);
    }
    free(lc);
    p->answering = false;
}

/* Tells the ends that came before their attempts were awaited, then sends
 * the launches queued for each replica, those for now in one call and
 * those held in another, unless LAUNCH_CALLS_MAX are in flight there (its
 * next answer asks again). */
static void flush_cb(struct cs_next_turn *turn)
{
    struct cs_sched *s = CS_CONTAINER_OF(turn, struct cs_sched, remote_flush);
    for (struct cs_qlink *l; (l = cs_queue_pop(&s->remote_ready)) != NULL;) {
        deliver(CS_CONTAINER_OF(l, struct cs_remote, ready_link));
    }
    struct cs_qlink *next;
    for (struct cs_qlink *l = s->remote_peers.head; l != NULL; l = next) {
        next = l->next;
        struct peer *p = CS_CONTAINER_OF(l, struct peer, link);
        for (int want_held = 0; want_held < 2 && p->launch_calls < LAUNCH_CALLS_MAX; want_held++)
            launches_send(p, want_held);
        peer_maybe_free(p);
    }
}

void cs_remote_launch(struct cs_sched *s, struct cs_attempt *att, cs_launch_done_cb done_cb)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = remote_new(att);
    struct peer *p = r->peer;
    r->launch_done_cb = done_cb;
    r->queued = true;
    cs_queue_push(&p->queued, &r->queued_link);
    /* The launches of this turn go together, once it is over. */
    cs_next_turn_ask(&s->remote_flush);
}

int cs_remote_init(struct cs_sched *s)
{
    cs_queue_init(&s->remotes);
    cs_queue_init(&s->remote_peers);
    cs_queue_init(&s->remote_ready);
    return cs_next_turn_init(s->loop, &s->remote_flush, flush_cb);
}

void cs_remote_close(struct cs_sched *s)
{
    cs_next_turn_close(&s->remote_flush);
}

/* --- cancel, free, loss ------------------------------------------------------- */

void cs_remote_cancel(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = att->remote;
    if (r->cancel)
        return;
    r->cancel = true;
    /* One whose launch is not answered yet is told once it is. */
    if (r->awaited)
        cancel_send(r);
}

void cs_remote_free(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = att->remote;
    if (r == NULL)
        return;
    struct peer *p = r->peer;
    if (r->queued)
        cs_queue_remove(&p->queued, &r->queued_link);
    if (ready(r))
        cs_queue_remove(&att->sched->remote_ready, &r->ready_link);
    if (r->launch != NULL)
        r->launch->remotes[r->launch_index] = NULL;
    if (r->cancel_call != NULL)
        att->sched->remote_abandon_cb(r->cancel_call);
    timer_stop(&r->deadline);
    free(r->early);
    cs_queue_remove(&p->remotes, &r->peer_link);
    p->n_remotes--;
    cs_queue_remove(&att->sched->remotes, &r->link);
    att->remote = NULL;
    free(r);
    peer_maybe_free(p);
}

/* How long past its replica's deadline an attempt still counts: its
 * minder's stop and the drift of two machines' clocks over a lease (as
 * dispatch.c's remote_margin_ms). */
static int64_t margin_ms(const struct cs_sched *s, const struct cs_attempt *att)
{
    uint64_t grace = att->run != NULL ? cs_job_kill_grace_ms(att->run->job->spec) : 0;
    return (int64_t)(grace + CS_MINDER_LEFTOVER_GRACE_MS + CS_MINDER_DRAIN_MS +
                     (uint64_t)s->attempt_lease_ms / 100 + 1000);
}

/* Ends att LOST: its replica is gone, and its commands' deadline and the
 * margin have passed. */
static void take_for_lost(struct cs_attempt *att)
{
    cs_log_warn("run %lld attempt %u ran on replica %s, whose lease ran out and whose "
                "commands' deadline has passed: taken for lost",
                (long long)att->run_id, att->number, att->remote_replica);
    att->note_rc = -ENOENT;
    (void)snprintf(att->note.message, sizeof(att->note.message),
                   "lost with replica %s, whose lease ran out: its minder stopped the "
                   "command at the lease's deadline, after which the attempt was taken for "
                   "lost",
                   att->remote_replica);
    att->ops->ended_cb(att);
}

/* How long until att's replica's commands have stopped by themselves, the
 * margin included, as its row last read says. */
static int64_t left_ms(const struct cs_attempt *att)
{
    const struct cs_room *room = room_of(att);
    int64_t since_read_ms = (cs_now_mono_ns() - room->read_mono_ns) / 1000000;
    return room->attempts_left_ms - since_read_ms + margin_ms(att->sched, att);
}

void cs_remote_check_lost(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    struct cs_qlink *next;
    for (struct cs_qlink *l = s->remotes.head; l != NULL; l = next) {
        next = l->next;
        struct cs_remote *r = CS_CONTAINER_OF(l, struct cs_remote, link);
        const struct cs_room *room = room_of(r->att);
        if (!room->alive && room->known && r->att->launch == NULL && left_ms(r->att) <= 0)
            take_for_lost(r->att);
    }
}

/* The deadline a takeover found: lost, unless the replica was read alive
 * since (then asked on, and looked at again once its own deadline has
 * passed). */
static void deadline_cb(uv_timer_t *timer)
{
    struct cs_remote *r = timer->data;
    timer_stop(&r->deadline);
    const struct cs_room *room = room_of(r->att);
    if (!room->known || (!room->alive && left_ms(r->att) <= 0)) {
        take_for_lost(r->att);
        return;
    }
    int64_t again = left_ms(r->att);
    r->deadline = timer_start(r->att->sched, r, again > 1000 ? (uint64_t)again : 1000, deadline_cb);
}

void cs_remote_resume(struct cs_attempt *att, int64_t wait_ms)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = remote_new(att);
    int64_t in_ms = wait_ms + margin_ms(att->sched, att);
    r->deadline = timer_start(att->sched, r, in_ms > 0 ? (uint64_t)in_ms : 0, deadline_cb);
    cs_remote_await(att);
}
