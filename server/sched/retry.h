/* retry: whether a run whose attempt ended gets another, and when. The wait
 * between attempts follows the job's RetryPolicy (or, without one,
 * retry_backoff_ms doubling up to CS_RETRY_BACKOFF_MAX_MS), less a random
 * part of up to its jitter; it becomes the run's not_before, so the run
 * waits in later.c's heap, and the wait is stored with the run and outlives
 * a restart; then the run goes back on its job's queue. A run's deadline
 * (run_deadline_seconds from its first start) ends the retries. Loop thread
 * only, but for the pure functions marked "any thread". */
#ifndef CS_RETRY_H
#define CS_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "sched_state.h"

/* The most attempts a run of spec may make (at least 1). Any thread. */
uint32_t cs_retry_max_attempts(const Csched__V1__Job *spec);
/* The wait before the next attempt once failed_attempts (>= 1) have failed,
 * before jitter: initial * multiplier^(failed_attempts - 1), capped. Any
 * thread. */
uint64_t cs_retry_backoff_ms(const Csched__V1__Job *spec, uint32_t failed_attempts);
/* The random part taken off delay_ms: delay_ms * jitter * random / 2^32, so
 * from 0 up to (not including) delay_ms * jitter. Any thread. */
uint64_t cs_retry_jitter_ms(const Csched__V1__Job *spec, uint64_t delay_ms, uint32_t random);
/* When run must be over (unix ms), or 0 when its job sets no deadline or it
 * has not started. Any thread. */
int64_t cs_retry_deadline_unix_ms(const struct cs_run *run);

/* The timeout the next attempt of run, starting at now_unix_ms, gets: its
 * job's timeout_seconds, or less when the run's deadline comes sooner; 0
 * for none. Any thread. */
uint64_t cs_retry_attempt_timeout_ms(const struct cs_run *run, int64_t now_unix_ms);

enum cs_retry_verdict {
    CS_RETRY_NO,            /* it ended for good: succeeded, cancelled, or no retry allowed */
    CS_RETRY_YES,           /* another attempt is due after run->retry_delay_ms */
    CS_RETRY_PAST_DEADLINE, /* one would be, but its wait ends past the run's deadline */
};

/* Whether run, whose last attempt ended in state at now_unix_ms, gets
 * another attempt: the attempt neither succeeded nor was cancelled, nobody
 * asked to cancel the run, the job's retry_on takes this end, attempts are
 * left (one that never started, see cs_attempt_never_started, does not
 * count, nor is there a wait after it) and the run's deadline leaves time.
 * Sets run->retry_delay_ms and retry_jitter_ms to the wait it chose (0 when
 * the deadline has passed already). */
enum cs_retry_verdict cs_retry_decide(struct cs_run *run, Csched__V1__RunState state,
                                      int64_t now_unix_ms);
/* Sets the message of run, which cs_retry_decide found past its deadline:
 * which way (the deadline passed, or the wait would end past it), then what
 * its last attempt said. */
void cs_retry_set_deadline_message(struct cs_run *run, const char *attempt_message);

#endif
