/* retry: the backoff computation, the choice to retry, the deadlines and
 * the wait before the next attempt (which dispatch.c makes the run's
 * not_before: it waits with the runs triggered for later, later.c). Pure
 * but for the random draw of the jitter. */
#include "retry.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

#include "job.h"
#include "util.h"

uint32_t cs_retry_max_attempts(const Csched__V1__Job *spec)
{
    return spec->max_attempts > 0 ? spec->max_attempts : 1;
}

/* What a job without a RetryPolicy gets, and what a policy's zeros mean. */
#define DEFAULT_MULTIPLIER 2.0

uint64_t cs_retry_backoff_ms(const Csched__V1__Job *spec, uint32_t failed_attempts)
{
    const Csched__V1__RetryPolicy *p = spec->retry;
    double delay = p != NULL ? p->initial_backoff_ms : spec->retry_backoff_ms;
    double max = p != NULL && p->max_backoff_ms > 0 ? p->max_backoff_ms : CS_RETRY_BACKOFF_MAX_MS;
    double multiplier = p != NULL && p->multiplier > 0 ? p->multiplier : DEFAULT_MULTIPLIER;
    for (uint32_t i = 1; i < failed_attempts && delay < max; i++)
        delay *= multiplier;
    return delay < max ? (uint64_t)delay : (uint64_t)max;
}

uint64_t cs_retry_jitter_ms(const Csched__V1__Job *spec, uint64_t delay_ms, uint32_t random)
{
    if (spec->retry == NULL || !(spec->retry->jitter > 0))
        return 0;
    return (uint64_t)((double)delay_ms * spec->retry->jitter * ((double)random / 4294967296.0));
}

uint64_t cs_retry_attempt_timeout_ms(const struct cs_run *run, int64_t now_unix_ms)
{
    uint64_t timeout = (uint64_t)run->job->spec->timeout_seconds * 1000;
    int64_t deadline = cs_retry_deadline_unix_ms(run);
    if (deadline == 0)
        return timeout;
    /* Past the deadline (dispatch ends such a run before its start, so only
     * a late clock gets here) 1 ms: 0 would mean no timeout at all. */
    uint64_t left = deadline > now_unix_ms ? (uint64_t)(deadline - now_unix_ms) : 1;
    return timeout == 0 || left < timeout ? left : timeout;
}

int64_t cs_retry_deadline_unix_ms(const struct cs_run *run)
{
    uint32_t seconds = run->job->spec->run_deadline_seconds;
    if (seconds == 0 || run->msg->started_unix_ms == 0)
        return 0;
    return run->msg->started_unix_ms + (int64_t)seconds * 1000;
}

/* Jitter needs no more than a fair spread; the clock stands in should the
 * kernel's pool ever refuse (it does not block once seeded at boot). */
static uint32_t draw_random(void)
{
    uint32_t value;
    if (getrandom(&value, sizeof(value), GRND_NONBLOCK) == (ssize_t)sizeof(value))
        return value;
    return (uint32_t)uv_hrtime() * 2654435761u;
}

/* The attempts that count against max_attempts: all but those a restart
 * gave up before they started. */
static uint32_t attempts_made(const Csched__V1__Run *msg)
{
    uint32_t n = 0;
    for (size_t i = 0; i < msg->n_attempts; i++)
        n += !cs_attempt_never_started(msg->attempts[i]);
    return n;
}

/* Whether the job's retry_on takes an attempt that ended in state. */
static bool retried_on(const Csched__V1__Job *spec, Csched__V1__RunState state)
{
    Csched__V1__RetryOn on =
        spec->retry != NULL ? spec->retry->retry_on : CSCHED__V1__RETRY_ON__RETRY_ON_UNSPECIFIED;
    if (on == CSCHED__V1__RETRY_ON__RETRY_ON_UNSPECIFIED)
        on = CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE_AND_TIMEOUT;
    unsigned bit = state == CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT
                       ? CSCHED__V1__RETRY_ON__RETRY_ON_TIMEOUT
                       : CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE;
    return ((unsigned)on & bit) != 0;
}

enum cs_retry_verdict cs_retry_decide(struct cs_run *run, Csched__V1__RunState state,
                                      int64_t now_unix_ms)
{
    CS_ASSERT_LOOP();
    const Csched__V1__Run *msg = run->msg;
    const Csched__V1__Job *spec = run->job->spec;
    if (state == CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED ||
        state == CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED || msg->cancel_requested ||
        attempts_made(msg) >= cs_retry_max_attempts(spec))
        return CS_RETRY_NO;
    /* An attempt that never started is tried again at once, whatever ended
     * it: nothing ran, so nothing failed. */
    if (msg->n_attempts > 0 && cs_attempt_never_started(msg->attempts[msg->n_attempts - 1])) {
        run->retry_delay_ms = run->retry_jitter_ms = 0;
        return CS_RETRY_YES;
    }
    int64_t deadline = cs_retry_deadline_unix_ms(run);
    run->retry_delay_ms = run->retry_jitter_ms = 0;
    if (deadline != 0 && now_unix_ms >= deadline)
        return CS_RETRY_PAST_DEADLINE;
    if (!retried_on(spec, state))
        return CS_RETRY_NO;
    uint64_t delay = cs_retry_backoff_ms(spec, attempts_made(msg));
    uint64_t jitter = cs_retry_jitter_ms(spec, delay, draw_random());
    run->retry_delay_ms = (int64_t)(delay - jitter);
    run->retry_jitter_ms = (int64_t)jitter;
    if (deadline != 0 && now_unix_ms + run->retry_delay_ms >= deadline)
        return CS_RETRY_PAST_DEADLINE;
    return CS_RETRY_YES;
}

void cs_retry_set_deadline_message(struct cs_run *run, const char *attempt_message)
{
    CS_ASSERT_LOOP();
    char text[512];
    int n;
    uint32_t seconds = run->job->spec->run_deadline_seconds;
    if (run->retry_delay_ms == 0)
        n = snprintf(text, sizeof(text), "the run's deadline (run_deadline_seconds %u) passed",
                     seconds);
    else
        n = snprintf(text, sizeof(text),
                     "no retry: its wait of %lld ms would end after the run's deadline "
                     "(run_deadline_seconds %u)",
                     (long long)run->retry_delay_ms, seconds);
    if (attempt_message[0] != '\0' && n > 0 && (size_t)n < sizeof(text))
        (void)snprintf(text + n, sizeof(text) - (size_t)n, ": %s", attempt_message);
    cs_message_set_str(&run->msg->message, text);
}
