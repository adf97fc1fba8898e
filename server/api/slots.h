/* slots: the schedules' engine. Every job with a schedule sits in one
 * min-heap by the due time of its next slot, and one loop timer is armed for
 * the earliest: an idle schedule costs nothing per tick, and a job's next
 * fire time is computed once per fire. A due slot is decided by
 * slot_rules.h and recorded as a row (store_slot.c) in the same loop turn
 * (so the same transaction) as the run it makes: a slot fires at most once,
 * across a crash too, since a start goes on after the newest slot recorded.
 * Loop thread only. */
#ifndef CS_SLOTS_H
#define CS_SLOTS_H

#include <stdint.h>

#include "sched_state.h"
#include "slot_rules.h"

/* Slots decided per loop turn at most; more due go on in the next turn.
 * Small enough that a turn stays short, large enough that a second's burst
 * of slots is decided within a few turns (what a slot costs the loop:
 * docs/design/0007-bounded-work-per-loop-turn.md). */
#define CS_SLOTS_PER_TURN 16

/* A slot that will surely start its run (the job not paused, overlap
 * ALLOW) is decided this long before it is due: its row and its run's
 * commit ahead, and the run, waiting for its not_before (the due time),
 * starts on time with no commit left to wait for. A pause made in the
 * meantime still skips it, at its start (dispatch_run.c); a change of the
 * schedule applies from the next slot (docs/schedules.md). */
#define CS_SLOT_LEAD_MS 500

/* Once the jobs are loaded: reads back the newest slot of every job, then
 * decides every slot due since (the misfire policy) and arms the timer. */
void cs_slots_start(struct cs_sched *sched);
/* At shutdown: stops deciding and closes the timer. */
void cs_slots_stop(struct cs_sched *sched);

/* The job is new, or its schedule or pause changed: it goes on with the
 * first slot after after_s. O(log jobs). */
void cs_slots_job_changed(struct cs_sched *sched, struct cs_job *job, int64_t after_s);
/* Before the job is removed. */
void cs_slots_job_removed(struct cs_sched *sched, struct cs_job *job);

/* Records the slot of job at slot_s as decided by d (now_ms the decision's
 * time), making its run when d started it: the row and the run commit
 * together. backfill_by, the BackfillJob caller's name, marks a backfill's
 * slot and is its run's triggered_by; NULL for the schedule's own. Returns
 * the run's id, or 0 for a skipped slot. */
int64_t cs_slots_record(struct cs_sched *sched, struct cs_job *job, int64_t slot_s, int64_t now_ms,
                        const struct cs_slot_decision *d, const char *backfill_by);

#endif
