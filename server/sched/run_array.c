/* run_array: the gate of each capped array (run_array.h). An array's record
 * lives from its first run that meets the gate to the moment none of its
 * runs is past the gate or waiting at it. */
#include "run_array.h"

#include <stdlib.h>

#include "util.h"

struct cs_run_array {
    uint32_t max_running;    /* its cap, as its runs carry it */
    uint32_t passed;         /* runs past the gate, not yet ended */
    struct cs_queue waiting; /* of struct cs_run (queue_link), in id order */
};

static bool is_capped(const struct cs_run *run)
{
    return run->msg->array_id != 0 && run->msg->array_max_running > 0;
}

static struct cs_run_array *array_of(struct cs_sched *s, const struct cs_run *run)
{
    struct cs_run_array *a = cs_idmap_get(&s->arrays, run->msg->array_id);
    if (a == NULL) {
        a = cs_xcalloc(1, sizeof(*a));
        a->max_running = run->msg->array_max_running;
        cs_queue_init(&a->waiting);
        cs_idmap_put(&s->arrays, run->msg->array_id, a);
    }
    return a;
}

static void drop_if_idle(struct cs_sched *s, const struct cs_run *run, struct cs_run_array *a)
{
    if (a->passed == 0 && cs_queue_is_empty(&a->waiting)) {
        CS_ASSERT(cs_idmap_remove(&s->arrays, run->msg->array_id) == a);
        free(a);
    }
}

bool cs_run_array_admit(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (!is_capped(run) || run->array_passed)
        return true;
    CS_ASSERT(!run->array_waiting);
    struct cs_run_array *a = array_of(s, run);
    if (a->passed < a->max_running && cs_queue_is_empty(&a->waiting)) {
        a->passed++;
        run->array_passed = true;
        return true;
    }
    /* Runs meet the gate in id order but after a restart (adoption ends in
     * any order): the walk keeps the line sorted. */
    struct cs_qlink *prev = a->waiting.tail;
    if (prev != NULL && CS_CONTAINER_OF(prev, struct cs_run, queue_link)->msg->id > run->msg->id) {
        prev = NULL;
        for (struct cs_qlink *l = a->waiting.head;
             CS_CONTAINER_OF(l, struct cs_run, queue_link)->msg->id < run->msg->id; l = l->next)
            prev = l;
    }
    cs_queue_insert_after(&a->waiting, prev, &run->queue_link);
    run->array_waiting = true;
    return false;
}

void cs_run_array_count_started(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (!is_capped(run) || run->array_passed)
        return;
    array_of(s, run)->passed++;
    run->array_passed = true;
}

struct cs_run *cs_run_array_leave(struct cs_sched *s, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (!is_capped(run) || (!run->array_passed && !run->array_waiting))
        return NULL;
    struct cs_run_array *a = cs_idmap_get(&s->arrays, run->msg->array_id);
    struct cs_run *next = NULL;
    CS_ASSERT(a != NULL);
    if (run->array_waiting) {
        cs_queue_remove(&a->waiting, &run->queue_link);
        run->array_waiting = false;
    } else {
        a->passed--;
        run->array_passed = false;
        if (a->passed < a->max_running && !cs_queue_is_empty(&a->waiting)) {
            next = CS_CONTAINER_OF(cs_queue_pop(&a->waiting), struct cs_run, queue_link);
            next->array_waiting = false;
            next->array_passed = true;
            a->passed++;
        }
    }
    drop_if_idle(s, run, a);
    return next;
}

void cs_run_array_close(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    void *value;
    for (size_t pos = 0; cs_idmap_next(&s->arrays, &pos, &value) != 0;)
        free(value);
    cs_idmap_close(&s->arrays);
}
