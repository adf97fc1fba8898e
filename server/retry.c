/* retry: the backoff computation and the timer of a run waiting to retry.
 * The timer lives in its own allocation, freed in its close callback, so a
 * run can be freed as soon as its wait is cancelled. */
#include "retry.h"

#include <stdlib.h>

#include "job.h"
#include "pump.h"
#include "util.h"

struct cs_backoff {
    uv_timer_t timer;
    struct cs_sched *sched;
    struct cs_run *run;
};

uint32_t cs_retry_max_attempts(const Csched__V1__Job *spec)
{
    return spec->max_attempts > 0 ? spec->max_attempts : 1;
}

uint64_t cs_retry_backoff_ms(const Csched__V1__Job *spec, uint32_t failed_attempts)
{
    uint64_t delay = spec->retry_backoff_ms;
    for (uint32_t i = 1; i < failed_attempts && delay < CS_RETRY_BACKOFF_MAX_MS; i++)
        delay *= 2;
    return delay < CS_RETRY_BACKOFF_MAX_MS ? delay : CS_RETRY_BACKOFF_MAX_MS;
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

bool cs_retry_is_due(const struct cs_run *run, Csched__V1__RunState state)
{
    CS_ASSERT_LOOP();
    return state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED &&
           state != CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED && !run->msg->cancel_requested &&
           attempts_made(run->msg) < cs_retry_max_attempts(run->job->spec);
}

static void closed_cb(uv_handle_t *handle)
{
    free(handle->data);
}

static void backoff_end(struct cs_backoff *b)
{
    b->run->backoff = NULL;
    b->timer.data = b;
    uv_close((uv_handle_t *)&b->timer, closed_cb);
}

static void timer_cb(uv_timer_t *timer)
{
    struct cs_backoff *b = CS_CONTAINER_OF(timer, struct cs_backoff, timer);
    struct cs_run *run = b->run;
    struct cs_sched *s = b->sched;
    backoff_end(b);
    cs_pump_enqueue(s, run);
}

int cs_retry_schedule(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    CS_ASSERT(run->backoff == NULL && !run->queued);
    const Csched__V1__Run *msg = run->msg;
    /* No wait after an attempt that never started: nothing failed. */
    uint32_t failed = attempts_made(msg);
    uint64_t delay =
        msg->n_attempts > 0 && cs_attempt_never_started(msg->attempts[msg->n_attempts - 1])
            ? 0
            : cs_retry_backoff_ms(run->job->spec, failed);
    if (delay == 0) {
        cs_pump_enqueue(s, run);
        return 0;
    }
    struct cs_backoff *b = cs_xcalloc(1, sizeof(*b));
    b->run = run;
    b->sched = s;
    int rc = uv_timer_init(s->loop, &b->timer);
    if (rc != 0) {
        free(b);
        return rc;
    }
    run->backoff = b;
    rc = uv_timer_start(&b->timer, timer_cb, delay, 0);
    if (rc != 0)
        backoff_end(b);
    return rc;
}

void cs_retry_cancel(struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (run->backoff != NULL)
        backoff_end(run->backoff);
}
