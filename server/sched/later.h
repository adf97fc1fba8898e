/* later: runs triggered for a later time (TriggerJob's not_before_unix_ms,
 * a slot's run, a retry after its backoff). Such a run is QUEUED and stored
 * at once, but waits off its job's queue in a min-heap by its time, under
 * one loop timer armed for the earliest of them all, so a thousand waiting
 * runs cost one timer. It goes to its queue CS_LATER_LEAD_MS before its
 * time: started from there, it takes its slot of the limits, and its launch
 * is made (attempt directory, argv) and held by the launcher until the
 * time itself, so that a hundred runs due in the same second only have
 * their minders released then (release_gate.h), the loop's and the launch
 * threads' work for them done. Loop thread only. */
#ifndef CS_LATER_H
#define CS_LATER_H

#include "sched_state.h"

/* How long before its time a waiting run goes to its queue: long enough for
 * the loop and the launch threads to make a burst's launches even when the
 * sync of the attempts' folder stalls on a busy disk, short enough that a
 * slot of the limits is held only that long before the command may run
 * (measured: docs/design/0023-launches-held-for-their-due-time.md). */
#define CS_LATER_LEAD_MS 250

/* Sets up the heap and its timer (stopped). 0, or a negative errno from
 * uv_timer_init. */
int cs_later_init(struct cs_sched *sched);
/* Closes the timer and frees the heap; the runs are dispatch's. */
void cs_later_close(struct cs_sched *sched);
/* Puts run (QUEUED, off its queue) on its job's queue now if its
 * not_before has passed, and otherwise once it does. O(log n). */
void cs_later_enqueue(struct cs_sched *sched, struct cs_run *run);
/* Whether run waits for its not_before. */
bool cs_later_is_waiting(const struct cs_run *run);
/* Takes a waiting run out without queueing it (a cancel); nothing when it
 * does not wait. O(log n). */
void cs_later_remove(struct cs_sched *sched, struct cs_run *run);

#endif
