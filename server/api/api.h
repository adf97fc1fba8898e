/* api: the handlers of csched.v1.Scheduler, grpc.health.v1.Health and
 * server reflection, one file per group of methods, and their table
 * (api.c). All run on the loop thread. A handler that changes state
 * answers only after the change has committed. What the handlers share is
 * in api_common.h. */
#ifndef CS_API_H
#define CS_API_H

#include "api_common.h"
#include "rpc.h"
#include "sched_state.h"
#include "slots.h"
#include "store.h"

/* The method table for cs_rpc_server_new (ctx = struct cs_sched *). */
extern const struct cs_method cs_api_methods[];
extern const size_t cs_api_n_methods;

void cs_api_create_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
/* The Worker service (api_worker.c): ctx is the scheduler too. */
void cs_api_worker_launch(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_worker_await(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
/* Worker.ReadLogs: the files of an attempt placed on this machine. */
void cs_api_worker_read_logs(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_worker_cancel(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_update_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_get_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
/* At start-up, once their zones are read (cs_zone_load_start): the jobs
 * read back from the store (specs borrowed), each with its schedule parsed
 * (one that no longer parses, or whose zone could not be read, is kept
 * without firing, and logged) and the state its last run ended in
 * (last_ended, parallel to specs; NULL: none known); then the schedules
 * start (cs_slots_start). Loop thread. */
void cs_api_jobs_restore(struct cs_sched *s, Csched__V1__Job *const *specs,
                         const Csched__V1__RunState *last_ended, size_t n);
/* Queues the job's row and its audit row, in one transaction; cb gets arg
 * and the commit's status. */
void cs_api_put_job(struct cs_call *call, struct cs_sched *s, const Csched__V1__Job *spec,
                    cs_store_done_cb cb, void *arg);
void cs_api_pause_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_resume_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_backfill_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_slots(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_hook_deliveries(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_fires(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_dependency_causes(struct cs_call *call, const ProtobufCMessage *request,
                                   void *ctx);
void cs_api_list_jobs(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_delete_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_trigger_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_get_run(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_runs(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_cancel_run(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_watch(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_read_logs(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_get_stats(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_audit(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_replicas(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_set_cluster_limits(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_health_check(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_health_watch(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
/* One request of a server reflection stream, v1 or v1alpha (api_reflection.c). */
void cs_api_reflection_info(struct cs_call *call, const ProtobufCMessage *request, void *ctx);

/* How often an open health Watch looks for a change of the serving status. */
#define CS_HEALTH_POLL_MS 500
/* At start: the health Watch streams' list, of at most max_watches, and the
 * timer that sends them each change of the serving status (api_health.c).
 * 0 or a negative errno from libuv. */
int cs_api_health_init(struct cs_sched *sched, size_t max_watches);
/* At shutdown: ends every open health Watch stream and closes the timer. */
void cs_api_health_close_all(struct cs_sched *sched);
/* At start: has every committed event handed to the open Watch streams. */
void cs_api_watch_init(struct cs_sched *sched);
/* At shutdown: ends every open Watch stream. */
void cs_api_watch_close_all(struct cs_sched *sched);

#endif
