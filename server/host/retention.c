/* retention: the loop's side of removing old attempt directories: the
 * timer, and a sweep's record handed to the pool (retention_work.c) with the
 * runs active when it starts. Loop thread only. */
#define CS_LOG_COMPONENT "retention"
#include "retention.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "retention_work.h"
#include "util.h"

/* The pause before the next sweep when one stopped at CS_SWEEP_MAX_REMOVED. */
#define SWEEP_AGAIN_MS 1000

static void timer_cb(uv_timer_t *timer);

static void sweep_done_cb(uv_work_t *work, int status)
{
    struct cs_sweep *w = work->data;
    struct cs_retention *r = w->owner;
    const struct cs_sweep_result *res = &w->result;
    if (r != NULL) {
        r->sweep = NULL;
        if (status == 0 && res->removed > 0)
            cs_log_info("removed %zu attempt directories that ended over %u days ago", res->removed,
                        r->days);
        if (status == 0 && res->first_error != 0)
            cs_log_warn("%zu attempt directories in %s could not be removed: %s", res->failed,
                        w->attempts_dir, strerror(-res->first_error));
        uint64_t next = status == 0 && res->more ? SWEEP_AGAIN_MS : CS_RETENTION_EVERY_MS;
        CS_ASSERT(uv_timer_start(&r->timer, timer_cb, next, 0) == 0);
    }
    free(w->active_runs);
    free(w);
}

/* Starts a sweep with the runs active now: a run that becomes active later
 * makes a new directory, far younger than the cutoff. */
static void timer_cb(uv_timer_t *timer)
{
    struct cs_retention *r = timer->data;
    const struct cs_idmap *runs = &r->sched->runs;
    struct cs_sweep *w = cs_xcalloc(1, sizeof(*w));
    w->owner = r;
    (void)snprintf(w->attempts_dir, sizeof(w->attempts_dir), "%s/attempts", r->sched->state_dir);
    w->active_runs = cs_xcalloc(runs->count + 1, sizeof(*w->active_runs));
    for (size_t i = 0; i < runs->cap; i++)
        if (runs->slots[i].id != 0)
            w->active_runs[w->n_active++] = runs->slots[i].id;
    cs_retention_sort_ids(w->active_runs, w->n_active);
    w->cutoff = (time_t)(cs_now_unix_ms() / 1000) - (time_t)r->days * 24 * 60 * 60;
    w->work.data = w;
    r->sweep = w;
    CS_ASSERT(uv_queue_work(r->sched->loop, &w->work, cs_retention_sweep_work, sweep_done_cb) == 0);
}

void cs_retention_start(struct cs_retention *r, struct cs_sched *s, uint32_t days)
{
    CS_ASSERT_LOOP();
    memset(r, 0, sizeof(*r));
    r->sched = s;
    r->days = days;
    if (days == 0)
        return;
    CS_ASSERT(uv_timer_init(s->loop, &r->timer) == 0);
    r->timer.data = r;
    CS_ASSERT(uv_timer_start(&r->timer, timer_cb, CS_RETENTION_FIRST_MS, 0) == 0);
}

void cs_retention_stop(struct cs_retention *r)
{
    CS_ASSERT_LOOP();
    if (r->sched == NULL || r->days == 0)
        return;
    if (r->sweep != NULL)
        r->sweep->owner = NULL;
    r->sweep = NULL;
    uv_close((uv_handle_t *)&r->timer, NULL);
    r->days = 0;
}
