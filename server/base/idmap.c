/* idmap: int64 id -> pointer, open addressing with linear probing. */
#include "idmap.h"

#include <stdlib.h>

#include "util.h"

static size_t slot_of(const struct cs_idmap *map, int64_t id)
{
    /* Fibonacci hashing spreads sequential ids over the table. */
    return (size_t)(((uint64_t)id * 11400714819323198485ull) >> 20) & (map->cap - 1);
}

void cs_idmap_init(struct cs_idmap *map)
{
    map->cap = 64;
    map->count = 0;
    map->slots = cs_xcalloc(map->cap, sizeof(*map->slots));
}

void cs_idmap_close(struct cs_idmap *map)
{
    free(map->slots);
    map->slots = NULL;
    map->cap = map->count = 0;
}

static void grow(struct cs_idmap *map)
{
    struct cs_idmap_slot *old = map->slots;
    size_t old_cap = map->cap;
    map->cap *= 2;
    map->slots = cs_xcalloc(map->cap, sizeof(*map->slots));
    map->count = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].id != 0)
            cs_idmap_put(map, old[i].id, old[i].value);
    free(old);
}

void cs_idmap_put(struct cs_idmap *map, int64_t id, void *value)
{
    CS_ASSERT(id > 0);
    if ((map->count + 1) * 4 > map->cap * 3)
        grow(map);
    size_t i = slot_of(map, id);
    while (map->slots[i].id != 0) {
        CS_ASSERT(map->slots[i].id != id);
        i = (i + 1) & (map->cap - 1);
    }
    map->slots[i].id = id;
    map->slots[i].value = value;
    map->count++;
}

void *cs_idmap_get(const struct cs_idmap *map, int64_t id)
{
    if (map->cap == 0)
        return NULL; /* closed */
    for (size_t i = slot_of(map, id); map->slots[i].id != 0; i = (i + 1) & (map->cap - 1))
        if (map->slots[i].id == id)
            return map->slots[i].value;
    return NULL;
}

void *cs_idmap_remove(struct cs_idmap *map, int64_t id)
{
    if (id <= 0 || map->cap == 0)
        return NULL; /* 0 marks an empty slot: it is never a member; or closed */
    size_t i = slot_of(map, id);
    while (map->slots[i].id != id) {
        if (map->slots[i].id == 0)
            return NULL;
        i = (i + 1) & (map->cap - 1);
    }
    void *value = map->slots[i].value;
    /* Backward-shift: move later members of the probe chain into the hole. */
    size_t hole = i;
    for (size_t j = (i + 1) & (map->cap - 1); map->slots[j].id != 0; j = (j + 1) & (map->cap - 1)) {
        size_t home = slot_of(map, map->slots[j].id);
        bool between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!between) {
            map->slots[hole] = map->slots[j];
            hole = j;
        }
    }
    map->slots[hole].id = 0;
    map->slots[hole].value = NULL;
    map->count--;
    return value;
}

int64_t cs_idmap_next(const struct cs_idmap *map, size_t *pos, void **value)
{
    for (; *pos < map->cap; (*pos)++) {
        const struct cs_idmap_slot *slot = &map->slots[(*pos)];
        if (slot->id != 0) {
            (*pos)++;
            *value = slot->value;
            return slot->id;
        }
    }
    return 0;
}
