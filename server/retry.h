/* retry: whether a run whose attempt failed gets another, and when. The
 * wait between attempts (retry_backoff_ms, doubled after each failed
 * attempt, capped at CS_RETRY_BACKOFF_MAX_MS) is a timer of the run's own;
 * when it fires the run goes back on its job's queue. Loop thread only. */
#ifndef CS_RETRY_H
#define CS_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "sched_state.h"

/* The most attempts a run of spec may make (at least 1). Any thread. */
uint32_t cs_retry_max_attempts(const Csched__V1__Job *spec);
/* The wait before the next attempt once failed_attempts (>= 1) have failed.
 * Any thread. */
uint64_t cs_retry_backoff_ms(const Csched__V1__Job *spec, uint32_t failed_attempts);
/* Whether run, whose last attempt ended in state, gets another attempt:
 * the attempt neither succeeded nor was cancelled, nobody asked to cancel
 * the run, and its job allows more attempts (one that never started, see
 * cs_attempt_never_started, does not count; nor is there a wait after it). */
bool cs_retry_is_due(const struct cs_run *run, Csched__V1__RunState state);
/* Puts run (QUEUED, off its queue) back on its job's queue once its wait
 * is over, or at once when there is none. 0, or a negative errno from the
 * timer (the run is then not scheduled). */
int cs_retry_schedule(struct cs_sched *sched, struct cs_run *run);
/* Ends the wait of a run waiting to retry without requeueing it (a cancel,
 * the shutdown); nothing when it is not waiting. */
void cs_retry_cancel(struct cs_run *run);

#endif
