/* The scheduler's state: every job, every active run and its live attempt,
 * the slot counts behind the limits, and the id and seq counters. Owned by
 * the loop thread; nothing here is touched from any other thread. */
#ifndef CS_SCHED_STATE_H
#define CS_SCHED_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "csched/v1/scheduler.pb-c.h"
#include "exit_watch.h"
#include "idmap.h"
#include "probe.h"
#include "run_keys.h"

struct cs_store;
struct cs_launcher;
struct cs_watch;

struct cs_job {
    Csched__V1__Job *spec;                  /* owned; freed with protobuf_c_message_free_unpacked */
    uint32_t active;                        /* runs of this job not yet terminal */
    uint32_t slots;                         /* runs holding a slot (STARTING or RUNNING) */
    struct cs_run *queue_head, *queue_tail; /* runs ready to start, oldest first */
    size_t heap_index;                      /* place in the pump's ready heap, or CS_NOT_IN_HEAP */
};

#define CS_NOT_IN_HEAP SIZE_MAX

struct cs_attempt;

struct cs_run {
    Csched__V1__Run *msg; /* owned: the run as clients see it, attempts included */
    struct cs_job *job;   /* borrowed: a job is never deleted while it has active runs */
    struct cs_run *queue_next;
    bool queued;                /* on its job's queue */
    struct cs_attempt *attempt; /* the live attempt, or NULL */
    struct cs_backoff *backoff; /* the retry timer while waiting to retry, or NULL */
    struct cs_run *key_next;    /* in its run_keys bucket */
};

struct cs_sched {
    uv_loop_t *loop;
    struct cs_store *store;
    struct cs_launcher *launcher;
    struct cs_exit_watch exits; /* the pidfds of the live minders */
    const char *state_dir;
    const char *minder_path;
    uint32_t max_running;

    struct cs_job **jobs; /* sorted by name */
    size_t n_jobs, cap_jobs;
    struct cs_idmap runs;        /* active runs by id */
    struct cs_run_keys run_keys; /* the active runs with an idempotency key */

    struct cs_job **ready; /* pump: min-heap of jobs that may start a run */
    size_t n_ready, cap_ready;
    uv_idle_t pump_idle;
    bool pump_armed;
    bool stopping; /* no more starts: the server is shutting down */

    /* Runs per state; starting + running is the number of slots held. */
    uint32_t queued;
    uint32_t starting;
    uint32_t running;
    int64_t next_run_id;
    int64_t next_seq;
    int64_t last_published_seq; /* the highest seq committed and handed to watchers */
    uint64_t runs_started, runs_finished;

    struct cs_watch *watches; /* open Watch streams */
    struct cs_probe probe;
    int64_t started_mono_ns;
    char **base_env; /* the server's environment, for every command */
};

static inline uint32_t cs_sched_slots_used(const struct cs_sched *sched)
{
    return sched->starting + sched->running;
}

bool cs_run_state_is_terminal(Csched__V1__RunState state);
const char *cs_run_state_name(Csched__V1__RunState state);

#endif
