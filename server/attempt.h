/* attempt: one live minder as the loop sees it. Its end is seen through a
 * pidfd in the scheduler's exit watch, which works alike for minders this
 * process started and for minders adopted after a restart. The status note is read on
 * libuv's pool. Loop thread only, except the work functions. */
#ifndef CS_ATTEMPT_H
#define CS_ATTEMPT_H

#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "note.h"
#include "sched_state.h"

struct cs_attempt {
    struct cs_sched *sched;
    struct cs_run *run;
    uint32_t number;
    char *dir;                    /* owned */
    pid_t pid;                    /* the minder, once started; 0 before */
    int pidfd;                    /* -1 when not watching */
    bool is_child;                /* started by this process: reap it */
    bool launch_failed;           /* the minder could not be started (note.message says why) */
    bool backstop_fired;          /* the minder outlived its deadline and was killed */
    struct cs_backstop *backstop; /* NULL when the job has no timeout */
    uv_work_t work;
    /* Results of the pool work. */
    int note_rc; /* 0, -ENOENT (no note: the minder died), or -errno */
    struct cs_note note;
    int adopt_pidfd; /* adoption: a pidfd on the still-running minder, or -1 */
    pid_t adopt_pid;
    pid_t stored_pid; /* adoption: the minder's pid as the store has it, or 0 */
};

/* Called by attempt.c when the minder has ended and its note was read
 * (note_rc says whether there is one). Supplied by dispatch. */
void cs_dispatch_attempt_ended(struct cs_attempt *att);
/* Called when adoption found the minder still running (pid and pidfd set). */
void cs_dispatch_attempt_adopted(struct cs_attempt *att);

/* Starts watching att->pidfd. If deadline_unix_ms is not 0 and the minder
 * is still alive then, the server kills it (SIGKILL through the pidfd): the
 * backstop for a minder that cannot enforce its own timeout (stopped, or
 * stuck). Its end then goes the usual way, with no note: LOST, and the
 * command's group is stopped. 0 or a negative errno. */
int cs_attempt_watch(struct cs_attempt *att, int64_t deadline_unix_ms);
/* The exit watch's callback (ctx is the attempt): reaps the minder if it is
 * ours and reads its note on the pool. */
void cs_attempt_on_exit(void *ctx);
/* After a restart: on the pool, read the note or find the live minder named
 * in the attempt's pid file; then one of the two dispatch calls above. */
void cs_attempt_adopt(struct cs_attempt *att);
/* Stops watching and frees att once its handle is closed. */
void cs_attempt_free(struct cs_attempt *att);

/* Pool work (attempt_work.c). */
void cs_attempt_read_note_work(uv_work_t *work);
void cs_attempt_adopt_work(uv_work_t *work);

#endif
