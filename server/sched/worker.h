/* worker: the attempts the active replica placed on this machine
 * (docs/design/0036). Each is a cs_attempt as the active replica's own
 * are: launched by this replica's launch threads, watched through its
 * pidfd, its note read at its end, the tails of its output kept in the
 * database. The active replica's calls (Launch, Await, Cancel) find it by
 * its run's id. One not in memory (this process started again, or its
 * Launch never arrived) is adopted from the state dir when Await asks,
 * which tells apart a minder still running, one that ended (its note) and
 * an attempt that never started (no directory). An attempt leaves memory
 * once Await has been answered with its end. Loop thread only. */
#ifndef CS_WORKER_H
#define CS_WORKER_H

#include <stdint.h>

#include "csched/v1/worker.pb-c.h"
#include "launcher.h"
#include "sched_state.h"

/* Called once with the answer to a Launch, a start for each of its
 * launches (borrowed), or NULL when whether their minders start is not
 * known (this replica stops meanwhile): Await tells. */
typedef void (*cs_worker_launch_cb)(void *arg, const Csched__V1__LaunchResponse *response);
/* Called once with the answer to an Await (borrowed): the ends known, none
 * after the hold (ask again); NULL when this replica stops. */
typedef void (*cs_worker_await_cb)(void *arg, const Csched__V1__AwaitResponse *response);

/* 0 or a negative errno from libuv. */
int cs_worker_start(struct cs_sched *sched);
/* Answers every Await waiting (NULL) and forgets the attempts, whose
 * minders go on until their lease's deadline; a launch in the launcher's
 * hands comes back to cs_worker_launch_done, which then drops it. */
void cs_worker_stop(struct cs_sched *sched);

/* The attempts placed here that the active replica has not yet been told
 * the end of: what a draining replica waits for. */
uint32_t cs_worker_held(const struct cs_sched *sched);
/* Whether attempt number of run_id was placed here and has not ended. */
bool cs_worker_runs(const struct cs_sched *sched, int64_t run_id, uint32_t number);
/* Starts req's attempts here, each unless this replica may not (not
 * joined, a renewal late, stopping) or holds another attempt of its run:
 * then refused. */
void cs_worker_launch(struct cs_sched *sched, const Csched__V1__LaunchRequest *req,
                      cs_worker_launch_cb cb, void *arg);
/* Answers once an attempt placed here has ended (those of the Launches,
 * and those req lists, adopted from the state dir when not in memory), with
 * every end known then, each told once; or after hold_ms with none. */
void cs_worker_await(struct cs_sched *sched, const Csched__V1__AwaitRequest *req, int64_t hold_ms,
                     cs_worker_await_cb cb, void *arg);
/* Tells the attempt's minder to stop its command: 0, or -ENOENT when no
 * such attempt is in memory here (Await with cancel reaches it then). */
int cs_worker_cancel(struct cs_sched *sched, int64_t run_id, uint32_t number);
/* The launcher's answer for a launch placed here (launch->placed). */
void cs_worker_launch_done(struct cs_sched *sched, struct cs_launch *launch);

#endif
