/* dispatch: run and attempt transitions. Each transition updates the run's
 * message, the slot counts and the queues, writes the rows and emits the
 * events, all in the same loop turn so they commit together. */
#define CS_LOG_COMPONENT "dispatch"
#include "dispatch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attempt.h"
#include "env.h"
#include "event.h"
#include "job.h"
#include "log.h"
#include "pump.h"
#include "util.h"

/* How long a minder gives a command between TERM and KILL. */
#define KILL_GRACE_MS 10000
/* How long a minder still drains output once its command has ended (its
 * DRAIN_MS). */
#define MINDER_DRAIN_MS 1000
/* A minder ends by its job's timeout, plus the kill grace, plus the drain,
 * plus writing its note. Past that and this margin, something is wrong with
 * the minder itself, and the server kills it. */
#define BACKSTOP_MARGIN_MS 5000

struct cs_backoff {
    uv_timer_t timer;
    struct cs_sched *sched;
    struct cs_run *run;
};

static void set_str(char **field, const char *value)
{
    if (*field != NULL && *field != protobuf_c_empty_string)
        free(*field);
    *field = cs_xstrdup(value);
}

/* Moves run to state, keeping the per-state counts right. */
static void set_run_state(struct cs_sched *s, struct cs_run *run, Csched__V1__RunState state)
{
    switch (run->msg->state) {
    case CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED:
        s->queued--;
        break;
    case CSCHED__V1__RUN_STATE__RUN_STATE_STARTING:
        s->starting--;
        break;
    case CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING:
        s->running--;
        break;
    default:
        break;
    }
    run->msg->state = state;
    switch (state) {
    case CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED:
        s->queued++;
        break;
    case CSCHED__V1__RUN_STATE__RUN_STATE_STARTING:
        s->starting++;
        break;
    case CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING:
        s->running++;
        break;
    default:
        break;
    }
}

static void write_run(struct cs_sched *s, struct cs_run *run, cs_store_done_cb cb, void *arg)
{
    cs_store_run_put(s->store, run->msg, NULL, NULL);
    cs_event_emit(s, run, NULL, cb, arg);
}

static void write_attempt(struct cs_sched *s, struct cs_run *run, struct cs_attempt *att)
{
    const Csched__V1__Attempt *msg = run->msg->attempts[att->number - 1];
    cs_store_attempt_put(s->store, run->msg->id, msg, att->dir, NULL, NULL);
    cs_event_emit(s, run, msg, NULL, NULL);
}

static Csched__V1__Attempt *attempt_msg(struct cs_attempt *att)
{
    return att->run->msg->attempts[att->number - 1];
}

static struct cs_run *run_new(struct cs_sched *s, struct cs_job *job, Csched__V1__Run *msg)
{
    struct cs_run *run = cs_xcalloc(1, sizeof(*run));
    run->msg = msg;
    run->job = job;
    job->active++;
    cs_idmap_put(&s->runs, msg->id, run);
    cs_run_keys_add(&s->run_keys, run);
    return run;
}

/* The run has reached a terminal state and its rows are written: forget it. */
static void run_retire(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT(run->attempt == NULL && !run->queued && run->backoff == NULL);
    run->job->active--;
    s->runs_finished++;
    CS_ASSERT(cs_idmap_remove(&s->runs, run->msg->id) == run);
    cs_run_keys_remove(&s->run_keys, run);
    protobuf_c_message_free_unpacked(&run->msg->base, NULL);
    free(run);
}

/* Moves run to a terminal state and forgets it; returns a copy of its final
 * message if want_copy. */
static Csched__V1__Run *finish_run(struct cs_sched *s, struct cs_run *run,
                                   Csched__V1__RunState state, int64_t ended_unix_ms,
                                   cs_store_done_cb cb, void *arg, bool want_copy)
{
    set_run_state(s, run, state);
    run->msg->ended_unix_ms = ended_unix_ms;
    /* cancel_requested means "being stopped": an ended run is past that. */
    run->msg->cancel_requested = false;
    write_run(s, run, cb, arg);
    Csched__V1__Run *copy = want_copy ? (Csched__V1__Run *)cs_message_copy(&run->msg->base) : NULL;
    run_retire(s, run);
    return copy;
}

struct cs_run *cs_dispatch_trigger(struct cs_sched *s, struct cs_job *job,
                                   const Csched__V1__TriggerJobRequest *request,
                                   cs_store_done_cb cb, void *arg)
{
    Csched__V1__Run *msg = cs_xmalloc(sizeof(*msg));
    csched__v1__run__init(msg);
    msg->id = s->next_run_id++;
    msg->job_name = cs_xstrdup(job->spec->name);
    msg->idempotency_key = cs_xstrdup(request->idempotency_key);
    msg->created_unix_ms = cs_now_unix_ms();
    msg->message = cs_xstrdup("");
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
    set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    write_run(s, run, cb, arg);
    cs_pump_enqueue(s, run);
    return run;
}

/* --- starting ------------------------------------------------------------ */

static char *format_u64(uint64_t v)
{
    char buf[24];
    (void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    return cs_xstrdup(buf);
}

static char **minder_argv(struct cs_sched *s, const Csched__V1__Job *spec, const char *dir)
{
    size_t n_cmd = spec->n_command > 0 ? spec->n_command : 3;
    char **argv = cs_xcalloc(12 + n_cmd + 1, sizeof(*argv));
    size_t k = 0;
    argv[k++] = cs_xstrdup(s->minder_path);
    argv[k++] = cs_xstrdup("-d");
    argv[k++] = cs_xstrdup(dir);
    if (spec->timeout_seconds > 0) {
        argv[k++] = cs_xstrdup("-t");
        argv[k++] = format_u64((uint64_t)spec->timeout_seconds * 1000);
    }
    argv[k++] = cs_xstrdup("-g");
    argv[k++] = format_u64(KILL_GRACE_MS);
    if (spec->working_dir[0] != '\0') {
        argv[k++] = cs_xstrdup("-C");
        argv[k++] = cs_xstrdup(spec->working_dir);
    }
    argv[k++] = cs_xstrdup("--");
    if (spec->n_command > 0) {
        for (size_t i = 0; i < spec->n_command; i++)
            argv[k++] = cs_xstrdup(spec->command[i]);
    } else {
        argv[k++] = cs_xstrdup("/bin/sh");
        argv[k++] = cs_xstrdup("-c");
        argv[k++] = cs_xstrdup(spec->shell);
    }
    argv[k] = NULL;
    return argv;
}

static char **command_env(struct cs_sched *s, const struct cs_run *run, uint32_t attempt)
{
    char run_id[24], number[12];
    (void)snprintf(run_id, sizeof(run_id), "%lld", (long long)run->msg->id);
    (void)snprintf(number, sizeof(number), "%u", attempt);
    struct cs_kv vars[3] = {
        {.key = "CSCHED_RUN_ID", .value = run_id},
        {.key = "CSCHED_JOB_NAME", .value = run->msg->job_name},
        {.key = "CSCHED_ATTEMPT", .value = number},
    };
    struct cs_kv *var_ptrs[3] = {&vars[0], &vars[1], &vars[2]};
    const struct cs_env_source sources[] = {
        {(struct cs_kv *const *)run->job->spec->env, run->job->spec->n_env},
        {(struct cs_kv *const *)run->msg->env, run->msg->n_env},
        {var_ptrs, 3},
    };
    return cs_env_build(s->base_env, sources, CS_ARRAY_LEN(sources));
}

static struct cs_attempt *attempt_new(struct cs_sched *s, struct cs_run *run)
{
    Csched__V1__Run *msg = run->msg;
    uint32_t number = (uint32_t)msg->n_attempts + 1;
    msg->attempts = cs_xrealloc(msg->attempts, number * sizeof(*msg->attempts));
    Csched__V1__Attempt *a = cs_xmalloc(sizeof(*a));
    csched__v1__attempt__init(a);
    a->number = number;
    a->state = CSCHED__V1__RUN_STATE__RUN_STATE_STARTING;
    a->message = cs_xstrdup("");
    msg->attempts[number - 1] = a;
    msg->n_attempts = number;

    struct cs_attempt *att = cs_xcalloc(1, sizeof(*att));
    att->sched = s;
    att->run = run;
    att->number = number;
    att->pidfd = -1;
    char dir[4096];
    (void)snprintf(dir, sizeof(dir), "%s/attempts/%lld-%u", s->state_dir, (long long)msg->id,
                   number);
    att->dir = cs_xstrdup(dir);
    run->attempt = att;
    return att;
}

/* Gives back a job's slot once its run has left STARTING/RUNNING, so the
 * global count is already down when the pump looks. */
static void release_slot(struct cs_sched *s, struct cs_job *job)
{
    CS_ASSERT(job->slots > 0);
    job->slots--;
    cs_pump_job_changed(s, job);
}

void cs_dispatch_start(struct cs_sched *s, struct cs_run *run)
{
    struct cs_attempt *att = attempt_new(s, run);
    run->job->slots++;
    set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    if (run->msg->started_unix_ms == 0)
        run->msg->started_unix_ms = cs_now_unix_ms();
    s->runs_started++;
    write_run(s, run, NULL, NULL);
    write_attempt(s, run, att);

    struct cs_launch *launch = cs_xcalloc(1, sizeof(*launch));
    launch->dir = cs_xstrdup(att->dir);
    launch->argv = minder_argv(s, run->job->spec, att->dir);
    launch->envp = command_env(s, run, att->number);
    launch->owner = att;
    cs_launcher_submit(s->launcher, launch);
}

/* The minder is running (started by us or found after a restart). */
static void attempt_running(struct cs_sched *s, struct cs_attempt *att, int64_t started_unix_ms)
{
    struct cs_run *run = att->run;
    Csched__V1__Attempt *a = attempt_msg(att);
    a->state = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
    a->minder_pid = (int32_t)att->pid;
    if (a->started_unix_ms == 0)
        a->started_unix_ms = started_unix_ms;
    write_attempt(s, run, att);
    if (run->msg->state != CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING) {
        set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
        write_run(s, run, NULL, NULL);
    }
    int64_t deadline = 0;
    if (run->job->spec->timeout_seconds > 0)
        deadline = a->started_unix_ms + (int64_t)run->job->spec->timeout_seconds * 1000 +
                   KILL_GRACE_MS + MINDER_DRAIN_MS + BACKSTOP_MARGIN_MS;
    int rc = cs_attempt_watch(att, deadline);
    if (rc != 0) {
        /* Without a watch the end would never be seen: treat it as lost. */
        cs_log_error("watching the pidfd of minder %d failed: %s", (int)att->pid, strerror(-rc));
        att->note_rc = -EIO;
        cs_dispatch_attempt_ended(att);
        return;
    }
    if (run->msg->cancel_requested && kill(att->pid, SIGTERM) != 0)
        cs_log_warn("kill(%d, SIGTERM) failed: %s", (int)att->pid, strerror(errno));
}

void cs_dispatch_launched(struct cs_launch *launch, void *ctx)
{
    struct cs_sched *s = ctx;
    struct cs_attempt *att = launch->owner;
    if (launch->err != 0) {
        cs_log_error("attempt %s: %s", att->dir, launch->message);
        att->note_rc = launch->err;
        att->launch_failed = true;
        struct cs_note *note = &att->note;
        memset(note, 0, sizeof(*note));
        (void)snprintf(note->message, sizeof(note->message), "%s", launch->message);
        if (launch->pid > 0) {
            /* Spawned but not watchable: stop it rather than run unseen. */
            (void)kill(launch->pid, SIGKILL);
        }
        cs_launch_free(launch);
        cs_dispatch_attempt_ended(att);
        return;
    }
    att->pid = launch->pid;
    att->pidfd = launch->pidfd;
    att->is_child = true;
    int64_t started = launch->started_unix_ms;
    cs_launch_free(launch);
    attempt_running(s, att, started);
}

void cs_dispatch_attempt_adopted(struct cs_attempt *att)
{
    cs_log_info("adopted minder %d of run %lld attempt %u", (int)att->pid,
                (long long)att->run->msg->id, att->number);
    attempt_running(att->sched, att, cs_now_unix_ms());
}

/* --- ending -------------------------------------------------------------- */

/* Fills the attempt's message from its note; returns the attempt's state. */
static Csched__V1__RunState apply_note(struct cs_attempt *att)
{
    Csched__V1__Attempt *a = attempt_msg(att);
    const struct cs_note *note = &att->note;
    a->ended_unix_ms = cs_now_unix_ms();
    if (att->note_rc != 0) {
        if (note->message[0] != '\0')
            set_str(&a->message, note->message);
        else if (att->backstop_fired)
            set_str(&a->message, "the minder did not end within the job's timeout and the kill "
                                 "grace; cschedd killed it and its command");
        else if (att->note_rc == -ENOENT)
            set_str(&a->message, "the minder ended without writing a status note");
        else {
            char msg[200];
            (void)snprintf(msg, sizeof(msg), "the status note could not be read: %s",
                           strerror(-att->note_rc));
            set_str(&a->message, msg);
        }
        return att->launch_failed ? CSCHED__V1__RUN_STATE__RUN_STATE_FAILED
                                  : CSCHED__V1__RUN_STATE__RUN_STATE_LOST;
    }
    if (note->ended_unix_ms > 0)
        a->ended_unix_ms = note->ended_unix_ms;
    a->user_cpu_ms = note->user_cpu_ms;
    a->system_cpu_ms = note->system_cpu_ms;
    a->max_rss_kb = note->max_rss_kb;
    set_str(&a->message, note->message);
    if (note->term_signal != 0) {
        a->outcome_case = CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL;
        a->term_signal = note->term_signal;
    } else {
        a->outcome_case = CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE;
        a->exit_code = note->exit_code;
    }
    switch (note->outcome) {
    case CS_NOTE_EXITED:
        return note->exit_code == 0 ? CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED
                                    : CSCHED__V1__RUN_STATE__RUN_STATE_FAILED;
    case CS_NOTE_TIMED_OUT:
        return CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT;
    case CS_NOTE_CANCELLED:
        return CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED;
    case CS_NOTE_SIGNALED:
    case CS_NOTE_START_FAILED:
    default:
        return CSCHED__V1__RUN_STATE__RUN_STATE_FAILED;
    }
}

static void on_backoff_closed(uv_handle_t *handle)
{
    free(handle->data);
}

static void backoff_end(struct cs_run *run)
{
    struct cs_backoff *b = run->backoff;
    run->backoff = NULL;
    b->timer.data = b;
    uv_close((uv_handle_t *)&b->timer, on_backoff_closed);
}

static void on_backoff(uv_timer_t *timer)
{
    struct cs_backoff *b = (struct cs_backoff *)timer;
    struct cs_run *run = b->run;
    struct cs_sched *s = b->sched;
    backoff_end(run);
    cs_pump_enqueue(s, run);
}

static uint64_t backoff_ms(const Csched__V1__Job *spec, uint32_t failed_attempts)
{
    uint64_t delay = spec->retry_backoff_ms;
    for (uint32_t i = 1; i < failed_attempts && delay < CS_RETRY_BACKOFF_MAX_MS; i++)
        delay *= 2;
    return delay < CS_RETRY_BACKOFF_MAX_MS ? delay : CS_RETRY_BACKOFF_MAX_MS;
}

static void schedule_retry(struct cs_sched *s, struct cs_run *run)
{
    set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    write_run(s, run, NULL, NULL);
    uint64_t delay = backoff_ms(run->job->spec, (uint32_t)run->msg->n_attempts);
    if (delay == 0) {
        cs_pump_enqueue(s, run);
        return;
    }
    struct cs_backoff *b = cs_xcalloc(1, sizeof(*b));
    b->run = run;
    b->sched = s;
    CS_ASSERT(uv_timer_init(s->loop, &b->timer) == 0);
    CS_ASSERT(uv_timer_start(&b->timer, on_backoff, delay, 0) == 0);
    run->backoff = b;
}

/* The run's outcome is its last attempt's. (The oneof case values are field
 * numbers, which differ between the two messages.) */
static void copy_outcome(Csched__V1__Run *run, const Csched__V1__Attempt *a)
{
    if (a->outcome_case == CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE) {
        run->outcome_case = CSCHED__V1__RUN__OUTCOME_EXIT_CODE;
        run->exit_code = a->exit_code;
    } else if (a->outcome_case == CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL) {
        run->outcome_case = CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL;
        run->term_signal = a->term_signal;
    }
}

static uint32_t max_attempts(const Csched__V1__Job *spec)
{
    return spec->max_attempts > 0 ? spec->max_attempts : 1;
}

void cs_dispatch_attempt_ended(struct cs_attempt *att)
{
    struct cs_sched *s = att->sched;
    struct cs_run *run = att->run;
    Csched__V1__RunState state = apply_note(att);
    Csched__V1__Attempt *a = attempt_msg(att);
    a->state = state;
    write_attempt(s, run, att);
    run->attempt = NULL;
    cs_attempt_free(att);

    struct cs_job *job = run->job;
    bool retry = state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED &&
                 state != CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED &&
                 !run->msg->cancel_requested && run->msg->n_attempts < max_attempts(job->spec);
    if (retry) {
        schedule_retry(s, run);
    } else {
        if (run->msg->cancel_requested)
            state = CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED;
        copy_outcome(run->msg, a);
        set_str(&run->msg->message, a->message);
        /* It ended when its last attempt did, which may be before the server
         * heard of it (a minder adopted after a restart). */
        (void)finish_run(s, run, state, a->ended_unix_ms, NULL, NULL, false);
    }
    release_slot(s, job);
}

/* --- cancel and resume ---------------------------------------------------- */

Csched__V1__Run *cs_dispatch_cancel(struct cs_sched *s, struct cs_run *run, cs_store_done_cb cb,
                                    void *arg)
{
    if (run->attempt == NULL) {
        /* Queued, or waiting to retry: nothing runs, so it ends now. */
        if (run->queued)
            cs_pump_dequeue(s, run);
        if (run->backoff != NULL)
            backoff_end(run);
        run->msg->cancel_requested = true;
        set_str(&run->msg->message, "cancelled before it started");
        if (run->msg->n_attempts > 0)
            set_str(&run->msg->message, "cancelled while waiting to retry");
        return finish_run(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, cs_now_unix_ms(), cb,
                          arg, true);
    }
    run->msg->cancel_requested = true;
    struct cs_attempt *att = run->attempt;
    /* A minder still being launched is told as soon as it runs. */
    if (att->pid > 0 && kill(att->pid, SIGTERM) != 0)
        cs_log_warn("kill(%d, SIGTERM) failed: %s", (int)att->pid, strerror(errno));
    cs_store_run_put(s->store, run->msg, cb, arg);
    return (Csched__V1__Run *)cs_message_copy(&run->msg->base);
}

void cs_dispatch_resume(struct cs_sched *s, Csched__V1__Run *msg, const char *attempt_dir)
{
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
    if (state == CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED || msg->n_attempts == 0 ||
        attempt_dir == NULL) {
        set_run_state(s, run, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
        cs_pump_enqueue(s, run);
        return;
    }
    /* Its last attempt was starting or running: find its minder. */
    set_run_state(s, run, state);
    run->job->slots++;
    struct cs_attempt *att = cs_xcalloc(1, sizeof(*att));
    att->sched = s;
    att->run = run;
    att->number = (uint32_t)msg->n_attempts;
    att->pidfd = -1;
    att->dir = cs_xstrdup(attempt_dir);
    att->stored_pid = msg->attempts[msg->n_attempts - 1]->minder_pid;
    run->attempt = att;
    cs_attempt_adopt(att);
}

void cs_dispatch_free_all(struct cs_sched *s)
{
    for (size_t i = 0; i < s->runs.cap; i++) {
        struct cs_run *run = s->runs.slots[i].value;
        if (run == NULL)
            continue;
        if (run->attempt != NULL)
            cs_attempt_free(run->attempt);
        if (run->backoff != NULL)
            backoff_end(run);
        protobuf_c_message_free_unpacked(&run->msg->base, NULL);
        free(run);
    }
    cs_idmap_close(&s->runs);
    cs_run_keys_close(&s->run_keys);
}
