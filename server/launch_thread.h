/* The launch thread: starts each attempt's minder with posix_spawn (never a
 * fork of this big process), opens a pidfd on it, and writes and fsyncs the
 * attempt's pid file, so that none of that work lands on the loop. Results
 * come back to the loop through a mailbox. One thread: the spec found that
 * more launch threads made the loop wait more, not less. */
#ifndef CS_LAUNCH_THREAD_H
#define CS_LAUNCH_THREAD_H

#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "mailbox.h"

struct cs_launch {
    struct cs_mail mail;    /* the trip back to the loop */
    struct cs_launch *next; /* the queue to the thread */
    char *dir;              /* the attempt's directory, made by the thread */
    char **argv;            /* the minder's argv, NULL-terminated */
    char **envp;            /* the command's environment, NULL-terminated */
    void *owner;            /* for the loop: the attempt */
    /* Results, written by the thread. */
    int err; /* 0 or a negative errno */
    char message[256];
    pid_t pid;
    int pidfd;
    int64_t started_unix_ms;
};

struct cs_launcher;
typedef void (*cs_launch_done_cb)(struct cs_launch *launch, void *ctx);

/* Loop thread. minder_path is borrowed for the launcher's life. */
struct cs_launcher *cs_launcher_start(uv_loop_t *loop, const char *minder_path,
                                      cs_launch_done_cb done_cb, void *ctx);
/* Loop thread: hands launch to the thread (ownership moves with it and comes
 * back in done_cb). */
void cs_launcher_submit(struct cs_launcher *launcher, struct cs_launch *launch);
/* Loop thread: finishes the queued launches, joins the thread, then calls
 * stopped_cb and frees the launcher. */
void cs_launcher_stop(struct cs_launcher *launcher, void (*stopped_cb)(void *arg), void *arg);
/* Frees argv, envp and dir (any thread). */
void cs_launch_free(struct cs_launch *launch);

#endif
