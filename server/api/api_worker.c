/* api_worker: the Worker service (proto/csched/v1/worker.proto), which only
 * another replica calls, with the cluster's key (access.c gives its
 * methods the replica role only). Each call goes to worker.h. */
#include <errno.h>

#include "api.h"
#include "csched/v1/worker.pb-c.h"
#include "worker.h"

/* How long an Await is held before it answers that the attempt still runs
 * (below remote_attempt.c's deadline for the call). */
#define AWAIT_HOLD_MS 20000

static bool names_attempt(struct cs_call *call, const Csched__V1__AttemptRef *ref)
{
    if (ref == NULL || ref->run_id <= 0 || ref->number == 0) {
        cs_call_fail_field(call, -EINVAL, "attempt", "the attempt's run_id and number are needed");
        return false;
    }
    return true;
}

static void launched_cb(void *arg, const Csched__V1__LaunchResponse *response)
{
    struct cs_call *call = arg;
    if (response == NULL)
        cs_call_fail(call, -ENOTCONN, "this replica stops: ask for the attempt's end");
    else
        cs_call_reply(call, &response->base);
}

void cs_api_worker_launch(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    const Csched__V1__LaunchRequest *req = (const Csched__V1__LaunchRequest *)request;
    if (!names_attempt(call, req->attempt))
        return;
    if (req->job == NULL || req->run == NULL) {
        cs_call_fail_field(call, -EINVAL, "job", "a launch needs the job and the run");
        return;
    }
    cs_worker_launch(ctx, req, launched_cb, call);
}

static void ended_cb(void *arg, const Csched__V1__AwaitResponse *response)
{
    struct cs_call *call = arg;
    if (response == NULL)
        cs_call_fail(call, -ENOTCONN, "the attempt has not ended yet: ask again");
    else
        cs_call_reply(call, &response->base);
}

void cs_api_worker_await(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    const Csched__V1__AwaitRequest *req = (const Csched__V1__AwaitRequest *)request;
    if (names_attempt(call, req->attempt))
        cs_worker_await(ctx, req, AWAIT_HOLD_MS, ended_cb, call);
}

void cs_api_worker_cancel(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    const Csched__V1__AttemptRef *ref = (const Csched__V1__AttemptRef *)request;
    if (!names_attempt(call, ref))
        return;
    int rc = cs_worker_cancel(ctx, ref->run_id, ref->number);
    if (rc == -ENOENT) {
        cs_call_fail(call, rc, "run %lld attempt %u is not in this replica's memory",
                     (long long)ref->run_id, ref->number);
        return;
    }
    Csched__V1__CancelResponse resp = CSCHED__V1__CANCEL_RESPONSE__INIT;
    cs_call_reply(call, &resp.base);
}
