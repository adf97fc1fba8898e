/* Loop-lag probe: a timer re-armed every 10 ms on the loop thread; each tick
 * records now - due. Recording is O(1) and allocation-free so the probe never
 * becomes the stall it measures. */
#include "probe.h"

#include <string.h>

#include "metrics.h"
#include "util.h"

/* Values below 16 us get a bucket each; above, 8 buckets per power of two. */
static unsigned bucket_of(int64_t us)
{
    if (us < 16)
        return us < 0 ? 0 : (unsigned)us;
    unsigned msb = 63u - (unsigned)__builtin_clzll((unsigned long long)us);
    unsigned sub = (unsigned)((uint64_t)us >> (msb - 3)) & 7u;
    unsigned b = 16 + (msb - 4) * 8 + sub;
    return b < CS_PROBE_BUCKETS ? b : CS_PROBE_BUCKETS - 1;
}

/* The largest value that falls into bucket b. */
static int64_t bucket_upper(unsigned b)
{
    if (b < 16)
        return b;
    unsigned msb = (b - 16) / 8 + 4;
    uint64_t sub = (b - 16) % 8;
    return (int64_t)(((8 + sub + 1) << (msb - 3)) - 1);
}

void cs_lag_hist_record(struct cs_lag_hist *hist, int64_t late_us)
{
    hist->counts[bucket_of(late_us)]++;
    hist->ticks++;
    hist->late_ticks += late_us >= CS_PROBE_LATE_US;
    if (late_us > hist->max_us)
        hist->max_us = late_us;
}

void cs_lag_hist_merge(struct cs_lag_hist *into, const struct cs_lag_hist *from)
{
    for (unsigned b = 0; b < CS_PROBE_BUCKETS; b++)
        into->counts[b] += from->counts[b];
    into->ticks += from->ticks;
    into->late_ticks += from->late_ticks;
    if (from->max_us > into->max_us)
        into->max_us = from->max_us;
}

int64_t cs_lag_hist_quantile(const struct cs_lag_hist *hist, double q)
{
    if (hist->ticks == 0)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)hist->ticks + 0.999999);
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < CS_PROBE_BUCKETS; b++) {
        seen += hist->counts[b];
        if (seen >= rank) {
            if (b == CS_PROBE_BUCKETS - 1)
                return hist->max_us; /* the last bucket has no upper bound */
            int64_t upper = bucket_upper(b);
            return upper < hist->max_us ? upper : hist->max_us;
        }
    }
    return hist->max_us;
}

static void tick_cb(uv_timer_t *timer)
{
    struct cs_probe *probe = timer->data;
    uint64_t now = uv_hrtime();
    int64_t late_us = now > probe->due_ns ? (int64_t)((now - probe->due_ns) / 1000) : 0;

    cs_lag_hist_record(&probe->since_start, late_us);
    cs_metrics_observe(CS_METRIC_LOOP_LAG, (double)late_us / 1e6);
    uint64_t second = now / 1000000000u;
    unsigned slot = (unsigned)(second % CS_PROBE_WINDOW_S);
    if (probe->window_second[slot] != second) {
        memset(&probe->window[slot], 0, sizeof(probe->window[slot]));
        probe->window_second[slot] = second;
    }
    cs_lag_hist_record(&probe->window[slot], late_us);

    probe->due_ns = now + CS_PROBE_INTERVAL_MS * 1000000ull;
    CS_ASSERT(uv_timer_start(timer, tick_cb, CS_PROBE_INTERVAL_MS, 0) == 0);
}

int cs_probe_start(uv_loop_t *loop, struct cs_probe *probe)
{
    CS_ASSERT_LOOP();
    memset(probe, 0, sizeof(*probe));
    int rc = uv_timer_init(loop, &probe->timer);
    if (rc != 0)
        return rc;
    probe->timer.data = probe;
    /* The probe must not keep the loop alive on its own at shutdown. */
    uv_unref((uv_handle_t *)&probe->timer);
    /* The loop's clock is read when it runs; it may be stale before. */
    uv_update_time(loop);
    probe->due_ns = uv_hrtime() + CS_PROBE_INTERVAL_MS * 1000000ull;
    return uv_timer_start(&probe->timer, tick_cb, CS_PROBE_INTERVAL_MS, 0);
}

void cs_probe_stop(struct cs_probe *probe)
{
    CS_ASSERT_LOOP();
    uv_close((uv_handle_t *)&probe->timer, NULL);
}

static void summarize(const struct cs_lag_hist *hist, struct cs_lag_summary *out)
{
    out->ticks = hist->ticks;
    out->p50_us = cs_lag_hist_quantile(hist, 0.50);
    out->p99_us = cs_lag_hist_quantile(hist, 0.99);
    out->max_us = hist->max_us;
    out->late_ticks = hist->late_ticks;
}

void cs_probe_summary(const struct cs_probe *probe, struct cs_lag_summary *since_start,
                      struct cs_lag_summary *last_minute)
{
    CS_ASSERT_LOOP();
    summarize(&probe->since_start, since_start);
    /* Summing 60 small histograms is ~16k additions: cheap enough per call. */
    struct cs_lag_hist minute;
    memset(&minute, 0, sizeof(minute));
    uint64_t now_s = uv_hrtime() / 1000000000u;
    for (unsigned i = 0; i < CS_PROBE_WINDOW_S; i++)
        if (probe->window_second[i] + CS_PROBE_WINDOW_S > now_s)
            cs_lag_hist_merge(&minute, &probe->window[i]);
    summarize(&minute, last_minute);
}
