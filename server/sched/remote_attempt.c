/* remote_attempt: an attempt on another replica's machine (see
 * remote_attempt.h). */
#define CS_LOG_COMPONENT "placement"
#include "remote_attempt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csched/v1/worker.pb-c.h"
#include "job.h"
#include "log.h"
#include "minder_contract.h"
#include "placement.h"
#include "retry.h"
#include "util.h"

#define WORKER(m) "/csched.v1.Worker/" m
/* The worker holds an Await this long (worker.h's callers) before it
 * answers that the attempt still runs; the call's own deadline is later. */
#define AWAIT_CALL_MS 30000
/* A launch waits this long for a connection to its replica: past it, the
 * replica is asked whether it started it, and the run goes elsewhere. */
#define LAUNCH_CALL_MS 5000
/* After a call that failed: 100 ms, doubled up to 5 s. */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000
/* gRPC's OK and CANCELLED (grpc/status.h, not included by the loop). */
#define CODE_OK 0
#define CODE_CANCELLED 1

struct cs_remote {
    struct cs_qlink link; /* in sched->remotes */
    struct cs_attempt *att;
    struct cs_unary *call; /* in flight, or NULL */
    cs_launch_done_cb launch_done_cb;
    uv_timer_t *backoff;  /* the wait before asking again, or NULL */
    uv_timer_t *deadline; /* cs_remote_resume's, or NULL */
    uint64_t backoff_ms;
    bool cancel;
};

static struct cs_remote *remote_of(struct cs_attempt *att)
{
    if (att->remote == NULL) {
        struct cs_remote *r = cs_xcalloc(1, sizeof(*r));
        r->att = att;
        att->remote = r;
        cs_queue_push(&att->sched->remotes, &r->link);
    }
    return att->remote;
}

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

static bool call(struct cs_remote *r, const char *method, const ProtobufCMessage *request,
                 int64_t timeout_ms, cs_remote_done_cb done_cb)
{
    struct cs_sched *s = r->att->sched;
    const struct cs_room *room = room_of(r->att);
    if (s->remote_call_cb == NULL || room->address[0] == '\0')
        return false;
    r->call = s->remote_call_cb(s->remote_call_ctx, room->address, method, request, timeout_ms,
                                done_cb, r);
    return r->call != NULL;
}

/* --- asking again ----------------------------------------------------------- */

static void ask(struct cs_remote *r);

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

static uv_timer_t *timer_start(struct cs_remote *r, uint64_t in_ms, uv_timer_cb cb)
{
    uv_timer_t *timer = cs_xmalloc(sizeof(*timer));
    CS_ASSERT(uv_timer_init(r->att->sched->loop, timer) == 0);
    timer->data = r;
    CS_ASSERT(uv_timer_start(timer, cb, in_ms, 0) == 0);
    return timer;
}

static void backoff_cb(uv_timer_t *timer)
{
    struct cs_remote *r = timer->data;
    timer_stop(&r->backoff);
    ask(r);
}

/* Asks again after the backoff, which grows while the calls fail. */
static void ask_later(struct cs_remote *r, int code, const char *message)
{
    const struct cs_attempt *att = r->att;
    r->backoff_ms = r->backoff_ms == 0 ? BACKOFF_FIRST_MS : r->backoff_ms * 2;
    if (r->backoff_ms > BACKOFF_MAX_MS)
        r->backoff_ms = BACKOFF_MAX_MS;
    if (r->backoff_ms == BACKOFF_MAX_MS)
        cs_log_warn("run %lld attempt %u on replica %s: no answer (%d: %s); asking again",
                    (long long)att->run_id, att->number, att->remote_replica, code, message);
    r->backoff = timer_start(r, r->backoff_ms, backoff_cb);
}

/* --- Await -------------------------------------------------------------------- */

static void await_done_cb(void *arg, int code, const char *message, const uint8_t *reply,
                          size_t len)
{
    struct cs_remote *r = arg;
    struct cs_attempt *att = r->att;
    r->call = NULL;
    Csched__V1__AwaitResponse *resp =
        code == CODE_OK ? csched__v1__await_response__unpack(NULL, len, reply) : NULL;
    if (resp == NULL) {
        /* Held past its time answers UNAVAILABLE at once; anything else
         * (the replica away, or starting) waits a little. */
        if (code == CODE_OK)
            cs_log_error("run %lld attempt %u: replica %s's answer does not unpack",
                         (long long)att->run_id, att->number, att->remote_replica);
        ask_later(r, code, message);
        return;
    }
    r->backoff_ms = 0;
    if (resp->not_started) {
        csched__v1__await_response__free_unpacked(resp, NULL);
        att->ops->not_started_cb(att);
        return;
    }
    att->note_rc = resp->note_rc;
    att->pid = resp->minder_pid;
    struct cs_note note;
    if (cs_note_parse((const char *)resp->note.data, resp->note.len, &note) == 0)
        att->note = note;
    csched__v1__await_response__free_unpacked(resp, NULL);
    att->ops->ended_cb(att);
}

static void await_call(struct cs_remote *r)
{
    Csched__V1__AwaitRequest req;
    Csched__V1__AttemptRef ref;
    csched__v1__await_request__init(&req);
    ref_init(&ref, r->att);
    req.attempt = &ref;
    req.cancel = r->cancel;
    if (!call(r, WORKER("Await"), &req.base, AWAIT_CALL_MS, await_done_cb))
        ask_later(r, -1, "the replica's address is not known yet");
}

/* What is asked next: the end, unless a launch is still waited for. */
static void ask(struct cs_remote *r)
{
    if (r->call == NULL && r->backoff == NULL)
        await_call(r);
}

void cs_remote_await(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = remote_of(att);
    ask(r);
}

/* --- Launch --------------------------------------------------------------------- */

static void launch_done_cb(void *arg, int code, const char *message, const uint8_t *reply,
                           size_t len)
{
    struct cs_remote *r = arg;
    struct cs_attempt *att = r->att;
    struct cs_launch *launch = att->launch;
    r->call = NULL;
    Csched__V1__LaunchResponse *resp =
        code == CODE_OK ? csched__v1__launch_response__unpack(NULL, len, reply) : NULL;
    if (resp == NULL) {
        /* Whether it started is not known: it runs as far as anyone here
         * can tell, and Await will say. */
        cs_log_warn("run %lld attempt %u: the launch on replica %s was not answered (%d: %s): "
                    "asking it for the attempt's end",
                    (long long)att->run_id, att->number, att->remote_replica, code, message);
        launch->pid = 0;
        launch->started_unix_ms = cs_now_unix_ms();
        /* Nothing more goes there until its row is read again. */
        cs_placement_room_down(att->sched, att->remote_replica);
    } else if (resp->refused) {
        /* Nothing of it exists there: it never started, which the job's
         * max_attempts does not count, and it runs again elsewhere. */
        cs_placement_room_down(att->sched, att->remote_replica);
        att->launch = NULL;
        cs_launch_free(launch);
        att->note_rc = -ENOENT;
        (void)snprintf(att->note.message, sizeof(att->note.message),
                       CS_ATTEMPT_NEVER_STARTED_PREFIX "replica %s took no attempt: %s",
                       att->remote_replica, resp->message);
        csched__v1__launch_response__free_unpacked(resp, NULL);
        att->ops->not_started_cb(att);
        return;
    } else if (resp->error != 0) {
        launch->err = resp->error;
        (void)snprintf(launch->message, sizeof(launch->message), "on replica %s: %s",
                       att->remote_replica, resp->message);
    } else {
        launch->pid = resp->minder_pid;
        launch->started_unix_ms = resp->started_unix_ms;
    }
    if (resp != NULL)
        csched__v1__launch_response__free_unpacked(resp, NULL);
    launch->pidfd = -1;
    r->launch_done_cb(launch, att->sched);
}

void cs_remote_launch(struct cs_sched *s, struct cs_attempt *att, cs_launch_done_cb done_cb)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = remote_of(att);
    r->launch_done_cb = done_cb;
    struct cs_run *run = att->run;
    Csched__V1__LaunchRequest req;
    Csched__V1__AttemptRef ref;
    csched__v1__launch_request__init(&req);
    ref_init(&ref, att);
    req.attempt = &ref;
    req.job = (Csched__V1__Job *)run->job->spec;
    req.run = run->msg;
    req.timeout_ms = (int64_t)cs_retry_attempt_timeout_ms(run, cs_now_unix_ms());
    req.start_unix_ms = att->launch->due_unix_ms;
    if (!call(r, WORKER("Launch"), &req.base, LAUNCH_CALL_MS, launch_done_cb)) {
        att->launch->err = -EHOSTUNREACH;
        (void)snprintf(att->launch->message, sizeof(att->launch->message),
                       "replica %s could not be called: its command was not started",
                       att->remote_replica);
        done_cb(att->launch, s);
    }
}

/* --- cancel, free, loss ----------------------------------------------------------- */

static void cancel_done_cb(void *arg, int code, const char *message, const uint8_t *reply,
                           size_t len)
{
    (void)reply;
    (void)len;
    struct cs_remote *r = arg;
    r->call = NULL;
    /* Not reached: the next Await carries the cancel. */
    if (code != CODE_OK)
        cs_log_debug("run %lld attempt %u: cancel on replica %s: %d: %s", (long long)r->att->run_id,
                     r->att->number, r->att->remote_replica, code, message);
    ask(r);
}

void cs_remote_cancel(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = remote_of(att);
    r->cancel = true;
    struct cs_sched *s = att->sched;
    /* An Await in flight is held there: cancel it, and ask again with the
     * cancel, which reaches an attempt the replica has only on disk too. */
    if (r->call != NULL && att->launch == NULL) {
        s->remote_abandon_cb(r->call);
        r->call = NULL;
        Csched__V1__AttemptRef ref;
        ref_init(&ref, att);
        if (!call(r, WORKER("Cancel"), &ref.base, LAUNCH_CALL_MS, cancel_done_cb))
            ask_later(r, -1, "the replica's address is not known");
    }
}

void cs_remote_free(struct cs_attempt *att)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = att->remote;
    if (r == NULL)
        return;
    if (r->call != NULL)
        att->sched->remote_abandon_cb(r->call);
    timer_stop(&r->backoff);
    timer_stop(&r->deadline);
    cs_queue_remove(&att->sched->remotes, &r->link);
    att->remote = NULL;
    free(r);
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
    r->deadline = timer_start(r, again > 1000 ? (uint64_t)again : 1000, deadline_cb);
}

void cs_remote_resume(struct cs_attempt *att, int64_t wait_ms)
{
    CS_ASSERT_LOOP();
    struct cs_remote *r = remote_of(att);
    int64_t in_ms = wait_ms + margin_ms(att->sched, att);
    r->deadline = timer_start(r, in_ms > 0 ? (uint64_t)in_ms : 0, deadline_cb);
    ask(r);
}
