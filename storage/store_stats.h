/* store_stats: what the store measures about itself for cschedd's metrics
 * endpoint: the time a batch takes to get its first answer (the round trip)
 * and to commit, how many operations a batch carries, and how often the
 * connection came back. Storage only records; the server reads a copy when
 * it publishes its metrics (cs_store_stats_get, store.h). Plain data, written
 * on the loop thread.
 *
 * The histogram here is also the one cschedd's own metrics use: storage may
 * not include server/, and one shape keeps the formatting in one place. */
#ifndef CS_STORE_STATS_H
#define CS_STORE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bounds a histogram may have, +Inf not counted. */
#define CS_HIST_BOUNDS_MAX 20

/* A Prometheus histogram: counts[i] observations fell at or below bound i
 * and above bound i-1 (not cumulative; counts[n_bounds] is above the last
 * bound), their sum and their number. The bounds are the caller's. */
struct cs_hist {
    uint64_t counts[CS_HIST_BOUNDS_MAX + 1];
    uint64_t count;
    double sum;
};

/* The bounds of one kind of histogram, ascending (static data). */
struct cs_hist_bounds {
    const double *v;
    size_t n; /* at most CS_HIST_BOUNDS_MAX */
};

/* Adds value to h, bucketed by bounds. O(bounds), no allocation. */
void cs_hist_observe(struct cs_hist *h, const struct cs_hist_bounds *bounds, double value);

/* Seconds from 0.5 ms to 10 s: database waits. */
extern const struct cs_hist_bounds cs_store_latency_bounds;
/* Operations per batch, from 1 to the batch limit. */
extern const struct cs_hist_bounds cs_store_batch_bounds;

struct cs_store_stats {
    struct cs_hist roundtrip_s; /* a batch sent -> its first result */
    struct cs_hist commit_s;    /* a batch sent -> its sync: committed or failed */
    struct cs_hist batch_ops;   /* operations per batch sent */
    uint64_t reconnects;        /* connections made again after the first */
    uint64_t batches_failed;    /* batches a statement error aborted */
    bool up;                    /* connected and ready for writes */
};

/* Loop thread, from the batch layer: a batch of n_ops is being sent;
 * returns the time it is sent (cs_store_now_mono_ns), for the two below. */
int64_t cs_store_stats_sent(struct cs_store_stats *stats, size_t n_ops);
/* The first result of a batch sent at sent_ns has arrived. */
void cs_store_stats_answered(struct cs_store_stats *stats, int64_t sent_ns);
/* A batch sent at sent_ns has reached its sync; failed: a statement failed. */
void cs_store_stats_done(struct cs_store_stats *stats, int64_t sent_ns, bool failed);

#endif
