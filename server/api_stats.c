/* api_stats: GetStats, and the grpc.health.v1 Health service. */
#include <errno.h>
#include <string.h>

#include "api.h"
#include "grpc/health/v1/health.pb-c.h"
#include "util.h"

static void fill_lag(Csched__V1__LoopLag *out, const struct cs_lag_summary *in)
{
    out->ticks = in->ticks;
    out->p50_us = in->p50_us;
    out->p99_us = in->p99_us;
    out->max_us = in->max_us;
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
    stats.runs_started = s->runs_started;
    stats.runs_finished = s->runs_finished;
    stats.lag_since_start = &since;
    stats.lag_last_minute = &minute;
    stats.uptime_ms = (cs_now_mono_ns() - s->started_mono_ns) / 1000000;
    stats.last_seq = s->last_published_seq;
    cs_call_reply(call, &stats.base);
}

/* "" is the whole server; the one named service is ours. */
static bool known_service(const char *name)
{
    return name[0] == '\0' || strcmp(name, "csched.v1.Scheduler") == 0;
}

/* Serving needs a database that answers (the store's watchdog takes a
 * frozen one for gone) and a state dir that can be written (dir_check). */
static Grpc__Health__V1__HealthCheckResponse__ServingStatus serving(struct cs_sched *s)
{
    return cs_store_is_accepting(s->store) && s->state_dir_status == 0
               ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
               : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
}

void cs_api_health_check(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Grpc__Health__V1__HealthCheckRequest *req =
        (const Grpc__Health__V1__HealthCheckRequest *)request;
    if (!known_service(req->service)) {
        cs_call_fail(call, -ENOENT, "service %.100s is not served here", req->service);
        return;
    }
    Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    resp.status = serving(ctx);
    cs_call_reply(call, &resp.base);
}

void cs_api_health_watch(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Grpc__Health__V1__HealthCheckRequest *req =
        (const Grpc__Health__V1__HealthCheckRequest *)request;
    Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    resp.status = known_service(req->service)
                      ? serving(ctx)
                      : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN;
    cs_call_push(call, &resp.base);
    cs_api_health_watch_open(ctx, call);
}
