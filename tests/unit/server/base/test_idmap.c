/* Unit tests of the idmap: put/get/remove, growth to many thousands of ids,
 * ids that share a home slot (including chains that wrap around the end of
 * the table), and random insert/remove sequences checked against a plain
 * array, with the probe-chain invariant checked slot by slot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "idmap.h"

/* A distinct pointer per id, so a value found under the wrong id shows. */
static void *value_of(int64_t id)
{
    return (void *)(uintptr_t)(0x1000 + (uint64_t)id * 16);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
    /* xorshift64*: a fixed seed keeps every run of the test the same. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

/* The slot an id lands in when it is alone in a fresh (64-slot) table: its
 * home. Found through the map itself, not by copying its hash. */
static size_t home_of(int64_t id)
{
    struct cs_idmap map;
    size_t home = SIZE_MAX;

    cs_idmap_init(&map);
    assert_int_equal(map.cap, 64);
    cs_idmap_put(&map, id, value_of(id));
    for (size_t i = 0; i < map.cap; i++)
        if (map.slots[i].id == id)
            home = i;
    cs_idmap_close(&map);
    assert_true(home != SIZE_MAX);
    return home;
}

/* Linear probing's invariant: between an id's home and its slot there is no
 * empty slot, so a lookup never stops short. Also checks count. */
static void check_chains(const struct cs_idmap *map)
{
    size_t used = 0;

    for (size_t i = 0; i < map->cap; i++) {
        int64_t id = map->slots[i].id;
        if (id == 0)
            continue;
        used++;
        if (cs_idmap_get(map, id) != map->slots[i].value)
            fail_msg("id %lld in slot %zu: get returns %p, the slot holds %p", (long long)id, i,
                     cs_idmap_get(map, id), map->slots[i].value);
    }
    if (used != map->count)
        fail_msg("count: expected %zu (occupied slots), got %zu", used, map->count);
    if (map->count * 4 > map->cap * 3)
        fail_msg("load: %zu ids in %zu slots is over three quarters", map->count, map->cap);
}

static void test_idmap_put_get_remove(void **state)
{
    struct cs_idmap map;

    cs_idmap_init(&map);
    assert_int_equal(map.count, 0);
    assert_null(cs_idmap_get(&map, 1));

    cs_idmap_put(&map, 1, value_of(1));
    cs_idmap_put(&map, 42, value_of(42));
    cs_idmap_put(&map, INT64_MAX, value_of(7));
    assert_int_equal(map.count, 3);
    assert_ptr_equal(cs_idmap_get(&map, 1), value_of(1));
    assert_ptr_equal(cs_idmap_get(&map, 42), value_of(42));
    assert_ptr_equal(cs_idmap_get(&map, INT64_MAX), value_of(7));
    assert_null(cs_idmap_get(&map, 2));
    assert_null(cs_idmap_get(&map, -1));

    assert_ptr_equal(cs_idmap_remove(&map, 42), value_of(42));
    assert_null(cs_idmap_get(&map, 42));
    assert_int_equal(map.count, 2);
    assert_null(cs_idmap_remove(&map, 42));
    assert_null(cs_idmap_remove(&map, 43));
    assert_null(cs_idmap_remove(&map, -5));
    assert_int_equal(map.count, 2);

    /* A removed id can come back with another value. */
    cs_idmap_put(&map, 42, value_of(43));
    assert_ptr_equal(cs_idmap_get(&map, 42), value_of(43));
    check_chains(&map);
    cs_idmap_close(&map);
    assert_null(map.slots);
    assert_int_equal(map.count, 0);
}

/* A NULL value is stored like any other. */
static void test_idmap_null_value(void **state)
{
    struct cs_idmap map;

    cs_idmap_init(&map);
    cs_idmap_put(&map, 5, NULL);
    assert_int_equal(map.count, 1);
    assert_null(cs_idmap_get(&map, 5));
    assert_null(cs_idmap_remove(&map, 5));
    assert_int_equal(map.count, 0);
    cs_idmap_close(&map);
}

/* The walk gives every member once, with its value (a NULL one too), after
 * growth and removals, and then 0. */
static void test_idmap_next_walks_every_member(void **state)
{
    enum { N = 300 };
    struct cs_idmap map;
    bool seen[N + 1] = {false};
    size_t pos = 0, n = 0;
    void *value = value_of(1);

    cs_idmap_init(&map);
    assert_int_equal(cs_idmap_next(&map, &pos, &value), 0);
    for (int64_t id = 1; id <= N; id++)
        cs_idmap_put(&map, id, id == 7 ? NULL : value_of(id));
    for (int64_t id = 2; id <= N; id += 3)
        assert_ptr_equal(cs_idmap_remove(&map, id), value_of(id));
    pos = 0;
    for (int64_t id; (id = cs_idmap_next(&map, &pos, &value)) != 0; n++) {
        assert_true(id >= 1 && id <= N && id % 3 != 2);
        assert_false(seen[id]);
        seen[id] = true;
        assert_ptr_equal(value, id == 7 ? NULL : value_of(id));
    }
    assert_int_equal(n, map.count);
    assert_int_equal(cs_idmap_next(&map, &pos, &value), 0);
    cs_idmap_close(&map);
}

/* Server bug (idmap.c, cs_idmap_remove): id 0 marks an empty slot, so a
 * search for 0 "finds" the first empty slot and count goes down although
 * nothing was removed. Enough such calls wrap count and stop growth. The
 * header promises NULL for an absent id and nothing else. */
static void test_idmap_remove_zero_is_absent(void **state)
{
    struct cs_idmap map;

    cs_idmap_init(&map);
    for (int64_t id = 1; id <= 3; id++)
        cs_idmap_put(&map, id, value_of(id));
    assert_null(cs_idmap_remove(&map, 0));
    if (map.count != 3)
        fail_msg("count after cs_idmap_remove(map, 0): expected 3, got %zu", map.count);
    for (int64_t id = 1; id <= 3; id++)
        assert_ptr_equal(cs_idmap_get(&map, id), value_of(id));
    cs_idmap_close(&map);
}

static void test_idmap_growth(void **state)
{
    enum { N = 200000 };
    struct cs_idmap map;

    cs_idmap_init(&map);
    for (int64_t id = 1; id <= N; id++) {
        cs_idmap_put(&map, id, value_of(id));
        if ((id & (id - 1)) == 0)
            check_chains(&map);
    }
    assert_int_equal(map.count, N);
    assert_true((map.cap & (map.cap - 1)) == 0);
    check_chains(&map);
    for (int64_t id = 1; id <= N; id++)
        if (cs_idmap_get(&map, id) != value_of(id))
            fail_msg("get(%lld) after growth: expected %p, got %p", (long long)id, value_of(id),
                     cs_idmap_get(&map, id));
    assert_null(cs_idmap_get(&map, N + 1));

    /* Remove every other id: the rest must still be found. */
    for (int64_t id = 2; id <= N; id += 2)
        assert_ptr_equal(cs_idmap_remove(&map, id), value_of(id));
    check_chains(&map);
    for (int64_t id = 1; id <= N; id++)
        assert_ptr_equal(cs_idmap_get(&map, id), id % 2 ? value_of(id) : NULL);
    cs_idmap_close(&map);
}

/* Ids far apart and in the high bits, where a weak hash would collide. */
static void test_idmap_sparse_ids(void **state)
{
    enum { N = 20000 };
    struct cs_idmap map;

    cs_idmap_init(&map);
    for (int64_t i = 1; i <= N; i++)
        cs_idmap_put(&map, i << 32, value_of(i));
    for (int64_t i = 1; i <= N; i++)
        cs_idmap_put(&map, i * 1048576 + 1, value_of(N + i));
    check_chains(&map);
    for (int64_t i = 1; i <= N; i++) {
        assert_ptr_equal(cs_idmap_get(&map, i << 32), value_of(i));
        assert_ptr_equal(cs_idmap_get(&map, i * 1048576 + 1), value_of(N + i));
    }
    cs_idmap_close(&map);
}

/* A closed map is empty: a lookup from a commit answered during the
 * shutdown finds nothing instead of reading the freed table. */
static void test_idmap_closed_is_empty(void **state)
{
    struct cs_idmap map;
    size_t pos = 0;
    void *value;

    cs_idmap_init(&map);
    cs_idmap_put(&map, 7, value_of(7));
    cs_idmap_close(&map);
    assert_null(cs_idmap_get(&map, 7));
    assert_null(cs_idmap_get(&map, 8));
    assert_null(cs_idmap_remove(&map, 7));
    assert_int_equal(cs_idmap_next(&map, &pos, &value), 0);
}

/* Collects up to max ids whose home in a 64-slot table is home. */
static size_t ids_with_home(size_t home, int64_t *out, size_t max)
{
    size_t n = 0;

    for (int64_t id = 1; id < 200000 && n < max; id++)
        if (home_of(id) == home)
            out[n++] = id;
    return n;
}

/* Ids sharing a home slot, with chains that run past the end of the table
 * and into the homes of other ids; every removal order must keep the rest
 * reachable. */
static void test_idmap_colliding_ids(void **state)
{
    int64_t last[6], first[4], second[3];

    assert_int_equal(ids_with_home(63, last, 6), 6);
    assert_int_equal(ids_with_home(0, first, 4), 4);
    assert_int_equal(ids_with_home(1, second, 3), 3);

    int64_t all[13];
    size_t n = 0;
    for (size_t i = 0; i < 6; i++)
        all[n++] = last[i];
    for (size_t i = 0; i < 4; i++)
        all[n++] = first[i];
    for (size_t i = 0; i < 3; i++)
        all[n++] = second[i];

    /* Every rotation of the insert order, then removal from the front, the
     * back and the middle of the chains. */
    for (size_t rot = 0; rot < n; rot++) {
        struct cs_idmap map;
        bool present[13];

        cs_idmap_init(&map);
        for (size_t k = 0; k < n; k++) {
            size_t i = (k + rot) % n;
            cs_idmap_put(&map, all[i], value_of(all[i]));
            present[i] = true;
        }
        assert_int_equal(map.cap, 64);
        /* The six ids at home 63 fill 63 and spill into 0..4. */
        assert_int_not_equal(map.slots[63].id, 0);
        check_chains(&map);

        static const size_t order[] = {0, 12, 6, 3, 9, 1, 11, 7, 2, 10, 4, 8, 5};
        for (size_t k = 0; k < n; k++) {
            size_t victim = (order[k] + rot) % n;
            assert_ptr_equal(cs_idmap_remove(&map, all[victim]), value_of(all[victim]));
            present[victim] = false;
            check_chains(&map);
            for (size_t i = 0; i < n; i++) {
                void *want = present[i] ? value_of(all[i]) : NULL;
                if (cs_idmap_get(&map, all[i]) != want)
                    fail_msg("rotation %zu, after removing id %lld: get(%lld) expected %p, "
                             "got %p",
                             rot, (long long)all[victim], (long long)all[i], want,
                             cs_idmap_get(&map, all[i]));
            }
        }
        assert_int_equal(map.count, 0);
        cs_idmap_close(&map);
    }
}

/* Random puts and removes over a small id range (so chains form and break
 * often), checked against a plain array after every step. */
static void random_against_reference(int64_t stride, size_t range, size_t steps)
{
    struct cs_idmap map;
    void **ref = calloc(range + 1, sizeof(*ref));
    size_t present = 0;

    assert_non_null(ref);
    cs_idmap_init(&map);
    for (size_t step = 0; step < steps; step++) {
        size_t k = 1 + (size_t)(rng_next() % range);
        int64_t id = (int64_t)k * stride;
        /* Lean towards inserting until half full, then keep it around there. */
        bool insert = ref[k] == NULL && (present < range / 2 || rng_next() % 4 == 0);
        if (insert) {
            void *v = value_of((int64_t)step + 1);
            cs_idmap_put(&map, id, v);
            ref[k] = v;
            present++;
        } else {
            void *got = cs_idmap_remove(&map, id);
            if (got != ref[k])
                fail_msg("step %zu: remove(%lld) expected %p, got %p", step, (long long)id, ref[k],
                         got);
            if (ref[k] != NULL)
                present--;
            ref[k] = NULL;
        }
        if (map.count != present)
            fail_msg("step %zu: count expected %zu, got %zu", step, present, map.count);
        if (step % 97 == 0 || step + 1 == steps) {
            check_chains(&map);
            for (size_t j = 1; j <= range; j++)
                if (cs_idmap_get(&map, (int64_t)j * stride) != ref[j])
                    fail_msg("step %zu: get(%lld) expected %p, got %p", step, (long long)j * stride,
                             ref[j], cs_idmap_get(&map, (int64_t)j * stride));
        }
    }
    cs_idmap_close(&map);
    free(ref);
}

static void test_idmap_random_against_reference(void **state)
{
    random_against_reference(1, 3000, 60000);
}

/* Strides that are multiples of large powers of two share low bits. */
static void test_idmap_random_strided_ids(void **state)
{
    random_against_reference(1 << 20, 2000, 40000);
    random_against_reference(INT64_C(1) << 40, 500, 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idmap_put_get_remove),
        cmocka_unit_test(test_idmap_null_value),
        cmocka_unit_test(test_idmap_next_walks_every_member),
        cmocka_unit_test(test_idmap_remove_zero_is_absent),
        cmocka_unit_test(test_idmap_growth),
        cmocka_unit_test(test_idmap_sparse_ids),
        cmocka_unit_test(test_idmap_colliding_ids),
        cmocka_unit_test(test_idmap_random_against_reference),
        cmocka_unit_test(test_idmap_random_strided_ids),
        cmocka_unit_test(test_idmap_closed_is_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
