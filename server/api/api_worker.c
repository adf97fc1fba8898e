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

static bool names_attempt(struct cs_call *call, const char *field,
                          const Csched__V1__AttemptRef *ref)
{
    if (ref == NULL || ref->run_id <= 0 || ref->number == 0) {
        cs_call_fail_field(call, -EINVAL, field, "the attempt's run_id and number are needed");
        return false;
    }
    return true;
}

static bool names_attempts(struct cs_call *call, const char *field,
                           Csched__V1__AttemptRef *const *refs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!names_attempt(call, field, refs[i]))
            return false;
    return true;
}

static void launched_cb(void *arg, const Csched__V1__LaunchResponse *response)
{
    struct cs_call *call = arg;
    if (response == NULL)
        cs_call_fail(call, -ENOTCONN, "this replica stops: ask for the attempts' ends");
    else
        cs_call_reply(call, &response->base);
}

void cs_api_worker_launch(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    const Csched__V1__LaunchRequest *req = (const Csched__V1__LaunchRequest *)request;
    for (size_t i = 0; i < req->n_launches; i++) {
        const Csched__V1__AttemptLaunch *l = req->launches[i];
        if (!names_attempt(call, "launches.attempt", l->attempt))
            return;
        if (l->job == NULL || l->run == NULL) {
            cs_call_fail_field(call, -EINVAL, "launches.job", "a launch needs the job and the run");
            return;
        }
    }
    cs_worker_launch(ctx, req, launched_cb, call);
}

static void ended_cb(void *arg, const Csched__V1__AwaitResponse *response)
{
    struct cs_call *call = arg;
    if (response == NULL)
        cs_call_fail(call, -ENOTCONN, "this replica stops: ask another time");
    else
        cs_call_reply(call, &response->base);
}

void cs_api_worker_await(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    const Csched__V1__AwaitRequest *req = (const Csched__V1__AwaitRequest *)request;
    if (names_attempts(call, "attempts", req->attempts, req->n_attempts) &&
        names_attempts(call, "cancel", req->cancel, req->n_cancel))
        cs_worker_await(ctx, req, AWAIT_HOLD_MS, ended_cb, call);
}

void cs_api_worker_cancel(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    const Csched__V1__AttemptRef *ref = (const Csched__V1__AttemptRef *)request;
    if (!names_attempt(call, "attempt", ref))
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
