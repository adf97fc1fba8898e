/* Following runs through the API: run states by name and whether they have
 * ended, and events one at a time from a Watch stream, whose messages are
 * batches (WatchResponse). The tests follow runs event by event; this keeps
 * the batch and hands its events out in order. */
#ifndef CS_TESTWATCH_H
#define CS_TESTWATCH_H

#include <csched/client.h>
#include <csched/scheduler.h>
#include <stdbool.h>
#include <stddef.h>

/* cs_test_run_state_is_terminal says whether a run or an attempt in state
 * has ended. */
bool cs_test_run_state_is_terminal(Csched__V1__RunState state);

/* cs_test_run_state_name returns "SUCCEEDED", "QUEUED", ... (static). */
const char *cs_test_run_state_name(Csched__V1__RunState state);

struct cs_test_events {
    struct cs_stream *stream; /* borrowed */
    Csched__V1__WatchResponse *batch;
    size_t next;
    size_t batches; /* WatchResponses read so far */
};

/* cs_test_next_event returns 1 with *ev, owned by r and valid until the next
 * call; otherwise what cs_scheduler_watch_next returned (0: the stream ended,
 * st says how; < 0: a local error). */
int cs_test_next_event(struct cs_test_events *r, const Csched__V1__Event **ev,
                       struct cs_status *st);

/* cs_test_events_done frees the batch held (not the stream). */
void cs_test_events_done(struct cs_test_events *r);

#endif
