/* pump: moves queued runs to STARTING, oldest first across all jobs, while
 * the global limit and each job's own limit allow, and at most
 * CS_PUMP_BATCH runs per loop turn so that a burst never stalls the loop.
 * Jobs that could start a run sit in a min-heap keyed by the id of their
 * oldest queued run. Loop thread only. */
#ifndef CS_PUMP_H
#define CS_PUMP_H

#include "sched_state.h"

#define CS_PUMP_BATCH 16

/* Sets the pump up, with nothing to do; start_cb is called for each run the
 * pump takes off a queue, at most CS_PUMP_BATCH times a turn (next_turn.h).
 * 0 or a negative errno from uv_idle_init. */
int cs_pump_init(struct cs_sched *sched, cs_pump_start_cb start_cb);
/* Closes its handle and frees the heap (the queues are the runs'). */
void cs_pump_close(struct cs_sched *sched);

/* The oldest queued run of job; job's queue must not be empty. */
static inline struct cs_run *cs_pump_first(const struct cs_job *job)
{
    return CS_CONTAINER_OF(job->queue.head, struct cs_run, queue_link);
}

/* Appends run to its job's queue and lets the pump know. */
void cs_pump_enqueue(struct cs_sched *sched, struct cs_run *run);
/* Takes a queued run off its job's queue (cancel). */
void cs_pump_dequeue(struct cs_sched *sched, struct cs_run *run);
/* Re-evaluates whether job may start a run (after its running count or its
 * limit changed) and arms the pump if there may be work. */
void cs_pump_job_changed(struct cs_sched *sched, struct cs_job *job);
/* A global slot was freed: arm the pump if anything waits. */
void cs_pump_kick(struct cs_sched *sched);
/* The cluster's limit changed (0: none): the replica's own limit becomes
 * the lower of it and the machine's. Lowering it stops nothing that runs;
 * raising it starts what waits. */
void cs_pump_set_cluster_limit(struct cs_sched *sched, uint32_t cluster_max_running);

#endif
