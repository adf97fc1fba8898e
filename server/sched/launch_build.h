/* launch_build: the launch of one attempt of a run (launcher.h), built from
 * its job's definition as it stands: the minder's argv, the command's
 * environment, who it runs as and its secret references. Used at the start
 * and ahead of it (a minder started ahead, ahead_minder.h), so both build
 * the same launch from the same definition. Loop thread. */
#ifndef CS_LAUNCH_BUILD_H
#define CS_LAUNCH_BUILD_H

#include <stdint.h>

#include "launcher.h"
#include "sched_state.h"

/* The launch of run's attempt number in dir, its timeout counted from
 * now_unix_ms (a run's deadline shortens it). Owned by the caller (give it
 * to the launcher or cs_launch_free). Out of memory aborts. */
struct cs_launch *cs_launch_build(struct cs_sched *sched, struct cs_run *run, uint32_t number,
                                  const char *dir, int64_t now_unix_ms);
/* The same from the job's definition spec and the run's message, with
 * timeout_ms (0: none) already counted: an attempt another replica placed
 * here (worker.h), built with this machine's minder, lease and cgroups. */
struct cs_launch *cs_launch_build_from(struct cs_sched *sched, const Csched__V1__Job *spec,
                                       const Csched__V1__Run *run, uint32_t number, const char *dir,
                                       uint64_t timeout_ms);

#endif
