/* metrics_sched: the scheduler's gauges for the metrics snapshot (see
 * metrics_sched.h). Loop thread; O(1). */
#include "metrics_sched.h"

#include <stdio.h>
#include <string.h>

#include "sched_state.h"
#include "util.h"

void cs_metrics_sched_gauges_cb(void *ctx, struct cs_metrics_gauges *g)
{
    CS_ASSERT_LOOP();
    const struct cs_sched *s = ctx;
    g->jobs = (uint32_t)s->n_jobs;
    g->runs_queued = s->queued;
    g->runs_starting = s->starting;
    g->runs_running = s->running;
    g->slots_used = cs_sched_slots_used(s);
    g->max_running = s->max_running;
    _Static_assert(sizeof(g->tzdata_version) == sizeof(s->zones.version), "one version size");
    memcpy(g->tzdata_version, s->zones.version, sizeof(g->tzdata_version));
    g->limits_mechanism = s->cgroups.v2[0] != '\0' ? "cgroup_v2"
                          : s->cgroups.v1_memory[0] != '\0' || s->cgroups.v1_pids[0] != '\0'
                              ? "cgroup_v1"
                              : "rlimits";
    g->limits_strict = s->limits_strict;
    if (s->store == NULL)
        return;
    cs_store_stats_get(s->store, &g->store);
    struct cs_store_replica_info replica;
    cs_store_replica_get(s->store, &replica);
    (void)snprintf(g->replica_id, sizeof(g->replica_id), "%s", replica.id);
    g->replica_epoch = replica.epoch;
    g->replica_active = replica.active;
    g->replica_renewed_age_ms = replica.renewed_age_ms;
}
