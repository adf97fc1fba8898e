/* launch_state: the table of a launch's transitions and the one function
 * that applies them (see launch_state.h). Any thread. */
#include "launch_state.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "launcher.h"
#include "util.h"

/* What each event leads to in each state. No event leads back to
 * CS_LAUNCH_NEW, so an entry left out, CS_LAUNCH_NEW, is a refusal. */
static const enum cs_launch_state next_state[CS_LAUNCH_NSTATES][CS_LAUNCH_NEVENTS] = {
    [CS_LAUNCH_NEW] = {[CS_LAUNCH_EV_SUBMIT] = CS_LAUNCH_QUEUED},
    [CS_LAUNCH_QUEUED] =
        {[CS_LAUNCH_EV_TAKE] = CS_LAUNCH_TAKEN, [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_TAKEN_BACK},
    [CS_LAUNCH_TAKEN] = {[CS_LAUNCH_EV_DIR_MADE] = CS_LAUNCH_MADE,
                         [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED,
                         [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_REVOKING},
    /* Made but not synced (the sync ran out of fds): going, it waits for
     * the sync to be tried again. */
    [CS_LAUNCH_MADE] = {[CS_LAUNCH_EV_DIR_SYNCED] = CS_LAUNCH_SYNCED,
                        [CS_LAUNCH_EV_GO] = CS_LAUNCH_START_SYNC,
                        [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED,
                        [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_REVOKING},
    [CS_LAUNCH_SYNCED] = {[CS_LAUNCH_EV_USER_RESOLVED] = CS_LAUNCH_RESOLVED,
                          [CS_LAUNCH_EV_HOLD] = CS_LAUNCH_HELD_UNRESOLVED,
                          [CS_LAUNCH_EV_GO] = CS_LAUNCH_START_USER,
                          [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED,
                          [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_REVOKING},
    [CS_LAUNCH_RESOLVED] = {[CS_LAUNCH_EV_HOLD] = CS_LAUNCH_HELD,
                            [CS_LAUNCH_EV_GO] = CS_LAUNCH_START_SECRETS,
                            [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_REVOKING},
    /* The thread may be amid a step when the take-back comes: the step's
     * end changes nothing, and its failure, or the -ECANCELED the thread
     * gives it where it would hold it, ends it. */
    [CS_LAUNCH_REVOKING] = {[CS_LAUNCH_EV_DIR_MADE] = CS_LAUNCH_REVOKING,
                            [CS_LAUNCH_EV_DIR_SYNCED] = CS_LAUNCH_REVOKING,
                            [CS_LAUNCH_EV_USER_RESOLVED] = CS_LAUNCH_REVOKING,
                            [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED,
                            [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_REVOKING},
    [CS_LAUNCH_HELD] = {[CS_LAUNCH_EV_ARM] = CS_LAUNCH_ARMED,
                        [CS_LAUNCH_EV_GO] = CS_LAUNCH_START_SECRETS,
                        [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_TAKEN_BACK},
    [CS_LAUNCH_HELD_UNRESOLVED] =
        {[CS_LAUNCH_EV_GO] = CS_LAUNCH_START_USER, [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_TAKEN_BACK},
    /* Armed, it is taken only once its gate opened: shut, its minder would
     * read the end of file and give up. */
    [CS_LAUNCH_ARMED] =
        {[CS_LAUNCH_EV_RELEASE] = CS_LAUNCH_RELEASED, [CS_LAUNCH_EV_REVOKE] = CS_LAUNCH_TAKEN_BACK},
    [CS_LAUNCH_RELEASED] = {[CS_LAUNCH_EV_GO] = CS_LAUNCH_START_SECRETS},
    /* Synced after all, it is held or started as if just made. */
    [CS_LAUNCH_START_SYNC] =
        {[CS_LAUNCH_EV_DIR_SYNCED] = CS_LAUNCH_SYNCED, [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED},
    [CS_LAUNCH_START_USER] = {[CS_LAUNCH_EV_USER_RESOLVED] = CS_LAUNCH_START_SECRETS,
                              [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED},
    [CS_LAUNCH_START_SECRETS] = {[CS_LAUNCH_EV_SECRETS_SET] = CS_LAUNCH_START_MINDER,
                                 [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED},
    [CS_LAUNCH_START_MINDER] =
        {[CS_LAUNCH_EV_MINDER_UP] = CS_LAUNCH_START_WATCH, [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED},
    [CS_LAUNCH_START_WATCH] =
        {[CS_LAUNCH_EV_WATCHED] = CS_LAUNCH_STARTED, [CS_LAUNCH_EV_FAIL] = CS_LAUNCH_FAILED},
};

enum cs_launch_state cs_launch_state(const struct cs_launch *launch)
{
    return atomic_load(&launch->state);
}

int cs_launch_apply(struct cs_launch *launch, enum cs_launch_event event)
{
    CS_ASSERT(event >= 0 && event < CS_LAUNCH_NEVENTS);
    enum cs_launch_state from = atomic_load(&launch->state), to;
    /* A failed exchange reloads from: the event is looked up again in the
     * state another thread moved the launch to meanwhile. */
    do {
        to = next_state[from][event];
        if (to == CS_LAUNCH_NEW)
            return -EPERM;
    } while (!atomic_compare_exchange_weak(&launch->state, &from, to));
    return 0;
}

void cs_launch_fail(struct cs_launch *launch, int err, const char *fmt, ...)
{
    va_list ap;

    CS_ASSERT(err < 0);
    launch->err = err;
    va_start(ap, fmt);
    (void)vsnprintf(launch->message, sizeof(launch->message), fmt, ap); /* a cut is fine */
    va_end(ap);
    CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_FAIL) == 0);
}
