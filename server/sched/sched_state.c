/* sched_state: small facts about run states, the one mapping of the
 * outcome oneof between Attempt, Run and Event (pure functions: any
 * thread), and the two changes of a run's record every transition uses
 * (loop thread). */
#define CS_LOG_COMPONENT "run"
#include "sched_state.h"

#include <string.h>

#include "log.h"
#include "metrics.h"
#include "util.h"

bool cs_run_state_is_terminal(Csched__V1__RunState state)
{
    return state >= CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
}

bool cs_attempt_never_started(const Csched__V1__Attempt *a)
{
    return a->state == CSCHED__V1__RUN_STATE__RUN_STATE_LOST &&
           strncmp(a->message, CS_ATTEMPT_NEVER_STARTED_PREFIX,
                   strlen(CS_ATTEMPT_NEVER_STARTED_PREFIX)) == 0;
}

const char *cs_run_state_proto_name(Csched__V1__RunState state)
{
    static const char *const names[] = {"UNSPECIFIED", "QUEUED",    "STARTING",
                                        "RUNNING",     "SUCCEEDED", "FAILED",
                                        "TIMED_OUT",   "CANCELLED", "LOST"};
    if ((unsigned)state < sizeof(names) / sizeof(names[0]))
        return names[state];
    return "UNKNOWN";
}

struct cs_outcome cs_outcome_of_attempt(const Csched__V1__Attempt *a)
{
    switch (a->outcome_case) {
    case CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE:
        return (struct cs_outcome){CS_OUTCOME_EXIT_CODE, a->exit_code};
    case CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL:
        return (struct cs_outcome){CS_OUTCOME_TERM_SIGNAL, a->term_signal};
    default:
        return (struct cs_outcome){CS_OUTCOME_NONE, 0};
    }
}

struct cs_outcome cs_outcome_of_run(const Csched__V1__Run *run)
{
    switch (run->outcome_case) {
    case CSCHED__V1__RUN__OUTCOME_EXIT_CODE:
        return (struct cs_outcome){CS_OUTCOME_EXIT_CODE, run->exit_code};
    case CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL:
        return (struct cs_outcome){CS_OUTCOME_TERM_SIGNAL, run->term_signal};
    default:
        return (struct cs_outcome){CS_OUTCOME_NONE, 0};
    }
}

/* Each setter leaves the message as it is for CS_OUTCOME_NONE. */
void cs_outcome_set_attempt(Csched__V1__Attempt *a, struct cs_outcome o)
{
    if (o.kind == CS_OUTCOME_EXIT_CODE) {
        a->outcome_case = CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE;
        a->exit_code = o.value;
    } else if (o.kind == CS_OUTCOME_TERM_SIGNAL) {
        a->outcome_case = CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL;
        a->term_signal = o.value;
    }
}

void cs_outcome_set_run(Csched__V1__Run *run, struct cs_outcome o)
{
    if (o.kind == CS_OUTCOME_EXIT_CODE) {
        run->outcome_case = CSCHED__V1__RUN__OUTCOME_EXIT_CODE;
        run->exit_code = o.value;
    } else if (o.kind == CS_OUTCOME_TERM_SIGNAL) {
        run->outcome_case = CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL;
        run->term_signal = o.value;
    }
}

void cs_outcome_set_event(Csched__V1__Event *e, struct cs_outcome o)
{
    if (o.kind == CS_OUTCOME_EXIT_CODE) {
        e->outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
        e->exit_code = o.value;
    } else if (o.kind == CS_OUTCOME_TERM_SIGNAL) {
        e->outcome_case = CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL;
        e->term_signal = o.value;
    }
}

/* The count of runs in state, for the states that are counted. */
static uint32_t *count_of(struct cs_sched *s, Csched__V1__RunState state)
{
    switch (state) {
    case CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED:
        return &s->queued;
    case CSCHED__V1__RUN_STATE__RUN_STATE_STARTING:
        return &s->starting;
    case CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING:
        return &s->running;
    default:
        return NULL;
    }
}

/* The info line of a state change of run (attempt 0) or of one of its
 * attempts: the ids, the state, and at the end how the command ended and
 * how long the run or the attempt took. By default only the run's end has
 * one (--log-runs). */
static void log_change(const Csched__V1__Run *run, uint32_t attempt, Csched__V1__RunState state,
                       struct cs_outcome outcome, int64_t started_unix_ms, int64_t ended_unix_ms)
{
    if (state == CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED ||
        !cs_log_run_change_enabled(attempt == 0 && cs_run_state_is_terminal(state)))
        return;
    const char *name = cs_run_state_proto_name(state);
    uint32_t number = attempt != 0 ? attempt : (uint32_t)run->n_attempts;
    struct cs_log_field f[6] = {CS_LOG_INT("run_id", run->id), CS_LOG_STR("job", run->job_name),
                                CS_LOG_INT("attempt", number), CS_LOG_STR("state", name)};
    size_t n = 4;
    if (outcome.kind != CS_OUTCOME_NONE)
        f[n++] = CS_LOG_INT(outcome.kind == CS_OUTCOME_EXIT_CODE ? "exit_code" : "signal",
                            outcome.value);
    if (cs_run_state_is_terminal(state) && started_unix_ms > 0 && ended_unix_ms >= started_unix_ms)
        f[n++] = CS_LOG_INT("duration_ms", ended_unix_ms - started_unix_ms);
    if (attempt != 0)
        cs_log_write_fields(CS_LOG_INFO, CS_LOG_COMPONENT, f, n, "attempt %u of run %lld: %s",
                            attempt, (long long)run->id, name);
    else
        cs_log_write_fields(CS_LOG_INFO, CS_LOG_COMPONENT, f, n, "run %lld: %s", (long long)run->id,
                            name);
}

/* What a run's change measures: its start (its queue wait, the first
 * time), its minder running (the spawn's latency), its end. */
static void measure_run_change(struct cs_run *run, Csched__V1__RunState state)
{
    const Csched__V1__Run *msg = run->msg;
    int64_t now_ns = cs_now_mono_ns();
    if (state == CSCHED__V1__RUN_STATE__RUN_STATE_STARTING) {
        cs_metrics_count_start((uint32_t)msg->n_attempts);
        run->starting_ns = now_ns;
        int64_t due_ms = msg->not_before_unix_ms > msg->created_unix_ms ? msg->not_before_unix_ms
                                                                        : msg->created_unix_ms;
        int64_t wait_ms = cs_now_unix_ms() - due_ms;
        if (msg->n_attempts == 1 && msg->started_unix_ms == 0 && due_ms > 0)
            cs_metrics_observe(CS_METRIC_QUEUE_WAIT, (double)(wait_ms > 0 ? wait_ms : 0) / 1000);
    } else if (state == CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING && run->starting_ns != 0) {
        cs_metrics_observe(CS_METRIC_SPAWN, (double)(now_ns - run->starting_ns) / 1e9);
        run->starting_ns = 0;
    } else if (cs_run_state_is_terminal(state)) {
        cs_metrics_count_end(0, state);
    }
}

void cs_sched_set_attempt_state(const Csched__V1__Run *run, Csched__V1__Attempt *a,
                                Csched__V1__RunState state)
{
    CS_ASSERT_LOOP();
    a->state = state;
    if (cs_run_state_is_terminal(state)) {
        cs_metrics_count_end(a->number, state);
        /* The start is the launch thread's clock after the spawn, the end
         * the minder's: a command quicker than the launch thread's next
         * step can seem to end first. It still ran, and counts as 0 s. */
        int64_t ran_ms = a->ended_unix_ms - a->started_unix_ms;
        if (a->started_unix_ms > 0 && a->ended_unix_ms > 0)
            cs_metrics_observe(CS_METRIC_ATTEMPT_DURATION,
                               (double)(ran_ms > 0 ? ran_ms : 0) / 1000);
    }
    log_change(run, a->number, state, cs_outcome_of_attempt(a), a->started_unix_ms,
               a->ended_unix_ms);
}

void cs_sched_set_run_state(struct cs_sched *s, struct cs_run *run, Csched__V1__RunState state)
{
    CS_ASSERT_LOOP();
    log_change(run->msg, 0, state, cs_outcome_of_run(run->msg), run->msg->started_unix_ms,
               run->msg->ended_unix_ms);
    measure_run_change(run, state);
    uint32_t *from = count_of(s, run->msg->state), *to = count_of(s, state);
    if (from != NULL)
        (*from)--;
    if (to != NULL)
        (*to)++;
    if (cs_run_state_is_terminal(state))
        run->job->last_ended = state;
    run->msg->state = state;
}

Csched__V1__Attempt *cs_run_attempt_add(Csched__V1__Run *msg)
{
    CS_ASSERT_LOOP();
    uint32_t number = (uint32_t)msg->n_attempts + 1;
    msg->attempts = cs_xrealloc(msg->attempts, number * sizeof(*msg->attempts));
    Csched__V1__Attempt *a = cs_xmalloc(sizeof(*a));
    csched__v1__attempt__init(a);
    a->number = number;
    a->state = CSCHED__V1__RUN_STATE__RUN_STATE_STARTING;
    a->message = cs_xstrdup("");
    msg->attempts[number - 1] = a;
    msg->n_attempts = number;
    return a;
}
