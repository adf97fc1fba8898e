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

#include "attempt_limits.h"
#include "csched/v1/scheduler.pb-c.h"
#include "ended_runs.h"
#include "exit_watch.h"
#include "heap.h"
#include "idmap.h"
#include "job_schedule.h"
#include "launcher.h"
#include "next_turn.h"
#include "probe.h"
#include "queue.h"
#include "run_keys.h"

struct cs_store;
struct cs_launcher;
struct cs_watch;
struct cs_health;
struct cs_log_read;
struct cs_sched;
struct cs_run;

/* The pump's hand-off: start run, just taken off its job's queue. The
 * callback takes one slot of the global limit and one of the job's, held
 * by the attempt it makes until that attempt's minder has ended. */
typedef void (*cs_pump_start_cb)(struct cs_sched *sched, struct cs_run *run);
/* A run of spec went to state (its event was queued in the same loop turn),
 * or, with slot_skipped, the slot that made it was skipped: for its hooks
 * (server/hook). Borrowed for the call. */
typedef void (*cs_run_hook_cb)(void *ctx, const Csched__V1__Job *spec, const Csched__V1__Run *run,
                               Csched__V1__RunState state, bool slot_skipped);
/* A run ended: its terminal row and event were queued in this loop turn,
 * after tie (a struct cs_store_mark) was taken. For the jobs that run
 * after its job (after.h). */
struct cs_store_mark;
typedef void (*cs_run_end_cb)(struct cs_sched *sched, const struct cs_run *run,
                              const struct cs_store_mark *tie);
/* A committed event, for the open Watch streams (borrowed for the call). */
typedef void (*cs_event_publish_cb)(void *ctx, const Csched__V1__Event *event);

struct cs_launch;

/* What the run state machine does outside the loop's memory, given to
 * cs_dispatch_init: in cschedd the store's writes and the launcher
 * (cs_dispatch_cschedd_ops), in test_dispatch fakes. The signatures are the
 * store's and the launcher's own (done_cb is a cs_store_done_cb: store.h is
 * not needed here). Called on the loop thread. */
/* A call to another replica (docs/design/0036): its gRPC status code, its
 * message, and the reply's bytes (borrowed; NULL unless the code is 0). */
struct cs_unary;
typedef void (*cs_remote_done_cb)(void *arg, int code, const char *message, const uint8_t *reply,
                                  size_t len);
typedef struct cs_unary *(*cs_remote_call_cb)(void *ctx, const char *target, const char *method,
                                              const ProtobufCMessage *request, int64_t timeout_ms,
                                              cs_remote_done_cb done_cb, void *arg);
typedef void (*cs_remote_abandon_cb)(struct cs_unary *call);
/* Hands a client's call to another replica's Worker method (rpc.h's
 * cs_rpc_relay). */
struct cs_call;
typedef void (*cs_relay_cb)(void *ctx, struct cs_call *call, const char *target, const char *method,
                            const ProtobufCMessage *request);

struct cs_sched_ops {
    void (*run_put_cb)(struct cs_store *store, const Csched__V1__Run *run,
                       void (*done_cb)(void *arg, int status), void *arg);
    void (*attempt_put_cb)(struct cs_store *store, int64_t run_id,
                           const Csched__V1__Attempt *attempt, const char *attempt_dir,
                           void (*done_cb)(void *arg, int status), void *arg);
    void (*event_put_cb)(struct cs_store *store, const Csched__V1__Event *event,
                         void (*done_cb)(void *arg, int status, int64_t seq), void *arg);
    /* Hands launch to the launch thread; it comes back to
     * cs_dispatch_launch_done_cb. */
    void (*launch_cb)(struct cs_launcher *launcher, struct cs_launch *launch);
    /* Hands a launch ahead to the launch threads (cs_launcher_submit_ahead),
     * to start its minder before its due time; NULL: none started ahead. */
    void (*launch_ahead_cb)(struct cs_launcher *launcher, struct cs_launch *launch);
    /* Takes back a launch with a due time (cs_launcher_revoke); NULL: none
     * is ever taken back. */
    enum cs_revoke (*revoke_cb)(struct cs_launcher *launcher, struct cs_launch *launch);
    /* Whether the replica may start work (cs_store_may_start); NULL:
     * always. */
    bool (*may_start_cb)(const struct cs_store *store);
    /* Whether an attempt placed here by the active replica may start
     * (cs_store_may_run_placed). */
    bool (*may_run_placed_cb)(const struct cs_store *store);
    /* Records the tails of an attempt's output (cs_store_attempt_tail_put);
     * NULL: none kept (attempt_tail.h). */
    void (*attempt_tail_put_cb)(struct cs_store *store, int64_t run_id, uint32_t number,
                                const uint8_t *out, size_t out_len, const uint8_t *err,
                                size_t err_len, void (*done_cb)(void *arg, int status), void *arg);
};

struct cs_job {
    Csched__V1__Job *spec;        /* owned; freed with protobuf_c_message_free_unpacked */
    uint32_t active;              /* runs of this job not yet terminal */
    uint32_t slots;               /* attempts holding a slot: their minder may be alive */
    struct cs_queue queue;        /* runs ready to start, oldest first */
    size_t heap_index;            /* place in the pump's ready heap, or CS_NOT_IN_HEAP */
    struct cs_schedule *schedule; /* owned, parsed from spec->schedule; NULL: none */
    struct cs_slot_state slot;    /* where its schedule stands */
    /* The state its last run to end ended in (the snapshot's, then each
     * end's); UNSPECIFIED: none of its runs has ended. ListJobs' state. */
    Csched__V1__RunState last_ended;
};

struct cs_attempt;

/* Where the directory of a run's next attempt made ahead stands (ahead_dir.h). */
enum cs_ahead_state { CS_AHEAD_NONE, CS_AHEAD_MAKING, CS_AHEAD_READY };

struct cs_run {
    Csched__V1__Run *msg;       /* owned: the run as clients see it, attempts included */
    struct cs_job *job;         /* borrowed: a job is never deleted while it has active runs */
    struct cs_qlink queue_link; /* in its job's queue while queued */
    bool queued;                /* on its job's queue */
    struct cs_attempt *attempt; /* the live attempt, or NULL */
    size_t later_index;        /* in sched->later while waiting for not_before, or CS_NOT_IN_HEAP */
    bool array_passed;         /* past its capped array's gate (run_array.h) */
    bool array_waiting;        /* waiting at that gate, on its line by queue_link */
    int64_t retry_delay_ms;    /* the wait before the next attempt, recorded with it, */
    int64_t retry_jitter_ms;   /* and the random part taken off that wait */
    struct cs_run *key_next;   /* in its run_keys bucket */
    int64_t starting_ns;       /* cs_now_mono_ns() when it last went STARTING, for metrics */
    enum cs_ahead_state ahead; /* its next attempt's directory made ahead, */
    uint32_t ahead_number;     /* for this attempt */
};

struct cs_sched {
    uv_loop_t *loop;
    const struct cs_sched_ops *ops; /* borrowed, from cs_dispatch_init */
    struct cs_store *store;
    struct cs_launcher *launcher;
    struct cs_exit_watch exits; /* the pidfds of the live minders */
    const char *state_dir;
    int state_dir_status; /* 0, or -errno: the state dir cannot be written (main.c's dir_check) */
    const char *minder_path;
    const char *job_user; /* --job-user: the default job user under root; NULL: runas.h's */
    /* The lease file (host/lease_file.h), passed to every minder as -L so
     * that it stops its command once the replica's lease runs out; NULL:
     * no fencing, the embedded database, which no other replica can take
     * over. With it, a minder also starts only once its attempt's start has
     * committed: a replica that takes this one's work over must know of
     * every command that may run (docs/architecture.md, "Replicas"). */
    const char *lease_path;
    /* The cgroups the jobs' limits are held in (host/limits_probe.h; all
     * "" for none), what that is on this host for a person, and
     * --limits-enforcement strict: a job with a limit they cannot hold is
     * refused, rather than run with the warning recorded. Set at start. */
    struct cs_cgroup_parents cgroups;
    const char *limits_mechanism;
    bool limits_strict;
    /* --replica-id: this replica's name in the database */
    const char *replica_id;
    /* The runs started at most at once: machine_max_running (--max-running),
     * or the cluster's limit where that is lower (cluster_max_running, 0:
     * none; stored in the database, cs_pump_set_cluster_limit). */
    uint32_t max_running;
    uint32_t machine_max_running;
    uint32_t cluster_max_running;
    /* SIGTERM: the replica starts nothing more and says NOT_SERVING while
     * its running attempts end (main.c's drain). */
    bool draining;
    /* How long a replica's commands outlive its last renewal (--attempt-lease):
     * another's attempts are waited for that long past it. */
    int64_t attempt_lease_ms;
    /* --max-streams: event Watch streams, and ReadLogs streams, open at
     * once, all callers together (api_common.h). */
    uint32_t max_streams;

    /* NULL: no hooks (main.c sets server/hook's). */
    cs_run_hook_cb run_hook_cb;
    void *run_hook_ctx;
    /* The rooms attempts are placed in (placement.h), this machine's first. */
    struct cs_room **rooms;
    size_t n_rooms;
    /* The attempts placed on other replicas' machines (remote_attempt.h). */
    struct cs_queue remotes;
    /* The replicas they were placed on, each with its calls in flight, and
     * the turn their launches are sent in (remote_attempt.c's). */
    struct cs_queue remote_peers;
    struct cs_next_turn remote_flush;
    /* Ends that came before their attempts were awaited, told in that turn
     * too (remote_attempt.c's). */
    struct cs_queue remote_ready;
    /* The active replica's state is loaded: every call is served. */
    bool loaded;
    /* The attempts the active replica placed on this machine (worker.h),
     * and the turn the Awaits held are answered in (worker.c's). */
    struct cs_worker *worker;
    struct cs_next_turn worker_answer;
    /* Calls another replica's Worker service (main.c's, through rpc); NULL:
     * nothing is placed elsewhere. */
    cs_remote_call_cb remote_call_cb;
    cs_remote_abandon_cb remote_abandon_cb;
    cs_relay_cb relay_cb;
    void *remote_call_ctx;
    /* NULL: no dependencies between jobs (after.h sets its own). */
    cs_run_end_cb run_end_cb;
    struct cs_after *after;

    struct cs_job **jobs; /* sorted by name */
    size_t n_jobs, cap_jobs;
    uint64_t jobs_generation;        /* counts the table's changes (job_table.h) */
    struct cs_idmap runs;            /* active runs by id */
    struct cs_ended_runs ended_runs; /* the last runs to end, for GetRun */
    struct cs_run_keys run_keys;     /* the active runs with an idempotency key */
    struct cs_idmap arrays;          /* capped arrays with active runs (run_array.h) */
    struct cs_zones zones;           /* the time zones the jobs' schedules borrow */
    struct cs_slots slots;           /* the due heap and its timer */

    struct cs_heap ready;          /* pump: the jobs that may start a run, of struct cs_job */
    struct cs_next_turn pump_turn; /* asked while a run may start */
    cs_pump_start_cb pump_start_cb;
    bool stopping; /* no more starts: the server is shutting down */

    struct cs_heap later;           /* runs waiting for their not_before, of struct cs_run */
    uv_timer_t later_timer;         /* armed for the earliest of them */
    struct cs_next_turn later_more; /* more were due than one turn moves */
    bool ahead_closed; /* ahead_dir.h: the runs are gone, work on the pool frees itself */
    /* attempt_tail.h: the tails being read or committed, those in line,
     * and whether the server stopped (work coming back frees itself). */
    size_t tails_inflight;
    struct cs_queue tails_waiting; /* of struct cs_tail_work */
    bool tails_closed;

    /* Attempts whose minder may be alive: what both limits count. A slot
     * is taken at STARTING and given back when the minder's pidfd fires,
     * before its note is read (docs/design/0008-slot-hand-off-at-the-minders-exit.md). */
    uint32_t slots_held;
    /* Runs per state, for Stats: a run stays RUNNING until its note is
     * read and its end committed, so running can exceed slots_held. */
    uint32_t queued;
    uint32_t starting;
    uint32_t running;
    int64_t next_run_id;
    int64_t next_seq;
    int64_t next_audit_id;
    int64_t last_published_seq;     /* the highest seq committed and handed to watchers */
    int64_t purged_event_seq;       /* every event up to it deleted by retention (0: none) */
    uint32_t retention_days;        /* --retention-days: history older goes (0: none does) */
    cs_event_publish_cb publish_cb; /* NULL until the watchers register */
    void *publish_ctx;
    uint64_t runs_started, runs_finished;

    struct cs_watch *watches;      /* open Watch streams */
    struct cs_log_read *log_reads; /* open ReadLogs streams (api_logs.c) */
    struct cs_health *health;      /* open health Watch streams (api_health.c) */
    struct cs_probe probe;
    int64_t started_mono_ns;
    char **base_env;   /* the server's environment, for every command */
    char **server_env; /* all of it as it was at start, for secret_env's server_env */
};

static inline uint32_t cs_sched_slots_used(const struct cs_sched *sched)
{
    return sched->slots_held;
}

/* The runs in RUNNING whose minder may still be alive (Stats.running): the
 * slots held but those of runs in STARTING, which all hold one. */
static inline uint32_t cs_sched_running_alive(const struct cs_sched *sched)
{
    return sched->slots_held > sched->starting ? sched->slots_held - sched->starting : 0;
}

/* Loop thread: moves run to state, keeping the per-state counts right, and
 * logs the change (log.h's run lines); a terminal state becomes its job's
 * last_ended. A terminal state's outcome and end time are set before, for
 * the line. */
void cs_sched_set_run_state(struct cs_sched *sched, struct cs_run *run, Csched__V1__RunState state);
/* Loop thread: moves attempt a of run to state and logs the change; as
 * above, the outcome and end time of a terminal state are set before. */
void cs_sched_set_attempt_state(const Csched__V1__Run *run, Csched__V1__Attempt *a,
                                Csched__V1__RunState state);
/* Loop thread: appends run's next attempt record (STARTING, number one past
 * the last) and returns it. */
Csched__V1__Attempt *cs_run_attempt_add(Csched__V1__Run *run);

/* How the message of an attempt that ended LOST without running starts: it
 * does not count against the job's max_attempts. */
#define CS_ATTEMPT_NEVER_STARTED_PREFIX "never started: "
/* The message of one a restart gave up before its minder started the
 * command. */
#define CS_ATTEMPT_NEVER_STARTED_MESSAGE                                                           \
    CS_ATTEMPT_NEVER_STARTED_PREFIX "cschedd stopped before the attempt's minder started the "     \
                                    "command, which never ran"
/* Whether a is such an attempt. Any thread. */
bool cs_attempt_never_started(const Csched__V1__Attempt *a);

/* SUCCEEDED, FAILED, TIMED_OUT, CANCELLED or LOST. Any thread. */
bool cs_run_state_is_terminal(Csched__V1__RunState state);
/* The state's name in the proto without its RUN_STATE_ prefix, as the
 * server's log lines and messages write it: "QUEUED", "RUNNING", ...
 * ("UNKNOWN" past the enum). Not libcsched's cs_run_state_name, a public
 * function with lower-case names ("queued"). Static; any thread. */
const char *cs_run_state_proto_name(Csched__V1__RunState state);

/* How a command ended, as the outcome oneof (exit_code | term_signal) of
 * Attempt, Run and Event says it. The three messages number the oneof's
 * fields differently, so each has its own case values: these helpers are
 * the one place that maps between them. */
enum cs_outcome_kind { CS_OUTCOME_NONE, CS_OUTCOME_EXIT_CODE, CS_OUTCOME_TERM_SIGNAL };
struct cs_outcome {
    enum cs_outcome_kind kind;
    int32_t value; /* the exit code or the signal number */
};

struct cs_outcome cs_outcome_of_attempt(const Csched__V1__Attempt *attempt);
struct cs_outcome cs_outcome_of_run(const Csched__V1__Run *run);
void cs_outcome_set_attempt(Csched__V1__Attempt *attempt, struct cs_outcome outcome);
void cs_outcome_set_run(Csched__V1__Run *run, struct cs_outcome outcome);
void cs_outcome_set_event(Csched__V1__Event *event, struct cs_outcome outcome);

#endif
