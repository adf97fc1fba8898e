/* remote_attempt: an attempt the active replica placed on another
 * replica's machine (docs/design/0036), as its loop sees it. Launch sends
 * the job, the run and the attempt's number to that replica's Worker
 * service, with every other launch placed there in the same turn of the
 * loop; each one's answer comes back as a launch does from the launcher
 * (the pid and start time, or why it failed). One Await at a time per
 * replica, held there, brings back the ends of all its attempts (their
 * notes, or that they never started), and is asked again while any is
 * left; an end that comes before its launch's answer waits for it. An
 * Await that fails is asked again with a backoff, while that replica's
 * lease lasts; once the replica is gone and the deadline its commands
 * stop at has passed (cs_remote_check_lost), the attempt ends LOST. Loop
 * thread. */
#ifndef CS_REMOTE_ATTEMPT_H
#define CS_REMOTE_ATTEMPT_H

#include <stdint.h>

#include "attempt.h"
#include "launcher.h"
#include "sched_state.h"

/* Sets up the queue of launches sent once a turn is over: 0 or a negative
 * errno from libuv. cs_remote_close closes it. */
int cs_remote_init(struct cs_sched *sched);
void cs_remote_close(struct cs_sched *sched);
/* Sends att's launch (att->launch, made by dispatch) to the replica named
 * by att->remote_replica; done_cb gets it back with its results, as from
 * the launcher. */
void cs_remote_launch(struct cs_sched *sched, struct cs_attempt *att, cs_launch_done_cb done_cb);
/* Asks for att's end (after its launch, or for an attempt a takeover found
 * on another replica): att->ops->ended_cb or not_started_cb follow, never
 * from inside this call (an end that came first is told once the turn is
 * over), so the caller may go on with att and its run. */
void cs_remote_await(struct cs_attempt *att);
/* The same for an attempt a takeover found on another replica's machine,
 * whose commands stop by themselves in wait_ms (on the database's clock)
 * if that replica renews no more: past that and the margin it ends LOST,
 * unless the replica's row was read alive meanwhile (then it is asked on). */
void cs_remote_resume(struct cs_attempt *att, int64_t wait_ms);
/* Asks the replica to cancel att's command. */
void cs_remote_cancel(struct cs_attempt *att);
/* Whatever is in flight for att is dropped: its callbacks never come. */
void cs_remote_free(struct cs_attempt *att);
/* The replicas' rows were read again (placement.h): an attempt on one
 * that is gone ends LOST once its commands' deadline and margin_ms of
 * its job have passed on the database's clock. */
void cs_remote_check_lost(struct cs_sched *sched);

#endif
