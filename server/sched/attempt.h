/* attempt: one live minder as the loop sees it. Its end is seen through a
 * pidfd in the scheduler's exit watch, which works alike for minders this
 * process started and for minders adopted after a restart. The status note
 * is read on libuv's pool. What happens next is the owner's: the ops given
 * at cs_attempt_new are called, once per watch or adoption. Loop thread
 * only, except the work functions (attempt_work.c). */
#ifndef CS_ATTEMPT_H
#define CS_ATTEMPT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "note.h"
#include "sched_state.h"

struct cs_attempt;

/* What an attempt tells its owner (dispatch), on the loop thread. */
struct cs_attempt_ops {
    /* A minder this process started has exited cleanly (0 after its note,
     * or having started nothing): as a subreaper it ended and reaped all its
     * command left, so nothing of the attempt is alive. The note is read
     * next, then ended_cb. Not called for a minder killed or failed (its
     * command may outlive it until the note read stops its group), nor for
     * an adopted one, whose exit status is not ours to read. */
    void (*exited_cb)(struct cs_attempt *att);
    /* The minder has ended and its note was read (note_rc says whether
     * there is one); the owner frees the attempt. */
    void (*ended_cb)(struct cs_attempt *att);
    /* Adoption found the minder still running (pid and pidfd set). */
    void (*adopted_cb)(struct cs_attempt *att);
    /* Adoption found no directory for the attempt: nothing of it was ever
     * made, so nothing ran; the owner frees the attempt. */
    void (*not_started_cb)(struct cs_attempt *att);
};

/* The end of an attempt that adoption found before the last one. */
struct cs_attempt_end {
    int note_rc; /* as cs_attempt's */
    struct cs_note note;
};

struct cs_launch;

struct cs_attempt {
    struct cs_sched *sched;
    const struct cs_attempt_ops *ops; /* borrowed: static in the owner */
    struct cs_run *run; /* NULL for an attempt placed here by the active replica (worker.h) */
    int64_t run_id;
    uint32_t number;
    char *dir;                /* owned */
    pid_t pid;                /* the minder, once started; 0 before */
    int pidfd;                /* -1 when not watching (and once it has fired) */
    bool is_child;            /* started by this process: reap it */
    bool exited;              /* its pidfd fired: the pid may be another process's now */
    bool holds_slot;          /* counted in the limits (dispatch's) */
    struct cs_launch *launch; /* with the launcher, until it comes back (dispatch's) */
    bool launch_unsent;       /* launch made, sent once the start has committed (dispatch's) */
    int taking_back;          /* why that launch is being taken back, 0 if not (dispatch's) */
    bool launch_failed;       /* the minder could not be started (note.message says why) */
    bool backstop_fired;      /* the minder outlived its deadline and was killed */
    bool no_space; /* no room in the state dir to make the attempt or its note: nothing ran */
    /* Made by a restart for what the store may not know, until adopted
     * alive: what adoption finds is recorded as recovered (dispatch's). */
    bool found_by_restart;
    /* Recorded as started (its number taken): adoption that finds no
     * directory leaves one, so that a late launch of it starts nothing. A
     * restart's look for an attempt the store may not know is not: its
     * number is still to be used. */
    bool recorded;
    /* The backstop until the minder ends (NULL when the job has no
     * timeout), then the wait before a note read is tried again. */
    struct cs_attempt_timer *timer;
    unsigned fd_waits; /* reads (the note, or adoption) that found no free fd */
    uv_work_t work;
    bool in_pool; /* work queued and not yet returned */
    bool freed;   /* cs_attempt_free came while it was */
    /* Results of the pool work. */
    int note_rc; /* 0, -ENOENT (no note: the minder died), or -errno */
    struct cs_note note;
    bool no_dir;     /* adoption: the attempt has no directory */
    bool fd_short;   /* the work found no free fd: it is tried again */
    int adopt_pidfd; /* adoption: a pidfd on the still-running minder, or -1 */
    pid_t adopt_pid;
    /* The replica whose machine runs it: lost (cs_attempt_await_remote),
     * or placed there (remote); "" for an attempt of this machine's. */
    char remote_replica[64];
    /* Where it holds its place (placement.h), while holds_slot. */
    struct cs_room *room;
    /* Placed on another replica's machine (remote_attempt.h); NULL here. */
    struct cs_remote *remote;
    /* Adoption: the attempts found on disk before this one (numbers
     * number - n_earlier .. number - 1), all ended; owned. */
    struct cs_attempt_end *earlier;
    uint32_t n_earlier;
};

/* Makes attempt number of run, whose minder works in dir (copied); no
 * minder yet (pid 0, pidfd -1). The caller owns it until cs_attempt_free. */
struct cs_attempt *cs_attempt_new(struct cs_sched *sched, struct cs_run *run, uint32_t number,
                                  const char *dir, const struct cs_attempt_ops *ops);
/* The same for an attempt of run run_id that the active replica placed on
 * this machine (worker.h): no run of this loop's. */
struct cs_attempt *cs_attempt_new_placed(struct cs_sched *sched, int64_t run_id, uint32_t number,
                                         const char *dir, const struct cs_attempt_ops *ops);
/* Starts watching att->pidfd. If deadline_unix_ms is not 0 and the minder
 * is still alive then, the server kills it (SIGKILL through the pidfd): the
 * backstop for a minder that cannot enforce its own timeout (stopped, or
 * stuck). Its end then goes the usual way, with no note: LOST, and the
 * command's group is stopped. 0 or a negative errno. */
int cs_attempt_watch(struct cs_attempt *att, int64_t deadline_unix_ms);
/* The exit watch's callback (ctx is the attempt): reaps the minder if it is
 * ours (no_space tells its refusal to run apart), closes the pidfd, calls
 * ops->exited_cb if it exited cleanly, and reads the note (on the pool
 * unless the caches have it, tried again while no fd is free), then
 * ops->ended_cb. */
void cs_attempt_exit_cb(void *ctx);
/* After a restart, for the first attempt of its run the store does not
 * know to have ended (att->number, which may not be recorded yet). On the
 * pool it walks the run's attempt directories from there to the last one
 * (the launch thread makes each, synced, before its minder starts, so every
 * attempt that may have run has one), setting number and dir to the last
 * and reading the notes of the ones before it into earlier. The last is
 * then told apart: no directory -> ops->not_started_cb; a note, or a minder
 * gone without one (LOST, the message says whether its command had
 * started), or no pid file in a directory from before the machine's last
 * boot (LOST, its command may have run), or a pid file it could claim before
 * any minder published one (LOST, it never started and never will) ->
 * ops->ended_cb; a live minder -> ops->adopted_cb. */
void cs_attempt_adopt(struct cs_attempt *att);
/* Tells a running minder to cancel its command (SIGTERM: it stops the
 * group and writes its note); nothing before it has a pid, nor after it
 * has exited. 0 or -errno. */
int cs_attempt_cancel(struct cs_attempt *att);
/* The attempt runs on another replica's machine (docs/architecture.md,
 * "Replicas"), whose lease ran out: nothing of it can be seen or stopped
 * from here, and its minder stops the command by itself at that lease's
 * deadline. After wait_ms (the deadline, plus the margin for the two
 * machines' clocks and the command's kill grace) the attempt ends LOST
 * (ops->ended_cb), naming replica. 0 or a negative errno from libuv. */
int cs_attempt_await_remote(struct cs_attempt *att, uint64_t wait_ms, const char *replica);
/* Once the minder has ended: fills a, the attempt's message, from the note
 * (its end, resource use, outcome and message; a message saying why when
 * there is no note) and returns the state the attempt ended in: FAILED,
 * naming the full disk, when the minder had no room for its note; LOST
 * when it fenced its command (cschedd's lease ran out), with no exit code
 * when the command never started. */
Csched__V1__RunState cs_attempt_apply_note(const struct cs_attempt *att, Csched__V1__Attempt *a);
/* The same for earlier[i], an attempt adoption found ended. */
Csched__V1__RunState cs_attempt_apply_earlier(const struct cs_attempt *att, uint32_t i,
                                              Csched__V1__Attempt *a);
/* Stops watching and frees att: at once, or if its note read or adoption
 * is on the pool, when that returns (its callbacks are not called). */
void cs_attempt_free(struct cs_attempt *att);

/* What a restart found of the last attempt's minder in its directory. */
enum cs_attempt_left {
    CS_ATTEMPT_LEFT_NOTE,    /* its note: the attempt ended as it says */
    CS_ATTEMPT_LEFT_PID,     /* a pid file (a minder's, or a claim): adopt, or gone */
    CS_ATTEMPT_LEFT_NOTHING, /* neither, in this boot: claim it, it never started */
    /* Neither, in a directory last changed before the machine booted: the
     * unsynced pid file of a minder that started its command may have been
     * lost with the machine, so the attempt ends LOST and counts. */
    CS_ATTEMPT_LEFT_PRE_BOOT,
};
/* Tells the above apart from whether the note and the pid file are there,
 * the directory's mtime and the machine's boot time (seconds since the
 * epoch; a boot time of 0, unknown, puts every directory in this boot).
 * Pure; any thread. */
enum cs_attempt_left cs_attempt_left_classify(bool has_note, bool has_pid, int64_t dir_mtime_s,
                                              int64_t boot_time_s);
/* The message of an attempt ended CS_ATTEMPT_LEFT_PRE_BOOT. */
#define CS_ATTEMPT_PRE_BOOT_MESSAGE                                                                \
    "the machine restarted while the attempt was starting: its directory predates the boot "       \
    "and its minder left no pid file, so its command may have started before the machine "         \
    "restarted"

/* Pool work (attempt_work.c). */
void cs_attempt_read_note_work(uv_work_t *work);
void cs_attempt_adopt_work(uv_work_t *work);

#endif
