/* launcher: hands each attempt's start to a launch thread, which makes
 * the attempt's directory (new, and synced before the minder starts, so a
 * restart finds every attempt that may have run), starts the minder with
 * posix_spawn (never a fork of this big process) and opens a pidfd on it,
 * so that none of that work lands on the loop. The minder writes its own
 * pid file before it starts the command (minder_contract.h). Results come
 * back to the loop through a mailbox. This is the loop's half
 * (launcher.c); the threads' own code is launcher_thread.c (the queue and
 * the wait) and launch_group_thread.c (what they do with a group of
 * launches), and a launch's life is the table of launch_state.h. One or more
 * threads (--launch-threads) share one queue; launches of one run never
 * overlap (the pump starts an attempt only after the last ended), so their
 * order across threads does not matter. A launch may come with a due time:
 * its directory is made and synced at once, and it is held until then, so
 * that at the due time only its minder's start is left (later.h). */
#ifndef CS_LAUNCHER_H
#define CS_LAUNCHER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "launch_state.h"
#include "mailbox.h"
#include "queue.h"
#include "secret.h"

/* What cs_launcher_revoke did. */
enum cs_revoke {
    CS_REVOKE_DONE,     /* the caller owns the launch again; nothing of it ran */
    CS_REVOKE_PENDING,  /* a thread is making it: it comes back to done_cb unstarted */
    CS_REVOKE_TOO_LATE, /* no due time, or its minder is being started */
};

struct cs_launch {
    struct cs_mail mail;  /* the trip back to the loop */
    struct cs_qlink link; /* the queue to the thread */
    char *dir;            /* the attempt's directory, made by the thread */
    char *ahead_dir;      /* where its copy made ahead would be (ahead_dir.h): renamed to dir */
    bool ahead_dir_made;  /* and whether the loop saw it made: a rename, not a mkdir */
    char **argv;          /* the minder's argv, NULL-terminated */
    char **envp;          /* the command's environment, NULL-terminated */
    /* Who the command runs as (runas.h): the job's run_as_user and
     * run_as_group ("" when unset) and the default job user (borrowed; NULL:
     * runas.h's default). Resolved by the thread. */
    char *run_as_user, *run_as_group;
    const char *default_user;
    /* The job's secret_env, set into envp by the thread just before the
     * spawn (secret_thread.h); server_env is borrowed (cschedd's
     * environment at start, kept for the server's life). */
    struct cs_secret *secrets;
    size_t n_secrets;
    char *const *server_env;
    void *owner; /* for the loop: the attempt */
    /* Placed on this machine by the active replica (docs/design/0036): its
     * owner is the worker's, not dispatch's. */
    bool placed;
    /* When its minder starts: for a launch, not before then (0: at once);
     * for a launch ahead (cs_launcher_submit_ahead), when it is due. */
    int64_t due_unix_ms;
    /* Where it is in its life (launch_state.h): written only by
     * cs_launch_apply, read with cs_launch_state. */
    _Atomic enum cs_launch_state state;
    /* When its gate opened (CS_LAUNCH_RELEASED), written as it opens. */
    int64_t released_unix_ms;
    /* Results, written by the thread: err and message only by
     * cs_launch_fail. */
    int err; /* 0 or a negative errno; then no minder is left running */
    char message[256];
    pid_t pid;
    int pidfd;
    int64_t started_unix_ms;
    unsigned fd_waits; /* the thread's own: how often it ran out of file descriptors */
};

struct cs_launcher;
typedef void (*cs_launch_done_cb)(struct cs_launch *launch, void *ctx);

/* Loop thread. minder_path is borrowed for the launcher's life; n_threads
 * (at least 1) launch threads start; done_cb gets each launch back on the
 * loop thread, with its results, in the order they finish. NULL if a
 * thread or the mailbox could not be made (logged). */
struct cs_launcher *cs_launcher_start(uv_loop_t *loop, const char *minder_path, unsigned n_threads,
                                      cs_launch_done_cb done_cb, void *ctx);
/* Loop thread: hands launch, new (CS_LAUNCH_NEW), to the threads (ownership
 * moves with it and comes back in done_cb, CS_LAUNCH_STARTED or
 * CS_LAUNCH_FAILED). Out of file descriptors, its thread keeps it, its minder
 * running unwatched by the loop but supervising its command, until it can
 * open the pidfd and the pid file (retried every 20 ms to 1 s): done_cb
 * hears of it only then, or at shutdown, with the minder stopped. */
void cs_launcher_submit(struct cs_launcher *launcher, struct cs_launch *launch);
/* Loop thread: takes back a launch with a due time whose minder has not
 * started. Queued or held, it is the caller's again at once (DONE,
 * CS_LAUNCH_TAKEN_BACK; held, its directory is there, synced and empty); while a thread makes its
 * directory, it comes back to done_cb unstarted, err -ECANCELED (PENDING);
 * else it goes its way (TOO_LATE). */
enum cs_revoke cs_launcher_revoke(struct cs_launcher *launcher, struct cs_launch *launch);
/* Loop thread: launch, due at launch->due_unix_ms, gets its minder started
 * ahead (ahead_minder.h) when a thread has nothing to start now; the
 * launcher owns it and nothing comes back. */
void cs_launcher_submit_ahead(struct cs_launcher *launcher, struct cs_launch *launch);
typedef void (*cs_launcher_stopped_cb)(void *arg);
/* Loop thread: finishes the queued launches (one still out of file
 * descriptors fails, its minder stopped: up to its kill grace), joins the
 * threads, then calls stopped_cb and frees the launcher. */
void cs_launcher_stop(struct cs_launcher *launcher, cs_launcher_stopped_cb stopped_cb, void *arg);
/* Frees argv, envp (wiped), the secrets, dir and the run-as names (any thread). */
void cs_launch_free(struct cs_launch *launch);

#endif
