/* dispatch: the run and attempt state machine. Runs go
 * QUEUED -> STARTING -> RUNNING -> SUCCEEDED | FAILED | TIMED_OUT | CANCELLED | LOST,
 * and back to QUEUED between attempts when a retry is due. Every change is
 * written to the store and emitted as an event in the same loop turn.
 * A run holds one slot of the global limit and of its job's limit from
 * STARTING until its attempt has ended. Loop thread only. */
#ifndef CS_DISPATCH_H
#define CS_DISPATCH_H

#include "launcher.h"
#include "sched_state.h"
#include "store.h"

/* The store's writes and the launcher's submit, for cs_dispatch_init. */
extern const struct cs_sched_ops cs_dispatch_cschedd_ops;

/* Sets up the table of active runs, the pump and the exit watch, wired to
 * dispatch's callbacks (sched->loop set); ops (borrowed for good) is how
 * rows, events and launches leave. 0 or a negative errno. */
int cs_dispatch_init(struct cs_sched *sched, const struct cs_sched_ops *ops);
/* What an array sets in each of its runs' env: the run's index and the
 * array's size (TriggerJobRequest.array_size). */
#define CS_ARRAY_INDEX_ENV "CSCHED_ARRAY_INDEX"
#define CS_ARRAY_SIZE_ENV "CSCHED_ARRAY_SIZE"
/* Makes a QUEUED run of job (env overrides, key and triggered_by, the
 * identity that made it or "schedule", borrowed). cb runs once the run's
 * creation has committed. With request->array_size, makes that many runs,
 * the array (run_array.h), and returns its first, which alone carries the
 * key and cb: the caller ties their writes into one transaction
 * (cs_store_mark_take). */
struct cs_run *cs_dispatch_trigger(struct cs_sched *sched, struct cs_job *job,
                                   const Csched__V1__TriggerJobRequest *request,
                                   const char *triggered_by, cs_store_done_cb cb, void *arg);
/* cs_dispatch_trigger for the slot of job's schedule at slot_unix_ms. */
struct cs_run *cs_dispatch_trigger_slot(struct cs_sched *sched, struct cs_job *job,
                                        const Csched__V1__TriggerJobRequest *request,
                                        int64_t slot_unix_ms, const char *triggered_by,
                                        cs_store_done_cb cb, void *arg);
/* Cancels an active run: a queued one, or one whose launch is still held
 * for its due time, ends CANCELLED now; a starting or running one has its
 * minder told to stop its process group. cb runs once
 * the change has committed. Returns a copy of the run as it is after the
 * change (owned by the caller). */
Csched__V1__Run *cs_dispatch_cancel(struct cs_sched *sched, struct cs_run *run, cs_store_done_cb cb,
                                    void *arg);
/* After job was paused: its slots' runs held for a due time since the
 * pause (launcher.h) are taken back, their slots skipped PAUSED, as they
 * would be had they waited for that time. O(active runs). */
void cs_dispatch_job_paused(struct cs_sched *sched, struct cs_job *job);
/* The runs of job its slots made ahead (slots.h) that still wait for their
 * due time, queued or held, up to max of them into out: how many.
 * O(active runs). */
size_t cs_dispatch_runs_ahead(struct cs_sched *sched, const struct cs_job *job, struct cs_run **out,
                              size_t max);
/* After a start: takes over a run from the store's snapshot (run owned). */
void cs_dispatch_resume(struct cs_sched *sched, Csched__V1__Run *run, const char *attempt_dir,
                        const struct cs_store_remote_attempt *remote);
/* The launcher's done callback (ctx is the struct cs_sched). */
void cs_dispatch_launch_done_cb(struct cs_launch *launch, void *ctx);
/* At shutdown, once the launcher has stopped: frees every active run and
 * attempt (minders keep running and are adopted by the next start) and
 * closes what cs_dispatch_init set up. */
void cs_dispatch_close(struct cs_sched *sched);

#endif
