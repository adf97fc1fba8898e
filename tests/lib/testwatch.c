/* Events one at a time from a Watch stream; see testwatch.h. */
#include "testwatch.h"

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
