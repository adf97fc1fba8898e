/* launch_state: the life of a launch (launcher.h) as one state and a table
 * of what each event does in each state, as minder.c's state x event table.
 * cs_launch_apply is the only writer of a launch's state, and the other
 * code asks the state (cs_launch_state) instead of keeping flags of its
 * own. Any thread: the loop submits and takes back, a launch thread takes,
 * makes, holds and starts (launch_group_thread.c), the release thread
 * opens gates. Invariant: a transition is one compare-and-swap, so a
 * take-back on the loop and a thread's step on the same launch never lose
 * each other; those that move a launch between the launcher's queues
 * (submit, take, hold, go from held, release, take back) are made under
 * the launcher's lock. A new phase (a fenced or draining launcher) is a new
 * state and its row in the table. */
#ifndef CS_LAUNCH_STATE_H
#define CS_LAUNCH_STATE_H

struct cs_launch;

enum cs_launch_state {
    CS_LAUNCH_NEW,    /* the loop's, not yet submitted */
    CS_LAUNCH_QUEUED, /* in the launcher's queue, no thread's yet */
    /* A launch thread's, whether it is held not yet decided: */
    CS_LAUNCH_TAKEN,    /* its directory to make */
    CS_LAUNCH_MADE,     /* its directory made, to sync */
    CS_LAUNCH_SYNCED,   /* its directory made and synced */
    CS_LAUNCH_RESOLVED, /* synced, and who it runs as resolved ahead of its due time */
    CS_LAUNCH_REVOKING, /* taken back meanwhile: it comes back unstarted, -ECANCELED */
    /* Held for its due time, in the launcher's held queue: */
    CS_LAUNCH_HELD,            /* who it runs as resolved */
    CS_LAUNCH_HELD_UNRESOLVED, /* who it runs as to resolve at its start (out of fds ahead) */
    CS_LAUNCH_ARMED,           /* its minder started ahead armed, its gate shut */
    CS_LAUNCH_RELEASED,        /* its gate opened: that minder went */
    /* Being started, a launch thread's; out of fds, it waits with that
     * thread and is tried again from the step its state names: */
    CS_LAUNCH_START_SYNC,    /* its directory's sync to try again (then held or started) */
    CS_LAUNCH_START_USER,    /* who it runs as to resolve */
    CS_LAUNCH_START_SECRETS, /* its secrets to set into its environment */
    CS_LAUNCH_START_MINDER,  /* its minder to spawn, or the one started ahead to tell to go */
    CS_LAUNCH_START_WATCH,   /* its minder running, its pidfd to open */
    /* Done: */
    CS_LAUNCH_STARTED,    /* its minder runs, watched by launch->pidfd; back to done_cb */
    CS_LAUNCH_FAILED,     /* launch->err says why, and no minder of it runs; back to done_cb */
    CS_LAUNCH_TAKEN_BACK, /* taken back: the caller's again, nothing of it ran */
    CS_LAUNCH_NSTATES
};

enum cs_launch_event {
    CS_LAUNCH_EV_SUBMIT,        /* the loop hands it to the launcher */
    CS_LAUNCH_EV_TAKE,          /* a launch thread takes it off the queue */
    CS_LAUNCH_EV_DIR_MADE,      /* its directory was made (or renamed into place) */
    CS_LAUNCH_EV_DIR_SYNCED,    /* the folder that holds it was synced */
    CS_LAUNCH_EV_USER_RESOLVED, /* who it runs as was resolved, and set into its argv */
    CS_LAUNCH_EV_HOLD,          /* due later: put in the held queue */
    CS_LAUNCH_EV_ARM,           /* its minder started ahead was handed its gate */
    CS_LAUNCH_EV_RELEASE,       /* its gate opened */
    CS_LAUNCH_EV_GO,            /* to be started now */
    CS_LAUNCH_EV_SECRETS_SET,   /* its secrets were set into its environment */
    CS_LAUNCH_EV_MINDER_UP,     /* its minder was spawned, or the one started ahead went */
    CS_LAUNCH_EV_WATCHED,       /* its pidfd was opened */
    CS_LAUNCH_EV_FAIL,          /* a step failed for good (cs_launch_fail) */
    CS_LAUNCH_EV_REVOKE,        /* the loop takes it back (cs_launcher_revoke) */
    CS_LAUNCH_NEVENTS
};

/* The state of launch, as last applied by any thread. */
enum cs_launch_state cs_launch_state(const struct cs_launch *launch);
/* Moves launch to the state the table gives for event in its state:
 * 0, or -EPERM when the table refuses event there (the state unchanged). */
int cs_launch_apply(struct cs_launch *launch, enum cs_launch_event event);
/* Fails launch for good: err (a negative errno) and the message, formatted
 * as printf does, become its results (the only place that writes them),
 * and EV_FAIL moves it to CS_LAUNCH_FAILED; launch must be in a state that
 * can fail. */
void cs_launch_fail(struct cs_launch *launch, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
