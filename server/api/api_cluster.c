/* api_cluster: SetClusterLimits, the limits that hold across every replica
 * together. The value is stored first and applied once it has committed,
 * so that a replica never runs under a limit the database does not hold
 * (another replica taking over reads it from there). */
#include <errno.h>
#include <stdlib.h>

#include "api.h"
#include "audit.h"
#include "job.h"
#include "log.h"
#include "pump.h"
#include "util.h"

struct set_limits {
    struct cs_call *call;
    struct cs_sched *sched;
};

static void limits_stored_cb(void *arg, int status, int64_t max_running)
{
    struct set_limits *l = arg;
    Csched__V1__ClusterLimits resp = CSCHED__V1__CLUSTER_LIMITS__INIT;

    if (status != 0) {
        cs_api_fail_store(l->call, status, "storing the cluster's limits");
        free(l);
        return;
    }
    cs_pump_set_cluster_limit(l->sched, (uint32_t)max_running);
    cs_log_info("the cluster's max running is now %lld (%s)", (long long)max_running,
                cs_call_identity(l->call)->name);
    /* The row is its own: the change committed before it is queued. */
    cs_audit_change(l->sched, l->call, NULL, "", 0);
    resp.max_running = (uint32_t)max_running;
    cs_call_reply(l->call, &resp.base);
    free(l);
}

void cs_api_set_cluster_limits(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__SetClusterLimitsRequest *req =
        (const Csched__V1__SetClusterLimitsRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_err err = {0};

    if (req->max_running > CS_MAX_RUNNING_LIMIT) {
        cs_err_set(&err, -EINVAL, "max_running: %u is more than %d", req->max_running,
                   CS_MAX_RUNNING_LIMIT);
        cs_call_fail_err(call, &err);
        return;
    }
    if (cs_api_require_store(call, s) != 0)
        return;
    struct set_limits *l = cs_xmalloc(sizeof(*l));
    *l = (struct set_limits){call, s};
    cs_store_cluster_max_running_set(s->store, req->max_running, cs_now_unix_ms(),
                                     cs_call_identity(call)->name, false, limits_stored_cb, l);
}
