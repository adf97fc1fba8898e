/* api_stats: GetStats. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "placement.h"
#include "util.h"

static void fill_lag(Csched__V1__LoopLag *out, const struct cs_lag_summary *in)
{
    out->ticks = in->ticks;
    out->p50_us = in->p50_us;
    out->p99_us = in->p99_us;
    out->max_us = in->max_us;
    out->late_ticks = in->late_ticks;
}

void cs_api_get_stats(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    struct cs_sched *s = ctx;
    Csched__V1__Stats stats = CSCHED__V1__STATS__INIT;
    Csched__V1__LoopLag since = CSCHED__V1__LOOP_LAG__INIT;
    Csched__V1__LoopLag minute = CSCHED__V1__LOOP_LAG__INIT;
    struct cs_lag_summary since_start, last_minute;
    cs_probe_summary(&s->probe, &since_start, &last_minute);
    fill_lag(&since, &since_start);
    fill_lag(&minute, &last_minute);
    stats.running = cs_sched_running_alive(s);
    stats.starting = s->starting;
    stats.queued = s->queued;
    stats.max_running = s->max_running;
    stats.cluster_max_running = s->cluster_max_running;
    stats.machine_max_running = s->machine_max_running;
    stats.runs_started = s->runs_started;
    stats.runs_finished = s->runs_finished;
    stats.lag_since_start = &since;
    stats.lag_last_minute = &minute;
    stats.uptime_ms = (cs_now_mono_ns() - s->started_mono_ns) / 1000000;
    stats.last_seq = s->last_published_seq;
    stats.tzdata_version = s->zones.version;
    stats.limits_mechanism = (char *)(s->limits_mechanism != NULL ? s->limits_mechanism : "");
    stats.limits_enforcement = (char *)(s->limits_strict ? "strict" : "warn");
    /* A handful of replicas, for the reply only. */
    Csched__V1__MachineLoad *loads = cs_xcalloc(s->n_rooms + 1, sizeof(*loads));
    Csched__V1__MachineLoad **machines = cs_xcalloc(s->n_rooms + 1, sizeof(*machines));
    for (size_t i = 0; i < s->n_rooms; i++) {
        const struct cs_room *room = s->rooms[i];
        csched__v1__machine_load__init(&loads[i]);
        loads[i].replica = (char *)room->id;
        loads[i].running = room->placed;
        loads[i].max_running = room->max_running;
        loads[i].takes_attempts = room->alive;
        machines[i] = &loads[i];
    }
    stats.machines = machines;
    stats.n_machines = s->n_rooms;
    cs_call_reply(call, &stats.base);
    free(machines);
    free(loads);
}
