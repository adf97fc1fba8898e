/* state_lock: one cschedd per state dir. An exclusive flock on
 * STATE_DIR/cschedd.lock, taken at start before anything else touches the
 * state dir, holding the holder's pid, and kept for the process's life: the
 * kernel drops it when the process ends, however it ends. Main thread,
 * before the loop runs; a few file calls on a local directory. */
#ifndef CS_STATE_LOCK_H
#define CS_STATE_LOCK_H

#include "util.h"

/* The lock file's name under the state dir. */
#define CS_STATE_LOCK_FILE "cschedd.lock"

struct cs_state_lock {
    int fd; /* the open lock file (O_CLOEXEC: minders and PostgreSQL never hold it), or -1 */
};

/* Takes the lock on state_dir (which must exist) without waiting and writes
 * this process's pid into the file. 0; -EBUSY when another process holds it,
 * err naming it by the pid its file holds; or another negative errno, err
 * saying which call failed. lock->fd is -1 unless 0 is returned. */
int cs_state_lock_take(struct cs_state_lock *lock, const char *state_dir, struct cs_err *err);

/* Closes the file, which releases the lock. A lock not taken is allowed. */
void cs_state_lock_release(struct cs_state_lock *lock);

#endif
