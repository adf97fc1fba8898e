/* pump: the ready heap and the per-turn start budget. The next turn is
 * asked for only while some job may start a run and a global slot is free, so
 * an idle server does no work per turn. */
#include "pump.h"

#include <stdlib.h>

#include "placement.h"
#include "run_array.h"
#include "util.h"

static bool job_may_start(const struct cs_job *job)
{
    uint32_t limit = job->spec->max_running;
    /* An overlap policy but allow means one run at a time (docs/schedules.md). */
    if (job->spec->schedule != NULL &&
        job->spec->schedule->overlap != CSCHED__V1__OVERLAP__OVERLAP_ALLOW)
        limit = 1;
    return !cs_queue_is_empty(&job->queue) && (limit == 0 || job->slots < limit);
}

/* The heap's order: the job whose first queued run is oldest comes first. */
static bool ready_before(const void *a, const void *b)
{
    return cs_pump_first(a)->msg->id < cs_pump_first(b)->msg->id;
}

static void ready_moved(void *job, size_t index)
{
    ((struct cs_job *)job)->heap_index = index;
}

/* Whether a run may start now: work is ready, a slot is free, and the
 * replica's lease is fresh (the store says so; a replica that missed a
 * renewal starts nothing until the next one commits, cs_pump_kick). */
static bool may_run(const struct cs_sched *s)
{
    return !s->stopping && !s->draining && s->ready.n > 0 &&
           cs_sched_slots_used(s) < s->max_running &&
           (s->ops->may_start_cb == NULL || s->ops->may_start_cb(s->store));
}

/* Asks for a turn while a run may start, and takes the ask back once none
 * may: an idle or full pump costs no turn. */
static void arm(struct cs_sched *s)
{
    if (!may_run(s))
        cs_next_turn_cancel(&s->pump_turn);
    else
        cs_next_turn_ask(&s->pump_turn);
}

static void turn_cb(struct cs_next_turn *turn)
{
    struct cs_sched *s = CS_CONTAINER_OF(turn, struct cs_sched, pump_turn);
    for (int started = 0; started < CS_PUMP_BATCH; started++) {
        if (!may_run(s))
            break;
        struct cs_job *job = cs_heap_top(&s->ready);
        struct cs_run *run = cs_pump_first(job);
        cs_pump_dequeue(s, run);
        s->pump_start_cb(s, run);
        /* The start took one of the job's slots: it may be at its limit now. */
        cs_pump_job_changed(s, job);
    }
    /* Still work to do: come back next turn, after the others had a go. */
    arm(s);
}

int cs_pump_init(struct cs_sched *sched, cs_pump_start_cb start_cb)
{
    CS_ASSERT_LOOP();
    int rc = cs_next_turn_init(sched->loop, &sched->pump_turn, turn_cb);
    if (rc != 0)
        return rc;
    sched->pump_start_cb = start_cb;
    cs_heap_init(&sched->ready, ready_before, ready_moved);
    return 0;
}

void cs_pump_close(struct cs_sched *sched)
{
    CS_ASSERT_LOOP();
    cs_next_turn_close(&sched->pump_turn);
    cs_heap_free(&sched->ready);
}

void cs_pump_job_changed(struct cs_sched *s, struct cs_job *job)
{
    CS_ASSERT_LOOP();
    bool in_heap = job->heap_index != CS_NOT_IN_HEAP;
    bool may = job_may_start(job);
    if (in_heap && !may)
        cs_heap_remove(&s->ready, job->heap_index);
    else if (!in_heap && may)
        cs_heap_push(&s->ready, job);
    else if (in_heap)
        cs_heap_fix(&s->ready, job->heap_index); /* its head may have changed */
    arm(s);
}

void cs_pump_enqueue(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    struct cs_job *job = run->job;
    CS_ASSERT(!run->queued);
    if (!cs_run_array_admit(s, run))
        return; /* it waits at its array's gate */
    /* A retry re-enters in id order, ahead of runs triggered after it; a new
     * run (the youngest) goes at the tail without a walk. */
    struct cs_qlink *prev = job->queue.tail;
    if (prev != NULL && CS_CONTAINER_OF(prev, struct cs_run, queue_link)->msg->id > run->msg->id) {
        prev = NULL;
        for (struct cs_qlink *l = job->queue.head;
             CS_CONTAINER_OF(l, struct cs_run, queue_link)->msg->id < run->msg->id; l = l->next)
            prev = l;
    }
    cs_queue_insert_after(&job->queue, prev, &run->queue_link);
    run->queued = true;
    cs_pump_job_changed(s, job);
}

void cs_pump_dequeue(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    CS_ASSERT(run->queued);
    cs_queue_remove(&run->job->queue, &run->queue_link);
    run->queued = false;
    cs_pump_job_changed(s, run->job);
}

void cs_pump_kick(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    arm(s);
}

void cs_pump_set_cluster_limit(struct cs_sched *s, uint32_t cluster_max_running)
{
    CS_ASSERT_LOOP();
    s->cluster_max_running = cluster_max_running;
    cs_placement_limit(s);
    arm(s);
}
