/* dispatch_run: a run's own records: its creation (a trigger, started
 * once the creation commits), its end in a terminal state (after its last
 * attempt, past its slot's starting deadline, or cancelled before it
 * started), and a cancel. Loop thread only. Below dispatch.c, which runs
 * the attempts: nothing here calls up into it. */
#include "dispatch_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ahead_dir.h"
#include "attempt.h"
#include "dispatch.h"
#include "ended_runs.h"
#include "event.h"
#include "job.h"
#include "later.h"
#include "launcher.h"
#include "pump.h"
#include "retry.h"
#include "run_array.h"
#include "slot_rules.h"
#include "util.h"

void cs_dispatch_write_run(struct cs_sched *s, struct cs_run *run, cs_store_done_cb cb, void *arg)
{
    s->ops->run_put_cb(s->store, run->msg, NULL, NULL);
    cs_event_emit(s, run, NULL, cb, arg);
}

struct cs_run *cs_dispatch_run_new(struct cs_sched *s, struct cs_job *job, Csched__V1__Run *msg)
{
    struct cs_run *run = cs_xcalloc(1, sizeof(*run));
    run->msg = msg;
    run->job = job;
    run->later_index = CS_NOT_IN_HEAP;
    job->active++;
    cs_idmap_put(&s->runs, msg->id, run);
    cs_run_keys_add(&s->run_keys, run);
    return run;
}

/* Drops run from memory (its rows, if any, are written) and hands back its
 * message. */
static Csched__V1__Run *run_detach(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT(run->attempt == NULL && !run->queued && !cs_later_is_waiting(run));
    Csched__V1__Run *msg = run->msg;
    struct cs_run *next = cs_run_array_leave(s, run);
    cs_ahead_dir_drop(s, run);
    run->job->active--;
    CS_ASSERT(cs_idmap_remove(&s->runs, msg->id) == run);
    cs_run_keys_remove(&s->run_keys, run);
    free(run);
    /* The next of its array, let past the gate in its place. */
    if (next != NULL)
        cs_pump_enqueue(s, next);
    return msg;
}

static void run_forget(struct cs_sched *s, struct cs_run *run)
{
    Csched__V1__Run *msg = run_detach(s, run);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
}

/* A run's final message, kept for GetRun once its end has committed. */
struct ended {
    struct cs_sched *sched;
    Csched__V1__Run *msg;
};

static void end_committed_cb(void *arg, int status)
{
    struct ended *e = arg;
    if (status == 0)
        cs_ended_runs_add(&e->sched->ended_runs, e->msg);
    else
        protobuf_c_message_free_unpacked(&e->msg->base, NULL);
    free(e);
}

/* Moves run to a terminal state and forgets it; returns a copy of its final
 * message if want_copy. */
static Csched__V1__Run *finish_run(struct cs_sched *s, struct cs_run *run,
                                   Csched__V1__RunState state, int64_t ended_unix_ms,
                                   cs_store_done_cb cb, void *arg, bool want_copy)
{
    run->msg->ended_unix_ms = ended_unix_ms;
    cs_sched_set_run_state(s, run, state);
    /* cancel_requested means "being stopped": an ended run is past that. */
    run->msg->cancel_requested = false;
    struct cs_store_mark tie = {0};
    if (s->run_end_cb != NULL)
        tie = cs_store_mark_take(s->store);
    struct ended *e = cs_xmalloc(sizeof(*e));
    e->sched = s;
    e->msg = run->msg; /* the run's until it is detached below; commits come later */
    s->ops->run_put_cb(s->store, run->msg, end_committed_cb, e);
    cs_event_emit(s, run, NULL, cb, arg);
    /* The runs it makes commit with this end, in one transaction. */
    if (s->run_end_cb != NULL)
        s->run_end_cb(s, run, &tie);
    Csched__V1__Run *copy = want_copy ? (Csched__V1__Run *)cs_message_copy(&run->msg->base) : NULL;
    s->runs_finished++;
    (void)run_detach(s, run);
    return copy;
}

/* Ends a run that has no attempt running, cancelled (see finish_run). */
Csched__V1__Run *cs_dispatch_cancel_unstarted(struct cs_sched *s, struct cs_run *run,
                                              cs_store_done_cb cb, void *arg, bool want_copy)
{
    run->msg->cancel_requested = true;
    /* A last attempt CANCELLED was taken back before its minder started. */
    const Csched__V1__Attempt *last =
        run->msg->n_attempts > 0 ? run->msg->attempts[run->msg->n_attempts - 1] : NULL;
    cs_message_set_str(&run->msg->message,
                       last != NULL && last->state != CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED
                           ? "cancelled while waiting to retry"
                           : "cancelled before it started");
    return finish_run(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, cs_now_unix_ms(), cb, arg,
                      want_copy);
}

/* A triggered run waits for its creation to commit before it may start, so
 * that no command runs for a run a restart would not know of. */
struct created {
    struct cs_sched *sched;
    int64_t run_id;
    cs_store_done_cb cb;
    void *arg;
};

static void created_cb(void *arg, int status)
{
    struct created c = *(struct created *)arg;
    free(arg);
    struct cs_run *run = cs_idmap_get(&c.sched->runs, c.run_id);
    /* Cancelled meanwhile, the run is gone: nothing to do. */
    if (run != NULL && run->msg->state == CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED && !run->queued &&
        run->attempt == NULL && !cs_later_is_waiting(run)) {
        if (status == 0) {
            cs_later_enqueue(c.sched, run);
        } else {
            /* Never stored, as its client is told: it must not run. */
            cs_sched_set_run_state(c.sched, run, CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED);
            run_forget(c.sched, run);
        }
    }
    if (c.cb != NULL)
        c.cb(c.arg, status);
}

struct cs_run *cs_dispatch_trigger(struct cs_sched *s, struct cs_job *job,
                                   const Csched__V1__TriggerJobRequest *request,
                                   const char *triggered_by, cs_store_done_cb cb, void *arg)
{
    return cs_dispatch_trigger_slot(s, job, request, 0, triggered_by, cb, arg);
}

static void env_add(Csched__V1__Run *msg, const char *key, const char *value)
{
    Csched__V1__Run__EnvEntry *e = cs_xmalloc(sizeof(*e));
    csched__v1__run__env_entry__init(e);
    e->key = cs_xstrdup(key);
    e->value = cs_xstrdup(value);
    msg->env[msg->n_env++] = e;
}

/* The names an array sets in each of its runs' env, over the request's. */
static bool is_array_env(const char *key)
{
    return strcmp(key, CS_ARRAY_INDEX_ENV) == 0 || strcmp(key, CS_ARRAY_SIZE_ENV) == 0;
}

/* The message of a new run as request makes it, with the next id, at
 * index of request's array (if it makes one, whose id is array_id). */
static Csched__V1__Run *run_msg_new(struct cs_sched *s, struct cs_job *job,
                                    const Csched__V1__TriggerJobRequest *request,
                                    int64_t slot_unix_ms, const char *triggered_by,
                                    int64_t array_id, uint32_t index)
{
    Csched__V1__Run *msg = cs_xmalloc(sizeof(*msg));
    csched__v1__run__init(msg);
    msg->id = s->next_run_id++;
    msg->slot_unix_ms = slot_unix_ms;
    msg->job_name = cs_xstrdup(job->spec->name);
    /* An array's key is its first run's: it is made with the others, in
     * one transaction, so finding it finds the whole array. */
    msg->idempotency_key = cs_xstrdup(index == 0 ? request->idempotency_key : "");
    msg->created_unix_ms = cs_now_unix_ms();
    if (request->not_before_unix_ms > msg->created_unix_ms)
        msg->not_before_unix_ms = request->not_before_unix_ms;
    msg->message = cs_xstrdup("");
    msg->triggered_by = cs_xstrdup(triggered_by);
    bool array = request->array_size > 0;
    size_t n_env = request->n_env + (array ? 2 : 0);
    if (n_env > 0)
        msg->env = cs_xcalloc(n_env, sizeof(*msg->env));
    for (size_t i = 0; i < request->n_env; i++)
        if (!array || !is_array_env(request->env[i]->key))
            env_add(msg, request->env[i]->key, request->env[i]->value);
    if (array) {
        char value[16];
        msg->array_id = array_id != 0 ? array_id : msg->id;
        msg->array_index = request->array_first_index + index;
        msg->array_max_running = request->array_max_running;
        (void)snprintf(value, sizeof(value), "%u", msg->array_index);
        env_add(msg, CS_ARRAY_INDEX_ENV, value);
        (void)snprintf(value, sizeof(value), "%u", request->array_size);
        env_add(msg, CS_ARRAY_SIZE_ENV, value);
    }
    msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED;
    return msg;
}

static struct cs_run *run_create(struct cs_sched *s, struct cs_job *job, Csched__V1__Run *msg,
                                 cs_store_done_cb cb, void *arg)
{
    struct cs_run *run = cs_dispatch_run_new(s, job, msg);
    cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    struct created *c = cs_xmalloc(sizeof(*c));
    *c = (struct created){.sched = s, .run_id = msg->id, .cb = cb, .arg = arg};
    cs_dispatch_write_run(s, run, created_cb, c);
    return run;
}

struct cs_run *cs_dispatch_trigger_slot(struct cs_sched *s, struct cs_job *job,
                                        const Csched__V1__TriggerJobRequest *request,
                                        int64_t slot_unix_ms, const char *triggered_by,
                                        cs_store_done_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    struct cs_run *first =
        run_create(s, job, run_msg_new(s, job, request, slot_unix_ms, triggered_by, 0, 0), cb, arg);
    for (uint32_t i = 1; i < request->array_size; i++)
        (void)run_create(
            s, job, run_msg_new(s, job, request, slot_unix_ms, triggered_by, first->msg->id, i),
            NULL, NULL);
    return first;
}

/* Ends run after its last attempt a, in state (CANCELLED if asked to
 * stop), saying so if its deadline ended it. It ended when a did, which may
 * be before the server heard of it (a minder adopted after a restart). */
void cs_dispatch_end_after(struct cs_sched *s, struct cs_run *run, const Csched__V1__Attempt *a,
                           Csched__V1__RunState state, bool past_deadline)
{
    if (run->msg->cancel_requested)
        state = CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED;
    cs_outcome_set_run(run->msg, cs_outcome_of_attempt(a));
    if (past_deadline)
        cs_retry_set_deadline_message(run, a->message);
    else
        cs_message_set_str(&run->msg->message, a->message);
    (void)finish_run(s, run, state, a->ended_unix_ms, NULL, NULL, false);
}

/* Ends run, made by its slot, if the slot may no longer start it: it
 * waited in the queue past the slot's starting deadline (DEADLINE_PASSED),
 * or its job was paused before the slot came due (PAUSED: a slot decided
 * ahead, slots.h). Cancelled unstarted; the slot row keeps the run's id,
 * which says why, and a PAUSED one is what ResumeJob's misfire policy reads. */
bool cs_dispatch_end_slot_run_unstartable(struct cs_sched *s, struct cs_run *run)
{
    const Csched__V1__Job *spec = run->job->spec;

    if (!cs_slot_run_waits_on_deadline(run->msg))
        return false;
    int64_t due_ms = cs_slot_due_ms(spec, run->msg->slot_unix_ms / 1000);
    if (spec->paused && spec->paused_unix_ms <= due_ms)
        cs_dispatch_skip_slot_run(s, run, CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED,
                                  CS_SLOT_PAUSED_MESSAGE, CS_SLOT_RUN_PAUSED_MESSAGE);
    else if (cs_slot_deadline_passed(spec->schedule, due_ms, cs_now_unix_ms()))
        cs_dispatch_skip_slot_run(
            s, run, CSCHED__V1__SKIP_REASON__SKIP_REASON_DEADLINE_PASSED,
            "its run waited to start past starting_deadline_seconds and was cancelled",
            "cancelled before it started: it waited past its slot's starting_deadline_seconds");
    else
        return false;
    return true;
}

void cs_dispatch_skip_slot_run(struct cs_sched *s, struct cs_run *run,
                               Csched__V1__SkipReason reason, const char *slot_message,
                               const char *run_message)
{
    const Csched__V1__Job *spec = run->job->spec;
    Csched__V1__Slot slot = CSCHED__V1__SLOT__INIT;
    int64_t now_ms = cs_now_unix_ms();

    slot.job_name = spec->name;
    slot.slot_unix_ms = run->msg->slot_unix_ms;
    slot.due_unix_ms = cs_slot_due_ms(spec, run->msg->slot_unix_ms / 1000);
    slot.decided_unix_ms = now_ms;
    slot.outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED;
    slot.skip_reason = reason;
    slot.message = (char *)slot_message;
    slot.run_id = run->msg->id;
    cs_store_slot_put(s->store, &slot, NULL, NULL);
    cs_message_set_str(&run->msg->message, run_message);
    if (s->run_hook_cb != NULL)
        s->run_hook_cb(s->run_hook_ctx, spec, run->msg, run->msg->state, true);
    (void)finish_run(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, now_ms, NULL, NULL, false);
}

bool cs_dispatch_slot_start_held(const struct cs_run *run)
{
    return run->msg->n_attempts == 1 && run->msg->slot_unix_ms != 0 &&
           strcmp(run->msg->triggered_by, CS_SLOT_TRIGGERED_BY) == 0 && run->attempt != NULL &&
           run->attempt->launch != NULL && run->attempt->launch->due_unix_ms != 0;
}

size_t cs_dispatch_runs_ahead(struct cs_sched *s, const struct cs_job *job, struct cs_run **out,
                              size_t max)
{
    CS_ASSERT_LOOP();
    int64_t now_ms = cs_now_unix_ms();
    size_t n = 0, pos = 0;
    void *value;

    while (n < max && cs_idmap_next(&s->runs, &pos, &value) != 0) {
        struct cs_run *run = value;
        if (run->job == job &&
            ((cs_slot_run_waits_on_deadline(run->msg) && run->msg->not_before_unix_ms > now_ms) ||
             cs_dispatch_slot_start_held(run)))
            out[n++] = run;
    }
    return n;
}
