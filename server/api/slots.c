/* slots: the due heap, its one timer, and the firing of slots. Loop thread.
 *
 * Invariant: a job is in the heap exactly when the engine is on, the job
 * has a schedule with a slot after slot.after_s, and the server is not
 * stopping; every slot up to slot.after_s has its row queued. A paused job
 * stays in the heap: its slots are recorded PAUSED as they come. */
#define CS_LOG_COMPONENT "slots"
#include "slots.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "job.h"
#include "job_table.h"
#include "log.h"
#include "metrics.h"
#include "store.h"

/* How long to wait before reading the newest slots again after a failure. */
#define SLOTS_RETRY_MS 1000

static bool due_less_cb(const void *a, const void *b)
{
    const struct cs_job *x = a, *y = b;
    return x->slot.look_ms < y->slot.look_ms;
}

static void due_moved_cb(void *item, size_t index)
{
    ((struct cs_job *)item)->slot.heap_index = index;
}

static void timer_cb(uv_timer_t *timer);

/* Arms the timer for the earliest due slot; while more are due than a turn
 * decides, the next turn re-arms it, so a turn never decides more. */
static void arm(struct cs_sched *s)
{
    const struct cs_job *top = cs_heap_top(&s->slots.due);
    if (cs_next_turn_asked(&s->slots.more))
        return;
    if (top == NULL) {
        uv_timer_stop(&s->slots.timer);
        return;
    }
    int64_t wait_ms = top->slot.look_ms - cs_now_unix_ms();
    uv_timer_start(&s->slots.timer, timer_cb, wait_ms > 0 ? (uint64_t)wait_ms : 0, 0);
}

/* Whether job's next slot, decided now, surely starts its run: its run may
 * then be made ahead. */
static bool may_decide_ahead(const struct cs_job *job)
{
    return !job->spec->paused && job->spec->schedule->overlap == CSCHED__V1__OVERLAP__OVERLAP_ALLOW;
}

/* Puts job in the heap at its first slot after slot.after_s, or leaves it
 * out (no schedule, no slot left, engine off). */
static void place(struct cs_sched *s, struct cs_job *job)
{
    struct cs_fire fire;

    if (job->slot.heap_index != CS_NOT_IN_HEAP)
        cs_heap_remove(&s->slots.due, job->slot.heap_index);
    if (!s->slots.on || s->stopping || job->schedule == NULL ||
        cs_schedule_next(job->schedule, job->slot.after_s, &fire) != 0)
        return;
    job->slot.next_s = fire.at_s;
    job->slot.due_ms = cs_slot_due_ms(job->spec, fire.at_s);
    job->slot.look_ms = job->slot.due_ms - (may_decide_ahead(job) ? CS_SLOT_LEAD_MS : 0);
    cs_heap_push(&s->slots.due, job);
}

/* Later slots of job already due at now_ms, counted up to limit. Those of a
 * slot missed while cschedd was down are the later ones missed too: a slot
 * that comes due once it is up runs on time, and takes no catch-up's place. */
static uint32_t later_due(const struct cs_sched *s, const struct cs_job *job, int64_t now_ms,
                          uint32_t limit)
{
    struct cs_fire fire = {.at_s = job->slot.next_s};
    int64_t upto_ms = job->slot.due_ms < s->slots.start_ms ? s->slots.start_ms - 1 : now_ms;
    uint32_t n = 0;

    while (n < limit && cs_schedule_next(job->schedule, fire.at_s, &fire) == 0 &&
           cs_slot_due_ms(job->spec, fire.at_s) <= upto_ms)
        n++;
    return n;
}

/* The active runs of job, cancelled: REPLACE. */
static void cancel_active(struct cs_sched *s, struct cs_job *job)
{
    struct cs_run **runs = cs_xcalloc(job->active, sizeof(*runs));
    size_t n = 0, pos = 0;
    void *value;

    /* Collected first: cancelling a queued run removes it from the map. */
    while (n < job->active && cs_idmap_next(&s->runs, &pos, &value) != 0) {
        struct cs_run *run = value;
        if (run->job == job && !run->msg->cancel_requested)
            runs[n++] = run;
    }
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&cs_dispatch_cancel(s, runs[i], NULL, NULL)->base, NULL);
    free(runs);
}

int64_t cs_slots_record(struct cs_sched *s, struct cs_job *job, int64_t slot_s, int64_t now_ms,
                        const struct cs_slot_decision *d, const char *backfill_by)
{
    CS_ASSERT_LOOP();
    Csched__V1__Slot slot = CSCHED__V1__SLOT__INIT;

    slot.job_name = job->spec->name;
    slot.slot_unix_ms = slot_s * 1000;
    slot.due_unix_ms = cs_slot_due_ms(job->spec, slot_s);
    slot.decided_unix_ms = now_ms;
    slot.outcome = d->outcome;
    slot.backfill = backfill_by != NULL;
    slot.message = (char *)cs_slot_reason_text(d->reason);
    if (d->outcome == CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED) {
        Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
        req.job_name = job->spec->name;
        /* Decided ahead, the run waits for its due time; otherwise that
         * time has passed, and it starts at once. */
        req.not_before_unix_ms = slot.due_unix_ms;
        if (d->cancel_active)
            cancel_active(s, job);
        slot.run_id =
            cs_dispatch_trigger_slot(s, job, &req, slot.slot_unix_ms,
                                     slot.backfill ? backfill_by : CS_SLOT_TRIGGERED_BY, NULL, NULL)
                ->msg->id;
        slot.message = slot.backfill      ? "made by BackfillJob"
                       : d->catchup       ? "a catch-up run of a missed slot (the misfire policy)"
                       : d->cancel_active ? "the job's active runs were cancelled (overlap replace)"
                                          : "";
    } else {
        slot.skip_reason = d->reason;
        if (d->reason == CSCHED__V1__SKIP_REASON__SKIP_REASON_MISSED &&
            slot.due_unix_ms < s->slots.start_ms)
            slot.message = "missed while cschedd was down, and misfire is skip";
    }
    cs_store_slot_put(s->store, &slot, NULL, NULL);
    /* A slot decided ahead was on time. */
    int64_t late_ms = now_ms > slot.due_unix_ms ? now_ms - slot.due_unix_ms : 0;
    cs_metrics_count_slot(d->outcome, d->reason, slot.backfill ? -1 : (double)late_ms / 1000);
    return slot.run_id;
}

/* Decides the job's next slot, due by now_ms (or, decided ahead, due
 * within CS_SLOT_LEAD_MS), and moves it on to the next. */
static void fire(struct cs_sched *s, struct cs_job *job, int64_t now_ms)
{
    uint32_t limit = cs_slot_catchup_limit(job->spec->schedule);
    struct cs_slot_facts f = {
        .due_ms = job->slot.due_ms,
        .now_ms = now_ms,
        .missed_before_ms = s->slots.start_ms,
        .later_due = later_due(s, job, now_ms, limit > 0 ? limit : 1),
        .paused = job->spec->paused,
        .schedule = job->spec->schedule,
        .active = job->active,
        .queued = cs_queue_is_empty(&job->queue) ? 0 : 1,
    };
    struct cs_slot_decision d = cs_slot_decide(&f);

    cs_slots_record(s, job, job->slot.next_s, now_ms, &d, NULL);
    job->slot.after_s = job->slot.next_s;
    place(s, job);
}

/* Decides the slots due by now, CS_SLOTS_PER_TURN at most: more go on in
 * the next turn. */
static void decide_due(struct cs_sched *s)
{
    int64_t now_ms = cs_now_unix_ms();

    if (s->stopping)
        return;
    for (int n = 0; n < CS_SLOTS_PER_TURN; n++) {
        struct cs_job *job = cs_heap_top(&s->slots.due);
        if (job == NULL || job->slot.look_ms > now_ms) {
            arm(s);
            return;
        }
        if (job->slot.due_ms > now_ms && !may_decide_ahead(job)) {
            /* Paused, or its policy changed, since it was placed: decided when due. */
            job->slot.look_ms = job->slot.due_ms;
            cs_heap_fix(&s->slots.due, job->slot.heap_index);
            continue;
        }
        fire(s, job, now_ms);
    }
    cs_next_turn_ask(&s->slots.more);
}

static void timer_cb(uv_timer_t *timer)
{
    decide_due(timer->data);
}

static void more_cb(struct cs_next_turn *turn)
{
    decide_due(CS_CONTAINER_OF(turn, struct cs_sched, slots.more));
}

static void start_timer_cb(uv_timer_t *timer);

/* The newest slot of every job: each job goes on after it. */
static void last_slots_cb(void *arg, int status, Csched__V1__Slot **slots, size_t n)
{
    struct cs_sched *s = arg;

    if (status != 0) {
        cs_log_warn("cannot read the newest slots (%s): trying again in %d ms", strerror(-status),
                    SLOTS_RETRY_MS);
        uv_timer_start(&s->slots.timer, start_timer_cb, SLOTS_RETRY_MS, 0);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct cs_job *job = cs_job_find(s, slots[i]->job_name);
        if (job != NULL && slots[i]->slot_unix_ms / 1000 > job->slot.after_s)
            job->slot.after_s = slots[i]->slot_unix_ms / 1000;
    }
    cs_store_slots_free(slots, n);
    if (s->stopping)
        return;
    s->slots.on = true;
    for (size_t i = 0; i < s->n_jobs; i++)
        place(s, s->jobs[i]);
    cs_log_info("%zu jobs on a schedule", s->slots.due.n);
    arm(s);
}

static void start_timer_cb(uv_timer_t *timer)
{
    struct cs_sched *s = timer->data;
    if (!s->stopping)
        cs_store_slot_last(s->store, last_slots_cb, s);
}

void cs_slots_start(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    cs_heap_init(&s->slots.due, due_less_cb, due_moved_cb);
    CS_ASSERT(uv_timer_init(s->loop, &s->slots.timer) == 0);
    CS_ASSERT(cs_next_turn_init(s->loop, &s->slots.more, more_cb) == 0);
    s->slots.timer.data = s;
    s->slots.start_ms = cs_now_unix_ms();
    cs_store_slot_last(s->store, last_slots_cb, s);
}

void cs_slots_stop(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    if (s->slots.timer.data == NULL)
        return;
    s->slots.on = false;
    uv_close((uv_handle_t *)&s->slots.timer, NULL);
    cs_next_turn_close(&s->slots.more);
    for (size_t i = 0; i < s->n_jobs; i++)
        s->jobs[i]->slot.heap_index = CS_NOT_IN_HEAP;
    cs_heap_free(&s->slots.due);
}

void cs_slots_job_changed(struct cs_sched *s, struct cs_job *job, int64_t after_s)
{
    CS_ASSERT_LOOP();
    job->slot.after_s = after_s;
    if (!s->slots.on)
        return;
    place(s, job);
    arm(s);
}

void cs_slots_job_removed(struct cs_sched *s, struct cs_job *job)
{
    CS_ASSERT_LOOP();
    if (job->slot.heap_index == CS_NOT_IN_HEAP)
        return;
    cs_heap_remove(&s->slots.due, job->slot.heap_index);
    arm(s);
}
