/* state_instance: the state dir's own random id, the "instance" a replica
 * joins the database with (docs/architecture.md, "Replicas"). It tells a
 * restart of a replica (the same state dir, whose minders may still run
 * here) from another state dir given the same --replica-id (another
 * machine, whose attempts cannot be adopted here). Made once, kept in
 * STATE_DIR/instance. Main thread, before the loop runs, with the state
 * dir's lock held: a few file calls on a local directory. */
#ifndef CS_STATE_INSTANCE_H
#define CS_STATE_INSTANCE_H

#include <stddef.h>

#include "util.h"

#define CS_STATE_INSTANCE_FILE "instance"
/* 32 hex digits and the terminating NUL. */
#define CS_STATE_INSTANCE_SIZE 33

/* Reads the id, or makes it (128 random bits, written to a temporary file,
 * synced and renamed into place) when the file does not exist. 0, or a
 * negative errno with err saying what failed: a file that exists but does
 * not hold an id is refused, not replaced. */
int cs_state_instance_get(const char *state_dir, char out[CS_STATE_INSTANCE_SIZE],
                          struct cs_err *err);

#endif
