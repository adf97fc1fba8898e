/* Unit tests of the loop-lag probe: the histogram's bucket bounds and
 * quantiles on known distributions, merging, the last-minute window of
 * cs_probe_summary on a probe filled by hand, and a few real ticks of the
 * timer on a real loop (about 60 ms). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "probe.h"
#include "util.h"

static struct cs_lag_hist *hist_new(void)
{
    struct cs_lag_hist *h = calloc(1, sizeof(*h));

    assert_non_null(h);
    return h;
}

/* The bound of the bucket v falls in, seen through the public functions: with
 * v and a much larger value recorded, the median is v's bucket bound. */
static int64_t bound_of(int64_t v)
{
    struct cs_lag_hist h;

    memset(&h, 0, sizeof(h));
    cs_lag_hist_record(&h, v);
    cs_lag_hist_record(&h, INT64_C(1) << 33);
    return cs_lag_hist_quantile(&h, 0.5);
}

/* The bound the header describes: one bucket per value below 16, then eight
 * buckets per power of two, each ending one below the next one's start. */
static int64_t expected_bound(int64_t v)
{
    if (v < 16)
        return v;
    int msb = 63 - __builtin_clzll((unsigned long long)v);
    int64_t width = INT64_C(1) << (msb - 3);
    return (v / width + 1) * width - 1;
}

static void test_probe_small_values_exact(void **state)
{
    for (int64_t v = 0; v < 16; v++)
        assert_int_equal(bound_of(v), v);
}

static void test_probe_bucket_bounds(void **state)
{
    static const struct {
        int64_t v, bound;
    } known[] = {
        {16, 17},       {17, 17},       {18, 19},           {31, 31},       {32, 35},
        {100, 103},     {1000, 1023},   {1024, 1151},       {10000, 10239}, {50000, 53247},
        {65535, 65535}, {65536, 73727}, {1000000, 1048575},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (bound_of(known[i].v) != known[i].bound)
            fail_msg("bound of %lld us: expected %lld, got %lld", (long long)known[i].v,
                     (long long)known[i].bound, (long long)bound_of(known[i].v));

    /* Every value up to 20000, then a geometric walk up to 2^33. */
    int64_t v = 0;
    while (v < (INT64_C(1) << 33)) {
        int64_t b = bound_of(v);
        if (b != expected_bound(v) || b < v || (v >= 16 && b - v > v / 8))
            fail_msg("bound of %lld us: expected %lld (at most 12.5%% above), got %lld",
                     (long long)v, (long long)expected_bound(v), (long long)b);
        /* A bound lies in its own bucket; the next value starts another. */
        assert_int_equal(bound_of(b), b);
        if (bound_of(b + 1) <= b)
            fail_msg("value %lld after bound %lld: expected a higher bound, got %lld",
                     (long long)(b + 1), (long long)b, (long long)bound_of(b + 1));
        v = v < 20000 ? v + 1 : v + v / 7;
    }
}

static void test_probe_empty_histogram(void **state)
{
    struct cs_lag_hist *h = hist_new();

    assert_int_equal(h->ticks, 0);
    assert_int_equal(cs_lag_hist_quantile(h, 0.5), 0);
    assert_int_equal(cs_lag_hist_quantile(h, 0.99), 0);
    assert_int_equal(cs_lag_hist_quantile(h, 1.0), 0);
    assert_int_equal(h->max_us, 0);
    free(h);
}

/* 1..1000 us once each: the median is 500's bucket bound, p99 is 990's bucket
 * bound capped by the exact maximum. */
static void test_probe_quantiles_uniform(void **state)
{
    struct cs_lag_hist *h = hist_new();

    for (int64_t v = 1; v <= 1000; v++)
        cs_lag_hist_record(h, v);
    assert_int_equal(h->ticks, 1000);
    assert_int_equal(h->max_us, 1000);
    assert_int_equal(cs_lag_hist_quantile(h, 0.5), 511);
    assert_int_equal(cs_lag_hist_quantile(h, 0.99), 1000);
    assert_int_equal(cs_lag_hist_quantile(h, 1.0), 1000);
    /* The smallest quantile is the first bucket holding anything. */
    assert_int_equal(cs_lag_hist_quantile(h, 0.001), 1);
    free(h);

    h = hist_new();
    for (int64_t v = 1; v <= 100000; v++)
        cs_lag_hist_record(h, v);
    int64_t p50 = cs_lag_hist_quantile(h, 0.5), p99 = cs_lag_hist_quantile(h, 0.99);
    if (p50 < 50000 || p50 > 50000 + 50000 / 8)
        fail_msg("p50 of 1..100000: expected 50000 to 56250, got %lld", (long long)p50);
    if (p99 < 99000 || p99 > 100000)
        fail_msg("p99 of 1..100000: expected 99000 to 100000, got %lld", (long long)p99);
    free(h);
}

/* A quiet loop with one stall: the stall shows in max, and in p99 only once
 * it is more than 1 % of the ticks. */
static void test_probe_quantiles_tail(void **state)
{
    struct cs_lag_hist *h = hist_new();

    for (int i = 0; i < 99; i++)
        cs_lag_hist_record(h, 100);
    cs_lag_hist_record(h, 50000);
    assert_int_equal(cs_lag_hist_quantile(h, 0.5), 103);
    assert_int_equal(cs_lag_hist_quantile(h, 0.99), 103);
    assert_int_equal(cs_lag_hist_quantile(h, 1.0), 50000);
    assert_int_equal(h->max_us, 50000);

    cs_lag_hist_record(h, 50000);
    cs_lag_hist_record(h, 100);
    /* 100 of 102 ticks at 100 us: rank 101 of p99 falls on a stall. */
    assert_int_equal(cs_lag_hist_quantile(h, 0.99), 50000);
    assert_int_equal(cs_lag_hist_quantile(h, 0.5), 103);
    free(h);
}

static void test_probe_max_exact(void **state)
{
    struct cs_lag_hist *h = hist_new();

    cs_lag_hist_record(h, 7);
    cs_lag_hist_record(h, 12345);
    cs_lag_hist_record(h, 12000);
    assert_int_equal(h->max_us, 12345);
    /* 12345's bucket ends at 12287 + 1024 = 13311; the maximum caps it. */
    assert_int_equal(cs_lag_hist_quantile(h, 1.0), 12345);
    free(h);
}

/* A tick that fired early (or a clock step) counts as on time. */
static void test_probe_negative_is_zero(void **state)
{
    struct cs_lag_hist *h = hist_new();

    cs_lag_hist_record(h, -25);
    assert_int_equal(h->ticks, 1);
    assert_int_equal(h->counts[0], 1);
    assert_int_equal(h->max_us, 0);
    assert_int_equal(cs_lag_hist_quantile(h, 0.5), 0);
    free(h);
}

/* Server bug (probe.c, cs_lag_hist_quantile): values of 2^35 us (about 9.5
 * hours) and above share the last bucket, whose bound 2^35 - 1 is returned
 * although it is below the quantile. The last bucket has no upper bound:
 * its quantile should be the exact maximum. */
static void test_probe_quantile_last_bucket(void **state)
{
    struct cs_lag_hist *h = hist_new();
    int64_t huge = INT64_C(1) << 36;

    cs_lag_hist_record(h, huge);
    assert_int_equal(h->max_us, huge);
    int64_t p50 = cs_lag_hist_quantile(h, 0.5);
    if (p50 < huge)
        fail_msg("p50 of one tick %lld us late: expected %lld, got %lld", (long long)huge,
                 (long long)huge, (long long)p50);
    free(h);
}

static void assert_hist_equal(const struct cs_lag_hist *a, const struct cs_lag_hist *b)
{
    assert_int_equal(a->ticks, b->ticks);
    assert_int_equal(a->late_ticks, b->late_ticks);
    assert_int_equal(a->max_us, b->max_us);
    for (unsigned i = 0; i < CS_PROBE_BUCKETS; i++)
        if (a->counts[i] != b->counts[i])
            fail_msg("bucket %u: expected %llu, got %llu", i, (unsigned long long)b->counts[i],
                     (unsigned long long)a->counts[i]);
}

static void test_probe_merge(void **state)
{
    struct cs_lag_hist *low = hist_new(), *high = hist_new(), *all = hist_new();
    struct cs_lag_hist *empty = hist_new(), *copy = hist_new();

    for (int64_t v = 0; v < 3000; v++) {
        cs_lag_hist_record(v % 2 ? low : high, v * 37 % 5000);
        cs_lag_hist_record(all, v * 37 % 5000);
    }
    cs_lag_hist_record(high, 250000);
    cs_lag_hist_record(all, 250000);

    /* Merging into an empty histogram copies it; merging an empty one is a
     * no-op. */
    cs_lag_hist_merge(copy, low);
    assert_hist_equal(copy, low);
    cs_lag_hist_merge(copy, empty);
    assert_hist_equal(copy, low);

    /* The larger maximum wins whichever side it is on. */
    cs_lag_hist_merge(copy, high);
    assert_hist_equal(copy, all);
    cs_lag_hist_merge(high, low);
    assert_hist_equal(high, all);
    assert_int_equal(cs_lag_hist_quantile(copy, 0.5), cs_lag_hist_quantile(all, 0.5));
    assert_int_equal(cs_lag_hist_quantile(copy, 0.99), cs_lag_hist_quantile(all, 0.99));
    assert_int_equal(copy->max_us, 250000);
    free(low);
    free(high);
    free(all);
    free(empty);
    free(copy);
}

/* A tick counts as late from the spec's bound on, not below it; merging
 * adds the late ticks as it adds the others. */
static void test_probe_late_ticks(void **state)
{
    struct cs_lag_hist *a = hist_new(), *b = hist_new();

    cs_lag_hist_record(a, 0);
    cs_lag_hist_record(a, CS_PROBE_LATE_US - 1);
    assert_int_equal(a->late_ticks, 0);
    cs_lag_hist_record(a, CS_PROBE_LATE_US);
    cs_lag_hist_record(b, 20 * CS_PROBE_LATE_US);
    cs_lag_hist_record(b, 10);
    assert_int_equal(a->late_ticks, 1);
    assert_int_equal(b->late_ticks, 1);
    cs_lag_hist_merge(a, b);
    assert_int_equal(a->late_ticks, 2);
    assert_int_equal(a->ticks, 5);
    free(a);
    free(b);
}

static void fill_second(struct cs_probe *p, uint64_t second, int64_t late_us, int n)
{
    unsigned slot = (unsigned)(second % CS_PROBE_WINDOW_S);

    memset(&p->window[slot], 0, sizeof(p->window[slot]));
    p->window_second[slot] = second;
    for (int i = 0; i < n; i++)
        cs_lag_hist_record(&p->window[slot], late_us);
}

/* The last minute holds the slots of the last 60 seconds and no older ones,
 * whatever they contain; since-start is its own histogram. */
static void test_probe_summary_last_minute(void **state)
{
    struct cs_probe *p = calloc(1, sizeof(*p));
    struct cs_lag_summary start, minute;

    assert_non_null(p);
    uint64_t now_s = uv_hrtime() / 1000000000u;
    /* Slot seconds start at 0: a machine up for under two minutes would make
     * the stale slots below look recent. */
    if (now_s < 2 * CS_PROBE_WINDOW_S) {
        print_message("skipped: the machine has been up for under two minutes\n");
        skip();
    }
    for (unsigned i = 0; i < CS_PROBE_WINDOW_S; i++)
        p->window_second[i] = now_s - 10 * CS_PROBE_WINDOW_S;

    fill_second(p, now_s, 100, 10);
    /* 58 seconds ago: still inside the window if the clock ticks over a
     * second boundary during the test. */
    fill_second(p, now_s - 58, 200, 5);
    /* Stale: 61 and 119 seconds ago, and a slot from long ago. */
    fill_second(p, now_s - 61, 900000, 7);
    fill_second(p, now_s - 119, 800000, 3);
    p->window_second[(now_s - 30) % CS_PROBE_WINDOW_S] = 1;
    cs_lag_hist_record(&p->window[(now_s - 30) % CS_PROBE_WINDOW_S], 700000);

    for (int i = 0; i < 40; i++)
        cs_lag_hist_record(&p->since_start, 5000);

    cs_probe_summary(p, &start, &minute);
    assert_int_equal(minute.ticks, 15);
    assert_int_equal(minute.max_us, 200);
    assert_int_equal(minute.p50_us, 103);
    assert_int_equal(minute.p99_us, 200);
    /* The stale slots' late ticks are not the minute's. */
    assert_int_equal(minute.late_ticks, 0);

    assert_int_equal(start.ticks, 40);
    assert_int_equal(start.max_us, 5000);
    assert_int_equal(start.p50_us, 5000);
    assert_int_equal(start.p99_us, 5000);

    /* Nothing recent at all: an empty minute. */
    memset(p->window, 0, sizeof(p->window));
    for (unsigned i = 0; i < CS_PROBE_WINDOW_S; i++)
        p->window_second[i] = now_s - 2 * CS_PROBE_WINDOW_S;
    cs_lag_hist_record(&p->window[0], 400);
    cs_probe_summary(p, &start, &minute);
    assert_int_equal(minute.ticks, 0);
    assert_int_equal(minute.max_us, 0);
    assert_int_equal(minute.p50_us, 0);
    assert_int_equal(minute.p99_us, 0);

    /* One late tick now is the minute's and not since start's. */
    fill_second(p, now_s, CS_PROBE_LATE_US, 1);
    cs_probe_summary(p, &start, &minute);
    assert_int_equal(minute.late_ticks, 1);
    assert_int_equal(start.late_ticks, 0);
    free(p);
}

struct tick_run {
    uv_timer_t stop;
    struct cs_probe *probe;
};

static void on_stop(uv_timer_t *timer)
{
    struct tick_run *run = timer->data;

    cs_probe_stop(run->probe);
    uv_close((uv_handle_t *)timer, NULL);
}

/* The real timer on a real loop for 60 ms: about six ticks land in both the
 * since-start and the last-minute figures, and the probe alone does not keep
 * the loop alive. */
static void test_probe_real_ticks(void **state)
{
    uv_loop_t loop;
    struct cs_probe *p = calloc(1, sizeof(*p));
    struct tick_run run = {.probe = p};
    struct cs_lag_summary start, minute;

    assert_non_null(p);
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(cs_probe_start(&loop, p), 0);
    /* Only the unreferenced probe timer: the loop has nothing to wait for. */
    assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0);

    assert_int_equal(uv_timer_init(&loop, &run.stop), 0);
    run.stop.data = &run;
    assert_int_equal(uv_timer_start(&run.stop, on_stop, 6 * CS_PROBE_INTERVAL_MS, 0), 0);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);

    cs_probe_summary(p, &start, &minute);
    /* A busy machine may delay ticks, but at least one fires in 60 ms. */
    if (start.ticks < 1 || start.ticks > 6)
        fail_msg("ticks in 60 ms at one per 10 ms: expected 1 to 6, got %llu",
                 (unsigned long long)start.ticks);
    assert_int_equal(minute.ticks, start.ticks);
    assert_int_equal(minute.max_us, start.max_us);
    assert_int_equal(minute.p99_us, start.p99_us);
    assert_true(start.p50_us <= start.p99_us);
    assert_true(start.p99_us <= start.max_us);
    free(p);
}

/* The probe's loop-side functions assert that they run on the loop thread:
 * the tests drive the loop on this one. */
static int mark_loop_thread(void **state)
{
    cs_loop_thread_mark();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_small_values_exact),
        cmocka_unit_test(test_probe_bucket_bounds),
        cmocka_unit_test(test_probe_empty_histogram),
        cmocka_unit_test(test_probe_quantiles_uniform),
        cmocka_unit_test(test_probe_quantiles_tail),
        cmocka_unit_test(test_probe_max_exact),
        cmocka_unit_test(test_probe_negative_is_zero),
        cmocka_unit_test(test_probe_quantile_last_bucket),
        cmocka_unit_test(test_probe_merge),
        cmocka_unit_test(test_probe_late_ticks),
        cmocka_unit_test(test_probe_summary_last_minute),
        cmocka_unit_test(test_probe_real_ticks),
    };
    return cmocka_run_group_tests(tests, mark_loop_thread, NULL);
}
