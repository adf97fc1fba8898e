/* dispatch: attempt transitions, from a run's start to its attempt's end,
 * and a run taken over after a restart. Each transition updates the run's
 * message, the slot counts and the queues, writes the rows and emits the
 * events, all in the same loop turn so they commit together. Below it: the
 * run's own records (dispatch_run.c), the pump (which calls back to start a
 * run), attempts (which call back when a minder was adopted or has ended),
 * retries, and the launcher. Loop thread only. */
#define CS_LOG_COMPONENT "dispatch"
#include "dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ahead_dir.h"
#include "attempt.h"
#include "attempt_tail.h"
#include "dispatch_run.h"
#include "event.h"
#include "job.h"
#include "job_table.h"
#include "later.h"
#include "launch_build.h"
#include "log.h"
#include "minder_contract.h"
#include "placement.h"
#include "pump.h"
#include "remote_attempt.h"
#include "retry.h"
#include "run_array.h"
#include "util.h"
#include "worker.h"

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
    .launch_ahead_cb = cs_launcher_submit_ahead,
    .revoke_cb = cs_launcher_revoke,
    .may_start_cb = cs_store_may_start,
    .may_run_placed_cb = cs_store_may_run_placed,
    .attempt_tail_put_cb = cs_store_attempt_tail_put,
};

static Csched__V1__Attempt *attempt_msg(struct cs_attempt *att)
{
    return att->run->msg->attempts[att->number - 1];
}

/* Writes the attempt's row and emits its event: as it happens, or, when
 * recovered, as a restart found it (at its end as the note gives it, else
 * now, cs_attempt_apply_note). */
static void put_attempt(struct cs_sched *s, struct cs_run *run, const Csched__V1__Attempt *msg,
                        const char *dir, bool recovered)
{
    s->ops->attempt_put_cb(s->store, run->msg->id, msg, dir, NULL, NULL);
    if (recovered)
        cs_event_emit_recovered(s, run, msg, msg->state, msg->ended_unix_ms);
    else
        cs_event_emit(s, run, msg, NULL, NULL);
}

/* The directory recorded with att: none for one on another replica's
 * machine, whose own state dir holds it where a takeover by that replica
 * finds it without being told. */
static const char *recorded_dir(const struct cs_attempt *att)
{
    return att->remote_replica[0] != '\0' ? "" : att->dir;
}

static void write_attempt(struct cs_sched *s, struct cs_run *run, struct cs_attempt *att)
{
    put_attempt(s, run, attempt_msg(att), recorded_dir(att), false);
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
    if (att->room == NULL)
        att->room = s->rooms[0]; /* this machine's */
    att->room->placed++;
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
    CS_ASSERT(att->room->placed > 0);
    att->room->placed--;
    cs_pump_job_changed(s, job);
}

/* The launch of att, whose minder starts at start_ms: a time still to
 * come makes it held until then (launcher.h). */
static struct cs_launch *launch_new(struct cs_sched *s, struct cs_attempt *att, int64_t start_ms)
{
    struct cs_launch *launch = cs_launch_build(s, att->run, att->number, att->dir, start_ms);
    /* A directory made ahead here is no use to another replica's machine. */
    if (att->remote_replica[0] != '\0')
        cs_ahead_dir_drop(s, att->run);
    else
        launch->ahead_dir = cs_ahead_dir_take(s, att->run, att->number, &launch->ahead_dir_made);
    launch->due_unix_ms = start_ms > cs_now_unix_ms() ? start_ms : 0;
    launch->owner = att;
    return launch;
}

/* Why a launch is taken back before its start, and what its attempt says. */
enum take_back_why { TAKE_BACK_CANCEL = 1, TAKE_BACK_PAUSE };

static const char *const take_back_message[] = {
    [TAKE_BACK_CANCEL] = "cancelled before its minder started",
    [TAKE_BACK_PAUSE] = CS_SLOT_RUN_PAUSED_MESSAGE,
};

/* Ends att, whose launch was taken back, CANCELLED, its command never
 * run; returns its run, left without an attempt. */
static struct cs_run *end_unstarted(struct cs_sched *s, struct cs_attempt *att,
                                    enum take_back_why why)
{
    struct cs_run *run = att->run;
    Csched__V1__Attempt *a = attempt_msg(att);
    a->ended_unix_ms = cs_now_unix_ms();
    cs_message_set_str(&a->message, take_back_message[why]);
    cs_sched_set_attempt_state(run->msg, a, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    write_attempt(s, run, att);
    give_slot(s, att);
    run->attempt = NULL;
    cs_attempt_free(att);
    return run;
}

/* Ends a run whose launch was taken back, as why says: cancelled
 * unstarted, its slot skipped PAUSED after a pause. */
static void end_run_taken_back(struct cs_sched *s, struct cs_run *run, enum take_back_why why)
{
    if (why == TAKE_BACK_PAUSE)
        cs_dispatch_skip_slot_run(s, run, CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED,
                                  CS_SLOT_PAUSED_MESSAGE, CS_SLOT_RUN_PAUSED_MESSAGE);
    else
        (void)cs_dispatch_cancel_unstarted(s, run, NULL, NULL, false);
}

/* Takes att's launch back from the launcher if its minder has not started
 * (cs_launcher_revoke). DONE: nothing of it ran, and the attempt has ended,
 * its run left without one for the caller to end. PENDING: the launch
 * comes back unstarted, and then both end as why says. TOO_LATE: its
 * minder is on its way, to be stopped once it runs. */
static enum cs_revoke take_back(struct cs_sched *s, struct cs_attempt *att, enum take_back_why why)
{
    if (att->launch_unsent) {
        /* Its start has not committed yet: the launcher never had it. */
        att->launch_unsent = false;
        cs_launch_free(att->launch);
        att->launch = NULL;
        (void)end_unstarted(s, att, why);
        return CS_REVOKE_DONE;
    }
    /* A launch sent to another replica is its own now. */
    if (att->launch == NULL || s->ops->revoke_cb == NULL || att->remote != NULL)
        return CS_REVOKE_TOO_LATE;
    enum cs_revoke rc = s->ops->revoke_cb(s->launcher, att->launch);
    if (rc == CS_REVOKE_PENDING) {
        att->taking_back = why;
    } else if (rc == CS_REVOKE_DONE) {
        cs_launch_free(att->launch);
        att->launch = NULL;
        (void)end_unstarted(s, att, why);
    }
    return rc;
}

/* Which attempt's start was waited for (struct cs_sched's
 * lease_path), found again by its run's id once the start has
 * committed: it may have been taken back meanwhile. */
struct start_commit {
    struct cs_sched *s;
    int64_t run_id;
    uint32_t number;
};

static void start_committed_cb(void *arg, int status)
{
    struct start_commit *c = arg;
    struct cs_sched *s = c->s;
    struct cs_run *run = cs_idmap_get(&s->runs, c->run_id);
    struct cs_attempt *att = run != NULL ? run->attempt : NULL;
    bool same = att != NULL && att->number == c->number && att->launch_unsent;
    free(c);
    if (!same)
        return;
    att->launch_unsent = false;
    if (status != 0) {
        att->launch->err = status;
        (void)snprintf(att->launch->message, sizeof(att->launch->message),
                       "the attempt's start could not be recorded in the database (%s): its "
                       "command was not started",
                       strerror(-status));
        cs_dispatch_launch_done_cb(att->launch, s);
        return;
    }
    if (att->remote_replica[0] != '\0')
        cs_remote_launch(s, att, cs_dispatch_launch_done_cb);
    else
        s->ops->launch_cb(s->launcher, att->launch);
}

/* Where att runs: the room with the most free places (placement.h); an
 * attempt placed on another replica's machine says which. */
static void place(struct cs_sched *s, struct cs_attempt *att)
{
    /* The pump starts a run only while the rooms that take attempts have
     * fewer than their places together (cs_placement_limit). A run with its
     * directory made ahead here (and its minder started ahead) stays here
     * while this machine has room. */
    struct cs_room *self = s->rooms[0];
    bool ahead = att->run->ahead != CS_AHEAD_NONE && att->run->ahead_number == att->number;
    att->room = ahead && self->placed < self->max_running ? self : cs_placement_choose(s);
    CS_ASSERT(att->room != NULL);
    if (s->lease_path != NULL)
        cs_message_set_str(&attempt_msg(att)->replica, att->room->id);
    if (!att->room->self)
        (void)snprintf(att->remote_replica, sizeof(att->remote_replica), "%s", att->room->id);
}

/* The pump's start callback: the run, off its queue, takes its slots and
 * its next attempt goes to the launcher; but a retry that waited for a slot
 * until past the run's deadline ends the run instead, and so does a slot's
 * run its slot may no longer start. */
static void start_cb(struct cs_sched *s, struct cs_run *run)
{
    if (cs_dispatch_end_slot_run_unstartable(s, run))
        return;
    int64_t deadline = cs_retry_deadline_unix_ms(run);
    if (deadline != 0 && run->msg->n_attempts > 0 && cs_now_unix_ms() >= deadline) {
        const Csched__V1__Attempt *last = run->msg->attempts[run->msg->n_attempts - 1];
        run->retry_delay_ms = 0;
        cs_dispatch_end_after(s, run, last, last->state, true);
        return;
    }
    /* Let go before its not_before (later.h), it starts then. */
    int64_t now_ms = cs_now_unix_ms();
    int64_t start_ms =
        run->msg->not_before_unix_ms > now_ms ? run->msg->not_before_unix_ms : now_ms;
    struct cs_attempt *att = attempt_new(s, run);
    place(s, att);
    take_slot(s, att);
    cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    /* The spawn's time, in the metrics, counts from then too. */
    run->starting_ns += (start_ms - now_ms) * 1000000;
    if (run->msg->started_unix_ms == 0)
        run->msg->started_unix_ms = start_ms;
    s->runs_started++;
    att->launch = launch_new(s, att, start_ms);
    if (s->lease_path == NULL) {
        cs_dispatch_write_run(s, run, NULL, NULL);
        write_attempt(s, run, att);
        s->ops->launch_cb(s->launcher, att->launch);
        return;
    }
    struct start_commit *c = cs_xmalloc(sizeof(*c));
    *c = (struct start_commit){s, run->msg->id, att->number};
    att->launch_unsent = true;
    cs_dispatch_write_run(s, run, start_committed_cb, c);
    write_attempt(s, run, att);
}

Csched__V1__Run *cs_dispatch_cancel(struct cs_sched *s, struct cs_run *run, cs_store_done_cb cb,
                                    void *arg)
{
    CS_ASSERT_LOOP();
    if (run->attempt == NULL || take_back(s, run->attempt, TAKE_BACK_CANCEL) == CS_REVOKE_DONE) {
        /* Queued, waiting to retry, or held for its due time: nothing runs, so it ends now. */
        if (run->queued)
            cs_pump_dequeue(s, run);
        cs_later_remove(s, run);
        return cs_dispatch_cancel_unstarted(s, run, cb, arg, true);
    }
    run->msg->cancel_requested = true;
    /* A minder still being launched is told as soon as it runs; a failure
     * to tell a running one is logged, and it ends as it would have. */
    (void)cs_attempt_cancel(run->attempt);
    s->ops->run_put_cb(s->store, run->msg, cb, arg);
    return (Csched__V1__Run *)cs_message_copy(&run->msg->base);
}

void cs_dispatch_job_paused(struct cs_sched *s, struct cs_job *job)
{
    CS_ASSERT_LOOP();
    struct cs_run **held = cs_xcalloc(job->active + 1, sizeof(*held));
    size_t n = 0, pos = 0;
    void *value;

    /* Collected first: each one ended leaves the map. */
    while (n < job->active && cs_idmap_next(&s->runs, &pos, &value) != 0) {
        struct cs_run *run = value;
        if (run->job == job && cs_dispatch_slot_start_held(run) &&
            run->attempt->launch->due_unix_ms >= job->spec->paused_unix_ms)
            held[n++] = run;
    }
    for (size_t i = 0; i < n; i++)
        if (take_back(s, held[i]->attempt, TAKE_BACK_PAUSE) == CS_REVOKE_DONE)
            end_run_taken_back(s, held[i], TAKE_BACK_PAUSE);
    free(held);
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
        cs_dispatch_write_run(s, run, NULL, NULL);
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
    if (launch->placed) {
        cs_worker_launch_done(s, launch);
        return;
    }
    struct cs_attempt *att = launch->owner;
    att->launch = NULL;
    if (launch->err == -ECANCELED && att->taking_back != 0) {
        cs_launch_free(launch);
        enum take_back_why why = (enum take_back_why)att->taking_back;
        end_run_taken_back(s, end_unstarted(s, att, why), why);
        return;
    }
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
    att->is_child = att->remote == NULL;
    int64_t started = launch->started_unix_ms;
    cs_launch_free(launch);
    attempt_running(s, att, started);
}

/* --- after a restart -------------------------------------------------- */

/* What a restart recovers of attempt a, found in the state dir, before its
 * end or its adoption is recorded: the states it went through that the
 * store never heard of, so that its history on Watch is a path through the
 * state machine. STARTING if the store had no record of it (known false),
 * RUNNING if it had at most that and its minder ran (it left note, NULL if
 * none); each at the command's start as the note says, else now. */
static void recover_passed(struct cs_sched *s, struct cs_run *run, const Csched__V1__Attempt *a,
                           bool known, const struct cs_note *note)
{
    int64_t at = note != NULL ? note->started_unix_ms : 0;
    if (!known)
        cs_event_emit_recovered(s, run, a, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING, at);
    if (note != NULL && a->state == CSCHED__V1__RUN_STATE__RUN_STATE_STARTING)
        cs_event_emit_recovered(s, run, a, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, at);
}

/* The note of the first attempt adoption found, or NULL without one. */
static const struct cs_note *first_found_note(const struct cs_attempt *att)
{
    if (att->n_earlier > 0)
        return att->earlier[0].note_rc == 0 ? &att->earlier[0].note : NULL;
    return att->note_rc == 0 ? &att->note : NULL;
}

/* After a restart, once adoption has told the last attempt apart: a run the
 * store had as QUEUED started what was found, and takes its slot now (which
 * the minder's end gives back); the attempts before the last one become
 * records; each found attempt's passed states are recovered before its end
 * (the last one's end or adoption is the caller's to record). */
static void resume_settle(struct cs_attempt *att)
{
    struct cs_sched *s = att->sched;
    struct cs_run *run = att->run;
    if (!att->found_by_restart)
        return;
    uint32_t known = (uint32_t)run->msg->n_attempts;
    if (run->msg->state == CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED) {
        const struct cs_note *note = first_found_note(att);
        take_slot(s, att);
        cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
        s->ops->run_put_cb(s->store, run->msg, NULL, NULL);
        cs_event_emit_recovered(s, run, NULL, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING,
                                note != NULL ? note->started_unix_ms : 0);
    }
    uint32_t first = att->number - att->n_earlier;
    for (uint32_t i = 0; i < att->n_earlier; i++) {
        uint32_t number = first + i;
        const struct cs_attempt_end *end = &att->earlier[i];
        Csched__V1__Attempt *a =
            number <= known ? run->msg->attempts[number - 1] : cs_run_attempt_add(run->msg);
        char dir[4096];
        recover_passed(s, run, a, number <= known, end->note_rc == 0 ? &end->note : NULL);
        cs_sched_set_attempt_state(run->msg, a, cs_attempt_apply_earlier(att, i, a));
        (void)cs_minder_dir_format(dir, sizeof(dir), s->state_dir, run->msg->id, number);
        put_attempt(s, run, a, dir, true);
    }
    att->n_earlier = 0;
    while (run->msg->n_attempts < att->number)
        (void)cs_run_attempt_add(run->msg);
    recover_passed(s, run, attempt_msg(att), att->number <= known,
                   att->note_rc == 0 ? &att->note : NULL);
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
        /* Unless the one that found it said why (remote_attempt.h). */
        if (strncmp(att->note.message, CS_ATTEMPT_NEVER_STARTED_PREFIX,
                    strlen(CS_ATTEMPT_NEVER_STARTED_PREFIX)) != 0)
            (void)snprintf(att->note.message, sizeof(att->note.message), "%s",
                           CS_ATTEMPT_NEVER_STARTED_MESSAGE);
        attempt_ended_cb(att);
        return;
    }
    give_slot(s, att);
    run->attempt = NULL;
    cs_attempt_free(att);
    if (run->msg->cancel_requested)
        (void)cs_dispatch_cancel_unstarted(s, run, NULL, NULL, false);
    else
        cs_later_enqueue(s, run);
}

static void attempt_adopted_cb(struct cs_attempt *att)
{
    resume_settle(att);
    att->found_by_restart = false; /* from now on it is seen as it goes */
    cs_log_info("adopted minder %d of run %lld attempt %u", (int)att->pid,
                (long long)att->run->msg->id, att->number);
    attempt_running(att->sched, att, cs_now_unix_ms());
}

/* --- ending -------------------------------------------------------------- */

/* Puts run (QUEUED, off its queue) back on its job's queue once its wait
 * (run->retry_delay_ms, from now) is over, or at once when there is none:
 * sets its not_before, to be written with the run. A cancel takes it out
 * with cs_later_remove. */
static void schedule_retry(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT(!run->queued && !cs_later_is_waiting(run));
    if (run->retry_delay_ms > 0)
        run->msg->not_before_unix_ms = cs_now_unix_ms() + run->retry_delay_ms;
    cs_later_enqueue(s, run);
}

/* Back to QUEUED, to start again once its backoff has passed: the row
 * written carries the time, so a restart keeps the wait. */
static void retry_run(struct cs_sched *s, struct cs_run *run)
{
    cs_sched_set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    schedule_retry(s, run);
    cs_dispatch_write_run(s, run, NULL, NULL);
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
    put_attempt(s, run, a, recorded_dir(att), att->found_by_restart);
    (void)cs_attempt_tail_keep(s, att, a, NULL);
    give_slot(s, att);
    run->attempt = NULL;
    cs_attempt_free(att);

    if (verdict == CS_RETRY_YES)
        retry_run(s, run);
    else
        cs_dispatch_end_after(s, run, a, state, verdict == CS_RETRY_PAST_DEADLINE);
}

/* --- resume, life ------------------------------------------------------- */

/* How long past a remote attempt's deadline it still counts: its minder's
 * stop (the job's kill grace, the leftovers' grace, the drain of its
 * output) and what two machines' clocks may drift apart over a lease
 * (1 %, and a second). docs/operations.md, "Replicas", has the timeline. */
static uint64_t remote_margin_ms(const struct cs_sched *s, const struct cs_job *job)
{
    return cs_job_kill_grace_ms(job->spec) + CS_MINDER_LEFTOVER_GRACE_MS + CS_MINDER_DRAIN_MS +
           (uint64_t)s->attempt_lease_ms / 100 + 1000;
}

/* The attempt the snapshot says another replica's machine runs: nothing of
 * it is here to adopt, and no attempts of it are on this state dir. It
 * holds its slot until its minder has stopped it by itself. */
static void await_remote(struct cs_sched *s, struct cs_attempt *att,
                         const struct cs_store_remote_attempt *remote)
{
    uint64_t wait_ms = (uint64_t)remote->wait_ms + remote_margin_ms(s, att->run->job);
    att->found_by_restart = false;
    cs_log_warn("run %lld attempt %u ran on replica %s, whose lease ran out: it counts against "
                "the limits until its minder has stopped it, in %llu ms",
                (long long)att->run->msg->id, att->number, remote->replica,
                (unsigned long long)wait_ms);
    int rc = cs_attempt_await_remote(att, wait_ms, remote->replica);
    if (rc != 0) {
        cs_log_error("run %lld attempt %u: no timer for its deadline (%s): taken for lost now",
                     (long long)att->run->msg->id, att->number, uv_strerror(rc));
        att->note_rc = -ENOENT;
        attempt_ended_cb(att);
    }
}

void cs_dispatch_resume(struct cs_sched *s, Csched__V1__Run *msg, const char *attempt_dir,
                        const struct cs_store_remote_attempt *remote)
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
    struct cs_run *run = cs_dispatch_run_new(s, job, msg);
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
        /* It may be running: it holds its place in its array until it ends. */
        cs_run_array_count_started(s, run);
        first--;
    }
    if (attempt_dir != NULL && first == msg->n_attempts)
        (void)snprintf(dir, sizeof(dir), "%s", attempt_dir);
    else
        (void)cs_minder_dir_format(dir, sizeof(dir), s->state_dir, msg->id, first);
    run->attempt = cs_attempt_new(s, run, first, dir, &attempt_ops);
    run->attempt->found_by_restart = true;
    run->attempt->recorded = first <= msg->n_attempts;
    /* On another replica's machine (placed there, or the machine of a
     * replica that was active before): that replica is asked for its end,
     * and once it is gone, its deadline tells (remote_attempt.h). This id's
     * earlier state directory is nobody's to ask. */
    bool elsewhere = remote != NULL && remote->number == first &&
                     run->msg->state != CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED;
    bool asked = elsewhere && strcmp(remote->replica, s->rooms[0]->id) != 0;
    if (asked) {
        run->attempt->room = cs_placement_room(s, remote->replica);
        (void)snprintf(run->attempt->remote_replica, sizeof(run->attempt->remote_replica), "%s",
                       remote->replica);
    }
    /* Its minder may still be alive: it counts until adoption says. */
    if (run->msg->state != CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED)
        take_slot(s, run->attempt);
    if (asked) {
        run->attempt->found_by_restart = false;
        cs_log_info("run %lld attempt %u runs on replica %s: asking it for the attempt's end",
                    (long long)msg->id, first, remote->replica);
        cs_remote_resume(run->attempt, remote->wait_ms);
    } else if (elsewhere) {
        await_remote(s, run->attempt, remote);
    } else {
        cs_attempt_adopt(run->attempt);
    }
}

int cs_dispatch_init(struct cs_sched *s, const struct cs_sched_ops *ops)
{
    CS_ASSERT_LOOP();
    s->ops = ops;
    cs_idmap_init(&s->runs);
    cs_placement_init(s);
    cs_ended_runs_init(&s->ended_runs, CS_ENDED_RUNS_BYTES);
    cs_run_keys_init(&s->run_keys);
    cs_idmap_init(&s->arrays);
    int rc = cs_pump_init(s, start_cb);
    if (rc != 0)
        goto err_close_maps;
    rc = cs_later_init(s);
    if (rc != 0)
        goto err_close_pump;
    rc = cs_exit_watch_init(s->loop, &s->exits, cs_attempt_exit_cb);
    if (rc != 0)
        goto err_close_later;
    rc = cs_remote_init(s);
    if (rc != 0)
        goto err_close_exits;
    return 0;

err_close_exits:
    cs_exit_watch_close(&s->exits);
err_close_later:
    cs_later_close(s);
err_close_pump:
    cs_pump_close(s);
err_close_maps:
    cs_run_array_close(s);
    cs_run_keys_close(&s->run_keys);
    cs_ended_runs_close(&s->ended_runs);
    cs_idmap_close(&s->runs);
    return rc;
}

void cs_dispatch_close(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    void *value;
    cs_ahead_dir_close(s);
    cs_attempt_tail_close(s);
    for (size_t pos = 0; cs_idmap_next(&s->runs, &pos, &value) != 0;) {
        struct cs_run *run = value;
        if (run->attempt != NULL && run->attempt->launch_unsent)
            cs_launch_free(run->attempt->launch);
        if (run->attempt != NULL)
            cs_attempt_free(run->attempt);
        protobuf_c_message_free_unpacked(&run->msg->base, NULL);
        free(run);
    }
    cs_idmap_close(&s->runs);
    cs_run_array_close(s);
    cs_ended_runs_close(&s->ended_runs);
    cs_run_keys_close(&s->run_keys);
    cs_exit_watch_close(&s->exits);
    cs_remote_close(s);
    cs_later_close(s);
    cs_pump_close(s);
    cs_placement_close(s);
}
