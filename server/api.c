/* api: the method table and what every handler shares. */
#define CS_LOG_COMPONENT "api"
#include "api.h"

#include <errno.h>
#include <stdlib.h>

#include "grpc/health/v1/health.pb-c.h"
#include "log.h"
#include "util.h"

#define SCHED(m) "/csched.v1.Scheduler/" m

const struct cs_method cs_api_methods[] = {
    {SCHED("CreateJob"), &csched__v1__create_job_request__descriptor, false, cs_api_create_job},
    {SCHED("UpdateJob"), &csched__v1__update_job_request__descriptor, false, cs_api_update_job},
    {SCHED("GetJob"), &csched__v1__get_job_request__descriptor, false, cs_api_get_job},
    {SCHED("ListJobs"), &csched__v1__list_jobs_request__descriptor, false, cs_api_list_jobs},
    {SCHED("DeleteJob"), &csched__v1__delete_job_request__descriptor, false, cs_api_delete_job},
    {SCHED("TriggerJob"), &csched__v1__trigger_job_request__descriptor, false, cs_api_trigger_job},
    {SCHED("GetRun"), &csched__v1__get_run_request__descriptor, false, cs_api_get_run},
    {SCHED("ListRuns"), &csched__v1__list_runs_request__descriptor, false, cs_api_list_runs},
    {SCHED("CancelRun"), &csched__v1__cancel_run_request__descriptor, false, cs_api_cancel_run},
    {SCHED("Watch"), &csched__v1__watch_request__descriptor, true, cs_api_watch},
    {SCHED("ReadLogs"), &csched__v1__read_logs_request__descriptor, true, cs_api_read_logs},
    {SCHED("GetStats"), &csched__v1__get_stats_request__descriptor, false, cs_api_get_stats},
    {"/grpc.health.v1.Health/Check", &grpc__health__v1__health_check_request__descriptor, false,
     cs_api_health_check},
    {"/grpc.health.v1.Health/Watch", &grpc__health__v1__health_check_request__descriptor, true,
     cs_api_health_watch},
};

const size_t cs_api_n_methods = CS_ARRAY_LEN(cs_api_methods);

int cs_api_require_store(struct cs_call *call, struct cs_sched *sched)
{
    CS_ASSERT_LOOP();
    if (cs_store_is_accepting(sched->store))
        return 0;
    cs_call_fail(call, -ENOTCONN,
                 "the database is unreachable or behind on writes; retry in a few seconds");
    return -ENOTCONN;
}

struct cs_reply_later *cs_api_reply_later(struct cs_call *call, ProtobufCMessage *msg)
{
    CS_ASSERT_LOOP();
    struct cs_reply_later *r = cs_xmalloc(sizeof(*r));
    r->call = call;
    r->msg = msg;
    return r;
}

void cs_api_reply_cb(void *arg, int status)
{
    CS_ASSERT_LOOP();
    struct cs_reply_later *r = arg;
    if (status == 0)
        cs_call_reply(r->call, r->msg);
    else
        cs_api_fail_store(r->call, status, "committing the change");
    protobuf_c_message_free_unpacked(r->msg, NULL);
    free(r);
}

void cs_api_fail_store(struct cs_call *call, int status, const char *what)
{
    CS_ASSERT_LOOP();
    if (status == -ENOTCONN)
        cs_call_fail(call, -ENOTCONN, "the database is unreachable (%s); retry in a few seconds",
                     what);
    else
        cs_call_fail(call, -EIO, "the database failed while %s; the server log has the details",
                     what);
}

int cs_api_page_size(uint32_t requested, uint32_t *out)
{
    if (requested > 1000)
        return -EINVAL;
    *out = requested == 0 ? 100 : requested;
    return 0;
}
