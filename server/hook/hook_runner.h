/* hook_runner: the thread that runs command hooks' attempts, each by a
 * csched-minder as a job's attempt is (launch_spawn_thread.c: the job's
 * user, its limits, its logs), so that the directory, the user's lookup,
 * the secrets' reads, the spawn and the wait all stay off the loop. It
 * waits on every running minder at once (their pidfds and a wake-up
 * eventfd in one poll), so a slow command holds up nothing but its own
 * job's queue. When a minder exits, its status note and the tails of its
 * logs fill the post, which goes back through the mailbox given at start.
 *
 * At a stop, the minders still running are left to finish on their own
 * (they are in sessions of their own); their deliveries stay pending and
 * are run again by the next active cschedd: at least once. */
#ifndef CS_HOOK_RUNNER_H
#define CS_HOOK_RUNNER_H

#include "hook_sender.h"
#include "mailbox.h"

/* Minders running at once, at most; the loop sends no more (hooks.h). */
#define CS_HOOK_RUNNER_MAX 256

struct cs_hook_runner;

/* Starts the thread (loop thread): minders from minder_path, attempts
 * below hooks_dir (made on first use), results to results; all borrowed
 * until stop. 0 or a negative errno (logged). */
int cs_hook_runner_start(struct cs_hook_runner **out, struct cs_mailbox *results,
                         const char *minder_path, const char *hooks_dir);
/* Any thread: takes post (its launch set) and wakes the thread. */
void cs_hook_runner_submit(struct cs_hook_runner *runner, struct cs_hook_post *post);
/* Loop thread: stops and frees the runner; NULL is a no-op. */
void cs_hook_runner_stop(struct cs_hook_runner *runner);

#endif
