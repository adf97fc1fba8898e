/* attempt: one live minder as the loop sees it. Its end is seen through a
 * pidfd in the scheduler's exit watch, which works alike for minders this
 * process started and for minders adopted after a restart. The status note
 * is read on libuv's pool. What happens next is the owner's: the ops given
 * at cs_attempt_new are called, once per watch or adoption. Loop thread
 * only, except the work functions (attempt_work.c). */
#ifndef CS_ATTEMPT_H
#define CS_ATTEMPT_H

#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "note.h"
#include "sched_state.h"

struct cs_attempt;

/* What an attempt tells its owner (dispatch), on the loop thread. */
struct cs_attempt_ops {
    /* The minder has ended and its note was read (note_rc says whether
     * there is one); the owner frees the attempt. */
    void (*ended_cb)(struct cs_attempt *att);
    /* Adoption found the minder still running (pid and pidfd set). */
    void (*adopted_cb)(struct cs_attempt *att);
};

struct cs_attempt {
    struct cs_sched *sched;
    const struct cs_attempt_ops *ops; /* borrowed: static in the owner */
    struct cs_run *run;
    uint32_t number;
    char *dir;           /* owned */
    pid_t pid;           /* the minder, once started; 0 before */
    int pidfd;           /* -1 when not watching */
    bool is_child;       /* started by this process: reap it */
    bool launch_failed;  /* the minder could not be started (note.message says why) */
    bool backstop_fired; /* the minder outlived its deadline and was killed */
    bool no_space;       /* no room in the state dir to make the attempt or its note: nothing ran */
    struct cs_backstop *backstop; /* NULL when the job has no timeout */
    uv_work_t work;
    /* Results of the pool work. */
    int note_rc; /* 0, -ENOENT (no note: the minder died), or -errno */
    struct cs_note note;
    int adopt_pidfd; /* adoption: a pidfd on the still-running minder, or -1 */
    pid_t adopt_pid;
    pid_t stored_pid; /* adoption: the minder's pid as the store has it, or 0 */
};

/* Makes attempt number of run, whose minder works in dir (copied); no
 * minder yet (pid 0, pidfd -1). The caller owns it until cs_attempt_free. */
struct cs_attempt *cs_attempt_new(struct cs_sched *sched, struct cs_run *run, uint32_t number,
                                  const char *dir, const struct cs_attempt_ops *ops);
/* Starts watching att->pidfd. If deadline_unix_ms is not 0 and the minder
 * is still alive then, the server kills it (SIGKILL through the pidfd): the
 * backstop for a minder that cannot enforce its own timeout (stopped, or
 * stuck). Its end then goes the usual way, with no note: LOST, and the
 * command's group is stopped. 0 or a negative errno. */
int cs_attempt_watch(struct cs_attempt *att, int64_t deadline_unix_ms);
/* The exit watch's callback (ctx is the attempt): reaps the minder if it is
 * ours (no_space tells its refusal to run apart) and reads its note on the
 * pool, then ops->ended_cb. */
void cs_attempt_exit_cb(void *ctx);
/* After a restart: on the pool, read the note or find the live minder named
 * in the attempt's pid file; then ops->adopted_cb or ops->ended_cb. */
void cs_attempt_adopt(struct cs_attempt *att);
/* Tells a running minder to cancel its command (SIGTERM: it stops the
 * group and writes its note); nothing before it has a pid. 0 or -errno. */
int cs_attempt_cancel(struct cs_attempt *att);
/* Once the minder has ended: fills a, the attempt's message, from the note
 * (its end, resource use, outcome and message; a message saying why when
 * there is no note) and returns the state the attempt ended in: FAILED,
 * naming the full disk, when the minder had no room for its note. */
Csched__V1__RunState cs_attempt_apply_note(const struct cs_attempt *att, Csched__V1__Attempt *a);
/* Stops watching and frees att once its handle is closed. */
void cs_attempt_free(struct cs_attempt *att);

/* Pool work (attempt_work.c). */
void cs_attempt_read_note_work(uv_work_t *work);
void cs_attempt_adopt_work(uv_work_t *work);

#endif
