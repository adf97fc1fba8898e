/* api_after: ListDependencyCauses, what became of each cause of a job's
 * runs after its upstreams, newest first, as the database has them
 * (docs/dependencies.md): ran (with the run), not run (with why), or
 * waiting. */
#include <stdlib.h>

#include "api.h"
#include "job.h"
#include "util.h"

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 1000

static void listed_cb(void *arg, int status, Csched__V1__DependencyCause **causes, size_t n)
{
    struct cs_call *call = arg;
    Csched__V1__ListDependencyCausesResponse resp =
        CSCHED__V1__LIST_DEPENDENCY_CAUSES_RESPONSE__INIT;

    if (status != 0) {
        cs_api_fail_store(call, status, "reading the dependency causes");
    } else {
        resp.causes = causes;
        resp.n_causes = n;
        cs_call_reply(call, &resp.base);
    }
    cs_store_after_causes_free(causes, n);
}

void cs_api_list_dependency_causes(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ListDependencyCausesRequest *req =
        (const Csched__V1__ListDependencyCausesRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_err err;

    if (cs_job_name_validate(req->job_name, "job_name", &err) != 0) {
        cs_call_fail_err(call, &err);
        return;
    }
    uint32_t limit = req->limit == 0          ? DEFAULT_LIMIT
                     : req->limit > MAX_LIMIT ? MAX_LIMIT
                                              : req->limit;
    cs_store_after_list(s->store, req->job_name, limit, listed_cb, call);
}
