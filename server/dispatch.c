/* dispatch: run and attempt transitions. Each transition updates the run's
 * message, the slot counts and the queues, writes the rows and emits the
 * events, all in the same loop turn so they commit together. Below it: the
 * pump (which calls back to start a run), attempts (which call back when a
 * minder was adopted or has ended), retries, and the launcher. */
#define CS_LOG_COMPONENT "dispatch"
#include "dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attempt.h"
#include "env.h"
#include "event.h"
#include "job.h"
#include "later.h"
#include "log.h"
#include "minder_contract.h"
#include "pump.h"
#include "retry.h"
#include "slot_rules.h"
#include "util.h"

/* A minder ends by its job's timeout, plus its kill grace, plus the drain,
 * plus writing its note. Past that and this margin, something is wrong with
 * the minder itself, and the server kills it. */
#define BACKSTOP_MARGIN_MS 5000

static void attempt_exited_cb(struct cs_attempt *att);
static void attempt_ended_cb(struct cs_attempt *att);
static void attempt_adopted_cb(struct cs_attempt *att);
static void attempt_not_started_cb(struct cs_attempt *att);

static const struct cs_attempt_ops attempt_ops = {
    .exited_cb = attempt_exited_cb,
    .ended_cb = attempt_ended_cb,
    .adopted_cb = attempt_adopted_cb,
    .not_started_cb = attempt_not_started_cb,
};

const struct cs_sched_ops cs_dispatch_cschedd_ops = {
    .run_put_cb = cs_store_run_put,
    .attempt_put_cb = cs_store_attempt_put,
    .event_put_cb = cs_store_event_put,
    .launch_cb = cs_launcher_submit,
};

static void write_run(struct cs_sched *s, struct cs_run *run, cs_store_done_cb cb, void *arg)
{
    s->ops->run_put_cb(s->store, run->msg, NULL, NULL);
    cs_event_emit(s, run, NULL, cb, arg);
}

static Csched__V1__Attempt *attempt_msg(struct cs_attempt *att)
{
    return att->run->msg->attempts[att->number - 1];
}

static void put_attempt(struct cs_sched *s, struct cs_run *run, const Csched__V1__Attempt *msg,
                        const char *dir)
{
    s->ops->attempt_put_cb(s->store, run->msg->id, msg, dir, NULL, NULL);
    cs_event_emit(s, run, msg, NULL, NULL);
}

static void write_attempt(struct cs_sched *s, struct cs_run *run, struct cs_attempt *att)
{
    put_attempt(s, run, attempt_msg(att), att->dir);
}

static struct cs_run *run_new(struct cs_sched *s, struct cs_job *job, Csched__V1__Run *msg)
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

/* Drops run from memory (its rows, if any, are written). */
static void run_forget(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT(run->attempt == NULL && !run->queued && !cs_later_is_waiting(run));
    run->job->active--;
    CS_ASSERT(cs_idmap_remove(&s->runs, run->msg->id) == run);
    cs_run_keys_remove(&s->run_keys, run);
    protobuf_c_message_free_unpacked(&run->msg->base, NULL);
    free(run);
}

/* The run has reached a terminal state and its rows are written: forget it. */
static void run_retire(struct cs_sched *s, struct cs_run *run)
{
    s->runs_finished++;
    run_forget(s, run);
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
    write_run(s, run, cb, arg);
    Csched__V1__Run *copy = want_copy ? (Csched__V1__Run *)cs_message_copy(&run->msg->base) : NULL;
    run_retire(s, run);
    return copy;
}

/* Ends a run that has no attempt running, cancelled (see finish_run). */
static Csched__V1__Run *cancel_unstarted(struct cs_sched *s, struct cs_run *run,
                                         cs_store_done_cb cb, void *arg, bool want_copy)
{
    run->msg->cancel_requested = true;
    cs_message_set_str(&run->msg->message, run->msg->n_attempts > 0
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

struct cs_run *cs_dispatch_trigger_slot(struct cs_sched *s, struct cs_job *job,
                                        const Csched__V1__TriggerJobRequest *request,
                                        int64_t slot_unix_ms, const char *triggered_by,
                                        cs_store_done_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    Csched__V1__Run *msg = cs_xmalloc(sizeof(*msg));
    csched__v1__run__init(msg);
    msg->id = s->next_run_id++;
    msg->slot_unix_ms = slot_unix_ms;
    msg->job_name = cs_xstrdup(job->spec->name);
    msg->idempotency_key = cs_xstrdup(request->idempotency_key);
    msg->created_unix_ms = cs_now_unix_ms();
    if (request->not_before_unix_ms > msg->created_unix_ms)
        msg->not_before_unix_ms = request->not_before_unix_ms;
    msg->message = cs_xstrdup("");
    msg->triggered_by = cs_xstrdup(triggered_by);
    if (request->n_env > 0) {
        msg->n_env = request->n_env;
        msg->env = cs_xcalloc(request->n_env, sizeof(*msg->env));
        for (size_t i = 0; i < request->n_env; i++) {
            msg->env[i] = cs_xmalloc(sizeof(*msg->env[i]));
            csched__v1__run__env_entry__init(msg->env[i]);
            msg->env[i]->key = cs_xstrdup(request->env[i]->key);
            msg->env[i]->value = cs_xstrdup(request->env[i]->value);
        }
    }
    msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED;
    struct cs_run *run = run_new(s, job, msg);
    cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    struct created *c = cs_xmalloc(sizeof(*c));
    *c = (struct created){.sched = s, .run_id = msg->id, .cb = cb, .arg = arg};
    write_run(s, run, created_cb, c);
    return run;
}

/* --- starting ------------------------------------------------------------ */

static struct cs_attempt *attempt_new(struct cs_sched *s, struct cs_run *run)
{
    Csched__V1__Attempt *a = cs_run_attempt_add(run->msg);
    uint32_t number = a->number;
    a->retry_delay_ms = run->retry_delay_ms;
    a->retry_jitter_ms = run->retry_jitter_ms;
    run->retry_delay_ms = run->retry_jitter_ms = 0;
    char dir[4096];
    /* A state dir too long for a path leaves dir cut short: the launch
     * thread's mkdir of it fails, and so does the attempt, saying why. */
    (void)cs_minder_dir_format(dir, sizeof(dir), s->state_dir, run->msg->id, number);
    run->attempt = cs_attempt_new(s, run, number, dir, &attempt_ops);
    return run->attempt;
}

/* att takes a slot of both limits: from now until its minder has ended,
 * its command may be alive. */
static void take_slot(struct cs_sched *s, struct cs_attempt *att)
{
    CS_ASSERT(!att->holds_slot);
    att->holds_slot = true;
    att->run->job->slots++;
    s->slots_held++;
}

/* Gives back att's slot, if it holds one, and lets the pump look: called
 * when nothing of the attempt can be alive any more (its minder has ended,
 * or never started). */
static void give_slot(struct cs_sched *s, struct cs_attempt *att)
{
    struct cs_job *job = att->run->job;
    if (!att->holds_slot)
        return;
    CS_ASSERT(job->slots > 0 && s->slots_held > 0);
    att->holds_slot = false;
    job->slots--;
    s->slots_held--;
    cs_pump_job_changed(s, job);
}

static struct cs_launch *launch_new(struct cs_sched *s, struct cs_attempt *att)
{
    const Csched__V1__Job *spec = att->run->job->spec;
    struct cs_minder_cmd cmd = {
        .minder_path = s->minder_path,
        .dir = att->dir,
        .timeout_ms = cs_retry_attempt_timeout_ms(att->run, cs_now_unix_ms()),
        .grace_ms = cs_job_kill_grace_ms(spec),
        .stop_signal = cs_job_kill_signal(spec),
        .workdir = spec->working_dir,
        .command = spec->command,
        .n_command = spec->n_command,
        .shell = spec->shell,
    };
    struct cs_launch *launch = cs_xcalloc(1, sizeof(*launch));
    launch->dir = cs_xstrdup(att->dir);
    launch->argv = cs_minder_argv_new(&cmd);
    /* Out of memory: the server aborts, as cs_xmalloc does. */
    CS_ASSERT(launch->argv != NULL);
    launch->envp = cs_env_build_attempt(s->base_env, spec, att->run->msg, att->number);
    launch->run_as_user = cs_xstrdup(spec->run_as_user);
    launch->run_as_group = cs_xstrdup(spec->run_as_group);
    launch->default_user = s->job_user;
    launch->own_workdir = spec->working_dir[0] == '\0';
    launch->secrets = cs_secrets_copy(spec, &launch->n_secrets);
    launch->server_env = s->server_env;
    launch->owner = att;
    return launch;
}

/* Ends run after its last attempt a, in state (CANCELLED if asked to
 * stop), saying so if its deadline ended it. It ended when a did, which may
 * be before the server heard of it (a minder adopted after a restart). */
static void end_after(struct cs_sched *s, struct cs_run *run, const Csched__V1__Attempt *a,
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

/* Ends run, made by its slot, if it waited in the queue past the slot's
 * starting deadline: cancelled unstarted, its slot turned DEADLINE_PASSED
 * (the row keeps the run's id, which says why). */
static bool end_past_slot_deadline(struct cs_sched *s, struct cs_run *run)
{
    const Csched__V1__Job *spec = run->job->spec;
    Csched__V1__Slot slot = CSCHED__V1__SLOT__INIT;
    int64_t now_ms = cs_now_unix_ms();

    if (!cs_slot_run_waits_on_deadline(run->msg))
        return false;
    slot.due_unix_ms = cs_slot_due_ms(spec, run->msg->slot_unix_ms / 1000);
    if (!cs_slot_deadline_passed(spec->schedule, slot.due_unix_ms, now_ms))
        return false;
    slot.job_name = spec->name;
    slot.slot_unix_ms = run->msg->slot_unix_ms;
    slot.decided_unix_ms = now_ms;
    slot.outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED;
    slot.skip_reason = CSCHED__V1__SKIP_REASON__SKIP_REASON_DEADLINE_PASSED;
    slot.run_id = run->msg->id;
    slot.message = "its run waited to start past starting_deadline_seconds and was cancelled";
    cs_store_slot_put(s->store, &slot, NULL, NULL);
    cs_message_set_str(&run->msg->message, "cancelled before it started: it waited past its slot's "
                                           "starting_deadline_seconds");
    (void)finish_run(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, now_ms, NULL, NULL, false);
    return true;
}

/* The pump's start callback: the run, off its queue, takes its slots and
 * its next attempt goes to the launcher; but a retry that waited for a slot
 * until past the run's deadline ends the run instead, and so does a slot's
 * run past the slot's starting deadline. */
static void start_cb(struct cs_sched *s, struct cs_run *run)
{
    if (end_past_slot_deadline(s, run))
        return;
    int64_t deadline = cs_retry_deadline_unix_ms(run);
    if (deadline != 0 && run->msg->n_attempts > 0 && cs_now_unix_ms() >= deadline) {
        const Csched__V1__Attempt *last = run->msg->attempts[run->msg->n_attempts - 1];
        run->retry_delay_ms = 0;
        end_after(s, run, last, last->state, true);
        return;
    }
    struct cs_attempt *att = attempt_new(s, run);
    take_slot(s, att);
    cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    if (run->msg->started_unix_ms == 0)
        run->msg->started_unix_ms = cs_now_unix_ms();
    s->runs_started++;
    write_run(s, run, NULL, NULL);
    write_attempt(s, run, att);
    s->ops->launch_cb(s->launcher, launch_new(s, att));
}

/* The minder is running (started by us or found after a restart). */
static void attempt_running(struct cs_sched *s, struct cs_attempt *att, int64_t started_unix_ms)
{
    struct cs_run *run = att->run;
    Csched__V1__Attempt *a = attempt_msg(att);
    /* An adopted attempt recorded RUNNING with this minder before the
     * restart: its RUNNING event is in the history already. */
    bool known =
        a->state == CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING && a->minder_pid == (int32_t)att->pid;
    cs_sched_set_attempt_state(run->msg, a, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    a->minder_pid = (int32_t)att->pid;
    if (a->started_unix_ms == 0)
        a->started_unix_ms = started_unix_ms;
    if (!known)
        write_attempt(s, run, att);
    if (run->msg->state != CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING) {
        cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
        write_run(s, run, NULL, NULL);
    }
    /* The minder got this timeout at its launch, give or take the few ms
     * the launch took, which the margin covers. */
    int64_t deadline = 0;
    uint64_t timeout_ms = cs_retry_attempt_timeout_ms(run, a->started_unix_ms);
    if (timeout_ms > 0)
        deadline = a->started_unix_ms + (int64_t)timeout_ms +
                   (int64_t)cs_job_kill_grace_ms(run->job->spec) + CS_MINDER_LEFTOVER_GRACE_MS +
                   CS_MINDER_DRAIN_MS + BACKSTOP_MARGIN_MS;
    int rc = cs_attempt_watch(att, deadline);
    if (rc != 0) {
        /* Without a watch the end would never be seen: treat it as lost. */
        cs_log_error("run %lld attempt %u: watching the pidfd of minder %d failed: %s",
                     (long long)run->msg->id, att->number, (int)att->pid, strerror(-rc));
        att->note_rc = -EIO;
        attempt_ended_cb(att);
        return;
    }
    if (run->msg->cancel_requested)
        (void)cs_attempt_cancel(att); /* a failure is logged; the run ends when the minder does */
}

void cs_dispatch_launch_done_cb(struct cs_launch *launch, void *ctx)
{
    CS_ASSERT_LOOP();
    struct cs_sched *s = ctx;
    struct cs_attempt *att = launch->owner;
    if (launch->err != 0) {
        cs_log_error("attempt %s: %s", att->dir, launch->message);
        att->note_rc = launch->err;
        att->launch_failed = true;
        att->no_space = launch->err == -ENOSPC || launch->err == -EDQUOT;
        struct cs_note *note = &att->note;
        memset(note, 0, sizeof(*note));
        (void)snprintf(note->message, sizeof(note->message), "%s", launch->message);
        cs_launch_free(launch);
        attempt_ended_cb(att);
        return;
    }
    att->pid = launch->pid;
    att->pidfd = launch->pidfd;
    att->is_child = true;
    int64_t started = launch->started_unix_ms;
    cs_launch_free(launch);
    attempt_running(s, att, started);
}

/* --- after a restart -------------------------------------------------- */

/* What adoption found before its last attempt, and that attempt itself,
 * become records; a run the store had as QUEUED takes its slot now, which
 * the minder's end gives back. */
static void resume_settle(struct cs_attempt *att)
{
    struct cs_sched *s = att->sched;
    struct cs_run *run = att->run;
    uint32_t first = att->number - att->n_earlier;
    for (uint32_t i = 0; i < att->n_earlier; i++) {
        uint32_t number = first + i;
        Csched__V1__Attempt *a = number <= run->msg->n_attempts ? run->msg->attempts[number - 1]
                                                                : cs_run_attempt_add(run->msg);
        char dir[4096];
        cs_sched_set_attempt_state(run->msg, a, cs_attempt_apply_earlier(att, i, a));
        (void)cs_minder_dir_format(dir, sizeof(dir), s->state_dir, run->msg->id, number);
        put_attempt(s, run, a, dir);
    }
    att->n_earlier = 0;
    while (run->msg->n_attempts < att->number)
        (void)cs_run_attempt_add(run->msg);
    if (run->msg->state == CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED) {
        take_slot(s, att);
        cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    }
}

/* Adoption found no directory for the attempt: nothing of it was made, so
 * nothing ran. An attempt the store had recorded ends as never started (and
 * the run is retried as it would be); a queued run is queued again. */
static void attempt_not_started_cb(struct cs_attempt *att)
{
    struct cs_sched *s = att->sched;
    struct cs_run *run = att->run;
    if (att->number <= run->msg->n_attempts) {
        att->note_rc = -ENOENT;
        (void)snprintf(att->note.message, sizeof(att->note.message), "%s",
                       CS_ATTEMPT_NEVER_STARTED_MESSAGE);
        attempt_ended_cb(att);
        return;
    }
    give_slot(s, att);
    run->attempt = NULL;
    cs_attempt_free(att);
    if (run->msg->cancel_requested)
        (void)cancel_unstarted(s, run, NULL, NULL, false);
    else
        cs_later_enqueue(s, run);
}

static void attempt_adopted_cb(struct cs_attempt *att)
{
    resume_settle(att);
    cs_log_info("adopted minder %d of run %lld attempt %u", (int)att->pid,
                (long long)att->run->msg->id, att->number);
    attempt_running(att->sched, att, cs_now_unix_ms());
}

/* --- ending -------------------------------------------------------------- */

/* Back to QUEUED, to start again once its backoff has passed: the row
 * written carries the time, so a restart keeps the wait. */
static void retry_run(struct cs_sched *s, struct cs_run *run)
{
    cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    cs_retry_schedule(s, run);
    write_run(s, run, NULL, NULL);
}

/* The minder has exited cleanly, and with it everything its command left
 * (it is a subreaper and reaps them before it exits): its slot goes to the
 * next run now, while the note is still to be read and the end to commit. */
static void attempt_exited_cb(struct cs_attempt *att)
{
    give_slot(att->sched, att);
}

/* The slot, if still held, is given back here: a minder that never
 * started, one killed or failed (the note read has stopped what its
 * command left), an adopted one, one that adoption found ended. */
static void attempt_ended_cb(struct cs_attempt *att)
{
    struct cs_sched *s = att->sched;
    struct cs_run *run = att->run;
    resume_settle(att);
    Csched__V1__Attempt *a = attempt_msg(att);
    Csched__V1__RunState state = cs_attempt_apply_note(att, a);
    cs_sched_set_attempt_state(run->msg, a, state);
    /* A full disk would only refuse the retry too: the run ends here. */
    enum cs_retry_verdict verdict =
        att->no_space ? CS_RETRY_NO : cs_retry_decide(run, state, cs_now_unix_ms());
    write_attempt(s, run, att);
    give_slot(s, att);
    run->attempt = NULL;
    cs_attempt_free(att);

    if (verdict == CS_RETRY_YES)
        retry_run(s, run);
    else
        end_after(s, run, a, state, verdict == CS_RETRY_PAST_DEADLINE);
}

/* --- cancel, resume, life ------------------------------------------------- */

Csched__V1__Run *cs_dispatch_cancel(struct cs_sched *s, struct cs_run *run, cs_store_done_cb cb,
                                    void *arg)
{
    CS_ASSERT_LOOP();
    if (run->attempt == NULL) {
        /* Queued, or waiting to retry: nothing runs, so it ends now. */
        if (run->queued)
            cs_pump_dequeue(s, run);
        cs_later_remove(s, run);
        return cancel_unstarted(s, run, cb, arg, true);
    }
    run->msg->cancel_requested = true;
    /* A minder still being launched is told as soon as it runs; a failure
     * to tell a running one is logged, and it ends as it would have. */
    (void)cs_attempt_cancel(run->attempt);
    s->ops->run_put_cb(s->store, run->msg, cb, arg);
    return (Csched__V1__Run *)cs_message_copy(&run->msg->base);
}

void cs_dispatch_resume(struct cs_sched *s, Csched__V1__Run *msg, const char *attempt_dir)
{
    CS_ASSERT_LOOP();
    struct cs_job *job = cs_job_find(s, msg->job_name);
    if (job == NULL) {
        cs_log_error("run %lld names job %s, which does not exist: left as it is",
                     (long long)msg->id, msg->job_name);
        protobuf_c_message_free_unpacked(&msg->base, NULL);
        return;
    }
    Csched__V1__RunState state = msg->state;
    msg->state = CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED;
    struct cs_run *run = run_new(s, job, msg);
    /* The store may not know of every attempt that started (the database
     * was away, or a write had not committed): adoption walks the attempt
     * directories from the first attempt the store has not seen end. */
    uint32_t first = (uint32_t)msg->n_attempts + 1;
    char dir[4096];
    if (state == CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED || msg->n_attempts == 0) {
        cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
        /* Waiting to retry: its wait ran from its last attempt's end (the
         * random part it drew is not stored, so it counts as wait). */
        const Csched__V1__Attempt *last =
            msg->n_attempts > 0 ? msg->attempts[msg->n_attempts - 1] : NULL;
        if (last != NULL && msg->not_before_unix_ms > last->ended_unix_ms &&
            last->ended_unix_ms > 0)
            run->retry_delay_ms = msg->not_before_unix_ms - last->ended_unix_ms;
    } else {
        cs_sched_set_run_state(s, run, state);
        first--;
    }
    if (attempt_dir != NULL && first == msg->n_attempts)
        (void)snprintf(dir, sizeof(dir), "%s", attempt_dir);
    else
        (void)cs_minder_dir_format(dir, sizeof(dir), s->state_dir, msg->id, first);
    run->attempt = cs_attempt_new(s, run, first, dir, &attempt_ops);
    /* Its minder may still be alive: it counts until adoption says. */
    if (run->msg->state != CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED)
        take_slot(s, run->attempt);
    cs_attempt_adopt(run->attempt);
}

int cs_dispatch_init(struct cs_sched *s, const struct cs_sched_ops *ops)
{
    CS_ASSERT_LOOP();
    s->ops = ops;
    cs_idmap_init(&s->runs);
    cs_run_keys_init(&s->run_keys);
    int rc = cs_pump_init(s, start_cb);
    if (rc != 0)
        goto err_close_maps;
    rc = cs_later_init(s);
    if (rc != 0)
        goto err_close_pump;
    rc = cs_exit_watch_init(s->loop, &s->exits, cs_attempt_exit_cb);
    if (rc != 0)
        goto err_close_later;
    return 0;

err_close_later:
    cs_later_close(s);
err_close_pump:
    cs_pump_close(s);
err_close_maps:
    cs_run_keys_close(&s->run_keys);
    cs_idmap_close(&s->runs);
    return rc;
}

void cs_dispatch_close(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    void *value;
    for (size_t pos = 0; cs_idmap_next(&s->runs, &pos, &value) != 0;) {
        struct cs_run *run = value;
        if (run->attempt != NULL)
            cs_attempt_free(run->attempt);
        protobuf_c_message_free_unpacked(&run->msg->base, NULL);
        free(run);
    }
    cs_idmap_close(&s->runs);
    cs_run_keys_close(&s->run_keys);
    cs_exit_watch_close(&s->exits);
    cs_later_close(s);
    cs_pump_close(s);
}
