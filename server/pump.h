/* pump: moves queued runs to STARTING, oldest first across all jobs, while
 * the global limit and each job's own limit allow, and at most
 * CS_PUMP_BATCH runs per loop turn so that a burst never stalls the loop.
 * Jobs that could start a run sit in a min-heap keyed by the id of their
 * oldest queued run. Loop thread only. */
#ifndef CS_PUMP_H
#define CS_PUMP_H

#include "sched_state.h"

#define CS_PUMP_BATCH 16

/* Starts the idle handle machinery (disarmed). */
int cs_pump_init(struct cs_sched *sched);
void cs_pump_close(struct cs_sched *sched);

/* Appends run to its job's queue and lets the pump know. */
void cs_pump_enqueue(struct cs_sched *sched, struct cs_run *run);
/* Takes a queued run off its job's queue (cancel). */
void cs_pump_dequeue(struct cs_sched *sched, struct cs_run *run);
/* Re-evaluates whether job may start a run (after its running count or its
 * limit changed) and arms the pump if there may be work. */
void cs_pump_job_changed(struct cs_sched *sched, struct cs_job *job);
/* A global slot was freed: arm the pump if anything waits. */
void cs_pump_kick(struct cs_sched *sched);

/* Supplied by dispatch: start one run taken off its queue. */
void cs_dispatch_start(struct cs_sched *sched, struct cs_run *run);

#endif
