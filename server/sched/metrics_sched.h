/* metrics_sched: the gauges of cschedd's metrics, read from the scheduler's
 * state and the store when the loop publishes (metrics.h). Loop thread. */
#ifndef CS_METRICS_SCHED_H
#define CS_METRICS_SCHED_H

#include "metrics.h"

/* A cs_metrics_gauges_cb; ctx is the struct cs_sched. */
void cs_metrics_sched_gauges_cb(void *ctx, struct cs_metrics_gauges *g);

#endif
