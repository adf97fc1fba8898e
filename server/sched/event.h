/* event: every state change of a run or attempt becomes an Event with the
 * next seq. The event is written to the store with the change; once its batch
 * has committed it is handed to the publish callback (the open Watch
 * streams), in seq order (batches commit in order). Loop thread only. */
#ifndef CS_EVENT_H
#define CS_EVENT_H

#include "sched_state.h"
#include "store.h"

/* Registers who hears of each committed event (api_watch, once at start);
 * until then committed events go to nobody. */
void cs_event_init(struct cs_sched *sched, cs_event_publish_cb publish_cb, void *ctx);

/* Records the current state of run (attempt == NULL) or of one of its
 * attempts. cb (may be NULL) runs after the commit, before publication. */
void cs_event_emit(struct cs_sched *sched, const struct cs_run *run,
                   const Csched__V1__Attempt *attempt, cs_store_done_cb cb, void *arg);

/* After a restart, for a change it did not see happen but found in the
 * state dir (Event.recovered): records that run (attempt == NULL) or one of
 * its attempts went to state at at_unix_ms (0: unknown, now). The state it
 * is in carries its outcome and message; one it only went through on its
 * way there (STARTING, RUNNING) carries neither. */
void cs_event_emit_recovered(struct cs_sched *sched, const struct cs_run *run,
                             const Csched__V1__Attempt *attempt, Csched__V1__RunState state,
                             int64_t at_unix_ms);

#endif
