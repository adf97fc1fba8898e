/* The loop-lag probe (the spec's "kitchen timer"): a 10 ms timer on the loop
 * that records how late each tick fires. A stalled loop shows as late ticks.
 * Figures are kept since start and for the last minute (60 one-second
 * histograms in a ring). Loop thread only. */
#ifndef CS_PROBE_H
#define CS_PROBE_H

#include <stdint.h>
#include <uv.h>

#define CS_PROBE_INTERVAL_MS 10
#define CS_PROBE_BUCKETS 264
#define CS_PROBE_WINDOW_S 60
/* The spec's bound on the loop's p99 lag: a tick this late or later counts
 * as a late tick. */
#define CS_PROBE_LATE_US 50000

/* A log-linear histogram of lateness in microseconds (~12 % resolution). */
struct cs_lag_hist {
    uint64_t counts[CS_PROBE_BUCKETS];
    uint64_t ticks;
    uint64_t late_ticks; /* CS_PROBE_LATE_US late or later */
    int64_t max_us;
};

struct cs_lag_summary {
    uint64_t ticks;
    int64_t p50_us;
    int64_t p99_us;
    int64_t max_us;
    uint64_t late_ticks;
};

struct cs_probe {
    uv_timer_t timer;
    uint64_t due_ns; /* uv_hrtime() when the next tick is due */
    struct cs_lag_hist since_start;
    struct cs_lag_hist window[CS_PROBE_WINDOW_S];
    uint64_t window_second[CS_PROBE_WINDOW_S]; /* which second each slot holds */
};

int cs_probe_start(uv_loop_t *loop, struct cs_probe *probe);
void cs_probe_stop(struct cs_probe *probe);
void cs_probe_summary(const struct cs_probe *probe, struct cs_lag_summary *since_start,
                      struct cs_lag_summary *last_minute);

/* Histogram primitives, exposed for the unit test. */
void cs_lag_hist_record(struct cs_lag_hist *hist, int64_t late_us);
void cs_lag_hist_merge(struct cs_lag_hist *into, const struct cs_lag_hist *from);
/* The smallest bucket bound at or above the q-quantile (0 < q <= 1). */
int64_t cs_lag_hist_quantile(const struct cs_lag_hist *hist, double q);

#endif
