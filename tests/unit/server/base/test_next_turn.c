/* Unit tests of next_turn: work asked for the next turn runs once a turn,
 * after a timer that came due while the previous turn's work ran (what a
 * zero timer re-started from its own callback does not give on libuv before
 * 1.48), and an ask taken back does not run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "next_turn.h"
#include "queue.h"

#define CHUNKS 3

struct order {
    struct cs_next_turn turn;
    uv_timer_t timer;
    char seen[16];
    int n_seen, chunks;
};

static void note(struct order *o, char what)
{
    assert_true(o->n_seen < (int)sizeof(o->seen) - 1);
    o->seen[o->n_seen++] = what;
}

static void timer_cb(uv_timer_t *timer)
{
    note(timer->data, 't');
}

/* One chunk of work that outlasts the timer's 1 ms, then asks for more
 * (twice: the second ask is a no-op). The first chunk arms the timer, so
 * that it comes due during that chunk however late the loop began. */
static void chunk_cb(struct cs_next_turn *turn)
{
    struct order *o = CS_CONTAINER_OF(turn, struct order, turn);
    uint64_t until = uv_hrtime() + 3000000;

    note(o, 'c');
    if (o->chunks == 0)
        assert_int_equal(uv_timer_start(&o->timer, timer_cb, 1, 0), 0);
    while (uv_hrtime() < until)
        ;
    if (++o->chunks < CHUNKS) {
        cs_next_turn_ask(turn);
        cs_next_turn_ask(turn);
        assert_true(cs_next_turn_asked(turn));
    }
}

static void test_timer_due_meanwhile_runs_between_chunks(void **state)
{
    (void)state;
    uv_loop_t loop;
    struct order o = {0};

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(cs_next_turn_init(&loop, &o.turn, chunk_cb), 0);
    assert_false(cs_next_turn_asked(&o.turn));
    assert_int_equal(uv_timer_init(&loop, &o.timer), 0);
    o.timer.data = &o;
    cs_next_turn_ask(&o.turn);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    o.seen[o.n_seen] = '\0';
    assert_string_equal(o.seen, "ctcc");
    assert_false(cs_next_turn_asked(&o.turn));
    cs_next_turn_close(&o.turn);
    uv_close((uv_handle_t *)&o.timer, NULL);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void never_cb(struct cs_next_turn *turn)
{
    (void)turn;
    fail_msg("an ask taken back ran");
}

static void test_cancelled_ask_does_not_run(void **state)
{
    (void)state;
    uv_loop_t loop;
    struct cs_next_turn turn;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(cs_next_turn_init(&loop, &turn, never_cb), 0);
    cs_next_turn_ask(&turn);
    cs_next_turn_cancel(&turn);
    cs_next_turn_cancel(&turn);
    assert_false(cs_next_turn_asked(&turn));
    /* Nothing active: the loop ends at once instead of spinning. */
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    cs_next_turn_close(&turn);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_due_meanwhile_runs_between_chunks),
        cmocka_unit_test(test_cancelled_ask_does_not_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
