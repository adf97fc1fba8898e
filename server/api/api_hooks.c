/* api_hooks: ListHookDeliveries, a job's hook deliveries newest first, as
 * the database has them (docs/hooks.md). The secret's reference is not in
 * the reply, and its value never is anywhere. */
#include <errno.h>
#include <stdlib.h>

#include "api.h"
#include "job.h"
#include "util.h"

#define DEFAULT_LIMIT 50
#define MAX_LIMIT 1000

static void listed_cb(void *arg, int status, Csched__V1__HookDelivery **deliveries, size_t n)
{
    struct cs_call *call = arg;
    Csched__V1__ListHookDeliveriesResponse resp = CSCHED__V1__LIST_HOOK_DELIVERIES_RESPONSE__INIT;

    if (status != 0) {
        cs_api_fail_store(call, status, "reading the hook deliveries");
    } else {
        resp.deliveries = deliveries;
        resp.n_deliveries = n;
        cs_call_reply(call, &resp.base);
    }
    cs_store_hook_deliveries_free(deliveries, n);
}

void cs_api_list_hook_deliveries(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ListHookDeliveriesRequest *req =
        (const Csched__V1__ListHookDeliveriesRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_err err;

    if (cs_job_name_validate(req->job_name, "job_name", &err) != 0) {
        cs_call_fail_err(call, &err);
        return;
    }
    if (req->before_id < 0) {
        cs_call_fail_field(call, -EINVAL, "before_id", "before_id may not be negative");
        return;
    }
    uint32_t limit = req->limit == 0          ? DEFAULT_LIMIT
                     : req->limit > MAX_LIMIT ? MAX_LIMIT
                                              : req->limit;
    cs_store_hook_list(s->store, req->job_name, req->before_id, limit, listed_cb, call);
}
