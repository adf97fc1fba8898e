/* ahead_dir: the loop's side of attempt directories made ahead (see
 * ahead_dir.h): which run has one made or being made, handing it to the
 * start, and removing those no start took; and the launch of the minder
 * started ahead with it (ahead_minder.h). A work item names its run by id,
 * so a run that ended meanwhile is simply not found. */
#define CS_LOG_COMPONENT "dispatch"
#include "ahead_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_build.h"
#include "log.h"
#include "minder_contract.h"
#include "util.h"

static void work_done_cb(uv_work_t *work, int status);

/* The ahead name of run_id's attempt number; false when it does not fit. */
static bool ahead_path(const struct cs_sched *s, int64_t run_id, uint32_t number, char path[4096])
{
    char dir[4096];
    if (cs_minder_dir_format(dir, sizeof(dir), s->state_dir, run_id, number) != 0)
        return false;
    int n = snprintf(path, 4096, "%s%s", dir, CS_AHEAD_DIR_SUFFIX);
    return n >= 0 && n < 4096;
}

/* Sends the mkdir (or rmdir) of run_id's attempt number's ahead directory to
 * the pool; false when its path does not fit. */
static bool queue_work(struct cs_sched *s, int64_t run_id, uint32_t number, bool remove)
{
    struct cs_ahead_work *w = cs_xcalloc(1, sizeof(*w));
    if (!ahead_path(s, run_id, number, w->path)) {
        free(w);
        return false;
    }
    w->sched = s;
    w->run_id = run_id;
    w->number = number;
    w->remove = remove;
    CS_ASSERT(uv_queue_work(s->loop, &w->work, cs_ahead_dir_work, work_done_cb) == 0);
    return true;
}

static void work_done_cb(uv_work_t *work, int status)
{
    struct cs_ahead_work *w = CS_CONTAINER_OF(work, struct cs_ahead_work, work);
    struct cs_sched *s = w->sched;
    bool made = status == 0 && !w->remove && w->rc == 0;
    if (!s->ahead_closed && !w->remove) {
        struct cs_run *run = cs_idmap_get(&s->runs, w->run_id);
        if (run != NULL && run->ahead == CS_AHEAD_MAKING && run->ahead_number == w->number) {
            run->ahead = made ? CS_AHEAD_READY : CS_AHEAD_NONE;
            made = false; /* the run's now */
        }
        if (status == 0 && w->rc != 0)
            cs_log_debug("%s: not made ahead (%s): made at the start instead", w->path,
                         strerror(-w->rc));
    }
    /* Its run ended or started meanwhile: nobody takes it. */
    if (made && !s->ahead_closed)
        (void)queue_work(s, w->run_id, w->number, true);
    free(w);
}

/* The attempt's minder, started ahead by a launch thread (ahead_minder.h),
 * as the start would build it at the due time. */
static void start_minder_ahead(struct cs_sched *s, struct cs_run *run, uint32_t number)
{
    char dir[4096];
    if (s->ops->launch_ahead_cb == NULL ||
        cs_minder_dir_format(dir, sizeof(dir), s->state_dir, run->msg->id, number) != 0)
        return;
    int64_t due_ms = run->msg->not_before_unix_ms;
    struct cs_launch *launch = cs_launch_build(s, run, number, dir, due_ms);
    launch->due_unix_ms = due_ms;
    s->ops->launch_ahead_cb(s->launcher, launch);
}

void cs_ahead_dir_make(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (run->ahead != CS_AHEAD_NONE || s->ahead_closed ||
        run->msg->not_before_unix_ms - cs_now_unix_ms() > CS_AHEAD_DIR_HORIZON_MS)
        return;
    uint32_t number = (uint32_t)run->msg->n_attempts + 1;
    if (!queue_work(s, run->msg->id, number, false))
        return; /* too long a path: the start says so */
    run->ahead = CS_AHEAD_MAKING;
    run->ahead_number = number;
    start_minder_ahead(s, run, number);
}

char *cs_ahead_dir_take(struct cs_sched *s, struct cs_run *run, uint32_t number, bool *made)
{
    CS_ASSERT_LOOP();
    if (run->ahead == CS_AHEAD_READY && run->ahead_number != number)
        cs_ahead_dir_drop(s, run);
    *made = run->ahead == CS_AHEAD_READY;
    /* Still being made, it is the start's if made in time, and otherwise
     * removed once made (work_done_cb). */
    run->ahead = CS_AHEAD_NONE;
    char path[4096];
    return ahead_path(s, run->msg->id, number, path) ? cs_xstrdup(path) : NULL;
}

void cs_ahead_dir_drop(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (run->ahead == CS_AHEAD_READY && !s->ahead_closed)
        (void)queue_work(s, run->msg->id, run->ahead_number, true);
    run->ahead = CS_AHEAD_NONE;
}

void cs_ahead_dir_close(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    s->ahead_closed = true;
}
