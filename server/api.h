/* api: the handlers of csched.v1.Scheduler and grpc.health.v1.Health, one
 * file per group of methods. All run on the loop thread. A handler that
 * changes state answers only after the change has committed. */
#ifndef CS_API_H
#define CS_API_H

#include "rpc.h"
#include "sched_state.h"
#include "store.h"

/* The method table for cs_rpc_server_new (ctx = struct cs_sched *). */
extern const struct cs_method cs_api_methods[];
extern const size_t cs_api_n_methods;

/* Returns true if the store takes writes; otherwise fails call with
 * UNAVAILABLE and returns false. */
bool cs_api_require_store(struct cs_call *call, struct cs_sched *sched);

/* A reply held back until a write has committed: pass cs_api_reply_cb with
 * it as the write's callback. msg (owned, freed after sending) may be set
 * after the write was queued, but before the loop turn ends. */
struct cs_reply_later {
    struct cs_call *call;
    ProtobufCMessage *msg;
};
struct cs_reply_later *cs_api_reply_later(struct cs_call *call, ProtobufCMessage *msg);
void cs_api_reply_cb(void *arg, int status);

/* Fails call for a store read that returned status. */
void cs_api_fail_store(struct cs_call *call, int status, const char *what);

/* The page size to use for a request: 0 means 100; over 1000 is -EINVAL. */
int cs_api_page_size(uint32_t requested, uint32_t *out);

void cs_api_create_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_update_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_get_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_jobs(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_delete_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_trigger_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_get_run(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_list_runs(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_cancel_run(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_watch(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_read_logs(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_get_stats(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_health_check(struct cs_call *call, const ProtobufCMessage *request, void *ctx);
void cs_api_health_watch(struct cs_call *call, const ProtobufCMessage *request, void *ctx);

/* Keeps a health Watch stream open until the client leaves or the server
 * stops (api_watch owns the list of open streams). */
void cs_api_health_watch_open(struct cs_sched *sched, struct cs_call *call);
/* At start: has every committed event handed to the open Watch streams. */
void cs_api_watch_init(struct cs_sched *sched);
/* At shutdown: ends every open Watch and health Watch stream. */
void cs_api_watch_close_all(struct cs_sched *sched);

#endif
