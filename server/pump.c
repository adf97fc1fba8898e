/* pump: the ready heap and the per-turn start budget. The idle handle is
 * armed only while some job may start a run and a global slot is free, so
 * an idle server does no work per turn. */
#include "pump.h"

#include <stdlib.h>

#include "util.h"

static bool job_may_start(const struct cs_job *job)
{
    uint32_t limit = job->spec->max_running;
    return !cs_queue_is_empty(&job->queue) && (limit == 0 || job->slots < limit);
}

static int64_t key(const struct cs_job *job)
{
    return cs_pump_first(job)->msg->id;
}

static void heap_set(struct cs_sched *s, size_t i, struct cs_job *job)
{
    s->ready[i] = job;
    job->heap_index = i;
}

static void sift_up(struct cs_sched *s, size_t i)
{
    struct cs_job *job = s->ready[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (key(s->ready[parent]) <= key(job))
            break;
        heap_set(s, i, s->ready[parent]);
        i = parent;
    }
    heap_set(s, i, job);
}

static void sift_down(struct cs_sched *s, size_t i)
{
    struct cs_job *job = s->ready[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= s->n_ready)
            break;
        if (child + 1 < s->n_ready && key(s->ready[child + 1]) < key(s->ready[child]))
            child++;
        if (key(job) <= key(s->ready[child]))
            break;
        heap_set(s, i, s->ready[child]);
        i = child;
    }
    heap_set(s, i, job);
}

static void heap_remove(struct cs_sched *s, struct cs_job *job)
{
    size_t i = job->heap_index;
    job->heap_index = CS_NOT_IN_HEAP;
    s->n_ready--;
    if (i == s->n_ready)
        return;
    heap_set(s, i, s->ready[s->n_ready]);
    sift_down(s, i);
    sift_up(s, i);
}

static void heap_push(struct cs_sched *s, struct cs_job *job)
{
    if (s->n_ready == s->cap_ready) {
        s->cap_ready = s->cap_ready ? s->cap_ready * 2 : 64;
        s->ready = cs_xrealloc(s->ready, s->cap_ready * sizeof(*s->ready));
    }
    heap_set(s, s->n_ready++, job);
    sift_up(s, job->heap_index);
}

static void idle_cb(uv_idle_t *idle);

static void arm(struct cs_sched *s)
{
    if (s->pump_armed || s->stopping || s->n_ready == 0 || cs_sched_slots_used(s) >= s->max_running)
        return;
    s->pump_armed = true;
    CS_ASSERT(uv_idle_start(&s->pump_idle, idle_cb) == 0);
}

static void idle_cb(uv_idle_t *idle)
{
    struct cs_sched *s = idle->data;
    for (int started = 0; started < CS_PUMP_BATCH; started++) {
        if (s->stopping || s->n_ready == 0 || cs_sched_slots_used(s) >= s->max_running)
            break;
        struct cs_job *job = s->ready[0];
        struct cs_run *run = cs_pump_first(job);
        cs_pump_dequeue(s, run);
        s->pump_start_cb(s, run);
        /* The start took one of the job's slots: it may be at its limit now. */
        cs_pump_job_changed(s, job);
    }
    s->pump_armed = false;
    CS_ASSERT(uv_idle_stop(idle) == 0);
    /* Still work to do: come back next turn, after the others had a go. */
    arm(s);
}

int cs_pump_init(struct cs_sched *sched, cs_pump_start_cb start_cb)
{
    CS_ASSERT_LOOP();
    int rc = uv_idle_init(sched->loop, &sched->pump_idle);
    if (rc != 0)
        return rc;
    sched->pump_idle.data = sched;
    sched->pump_start_cb = start_cb;
    return 0;
}

void cs_pump_close(struct cs_sched *sched)
{
    CS_ASSERT_LOOP();
    uv_close((uv_handle_t *)&sched->pump_idle, NULL);
    free(sched->ready);
    sched->ready = NULL;
    sched->n_ready = sched->cap_ready = 0;
}

void cs_pump_job_changed(struct cs_sched *s, struct cs_job *job)
{
    CS_ASSERT_LOOP();
    bool in_heap = job->heap_index != CS_NOT_IN_HEAP;
    bool may = job_may_start(job);
    if (in_heap && !may)
        heap_remove(s, job);
    else if (!in_heap && may)
        heap_push(s, job);
    else if (in_heap) {
        /* The head may have changed: restore the heap order around it. */
        sift_down(s, job->heap_index);
        sift_up(s, job->heap_index);
    }
    arm(s);
}

void cs_pump_enqueue(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    struct cs_job *job = run->job;
    CS_ASSERT(!run->queued);
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
