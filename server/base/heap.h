/* heap: a binary min-heap of pointers that tells each item where it sits,
 * so an item can be removed or re-sorted in O(log n) from the item itself.
 * The pump's ready jobs and the schedule's next fire times both need that.
 * Not thread-safe: each heap belongs to one thread (cschedd's: the loop).
 *
 * Items carry their own index (set through moved_cb); an item out of the
 * heap has index CS_NOT_IN_HEAP. */
#ifndef CS_HEAP_H
#define CS_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CS_NOT_IN_HEAP SIZE_MAX

/* true if a must come out before b. */
typedef bool (*cs_heap_less_cb)(const void *a, const void *b);
/* item now sits at index (CS_NOT_IN_HEAP: it left the heap). */
typedef void (*cs_heap_moved_cb)(void *item, size_t index);

struct cs_heap {
    void **items;
    size_t n, cap;
    cs_heap_less_cb less_cb;
    cs_heap_moved_cb moved_cb;
};

void cs_heap_init(struct cs_heap *heap, cs_heap_less_cb less_cb, cs_heap_moved_cb moved_cb);
/* Frees the array; the items are the caller's. */
void cs_heap_free(struct cs_heap *heap);
void cs_heap_push(struct cs_heap *heap, void *item);
/* Takes out the item at index. */
void cs_heap_remove(struct cs_heap *heap, size_t index);
/* Restores the order after the key of the item at index changed. */
void cs_heap_fix(struct cs_heap *heap, size_t index);
/* The least item, or NULL when empty. */
void *cs_heap_top(const struct cs_heap *heap);

#endif
