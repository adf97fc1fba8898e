/* ahead_dir: attempt directories made ahead. A run that waits a short
 * while for its start (a slot decided ahead, a short retry backoff) gets
 * the directory of its next attempt made on libuv's pool meanwhile, under
 * a name no restart reads (DIR.ahead). At the start the launch thread only
 * renames it into place, so a burst of starts pays no inode allocation.
 * Loop thread only, but for the pool's own file.
 *
 * Invariant: a DIR.ahead is empty and never seen by a minder; it becomes
 * DIR only by a rename that replaces nothing, before the sync and spawn
 * that any attempt directory gets. One left behind by a crash is reused by
 * the same run's same attempt, or removed by retention with its run's. */
#ifndef CS_AHEAD_DIR_H
#define CS_AHEAD_DIR_H

#include <stdbool.h>
#include <stdint.h>

#include "sched_state.h"

/* Runs starting within this many milliseconds get their directory ahead;
 * those waiting longer (a delayed trigger) make it at their start. */
#define CS_AHEAD_DIR_HORIZON_MS 2000

/* Starts making the directory of run's next attempt, and starting its
 * minder (ahead_minder.h), if run starts within CS_AHEAD_DIR_HORIZON_MS and
 * has none made or being made. */
void cs_ahead_dir_make(struct cs_sched *sched, struct cs_run *run);

/* At the start of run's attempt number: the path its directory made ahead
 * has, if it was (owned by the caller, who tries to rename it into place):
 * being made still, or left by a crash before this server made any, it may
 * be there all the same. NULL for a path too long. *made: whether this
 * server made it (the rename is then all but sure). What run had is no
 * longer its own. */
char *cs_ahead_dir_take(struct cs_sched *sched, struct cs_run *run, uint32_t number, bool *made);

/* run ends or is forgotten without starting: its directory made ahead, if
 * any, is removed on the pool. */
void cs_ahead_dir_drop(struct cs_sched *sched, struct cs_run *run);

/* The server stops: work still on the pool frees itself when done and
 * leaves what it made to the next start. */
void cs_ahead_dir_close(struct cs_sched *sched);

/* The pool's side (ahead_dir_work.c): the directory of a run's attempt,
 * made or removed. */
struct cs_ahead_work {
    uv_work_t work;
    struct cs_sched *sched;
    int64_t run_id;
    uint32_t number;
    bool remove; /* rmdir instead of mkdir */
    int rc;      /* 0 or a negative errno */
    char path[4096];
};
void cs_ahead_dir_work(uv_work_t *work);

#endif
