/* Unit tests of the heap: random pushes, removals from anywhere and key
 * changes, checked after every step against the heap property, each item's
 * own index, and a plain array holding the same items. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "heap.h"

#define ITEMS 500
#define STEPS 20000

struct item {
    int key;
    size_t index;
};

static bool item_less(const void *a, const void *b)
{
    return ((const struct item *)a)->key < ((const struct item *)b)->key;
}

static void item_moved(void *item, size_t index)
{
    ((struct item *)item)->index = index;
}

static void check(const struct cs_heap *heap, const struct item *items, size_t n_items)
{
    size_t in = 0;
    for (size_t i = 0; i < heap->n; i++) {
        const struct item *it = heap->items[i];
        assert_int_equal(it->index, i);
        if (i > 0)
            assert_false(item_less(it, heap->items[(i - 1) / 2]));
    }
    for (size_t i = 0; i < n_items; i++) {
        if (items[i].index == CS_NOT_IN_HEAP)
            continue;
        in++;
        assert_ptr_equal(heap->items[items[i].index], &items[i]);
        assert_true(items[i].key >= ((const struct item *)cs_heap_top(heap))->key);
    }
    assert_int_equal(in, heap->n);
}

static void test_heap_random(void **state)
{
    (void)state;
    static struct item items[ITEMS];
    struct cs_heap heap;
    cs_heap_init(&heap, item_less, item_moved);
    assert_null(cs_heap_top(&heap));
    for (size_t i = 0; i < ITEMS; i++)
        items[i] = (struct item){.key = 0, .index = CS_NOT_IN_HEAP};
    srand(7); /* the same sequence every run */
    for (int step = 0; step < STEPS; step++) {
        struct item *it = &items[(size_t)rand() % ITEMS];
        int op = rand() % 3;
        if (it->index == CS_NOT_IN_HEAP) {
            it->key = rand() % 1000;
            cs_heap_push(&heap, it);
        } else if (op == 0) {
            cs_heap_remove(&heap, it->index);
            assert_int_equal(it->index, CS_NOT_IN_HEAP);
        } else {
            it->key = rand() % 1000;
            cs_heap_fix(&heap, it->index);
        }
        check(&heap, items, ITEMS);
    }
    /* Draining gives the keys in order. */
    int last = -1;
    while (cs_heap_top(&heap) != NULL) {
        struct item *top = cs_heap_top(&heap);
        assert_true(top->key >= last);
        last = top->key;
        cs_heap_remove(&heap, 0);
    }
    cs_heap_free(&heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
