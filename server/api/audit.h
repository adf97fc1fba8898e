/* audit: the loop's side of the audit trail. Every call of a method that
 * changes jobs or runs (access.h's table says which) queues one row tied to
 * the writes of the change, so the row commits in the change's transaction
 * or not at all; a refused call of those methods, and any call refused with
 * PERMISSION_DENIED, queues a row of its own, naming the job and run its
 * request names, within a budget a minute (audit_budget.h). Loop thread
 * only; each record is one store write, coalesced with its batch's other
 * rows (store.h). */
#ifndef CS_AUDIT_H
#define CS_AUDIT_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "audit_budget.h"
#include "rpc.h"
#include "sched_state.h"
#include "store.h"

/* One row; strings borrowed (copied before the call returns). */
struct cs_audit_entry {
    const char *method; /* short name: "CreateJob" */
    const char *identity;
    const char *job_name; /* "" when there is none */
    int64_t run_id;       /* 0 when there is none */
    grpc_status_code code;
    const char *message; /* "" for OK */
};

/* Queues entry with the next audit id and the time now. tie: the mark taken
 * before the change's writes were queued, or NULL for a row of its own. */
void cs_audit_record(struct cs_sched *sched, const struct cs_audit_entry *entry,
                     const struct cs_store_mark *tie);
/* The OK row of a change that call made, whose writes were queued since
 * mark (in this loop turn): its method and its caller's identity. */
void cs_audit_change(struct cs_sched *sched, const struct cs_call *call,
                     const struct cs_store_mark *since, const char *job_name, int64_t run_id);
/* The refusals the audit trail records: at most a budget of them a minute
 * per caller and for callers without an identity together
 * (audit_budget.h), the rest summarised in a row when the minute ends, by
 * a timer. Owned by its caller for the server's life. */
struct cs_audit_refusals {
    struct cs_sched *sched;
    struct cs_audit_budget budget;
    uv_timer_t timer;
    bool timing;    /* the timer waits for the minute's end */
    bool recording; /* the replica owns the state: refusals are rows, else log lines */
    bool stopped;
};
void cs_audit_refusals_start(struct cs_audit_refusals *r, struct cs_sched *sched);
/* From the load of the state on: audit ids are the active replica's to hand
 * out (a standby counting its own took the ids the active one then gave
 * changes, whose rows were dropped as repeats), so until then a refusal,
 * within the same budget, is a line of the log instead. */
void cs_audit_refusals_record(struct cs_audit_refusals *r);
/* Ends the minute at once, writing its summaries, and closes the timer.
 * Refusals after it are still recorded within the budget; what they leave
 * out is not summarised. */
void cs_audit_refusals_stop(struct cs_audit_refusals *r);
/* The rpc server's refused hook (arg: struct cs_audit_refusals *): records
 * refusals of the methods that change jobs or runs, and PERMISSION_DENIED
 * of any. Not while the store refuses writes: a row then would only grow
 * the backlog the refusal is about. Logged instead until recording. */
void cs_audit_refused_cb(void *arg, struct cs_call *call, grpc_status_code code,
                         const char *message);

/* The expiry of audit rows older than --audit-retention-days: a timer that
 * fires shortly after start and then hourly, each time deleting in bounded
 * transactions (CS_STORE_AUDIT_EXPIRE_ROWS) until none is left. Owned by its
 * caller for the server's life. */
struct cs_audit_expiry {
    struct cs_sched *sched;
    uv_timer_t timer;
    uint32_t days;
    bool stopped;
};
/* Starts it; days 0 keeps every row and starts nothing. */
void cs_audit_expiry_start(struct cs_audit_expiry *x, struct cs_sched *sched, uint32_t days);
/* Stops it (an expiry in flight ends on its own). Safe if never started. */
void cs_audit_expiry_stop(struct cs_audit_expiry *x);

#endif
