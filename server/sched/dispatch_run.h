/* dispatch_run: what dispatch.c takes from dispatch_run.c, the run's own
 * records: writing its row, making it, and ending it. Each also writes the
 * run's row and emits its event, in the caller's loop turn. Loop thread
 * only; not for use outside dispatch. */
#ifndef CS_DISPATCH_RUN_H
#define CS_DISPATCH_RUN_H

#include <stdbool.h>

#include "sched_state.h"
#include "store.h"

/* Writes run's row and emits its event; cb (may be NULL) runs when both
 * have committed. */
void cs_dispatch_write_run(struct cs_sched *s, struct cs_run *run, cs_store_done_cb cb, void *arg);
/* Makes run of job from msg (owned from now) and puts it in the tables of
 * active runs; its state is the caller's to set. */
struct cs_run *cs_dispatch_run_new(struct cs_sched *s, struct cs_job *job, Csched__V1__Run *msg);
/* Ends a run that has no attempt running, cancelled, and forgets it;
 * returns a copy of its final message if want_copy (caller frees). */
Csched__V1__Run *cs_dispatch_cancel_unstarted(struct cs_sched *s, struct cs_run *run,
                                              cs_store_done_cb cb, void *arg, bool want_copy);
/* Ends run after its last attempt a, in state (CANCELLED if asked to
 * stop), saying so if its deadline ended it, and forgets it. */
void cs_dispatch_end_after(struct cs_sched *s, struct cs_run *run, const Csched__V1__Attempt *a,
                           Csched__V1__RunState state, bool past_deadline);
/* Ends run, made by its slot, if the slot may no longer start it (it
 * waited past the slot's starting deadline, or the job was paused before
 * the slot came due), and forgets it: true if it did. */
bool cs_dispatch_end_slot_run_unstartable(struct cs_sched *s, struct cs_run *run);
/* What a slot run ended by a pause before its slot came due says: the slot's
 * record and the run's message. */
#define CS_SLOT_PAUSED_MESSAGE "the job was paused after its run was made, before the slot came due"
#define CS_SLOT_RUN_PAUSED_MESSAGE                                                                 \
    "cancelled before it started: its job was paused before its slot came due"
/* Ends run, made by its slot and not started, CANCELLED with run_message,
 * and records its slot SKIPPED for reason, saying slot_message; forgets it. */
void cs_dispatch_skip_slot_run(struct cs_sched *s, struct cs_run *run,
                               Csched__V1__SkipReason reason, const char *slot_message,
                               const char *run_message);
/* Whether run, made by its slot, has its first attempt's launch with the
 * launcher, held for the slot's due time (launcher.h): it may still be
 * taken back. */
bool cs_dispatch_slot_start_held(const struct cs_run *run);

#endif
