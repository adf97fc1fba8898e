/* dispatch_fixture: the fakes and helpers of test_dispatch. The store's
 * three writes and the launcher's submit are fakes given to cs_dispatch_init
 * in the ops, as cschedd gives the real ones: writes are recorded and
 * commit when a test says so, with every event recorded as it is written;
 * launches wait until the test plays the launch thread and answers through
 * the launcher's done callback. Minders are real processes (sleep) with
 * real pidfds in the real exit watch; the test writes the status note a
 * minder would have left, then ends the process. A guard timer fails a wait
 * that would never end. */
#ifndef CS_TEST_DISPATCH_FIXTURE_H
#define CS_TEST_DISPATCH_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "attempt.h"
#include "dispatch.h"
#include "event.h"
#include "job.h"
#include "job_table.h"
#include "later.h"
#include "minder_contract.h"
#include "note.h"
#include "retry.h"

extern char **environ;

enum { MAX_EVENTS = 1024, MAX_WRITES = 2048, MAX_LAUNCHES = 64, MAX_CHILDREN = 64 };

struct event_rec {
    int64_t run_id;
    uint32_t attempt; /* 0: the run's own event */
    Csched__V1__RunState state;
    uint64_t at_loop_ms; /* uv_now when it was written */
    int outcome_case;    /* the event's outcome oneof, and its value */
    int32_t outcome;
    int64_t at_unix_ms;
    bool recovered;
};

/* A write waiting to commit: an event's (event_cb, with the seq it was
 * put with) or another's (cb). */
struct write_rec {
    cs_store_done_cb cb;
    cs_store_event_cb event_cb;
    void *arg;
    int64_t seq;
};

struct dispatch_fixture {
    uv_loop_t loop;
    uv_timer_t guard;
    bool guard_fired;
    struct cs_sched s;
    char state_dir[64];
    char *empty_env[1];
    struct event_rec events[MAX_EVENTS]; /* as written */
    size_t n_events;
    int64_t published[MAX_EVENTS]; /* seqs, as published after commit */
    size_t n_published;
    struct write_rec writes[MAX_WRITES]; /* not yet committed */
    size_t n_writes;
    struct cs_launch *launches[MAX_LAUNCHES]; /* submitted, not yet answered */
    size_t n_launches;
    pid_t children[MAX_CHILDREN];
    int child_stdin[MAX_CHILDREN]; /* closing it makes the child exit 0; -1 once closed */
    size_t n_children;
    int cancel_commits;  /* calls of cancel_done_cb */
    int64_t last_run_id; /* the last run row written: */
    Csched__V1__RunState last_run_state;
    struct cs_outcome last_run_outcome;
};

extern struct dispatch_fixture fx;

/* Per test (cmocka setup and teardown): a fresh loop, state dir and
 * struct cs_sched with dispatch set up; at the end everything freed and the
 * violations the fakes recorded reported. */
int setup(void **state);
int teardown(void **state);

/* The store: commits every write made so far, in order (commit_with: ends
 * them with status, a failed batch's when negative). */
void commit(void);
void commit_with(int status);

/* The launch thread: takes run_id's submitted launch (failing the test if
 * there is none); answers it with a running minder (its pid returned), or
 * with a failed posix_spawn. spawn_minder makes a stand-in minder. */
struct cs_launch *take_launch(int64_t run_id);
pid_t launch_ok(int64_t run_id);
void launch_fails(int64_t run_id);
pid_t spawn_minder(void);

/* The loop: one turn that does not wait; or turns until pred(arg) holds,
 * for an event of run_id (attempt 0: the run's own) in state, or for a run
 * to be queued (is_queued, arg the run). */
void turn(void);
/* The first event of run_id's attempt (0: the run) in state, or NULL. */
const struct event_rec *find_event(int64_t run_id, uint32_t attempt, Csched__V1__RunState state);
void run_until(bool (*pred)(const void *), const void *arg, const char *what);
void wait_for(int64_t run_id, uint32_t attempt, Csched__V1__RunState state);
bool is_queued(const void *arg);

/* The minder: the attempt's directory, the note it leaves, and its end
 * (minder_ends: killed outright; minder_exits: an EXITED note with
 * exit_code, then a clean exit). */
void attempt_dir(int64_t run_id, uint32_t attempt, char *buf, size_t cap);
void write_note(int64_t run_id, uint32_t attempt, enum cs_note_outcome outcome, int exit_code,
                int term_signal, const char *message);
void minder_ends(pid_t pid);
void minder_exits(int64_t run_id, uint32_t attempt, pid_t pid, int exit_code);
/* minder_exits with the note's pages dropped from the page cache first, so
 * that the loop reads it on the pool, turns after the minder's end; false
 * (and the minder left running) where the files are in memory (tmpfs). */
bool minder_exits_note_evicted(int64_t run_id, uint32_t attempt, pid_t pid, int exit_code);

/* Jobs and runs: a job (owned by fx.s), a trigger (whose creation has
 * committed, or not yet: trigger_uncommitted), a run started and
 * running, the active run by id (NULL once retired), its events as
 * "run:STATE aN:STATE ..." words (a recovered one "aN:STATE(rec)"), and a cancel (the returned
 * copy's state). */
struct cs_job *add_job(const char *name, uint32_t max_running, uint32_t max_attempts,
                       uint32_t retry_backoff_ms);
int64_t trigger(struct cs_job *job);
int64_t trigger_uncommitted(struct cs_job *job);
int64_t start_running(struct cs_job *job, pid_t *pid);
struct cs_run *run_of(int64_t id);
const char *history(int64_t run_id);
Csched__V1__RunState cancel(int64_t run_id);

#define Q CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED
#define ST CSCHED__V1__RUN_STATE__RUN_STATE_STARTING
#define RU CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING
#define OK CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED
#define FA CSCHED__V1__RUN_STATE__RUN_STATE_FAILED
#define TO CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT
#define CA CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED
#define LO CSCHED__V1__RUN_STATE__RUN_STATE_LOST

#define START_TO_RUNNING "run:QUEUED run:STARTING a1:STARTING a1:RUNNING run:RUNNING"

#endif
