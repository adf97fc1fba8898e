/* sched: small facts about run states. */
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
