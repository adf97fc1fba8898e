/* sched_state: small facts about run states, and the one mapping of the
 * outcome oneof between Attempt, Run and Event. Pure functions: any thread. */
#include "sched_state.h"

bool cs_run_state_is_terminal(Csched__V1__RunState state)
{
    return state >= CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
}

const char *cs_run_state_name(Csched__V1__RunState state)
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
