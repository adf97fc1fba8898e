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
#define AGAIN_MS 1000

static void timer_cb(uv_timer_t *timer);

static void purged_cb(void *arg, int status, const struct cs_store_history_purged *purged)
{
    struct cs_history *h = arg;
    if (h->stopped)
        return;
    bool full = false;
    if (status == 0) {
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
    CS_ASSERT(uv_timer_start(&h->timer, timer_cb, full ? AGAIN_MS : EVERY_MS, 0) == 0);
}

static void timer_cb(uv_timer_t *timer)
{
    struct cs_history *h = timer->data;
    if (!cs_store_is_active(h->sched->store)) {
        CS_ASSERT(uv_timer_start(&h->timer, timer_cb, EVERY_MS, 0) == 0);
        return;
    }
    h->before_unix_ms = cs_now_unix_ms() - (int64_t)h->days * 24 * 60 * 60 * 1000;
    cs_store_history_purge(h->sched->store, h->before_unix_ms, purged_cb, h);
}

void cs_history_start(struct cs_history *h, struct cs_sched *s, uint32_t days)
{
    CS_ASSERT_LOOP();
    memset(h, 0, sizeof(*h));
    h->sched = s;
    h->days = days;
    if (days == 0)
        return;
    CS_ASSERT(uv_timer_init(s->loop, &h->timer) == 0);
    h->timer.data = h;
    CS_ASSERT(uv_timer_start(&h->timer, timer_cb, FIRST_MS, 0) == 0);
}

void cs_history_stop(struct cs_history *h)
{
    CS_ASSERT_LOOP();
    if (h->sched == NULL || h->days == 0 || h->stopped)
        return;
    h->stopped = true;
    uv_close((uv_handle_t *)&h->timer, NULL);
}
