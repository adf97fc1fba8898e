/* ended_runs: a ring of the runs that ended last, with an index by id. */
#include "ended_runs.h"

#include <stdlib.h>

#include "util.h"

void cs_ended_runs_init(struct cs_ended_runs *e, size_t max_bytes)
{
    cs_idmap_init(&e->by_id);
    e->ring = cs_xcalloc(CS_ENDED_RUNS_MAX, sizeof(*e->ring));
    e->sizes = cs_xcalloc(CS_ENDED_RUNS_MAX, sizeof(*e->sizes));
    e->head = e->count = e->bytes = 0;
    e->max_bytes = max_bytes;
}

/* Frees the run at ring place i, leaving the place empty (NULL). */
static void free_at(struct cs_ended_runs *e, size_t i)
{
    Csched__V1__Run *run = e->ring[i];
    CS_ASSERT(cs_idmap_remove(&e->by_id, run->id) == run);
    e->bytes -= e->sizes[i];
    e->sizes[i] = 0;
    protobuf_c_message_free_unpacked(&run->base, NULL);
    e->ring[i] = NULL;
}

/* Drops the oldest place, a run or one left empty by a forget. */
static void drop_oldest(struct cs_ended_runs *e)
{
    if (e->ring[e->head] != NULL)
        free_at(e, e->head);
    e->head = (e->head + 1) % CS_ENDED_RUNS_MAX;
    e->count--;
}

void cs_ended_runs_close(struct cs_ended_runs *e)
{
    while (e->count > 0)
        drop_oldest(e);
    cs_idmap_close(&e->by_id);
    free(e->ring);
    free(e->sizes);
    e->ring = NULL;
    e->sizes = NULL;
}

void cs_ended_runs_add(struct cs_ended_runs *e, Csched__V1__Run *run)
{
    size_t size = protobuf_c_message_get_packed_size(&run->base);
    if (e->ring == NULL || size > e->max_bytes || cs_idmap_get(&e->by_id, run->id) != NULL) {
        protobuf_c_message_free_unpacked(&run->base, NULL);
        return;
    }
    while (e->count == CS_ENDED_RUNS_MAX || e->bytes + size > e->max_bytes)
        drop_oldest(e);
    size_t tail = (e->head + e->count) % CS_ENDED_RUNS_MAX;
    e->ring[tail] = run;
    e->sizes[tail] = size;
    e->count++;
    e->bytes += size;
    cs_idmap_put(&e->by_id, run->id, run);
}

void cs_ended_runs_drop_ended_before(struct cs_ended_runs *e, int64_t before_unix_ms)
{
    while (e->count > 0 &&
           (e->ring[e->head] == NULL || e->ring[e->head]->ended_unix_ms < before_unix_ms))
        drop_oldest(e);
}

void cs_ended_runs_forget(struct cs_ended_runs *e, int64_t id)
{
    const Csched__V1__Run *run = cs_idmap_get(&e->by_id, id);

    /* Rare (a purge of a job's history): a walk of the ring is enough. */
    for (size_t k = 0; run != NULL && k < e->count; k++) {
        size_t i = (e->head + k) % CS_ENDED_RUNS_MAX;
        if (e->ring[i] == run) {
            free_at(e, i);
            return;
        }
    }
}

const Csched__V1__Run *cs_ended_runs_get(const struct cs_ended_runs *e, int64_t id)
{
    return cs_idmap_get(&e->by_id, id);
}
