/* Run states, and events one at a time from a Watch stream; see
 * testwatch.h. */
#include "testwatch.h"

#include <string.h>

bool cs_test_run_state_is_terminal(Csched__V1__RunState state)
{
    switch (state) {
    case CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED:
    case CSCHED__V1__RUN_STATE__RUN_STATE_FAILED:
    case CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT:
    case CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED:
    case CSCHED__V1__RUN_STATE__RUN_STATE_LOST:
        return true;
    default:
        return false;
    }
}

const char *cs_test_run_state_name(Csched__V1__RunState state)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&csched__v1__run_state__descriptor, (int)state);

    /* "RUN_STATE_SUCCEEDED" reads better without its prefix. */
    if (v == NULL)
        return "(unknown state)";
    return strncmp(v->name, "RUN_STATE_", 10) == 0 ? v->name + 10 : v->name;
}

int cs_test_next_event(struct cs_test_events *r, const Csched__V1__Event **ev, struct cs_status *st)
{
    while (r->batch == NULL || r->next == r->batch->n_events) {
        cs_test_events_done(r);
        int rc = cs_scheduler_watch_next(r->stream, &r->batch, st);
        if (rc != 1)
            return rc;
        r->batches++;
    }
    *ev = r->batch->events[r->next++];
    return 1;
}

void cs_test_events_done(struct cs_test_events *r)
{
    if (r->batch != NULL)
        csched__v1__watch_response__free_unpacked(r->batch, NULL);
    r->batch = NULL;
    r->next = 0;
}
