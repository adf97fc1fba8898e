/* store_stats: the store's own measurements (see store_stats.h), recorded
 * by one-line hooks in the batch and connection layers. Loop thread. */
#include "store_stats.h"

#include "store_internal.h"
#include "store_util.h"

static const double latency_s[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                   0.1,    0.25,  0.5,    1,     2.5,  5,     10};
static const double batch_ops[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000};

const struct cs_hist_bounds cs_store_latency_bounds = {latency_s,
                                                       sizeof(latency_s) / sizeof(latency_s[0])};
const struct cs_hist_bounds cs_store_batch_bounds = {batch_ops,
                                                     sizeof(batch_ops) / sizeof(batch_ops[0])};

void cs_hist_observe(struct cs_hist *h, const struct cs_hist_bounds *bounds, double value)
{
    size_t i = 0;
    while (i < bounds->n && value > bounds->v[i])
        i++;
    h->counts[i]++;
    h->count++;
    h->sum += value;
}

/* A batch of the connection's setup (sent_ns 0) is not a batch of writes,
 * and is not measured. */
static double seconds_since(int64_t ns)
{
    int64_t now = cs_store_now_mono_ns();
    return now > ns ? (double)(now - ns) / 1e9 : 0;
}

int64_t cs_store_stats_sent(struct cs_store_stats *stats, size_t n_ops)
{
    cs_hist_observe(&stats->batch_ops, &cs_store_batch_bounds, (double)n_ops);
    return cs_store_now_mono_ns();
}

void cs_store_stats_answered(struct cs_store_stats *stats, int64_t sent_ns)
{
    if (sent_ns == 0)
        return;
    cs_hist_observe(&stats->roundtrip_s, &cs_store_latency_bounds, seconds_since(sent_ns));
}

void cs_store_stats_done(struct cs_store_stats *stats, int64_t sent_ns, bool failed)
{
    if (sent_ns == 0)
        return;
    cs_hist_observe(&stats->commit_s, &cs_store_latency_bounds, seconds_since(sent_ns));
    if (failed)
        stats->batches_failed++;
}

void cs_store_stats_get(const struct cs_store *store, struct cs_store_stats *out)
{
    *out = store->stats;
    out->up = store->conn_state == CS_STORE_CONN_READY;
}
