/* idmap: a hash map from positive int64 ids to pointers (open addressing,
 * linear probing, backward-shift deletion so no tombstones pile up). Used for
 * the loop's table of active runs. Not thread-safe: one owner. */
#ifndef CS_IDMAP_H
#define CS_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct cs_idmap_slot {
    int64_t id; /* 0 = empty */
    void *value;
};

struct cs_idmap {
    struct cs_idmap_slot *slots;
    size_t cap; /* a power of two */
    size_t count;
};

void cs_idmap_init(struct cs_idmap *map);
/* Frees the table; the map stays empty: get and remove find nothing (a
 * commit answered during the shutdown may still look its run up). */
void cs_idmap_close(struct cs_idmap *map);
/* id must be > 0 and not yet present. */
void cs_idmap_put(struct cs_idmap *map, int64_t id, void *value);
void *cs_idmap_get(const struct cs_idmap *map, int64_t id);
/* Returns the removed value, or NULL if id was absent. */
void *cs_idmap_remove(struct cs_idmap *map, int64_t id);
/* Walks the members in no particular order: start with *pos = 0; returns
 * the next member's id with its value in *value, and moves *pos past it; 0
 * at the end. The map must not change during the walk. */
int64_t cs_idmap_next(const struct cs_idmap *map, size_t *pos, void **value);

#endif
