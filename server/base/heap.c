/* heap: see heap.h. */
#include "heap.h"

#include <stdlib.h>

#include "util.h"

static void put(struct cs_heap *heap, size_t i, void *item)
{
    heap->items[i] = item;
    heap->moved_cb(item, i);
}

static void sift_up(struct cs_heap *heap, size_t i)
{
    void *item = heap->items[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!heap->less_cb(item, heap->items[parent]))
            break;
        put(heap, i, heap->items[parent]);
        i = parent;
    }
    put(heap, i, item);
}

static void sift_down(struct cs_heap *heap, size_t i)
{
    void *item = heap->items[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= heap->n)
            break;
        if (child + 1 < heap->n && heap->less_cb(heap->items[child + 1], heap->items[child]))
            child++;
        if (!heap->less_cb(heap->items[child], item))
            break;
        put(heap, i, heap->items[child]);
        i = child;
    }
    put(heap, i, item);
}

void cs_heap_init(struct cs_heap *heap, cs_heap_less_cb less_cb, cs_heap_moved_cb moved_cb)
{
    *heap = (struct cs_heap){.less_cb = less_cb, .moved_cb = moved_cb};
}

void cs_heap_free(struct cs_heap *heap)
{
    free(heap->items);
    heap->items = NULL;
    heap->n = heap->cap = 0;
}

void cs_heap_push(struct cs_heap *heap, void *item)
{
    if (heap->n == heap->cap) {
        heap->cap = heap->cap ? heap->cap * 2 : 64;
        heap->items = cs_xrealloc(heap->items, heap->cap * sizeof(*heap->items));
    }
    heap->n++;
    put(heap, heap->n - 1, item);
    sift_up(heap, heap->n - 1);
}

void cs_heap_remove(struct cs_heap *heap, size_t index)
{
    CS_ASSERT(index < heap->n);
    heap->moved_cb(heap->items[index], CS_NOT_IN_HEAP);
    heap->n--;
    if (index == heap->n)
        return;
    put(heap, index, heap->items[heap->n]);
    cs_heap_fix(heap, index);
}

void cs_heap_fix(struct cs_heap *heap, size_t index)
{
    CS_ASSERT(index < heap->n);
    sift_down(heap, index);
    sift_up(heap, index);
}

void *cs_heap_top(const struct cs_heap *heap)
{
    return heap->n > 0 ? heap->items[0] : NULL;
}
