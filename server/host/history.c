/* history: the timer and the batches of history retention (history.h).
 * Loop thread only. */
#define CS_LOG_COMPONENT "retention"
#include "history.h"

#include <string.h>

#include "log.h"
#include "store.h"
#include "util.h"

#define FIRST_MS (5 * 1000)
#define EVERY_MS (60 * 60 * 1000)
#define AGAIN_MS 250
#define DAY_MS (24LL * 60 * 60 * 1000)

static void timer_cb(uv_timer_t *timer);

/* A batch has come back: once all of a round's have, the next round, a
 * second later while one of them was full. */
static void batch_done(struct cs_history *h, bool full)
{
    h->full |= full;
    if (--h->pending > 0 || h->stopped)
        return;
    if (h->job_runs > 0)
        cs_log_info("deleted %llu runs past their jobs' own history limits",
                    (unsigned long long)h->job_runs);
    h->job_runs = 0;
    CS_ASSERT(uv_timer_start(&h->timer, timer_cb, h->full ? AGAIN_MS : EVERY_MS, 0) == 0);
}

static void purged_cb(void *arg, int status, const struct cs_store_history_purged *purged)
{
    struct cs_history *h = arg;
    bool full = false;

    if (status == 0 && !h->stopped) {
        struct cs_sched *s = h->sched;
        if (purged->last_event_seq > s->purged_event_seq)
            s->purged_event_seq = purged->last_event_seq;
        cs_ended_runs_drop_ended_before(&s->ended_runs, h->before_unix_ms);
        if (purged->runs + purged->slots + purged->events > 0)
            cs_log_info("deleted %lld runs, %lld slots and %lld events older than %u days",
                        (long long)purged->runs, (long long)purged->slots,
                        (long long)purged->events, h->days);
        full = purged->runs >= CS_STORE_HISTORY_PURGE_ROWS ||
               purged->slots >= CS_STORE_HISTORY_PURGE_ROWS ||
               purged->events >= CS_STORE_HISTORY_PURGE_ROWS;
    }
    batch_done(h, full);
}

static void job_purged_cb(void *arg, int status, const int64_t *ids, size_t n)
{
    struct cs_history *h = arg;

    if (status == 0 && !h->stopped) {
        for (size_t i = 0; i < n; i++)
            cs_ended_runs_forget(&h->sched->ended_runs, ids[i]);
        h->job_runs += n;
    }
    batch_done(h, n >= CS_STORE_HISTORY_PURGE_ROWS);
}

/* The jobs with limits of their own (csched.v1.History), one batch each. */
static void purge_jobs(struct cs_history *h, int64_t now)
{
    struct cs_sched *s = h->sched;

    for (size_t i = 0; i < s->n_jobs; i++) {
        const Csched__V1__History *lim = s->jobs[i]->spec->history;
        if (lim == NULL ||
            (lim->keep_succeeded | lim->keep_failed | lim->ttl_seconds_after_finished) == 0)
            continue;
        struct cs_store_history_job job = {
            .job_name = s->jobs[i]->spec->name,
            .keep_succeeded = lim->keep_succeeded,
            .keep_failed = lim->keep_failed,
            .before_unix_ms = lim->ttl_seconds_after_finished > 0
                                  ? now - (int64_t)lim->ttl_seconds_after_finished * 1000
                                  : 0,
        };
        h->pending++;
        cs_store_history_purge_job(s->store, &job, job_purged_cb, h);
    }
}

static void timer_cb(uv_timer_t *timer)
{
    struct cs_history *h = timer->data;
    int64_t now = cs_now_unix_ms();

    h->full = false;
    /* One batch more than the round's, so that it ends after all of them. */
    h->pending = 1;
    if (cs_store_is_active(h->sched->store)) {
        if (h->days > 0) {
            h->pending++;
            h->before_unix_ms = now - (int64_t)h->days * DAY_MS;
            cs_store_history_purge(h->sched->store, h->before_unix_ms, purged_cb, h);
        }
        purge_jobs(h, now);
    }
    batch_done(h, false);
}

void cs_history_start(struct cs_history *h, struct cs_sched *s, uint32_t days)
{
    CS_ASSERT_LOOP();
    memset(h, 0, sizeof(*h));
    h->sched = s;
    h->days = days;
    CS_ASSERT(uv_timer_init(s->loop, &h->timer) == 0);
    h->timer.data = h;
    CS_ASSERT(uv_timer_start(&h->timer, timer_cb, FIRST_MS, 0) == 0);
}

void cs_history_stop(struct cs_history *h)
{
    CS_ASSERT_LOOP();
    if (h->sched == NULL || h->stopped)
        return;
    h->stopped = true;
    uv_close((uv_handle_t *)&h->timer, NULL);
}
