/* later: the heap of runs waiting for their not_before, and its one timer,
 * re-armed for the new earliest whenever the top of the heap changes. */
#include "later.h"

#include "ahead_dir.h"
#include "pump.h"
#include "util.h"

/* The most runs moved to their queues in one loop turn: the rest go on in
 * the next (next_turn.h), so a thousand runs due at once never stall it. */
#define LATER_BATCH 64

/* When a run is let go to its queue: its not_before less the lead. */
static int64_t release_ms(const struct cs_run *run)
{
    return run->msg->not_before_unix_ms - CS_LATER_LEAD_MS;
}

static bool earlier(const void *a, const void *b)
{
    const struct cs_run *x = a, *y = b;
    if (x->msg->not_before_unix_ms != y->msg->not_before_unix_ms)
        return x->msg->not_before_unix_ms < y->msg->not_before_unix_ms;
    return x->msg->id < y->msg->id;
}

static void moved(void *item, size_t index)
{
    ((struct cs_run *)item)->later_index = index;
}

static void timer_cb(uv_timer_t *timer);

/* Arms the timer for the earliest waiting run, or stops it when none. The
 * delay is the wall clock's: not_before is a time of day. */
static void arm(struct cs_sched *s)
{
    struct cs_run *top = cs_heap_top(&s->later);
    /* More are due than a turn moves: the next turn re-arms it. */
    if (cs_next_turn_asked(&s->later_more))
        return;
    if (top == NULL) {
        (void)uv_timer_stop(&s->later_timer); /* fails only for a closing handle */
        return;
    }
    int64_t wait = release_ms(top) - cs_now_unix_ms();
    /* uv_timer_start fails only for a closing handle, which dispatch never
     * asks for: the close comes last. */
    (void)uv_timer_start(&s->later_timer, timer_cb, wait > 0 ? (uint64_t)wait : 0, 0);
}

/* Moves the runs due by now to their queues, LATER_BATCH at most. */
static void release_due(struct cs_sched *s)
{
    int64_t now = cs_now_unix_ms();
    for (int i = 0; i < LATER_BATCH; i++) {
        struct cs_run *top = cs_heap_top(&s->later);
        if (top == NULL || release_ms(top) > now) {
            arm(s);
            return;
        }
        cs_heap_remove(&s->later, 0);
        cs_pump_enqueue(s, top);
    }
    cs_next_turn_ask(&s->later_more);
}

static void timer_cb(uv_timer_t *timer)
{
    release_due(CS_CONTAINER_OF(timer, struct cs_sched, later_timer));
}

static void more_cb(struct cs_next_turn *turn)
{
    release_due(CS_CONTAINER_OF(turn, struct cs_sched, later_more));
}

int cs_later_init(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    cs_heap_init(&s->later, earlier, moved);
    int rc = cs_next_turn_init(s->loop, &s->later_more, more_cb);
    return rc != 0 ? rc : uv_timer_init(s->loop, &s->later_timer);
}

void cs_later_close(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    cs_next_turn_close(&s->later_more);
    uv_close((uv_handle_t *)&s->later_timer, NULL);
    cs_heap_free(&s->later);
}

void cs_later_enqueue(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    CS_ASSERT(!run->queued && run->later_index == CS_NOT_IN_HEAP);
    if (release_ms(run) <= cs_now_unix_ms()) {
        cs_pump_enqueue(s, run);
        return;
    }
    cs_heap_push(&s->later, run);
    cs_ahead_dir_make(s, run);
    if (run->later_index == 0)
        arm(s);
}

bool cs_later_is_waiting(const struct cs_run *run)
{
    CS_ASSERT_LOOP();
    return run->later_index != CS_NOT_IN_HEAP;
}

void cs_later_remove(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (run->later_index == CS_NOT_IN_HEAP)
        return;
    bool was_top = run->later_index == 0;
    cs_heap_remove(&s->later, run->later_index);
    if (was_top)
        arm(s);
}
