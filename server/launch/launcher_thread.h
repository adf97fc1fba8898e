/* launcher_thread: the launch threads' half of the launcher, and the state
 * all of them share. Private to the launcher's files (launcher.c and the
 * *_thread.c files of this folder). */
#ifndef CS_LAUNCHER_THREAD_H
#define CS_LAUNCHER_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "ahead_minder.h"
#include "launcher.h"
#include "release_gate.h"
#include "util.h"

struct cs_launcher {
    uv_loop_t *loop;
    const char *minder_path;
    cs_launch_done_cb done_cb;
    void *ctx;
    struct cs_mailbox done_box; /* the threads post each finished launch */
    uv_thread_t *threads;       /* n_threads of them, all started */
    unsigned n_threads;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_cond_t release_wake; /* the release thread's: a gate due sooner, or the stop */
    uv_thread_t release_thread;
    /* Guarded by lock: the launches not yet taken (n_queued of them), how
     * many threads wait for work, and whether to stop. */
    struct cs_queue queue;
    size_t n_queued;
    struct cs_queue ahead_queue;   /* launches ahead, started when queue is empty */
    struct cs_queue held;          /* launches made, held for their due time, earliest first */
    struct cs_release_gates gates; /* of the held launches whose minders are armed */
    unsigned n_idle;
    bool stop;
    struct cs_ahead_minders ahead; /* the minders started ahead, waiting */
    cs_launcher_stopped_cb stopped_cb;
    void *stopped_arg;
};

/* The most launches one thread takes off the queue at once: their
 * directories are made one by one and synced together, so a burst pays for
 * one sync of the attempts folder per group instead of one per minder. A
 * sync waits for the file system's journal, which the minders' own notes
 * keep busy in a burst (docs/design/ has the figures). */
#define CS_LAUNCH_GROUP_MAX 64

/* launcher_thread.c: */
/* A launch thread (arg is the launcher): takes its share of what is queued,
 * or the held launches come due, as a group, and hands it to
 * cs_launch_group; until stop is set and nothing is queued, held or waits
 * for fds. */
void cs_launcher_thread_main(void *arg);

/* launch_group_thread.c: */
/* File descriptors a launch thread holds in reserve, so that a server out
 * of them (too many connections) can still watch what it starts: one freed
 * for each call that needs one (posix_spawn, whose child opens /dev/null in
 * a copy of our fd table; pidfd_open), taken back after the launch. */
#define CS_LAUNCH_RESERVE_FDS 2
struct cs_fd_reserve {
    int fd[CS_LAUNCH_RESERVE_FDS]; /* -1 where none is held */
};
/* Fills r as far as fds are free; the rest is tried at each launch. */
void cs_fd_reserve_init(struct cs_fd_reserve *r);
/* Closes what r holds, at the thread's end. */
void cs_fd_reserve_close(struct cs_fd_reserve *r);
/* Carries the n launches of group (n at most CS_LAUNCH_GROUP_MAX: taken
 * off the queue, held launches come due, or ones that waited for fds)
 * through the pipeline: their directories made, synced once for all, those
 * due later held (the lock taken for that), the others' minders started
 * and posted to the loop in parts. One out of fds goes to waiting, to be
 * tried again from its step, unless final (the stop), when it fails.
 * Returns whether any went to waiting. The lock is not held. */
bool cs_launch_group(struct cs_launcher *launcher, struct cs_fd_reserve *r,
                     struct cs_launch **group, size_t n, struct cs_queue *waiting, bool final);

/* launch_spawn_thread.c: */
/* Resolves who the command runs as (NSS, here rather than on the loop;
 * through the launch threads' cache, runas_cache.h, so that a start
 * repeats no lookup made in the last seconds with the files unchanged) and
 * hands the ids to the minder (-u, -G, -S) with HOME, USER and LOGNAME in
 * the command's env. A command working in the attempt's directory gets
 * DIR/work, its user's, to write in (the minder makes it and enters it
 * before the drop), while DIR itself (the note, the logs, the start record)
 * stays cschedd's, mode 0700.
 * Returns 0, a negative errno (err says why), or -EMFILE or -ENFILE when a
 * lookup ran out of fds (nothing set: it is tried again). */
int cs_launch_prepare_user(struct cs_launch *launch, struct cs_err *err);
/* The fd a minder started ahead reads its go from (-w). */
#define CS_LAUNCH_WAIT_FD 3
/* Spawns launch's minder: stdin and stdout on /dev/null, no other fd of
 * ours but stderr and, unless wait_fd is -1, wait_fd as CS_LAUNCH_WAIT_FD;
 * every signal blocked. Returns 0 with launch->pid set, or as a negative
 * errno why the clone or a step of the child before its exec failed. */
int cs_launch_spawn_minder(const char *minder_path, struct cs_launch *launch, int wait_fd);

/* launch_release_thread.c: */
/* Whether the first shut gate is due. The lock is held. */
bool cs_launcher_gate_due(const struct cs_launcher *launcher);
/* Opens the gates due: every armed minder due by now goes at once, and its
 * held launch can no longer be taken back (it is released). The lock is
 * held, so that cs_launcher_revoke sees a launch either held with its gate
 * shut, or released. */
void cs_launcher_open_gates(struct cs_launcher *launcher);
/* The release thread (arg is the launcher): opens each gate at its due
 * time, until stop is set. */
void cs_launcher_release_main(void *arg);

#endif
