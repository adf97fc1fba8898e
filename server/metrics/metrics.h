/* metrics: cschedd's counters and histograms for the Prometheus endpoint.
 * The loop thread records into its own copy through one-line hooks
 * (cs_metrics_observe, cs_metrics_count_*), and at most once a second
 * (cs_metrics_start's timer) publishes that copy, with the gauges its
 * publish callback fills, into a mutex-guarded snapshot. The HTTP thread
 * reads a copy of the snapshot (cs_metrics_snapshot_read) and formats it
 * there: a scrape never touches loop state, and the loop never waits on a
 * scrape for longer than one memcpy of the snapshot.
 *
 * One instance per process, as the log is. The hooks are loop thread only
 * and cost O(1) (a histogram's bucket search is over at most 20 bounds);
 * they work before cs_metrics_start and without it (unit tests). */
#ifndef CS_METRICS_H
#define CS_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "csched/v1/scheduler.pb-c.h"
#include "store.h"

/* The histograms the loop records; each has its name, help and bounds in
 * the formatter's table (metrics_format.c). */
enum cs_metric_hist {
    CS_METRIC_LOOP_LAG,         /* how late the probe's 10 ms tick fired */
    CS_METRIC_ATTEMPT_DURATION, /* an attempt's start to its end */
    CS_METRIC_QUEUE_WAIT,       /* a run due (created, or not_before) to STARTING */
    CS_METRIC_SPAWN,            /* STARTING (launch asked for) to RUNNING (minder up) */
    CS_METRIC_SLOT_LATENESS,    /* a schedule's slot due to decided */
    CS_METRIC_HIST_COUNT
};

/* The bounds of each histogram, in its unit. */
extern const struct cs_hist_bounds cs_metrics_bounds[CS_METRIC_HIST_COUNT];

/* The run states a run ends in, as the proto numbers them, and the
 * outcomes and skip reasons of a schedule's slots. */
#define CS_METRIC_RUN_STATES 9
#define CS_METRIC_SLOT_OUTCOMES 3
#define CS_METRIC_SKIP_REASONS 7
/* gRPC status codes, 0 (OK) to 16 (UNAUTHENTICATED). */
#define CS_METRIC_GRPC_CODES 17
/* Methods counted; the API has about 25, and more are folded into the last. */
#define CS_METRIC_GRPC_METHODS 48

struct cs_metrics_grpc {
    const char *path; /* static: a method table's "/pkg.Service/Method" */
    uint64_t handled[CS_METRIC_GRPC_CODES];
    struct cs_hist seconds; /* from the request handed over to its final status sent */
};

/* The gauges the publish callback fills from loop state. */
struct cs_metrics_gauges {
    uint32_t jobs;
    uint32_t runs_queued, runs_starting, runs_running;
    uint32_t slots_used, max_running;
    struct cs_store_stats store;
    char tzdata_version[32]; /* of the schedules' time zones (tzdb.h's CS_TZDB_VERSION_MAX) */
    /* How the jobs' resource limits are held: "cgroup_v2", "cgroup_v1" or
     * "rlimits" (static strings; NULL before the scheduler fills them),
     * and --limits-enforcement strict. */
    const char *limits_mechanism;
    bool limits_strict;
    /* This replica (store.h's cs_store_replica_info); replica_id "" before
     * the store exists. */
    char replica_id[64];
    int64_t replica_epoch;
    bool replica_active;
    int64_t replica_renewed_age_ms; /* -1 before the first renewal */
};

struct cs_metrics_snapshot {
    struct cs_hist hist[CS_METRIC_HIST_COUNT];
    uint64_t runs_started;                        /* first attempts started */
    uint64_t attempts_started;                    /* every attempt, retries included */
    uint64_t runs_finished[CS_METRIC_RUN_STATES]; /* by the state the run ended in */
    uint64_t attempts_finished[CS_METRIC_RUN_STATES];
    uint64_t slots[CS_METRIC_SLOT_OUTCOMES][CS_METRIC_SKIP_REASONS];
    uint64_t notes_read_loop, notes_read_pool; /* status notes, by where they were read */
    uint64_t stdout_cut, stderr_cut;           /* attempts whose log of the stream was cut */
    struct cs_metrics_grpc grpc[CS_METRIC_GRPC_METHODS];
    uint32_t n_grpc;
    struct cs_metrics_gauges gauges;
    int64_t published_unix_ms; /* 0: never published */
};

/* Loop thread: fills g from loop state, just before each publish. */
typedef void (*cs_metrics_gauges_cb)(void *ctx, struct cs_metrics_gauges *g);

/* Loop thread: publishes every second from now on, the first time at once,
 * with the gauges gauges_cb fills (NULL: none); the timer does not keep the
 * loop alive. 0 or a negative errno (libuv's). */
int cs_metrics_start(uv_loop_t *loop, cs_metrics_gauges_cb gauges_cb, void *ctx);
/* Loop thread: stops publishing (the last snapshot stays readable). */
void cs_metrics_stop(void);

/* Loop thread: one observation of h, in its unit (seconds for times). */
void cs_metrics_observe(enum cs_metric_hist h, double value);
/* Loop thread: attempt number attempt of a run starts (1: the run does). */
void cs_metrics_count_start(uint32_t attempt);
/* Loop thread: a status note was read, on the loop from the kernel's
 * caches (on_loop) or on libuv's pool. */
void cs_metrics_count_note_read(bool on_loop);
/* Loop thread: an attempt ended whose log of stdout, of stderr, was cut at
 * its cap (either may be false). */
void cs_metrics_count_output_cut(bool stdout_cut, bool stderr_cut);
/* Loop thread: a run (attempt 0) or an attempt reached a terminal state. */
void cs_metrics_count_end(uint32_t attempt, Csched__V1__RunState state);
/* Loop thread: a schedule's slot was decided; lateness_s < 0 is not
 * observed (a backfill's slot is not late). */
void cs_metrics_count_slot(Csched__V1__SlotOutcome outcome, Csched__V1__SkipReason reason,
                           double lateness_s);
/* Loop thread: a call of method path (static, e.g. a method table's) ended
 * with code after seconds. */
void cs_metrics_count_grpc(const char *path, int code, double seconds);

/* Any thread: copies the last published snapshot into out (all zero before
 * the first publish). Takes the mutex for one memcpy. */
void cs_metrics_snapshot_read(struct cs_metrics_snapshot *out);

#endif
