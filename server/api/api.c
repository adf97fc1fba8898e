/* api: the method table, which names each method's handler. */
#include "api.h"

#include "csched/v1/worker.pb-c.h"
#include "grpc/health/v1/health.pb-c.h"
#include "grpc/reflection/v1/reflection.pb-c.h"
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
    {SCHED("PauseJob"), &csched__v1__pause_job_request__descriptor, false, cs_api_pause_job},
    {SCHED("ResumeJob"), &csched__v1__resume_job_request__descriptor, false, cs_api_resume_job},
    {SCHED("BackfillJob"), &csched__v1__backfill_job_request__descriptor, false,
     cs_api_backfill_job},
    {SCHED("ListSlots"), &csched__v1__list_slots_request__descriptor, false, cs_api_list_slots},
    {SCHED("ListAudit"), &csched__v1__list_audit_request__descriptor, false, cs_api_list_audit},
    {SCHED("ListReplicas"), &csched__v1__list_replicas_request__descriptor, false,
     cs_api_list_replicas},
    {SCHED("SetClusterLimits"), &csched__v1__set_cluster_limits_request__descriptor, false,
     cs_api_set_cluster_limits},
    {SCHED("ListHookDeliveries"), &csched__v1__list_hook_deliveries_request__descriptor, false,
     cs_api_list_hook_deliveries},
    {SCHED("ListFires"), &csched__v1__list_fires_request__descriptor, false, cs_api_list_fires},
    {SCHED("ListDependencyCauses"), &csched__v1__list_dependency_causes_request__descriptor, false,
     cs_api_list_dependency_causes},
    {"/csched.v1.Worker/Launch", &csched__v1__launch_request__descriptor, false,
     cs_api_worker_launch},
    {"/csched.v1.Worker/Await", &csched__v1__await_request__descriptor, false, cs_api_worker_await},
    {"/csched.v1.Worker/Cancel", &csched__v1__attempt_ref__descriptor, false, cs_api_worker_cancel},
    {"/csched.v1.Worker/ReadLogs", &csched__v1__read_logs_request__descriptor, true,
     cs_api_worker_read_logs},
    {"/grpc.health.v1.Health/Check", &grpc__health__v1__health_check_request__descriptor, false,
     cs_api_health_check},
    {"/grpc.health.v1.Health/Watch", &grpc__health__v1__health_check_request__descriptor, true,
     cs_api_health_watch},
    /* v1alpha's request has v1's wire format: one descriptor serves both. */
    {"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
     &grpc__reflection__v1__server_reflection_request__descriptor, CS_STREAM_BIDI,
     cs_api_reflection_info},
    {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
     &grpc__reflection__v1__server_reflection_request__descriptor, CS_STREAM_BIDI,
     cs_api_reflection_info},
};

const size_t cs_api_n_methods = CS_ARRAY_LEN(cs_api_methods);
