/* history: the timer and the batches of history retention (history.h).
 * Loop thread only. */
#define CS_LOG_COMPONENT "retention"
#include "history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "after.h"
#include "log.h"
#include "minder_contract.h"
#include "retention_work.h"
#include "store.h"
#include "util.h"

#define FIRST_MS (5 * 1000)
#define EVERY_MS (60 * 60 * 1000)
#define AGAIN_MS 100
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
    if (h->causes > 0)
        cs_log_info("deleted %llu dependency causes past the window whose runs were deleted",
                    (unsigned long long)h->causes);
    h->job_runs = 0;
    h->causes = 0;
    CS_ASSERT(uv_timer_start(&h->timer, timer_cb, h->full ? AGAIN_MS : EVERY_MS, 0) == 0);
}

static void hook_dirs_removed_cb(uv_work_t *work, int status)
{
    struct cs_hook_dirs *w = work->data;
    if (status == 0 && w->result.first_error != 0)
        cs_log_warn("%zu directories of deleted hook deliveries in %s could not be removed: %s",
                    w->result.failed, w->hooks_dir, strerror(-w->result.first_error));
    free(w->ids);
    free(w);
}

/* The directories of the deliveries deleted with their runs go on the
 * pool: a command hook's logs are files. */
static void remove_hook_dirs(struct cs_history *h, const struct cs_store_history_purged *purged)
{
    if (purged->n_delivery_ids == 0)
        return;
    struct cs_hook_dirs *w = cs_xcalloc(1, sizeof(*w));
    (void)snprintf(w->hooks_dir, sizeof(w->hooks_dir), "%s/%s", h->sched->state_dir, CS_HOOKS_DIR);
    w->n = purged->n_delivery_ids;
    w->ids = cs_xmalloc(w->n * sizeof(*w->ids));
    memcpy(w->ids, purged->delivery_ids, w->n * sizeof(*w->ids));
    cs_retention_sort_ids(w->ids, w->n);
    w->work.data = w;
    CS_ASSERT(uv_queue_work(h->sched->loop, &w->work, cs_retention_hook_dirs_work,
                            hook_dirs_removed_cb) == 0);
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
        if (purged->runs + purged->slots + purged->events + purged->causes > 0)
            cs_log_info("deleted %lld runs, %lld slots, %lld events and %lld dependency causes "
                        "older than %u days",
                        (long long)purged->runs, (long long)purged->slots,
                        (long long)purged->events, (long long)purged->causes, h->days);
        remove_hook_dirs(h, purged);
        full = purged->runs >= CS_STORE_HISTORY_PURGE_ROWS ||
               purged->slots >= CS_STORE_HISTORY_PURGE_ROWS ||
               purged->events >= CS_STORE_HISTORY_PURGE_ROWS ||
               purged->causes >= CS_STORE_HISTORY_PURGE_ROWS;
    }
    batch_done(h, full);
}

static void job_purged_cb(void *arg, int status, const struct cs_store_history_purged *purged)
{
    struct cs_history *h = arg;

    if (status == 0 && !h->stopped) {
        for (size_t i = 0; i < purged->n_run_ids; i++)
            cs_ended_runs_forget(&h->sched->ended_runs, purged->run_ids[i]);
        h->job_runs += purged->n_run_ids;
        h->causes += (uint64_t)purged->causes;
        remove_hook_dirs(h, purged);
    }
    batch_done(h, purged->n_run_ids >= CS_STORE_HISTORY_PURGE_ROWS);
}

static void causes_walked_cb(void *arg, int status, int64_t deleted, int64_t walked,
                             const struct cs_store_cause_key *last)
{
    struct cs_history *h = arg;

    if (status == 0 && !h->stopped && walked > 0) {
        h->causes_from = *last;
        h->causes += (uint64_t)deleted;
    }
    batch_done(h, status == 0 && walked >= CS_STORE_HISTORY_PURGE_ROWS);
}

/* The jobs with limits of their own (csched.v1.History), one batch each. */
static void purge_jobs(struct cs_history *h, int64_t now, int64_t causes_before)
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
            .causes_before_unix_ms = causes_before,
        };
        h->pending++;
        cs_store_history_purge_job(s->store, &job, job_purged_cb, h);
    }
}

static void timer_cb(uv_timer_t *timer)
{
    struct cs_history *h = timer->data;
    int64_t now = cs_now_unix_ms();

    struct cs_store *store = h->sched->store;
    /* A cause is kept as long as a late upstream end may come for it. */
    int64_t causes_before = now - (h->sched->after != NULL ? h->sched->after->window_ms : 0);

    h->full = false;
    /* One batch more than the round's, so that it ends after all of them. */
    h->pending = 1;
    if (cs_store_is_active(store)) {
        if (h->days > 0) {
            h->pending++;
            h->before_unix_ms = now - (int64_t)h->days * DAY_MS;
            cs_store_history_purge(store, h->before_unix_ms, causes_before, purged_cb, h);
        }
        purge_jobs(h, now, causes_before);
        h->pending++;
        cs_store_history_purge_causes(store, &h->causes_from, causes_before, causes_walked_cb, h);
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
