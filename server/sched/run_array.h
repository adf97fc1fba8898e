/* run_array: the cap of an array of runs (TriggerJobRequest.array_size,
 * array_max_running). The runs of a capped array pass a gate before their
 * job's queue: at most array_max_running of them are past it at once
 * (queued for a slot, starting, running, or waiting to retry); the others
 * wait at the gate in id order, off every queue, and pass one by one as
 * those past it end. The job's and the global limit still apply after the
 * gate. An array without a cap has no gate and no record here. Loop thread. */
#ifndef CS_RUN_ARRAY_H
#define CS_RUN_ARRAY_H

#include <stdbool.h>

#include "sched_state.h"

/* Whether run may go on to its job's queue now: true for a run of no
 * capped array, or once it has passed its array's gate; otherwise it now
 * waits at the gate (run->array_waiting) and false. */
bool cs_run_array_admit(struct cs_sched *s, struct cs_run *run);

/* Counts run, found running or starting by a restart, as past its array's
 * gate whatever the cap: it holds its place until it ends. */
void cs_run_array_count_started(struct cs_sched *s, struct cs_run *run);

/* run is leaving memory (ended, or never stored): takes it off its
 * array's gate or gives back its place. Returns the run waiting at the
 * gate that passes in its place (counted past it: the caller puts it on
 * its queue), or NULL. */
struct cs_run *cs_run_array_leave(struct cs_sched *s, struct cs_run *run);

/* Frees the arrays' records (the runs are the caller's). */
void cs_run_array_close(struct cs_sched *s);

#endif
