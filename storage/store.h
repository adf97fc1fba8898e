/* The store: everything cschedd keeps in PostgreSQL, reached through async
 * libpq on the loop thread. The only storage header the server includes.
 *
 * Every function here is called on the loop thread and never blocks. Writes
 * are queued into the current loop turn's batch; at the end of the turn the
 * batch is sent as one transaction (pipeline mode, one sync), so the state
 * changes of one turn commit together (group commit). A write's callback runs
 * once its batch has committed; batches commit in the order they were made.
 * Every write is idempotent (an upsert), so a batch that failed because the
 * connection broke is sent again after reconnecting: a write is never dropped
 * while the process lives. Messages passed in are borrowed: the store copies
 * what it needs before returning. Messages handed to read callbacks belong to
 * the callback, which frees them with protobuf_c_message_free_unpacked(m, NULL)
 * (or cs_store_*_free for arrays). */
#ifndef CS_STORE_H
#define CS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "csched/v1/scheduler.pb-c.h"
#include "store_stats.h"

struct cs_store;

/* What the store says unprompted (a lost connection, a migration applied,
 * the embedded server started), the way libpq has its notice processor.
 * component names the store ("store") for the caller's log. It is called on
 * the loop thread, and on libuv's pool while the embedded PostgreSQL starts
 * or stops, so it must be safe from any thread. */
enum cs_store_log_level {
    CS_STORE_LOG_ERROR,
    CS_STORE_LOG_WARN,
    CS_STORE_LOG_INFO,
    CS_STORE_LOG_DEBUG,
};
typedef void (*cs_store_log_cb)(void *arg, enum cs_store_log_level level, const char *component,
                                const char *msg);

/* The store has stopped for good: another replica took this one's lease
 * over, so its epoch is no longer its own (the reason went to the log
 * callback). It sends nothing more: cs_store_is_accepting() stays false,
 * reads fail with -ENOTCONN, and writes wait for cs_store_close, which fails
 * them with -ENOTCONN at once. Called once, on the loop thread. */
typedef void (*cs_store_fenced_cb)(void *arg);
/* The replica's lease was renewed (a standby's too, whose machine runs
 * the attempts the active replica places on it): its running commands may
 * live until deadline_boot_ns (CLOCK_BOOTTIME), which its minders are told.
 * Called on the loop thread after each renewal that commits. */
typedef void (*cs_store_renewed_cb)(void *arg, int64_t deadline_boot_ns);

struct cs_store_config {
    /* libpq connection string or URI; NULL or "" with embedded_dir set means
     * the embedded server. */
    const char *database_url;
    /* Run a private PostgreSQL under this directory (initdb on first use,
     * unix socket only) when database_url is empty. libpq and the programs
     * it runs read the process's PG* variables, some whatever the conninfo
     * says (PGSERVICE, PGTZ): a process that runs it clears them before its
     * threads start, as cschedd does. */
    const char *embedded_dir;
    /* How many writes may wait while the database is unreachable before new
     * state-changing work is refused (cs_store_is_accepting() turns false). */
    size_t max_pending_writes;
    /* Where the store's log lines go; NULL writes them to stderr, without
     * the debug ones. */
    cs_store_log_cb log_cb;
    void *log_arg;
    /* NULL: the caller learns it from cs_store_is_accepting() alone. */
    cs_store_fenced_cb fenced_cb;
    void *fenced_arg;
    /* Not 0: the nice value the session of the backend serving the store
     * gets when that backend is proven to run on this machine, as cschedd's
     * own (store_backend.h); 0 leaves it. */
    int backend_nice;
    /* The replica (docs/architecture.md, "Replicas"): its id (required),
     * the random id of its state directory, its version, how often it
     * renews its lease (the lease lasts two of them), and how long its
     * commands outlive a renewal. */
    const char *replica_id;
    const char *replica_instance;
    const char *replica_version;
    int64_t heartbeat_ms;
    int64_t attempt_lease_ms;
    /* The most runs its machine runs at once (--max-running), in its row
     * for the active replica, which places attempts within it. */
    uint32_t replica_max_running;
    /* Never LISTEN for the other replicas' wake-ups: the heartbeat's poll
     * alone, which is correct without them (docs/architecture.md,
     * "Wake-ups"). */
    bool poll_only;
    cs_store_renewed_cb renewed_cb;
    void *renewed_arg;
};

/* Status codes passed to callbacks: 0, or a negative errno: -ENOTCONN (the
 * database is unreachable), -EIO (the database reported an error; the
 * message goes to the log callback), -ENOSPC (the database is out of disk
 * space, SQLSTATE 53100; logged too), -ENOENT (read found nothing). */
typedef void (*cs_store_done_cb)(void *arg, int status);

/* What the server needs to resume after a start: every job, every run not
 * yet terminal (with its attempts), and the highest ids handed out so far. */
struct cs_store_snapshot {
    Csched__V1__Job **jobs;
    /* Parallel to jobs: the state the job's last run to end ended in
     * (UNSPECIFIED: none has). */
    Csched__V1__RunState *job_last_ended;
    size_t n_jobs;
    Csched__V1__Run **active_runs; /* state QUEUED, STARTING or RUNNING */
    size_t n_active_runs;
    /* For each active run, the attempt directory of its last attempt, or
     * NULL; parallel to active_runs. */
    char **active_attempt_dirs;
    int64_t max_run_id;
    int64_t max_event_seq;
    int64_t max_audit_id;
    /* Every event up to this seq was deleted by retention (0: none). */
    int64_t purged_event_seq;
    /* The cluster's limit on runs at once (0: none; migration 0016). */
    uint32_t cluster_max_running;
    /* The running attempts of active runs that another replica's machine
     * runs (another id, or this id's previous state directory): none of them
     * can be adopted here. wait_ms is how long, on the database's clock,
     * until that replica's commands stop by themselves (0: they have). */
    struct cs_store_remote_attempt {
        int64_t run_id;
        uint32_t number;
        char *replica;
        int64_t wait_ms;
    } * remote_attempts;
    size_t n_remote_attempts;
};

typedef void (*cs_store_open_cb)(void *arg, int status, struct cs_store_snapshot *snapshot);

/* Creates the store and starts it: the embedded PostgreSQL if configured
 * (initdb, pg_ctl on libuv's pool), then connect, apply migrations, join
 * the replicas, and, once this replica is the active one (at once, or when
 * it takes the role over as a standby), load the snapshot, then open_cb
 * (snapshot owned by the callee; free it with cs_store_snapshot_free). On
 * failure open_cb gets a negative errno and a NULL snapshot and the reason
 * goes to the log callback: -EBUSY when the replica id is in use by another
 * state directory whose lease has not run out.
 *
 * Every batch with a write first checks the replica's epoch in the same
 * transaction (csched_fence): once another replica has taken this one's
 * lease over, nothing it sends commits, and the store is fenced
 * (cs_store_fenced_cb). The loop thread is the one
 * that calls cs_store_new: every function here taking a store asserts it.
 * cs_store_open returns 0, or -EINVAL without a database (a URL or an
 * embedded directory) or without open_cb; a store is opened at most once. */
struct cs_store *cs_store_new(uv_loop_t *loop, const struct cs_store_config *config);
int cs_store_open(struct cs_store *store, cs_store_open_cb open_cb, void *arg);
void cs_store_snapshot_free(struct cs_store_snapshot *snapshot);

/* Flushes pending writes (waiting for their commit), closes the connection,
 * stops the embedded PostgreSQL, then calls closed_cb; after it the store is
 * freed. */
void cs_store_close(struct cs_store *store, void (*closed_cb)(void *arg), void *arg);
/* The libpq conninfo the store connects with (--database's URL, or the
 * embedded PostgreSQL's, password included), or NULL before it has
 * started; borrowed for the store's life. */
const char *cs_store_conninfo(const struct cs_store *store);
/* Copies the store's measurements (store_stats.h) into out, up included:
 * for cschedd's metrics. */
void cs_store_stats_get(const struct cs_store *store, struct cs_store_stats *out);

/* True while connected and the backlog of unsent writes is below the limit:
 * the server refuses state-changing RPCs with UNAVAILABLE otherwise. A
 * database that stops answering (frozen: its connection stays open) counts
 * as not connected within seconds: a batch in flight that gets no answer
 * for 5 s, or the ping an idle connection sends after 2 s, drops the
 * connection, and the store reconnects. */
bool cs_store_is_accepting(const struct cs_store *store);

/* How long a write that failed for want of disk space (-ENOSPC) counts: a
 * server that writes nothing more would otherwise never learn that the
 * disk has room again. */
#define CS_STORE_OUT_OF_SPACE_HOLD_MS 30000
/* True while the database is out of disk space: a batch failed with -ENOSPC
 * in the last CS_STORE_OUT_OF_SPACE_HOLD_MS and no batch with the statement
 * that failed has committed since. Writes are still taken (some may fit):
 * health turns NOT_SERVING on it. */
bool cs_store_is_out_of_space(const struct cs_store *store);

/* True while this replica is the active one, open, and its last renewal
 * is fresh (sent less than 1.5 heartbeats ago): a replica that missed one
 * starts no new work, well before another may take its lease. */
bool cs_store_may_start(const struct cs_store *store);
/* Whether this replica may start an attempt the active replica placed on
 * its machine (docs/design/0036): joined, and its last renewal as fresh as
 * cs_store_may_start asks. Loop thread. */
bool cs_store_may_run_placed(const struct cs_store *store);
/* True while this replica is the active one and the store open. */
bool cs_store_is_active(const struct cs_store *store);
/* What the next renewal records: the address clients reach this replica
 * at (NULL leaves it), and the runs it holds. */
void cs_store_replica_set(struct cs_store *store, const char *address, int runs_held);
/* The most attempts this machine takes from now on, in the next renewal:
 * 0 while it drains (the active replica places nothing more here). */
void cs_store_replica_set_max_running(struct cs_store *store, uint32_t max_running);
struct cs_store_replica_info {
    const char *id;
    int64_t epoch;          /* 0 until joined */
    bool active;            /* the active replica, not a standby */
    int64_t renewed_age_ms; /* since the last renewal that committed was sent; -1 before */
    /* A standby's last look at the active replica: its id and the address
     * it serves at ("" when none is active). */
    const char *active_id;
    const char *active_address;
    /* The secret replicas prove themselves to each other with (migration
     * 0011); "" until joined. */
    const char *cluster_key;
};
void cs_store_replica_get(const struct cs_store *store, struct cs_store_replica_info *info);
/* The active replica's row says draining (ListReplicas shows it): it is
 * about to leave. */
void cs_store_replica_drain(struct cs_store *store);
/* Gives the replica's lease up (its row says it left): another replica
 * takes its work over at once. Before cs_store_close, which then waits for
 * its commit. */
void cs_store_replica_leave(struct cs_store *store);

/* Writes. cb may be NULL. */
/* Upserts the job; first_run_id, the lowest run id that can be the job's
 * own (the next run id), is kept only by the insert that makes it: an
 * idempotency key finds only runs from there on (cs_store_run_find_by_key). */
void cs_store_job_put(struct cs_store *store, const Csched__V1__Job *job, int64_t first_run_id,
                      cs_store_done_cb cb, void *arg);
void cs_store_job_delete(struct cs_store *store, const char *name, cs_store_done_cb cb, void *arg);
/* Upserts the run row (not its attempts). */
void cs_store_run_put(struct cs_store *store, const Csched__V1__Run *run, cs_store_done_cb cb,
                      void *arg);
/* Upserts one attempt of run_id; attempt_dir is where its minder keeps its
 * files (for adopting it after a restart). */
void cs_store_attempt_put(struct cs_store *store, int64_t run_id,
                          const Csched__V1__Attempt *attempt, const char *attempt_dir,
                          cs_store_done_cb cb, void *arg);
/* Called once an event's batch has ended: status as cs_store_done_cb's, and
 * on 0 the seq it has in the database. On the embedded database that is the
 * one the event was put with; on a shared one the database numbers the
 * events in commit order (migration 0022) and event->seq is only the
 * writer's own count, in the order it queues them. */
typedef void (*cs_store_event_cb)(void *arg, int status, int64_t seq);
void cs_store_event_put(struct cs_store *store, const Csched__V1__Event *event,
                        cs_store_event_cb cb, void *arg);
/* Records the tail of each stream of attempt number of run_id (migration
 * 0012): its last bytes, out (stdout) and err (stderr), copied; NULL leaves
 * a stream's column as it is. The attempt's row must be committed already
 * (on a shared database its start commits before its command runs). */
void cs_store_attempt_tail_put(struct cs_store *store, int64_t run_id, uint32_t number,
                               const uint8_t *out, size_t out_len, const uint8_t *err,
                               size_t err_len, cs_store_done_cb cb, void *arg);

/* A place in the queue of writes, taken just before a change is queued: an
 * audit row tied to it commits in one transaction with every write queued
 * since (a batch is never cut between them). Valid until the loop turn
 * ends. */
struct cs_store_op;
struct cs_store_mark {
    struct cs_store_op *after; /* the last write queued before, or NULL */
};
struct cs_store_mark cs_store_mark_take(struct cs_store *store);
/* Inserts one audit row (entry->id handed out by the caller, so a batch
 * sent again inserts it once). tie NULL: a row of its own, e.g. a refusal;
 * else it commits with the writes queued since tie was taken. */
void cs_store_audit_put(struct cs_store *store, const Csched__V1__AuditEntry *entry,
                        const struct cs_store_mark *tie, cs_store_done_cb cb, void *arg);
/* Deletes the audit rows older than before_unix_ms, at most
 * CS_STORE_AUDIT_EXPIRE_ROWS of them per call (a bounded transaction);
 * expired_cb gets how many went, so a caller with more to go asks again. */
#define CS_STORE_AUDIT_EXPIRE_ROWS 10000
typedef void (*cs_store_count_cb)(void *arg, int status, int64_t n);
void cs_store_audit_expire(struct cs_store *store, int64_t before_unix_ms,
                           cs_store_count_cb expired_cb, void *arg);

/* Deletes one bounded batch of the history that ended before
 * before_unix_ms (at most CS_STORE_HISTORY_PURGE_ROWS runs, as many slots,
 * as many events and as many decided causes besides those of the runs, in
 * one transaction), keeping what store_history.c says always stays: a
 * cause decided since causes_before_unix_ms (the window of
 * --after-window-seconds) among it. purged_cb gets how many of each went,
 * so a caller with more to go asks again, the last event seq deleted (0:
 * none), and the hook deliveries deleted with the runs, whose directories
 * it removes. */
#define CS_STORE_HISTORY_PURGE_ROWS 100
struct cs_store_history_purged {
    int64_t runs, slots, events, causes;
    int64_t last_event_seq;
    /* Borrowed until the callback returns: the runs deleted (a job's
     * batch only) and the hook deliveries deleted with them. */
    const int64_t *run_ids;
    size_t n_run_ids;
    const int64_t *delivery_ids;
    size_t n_delivery_ids;
};
typedef void (*cs_store_history_cb)(void *arg, int status,
                                    const struct cs_store_history_purged *purged);
void cs_store_history_purge(struct cs_store *store, int64_t before_unix_ms,
                            int64_t causes_before_unix_ms, cs_store_history_cb purged_cb,
                            void *arg);
/* Deletes one bounded batch (at most CS_STORE_HISTORY_PURGE_ROWS runs) of
 * job's runs past its own limits: beyond the newest keep_succeeded
 * SUCCEEDED (0: no limit), beyond the newest keep_failed of the other
 * outcomes, or ended before before_unix_ms (0: none), always keeping the
 * latest of each outcome; with them, their hook deliveries and the causes
 * decided before causes_before_unix_ms that name them. purged_cb gets the
 * runs' ids, the causes' count and the deliveries' ids. */
struct cs_store_history_job {
    const char *job_name;
    uint32_t keep_succeeded, keep_failed;
    int64_t before_unix_ms;
    int64_t causes_before_unix_ms;
};
void cs_store_history_purge_job(struct cs_store *store, const struct cs_store_history_job *job,
                                cs_store_history_cb purged_cb, void *arg);
/* Where the walk of the causes decided before the window stands: the key
 * of the last cause it saw (all zero and empty: from the start). */
struct cs_store_cause_key {
    int64_t decided_unix_ms;
    char job_name[256];
    char cause[128];
};
/* Walks one batch (CS_STORE_HISTORY_PURGE_ROWS) of the causes decided
 * before before_unix_ms, after the key *from, and deletes those whose runs
 * are gone (store_history.c). walked_cb gets how many went, how many were
 * walked (0: the walk is at its end) and the last key walked (borrowed). */
typedef void (*cs_store_causes_cb)(void *arg, int status, int64_t deleted, int64_t walked,
                                   const struct cs_store_cause_key *last);
void cs_store_history_purge_causes(struct cs_store *store, const struct cs_store_cause_key *from,
                                   int64_t before_unix_ms, cs_store_causes_cb walked_cb, void *arg);

/* Stores the cluster's max_running (0: none), set by who at at_unix_ms;
 * with seed, only where no one has set it yet. set_cb gets the value in
 * force afterwards. Not held in the backlog: a lost connection fails it,
 * and the caller says so. */
void cs_store_cluster_max_running_set(struct cs_store *store, uint32_t max_running,
                                      int64_t at_unix_ms, const char *who, bool seed,
                                      cs_store_count_cb set_cb, void *arg);
/* Hook deliveries (store_hook.c, migration 0016; docs/hooks.md). A new
 * delivery, put in the loop turn of the run state change that causes it so
 * that both commit together; inserted once per dedup_key. With changed_only
 * it is left out when outcome_state is the outcome of the job's previous
 * ended run (by id). Strings borrowed. */
struct cs_store_hook_new {
    const char *dedup_key;
    const char *job_name;
    const char *hook_name;
    int event; /* csched.v1.HookEvent */
    int64_t run_id;
    const char *url;
    const char *secret_file, *secret_env; /* the secret's reference, one set */
    const char *ca_file;
    uint32_t timeout_ms, max_attempts;
    const char *body;
    int64_t created_unix_ms;
    bool changed_only;
    int32_t outcome_state; /* the run's terminal RunState */
    /* A command hook's: what it runs as (migration 0018); NULL or "" for a
     * webhook. */
    const char *command;
};
void cs_store_hook_put(struct cs_store *store, const struct cs_store_hook_new *d,
                       cs_store_done_cb cb, void *arg);
/* The result of one attempt of delivery id. */
struct cs_store_hook_result {
    int64_t id;
    int status; /* csched.v1.HookDeliveryStatus */
    uint32_t attempts;
    int32_t response_code;
    const char *last_error;
    int64_t next_unix_ms, last_unix_ms;
    /* A command hook's: how its command ended, and its logs' tails. */
    int32_t exit_code, term_signal;
    const char *stdout_tail, *stderr_tail;
};
void cs_store_hook_update(struct cs_store *store, const struct cs_store_hook_result *r,
                          cs_store_done_cb cb, void *arg);
/* A pending delivery at the head of its job's queue (strings owned). */
struct cs_store_hook_due {
    int64_t id;
    char *job_name, *hook_name, *url, *secret_file, *secret_env, *ca_file, *body;
    char *command; /* a command hook's ("" for a webhook) */
    uint32_t timeout_ms, max_attempts, attempts;
    int64_t next_unix_ms;
    int event;
    int64_t run_id;
};
/* The heads of at most limit jobs' queues, earliest next_unix_ms first;
 * the callback owns due (cs_store_hook_due_free). */
typedef void (*cs_store_hook_due_cb)(void *arg, int status, struct cs_store_hook_due *due,
                                     size_t n);
void cs_store_hook_due_list(struct cs_store *store, uint32_t limit, cs_store_hook_due_cb cb,
                            void *arg);
void cs_store_hook_due_free(struct cs_store_hook_due *due, size_t n);
/* Frees one's strings (any thread), leaving it zeroed. */
void cs_store_hook_due_clear(struct cs_store_hook_due *d);
/* A job's deliveries newest first, ids below before_id (0: no bound). */
typedef void (*cs_store_hook_list_cb)(void *arg, int status, Csched__V1__HookDelivery **deliveries,
                                      size_t n);
void cs_store_hook_list(struct cs_store *store, const char *job_name, int64_t before_id,
                        uint32_t limit, cs_store_hook_list_cb cb, void *arg);
void cs_store_hook_deliveries_free(Csched__V1__HookDelivery **deliveries, size_t n);

/* Dependency causes (store_after.c, migration 0017; docs/dependencies.md).
 * Puts c's row (not its upstreams) and up's, the upstream end that changed
 * it (NULL: none; inserted once), tied to every write queued since tie was
 * taken (the upstream run's end, and the run it makes), so all commit in
 * one transaction. A decided row is never changed again. */
void cs_store_after_put(struct cs_store *store, const Csched__V1__DependencyCause *c,
                        const Csched__V1__DependencyUpstream *up, const struct cs_store_mark *tie,
                        cs_store_done_cb cb, void *arg);
/* The callback owns causes (cs_store_after_causes_free). */
typedef void (*cs_store_after_list_cb)(void *arg, int status, Csched__V1__DependencyCause **causes,
                                       size_t n);
/* Every job's causes still waiting, and those decided since since_unix_ms:
 * what a start takes back. */
void cs_store_after_load(struct cs_store *store, int64_t since_unix_ms, cs_store_after_list_cb cb,
                         void *arg);
/* A job's causes, newest first, at most limit. */
void cs_store_after_list(struct cs_store *store, const char *job_name, uint32_t limit,
                         cs_store_after_list_cb cb, void *arg);
void cs_store_after_causes_free(Csched__V1__DependencyCause **causes, size_t n);

/* Reads. They are answered in order with the writes: a read sees every write
 * queued before it. */
typedef void (*cs_store_run_cb)(void *arg, int status, Csched__V1__Run *run);
/* more: the list stopped at the filter's limit or at CS_STORE_RUN_LIST_BYTES
 * with matching runs left; ask again with before_id = the last run's id. */
typedef void (*cs_store_runs_cb)(void *arg, int status, Csched__V1__Run **runs, size_t n,
                                 bool more);
typedef void (*cs_store_events_cb)(void *arg, int status, Csched__V1__Event **events, size_t n);
typedef void (*cs_store_jobs_cb)(void *arg, int status, Csched__V1__Job **jobs, size_t n);

/* What the database keeps of one attempt's output (migration 0012), for
 * ReadLogs once the machine that holds its log files is out of reach.
 * Index 0 is stdout, 1 stderr. */
struct cs_store_attempt_tail {
    char *replica;     /* the replica whose machine ran it; "" before replicas */
    bool stored[2];    /* the stream's tail was recorded */
    uint8_t *bytes[2]; /* its last bytes (NULL when none) */
    size_t len[2];
    int64_t written_bytes[2], kept_bytes[2]; /* as Attempt's */
    /* The attempt ended with its minder's note read: the sizes above are
     * known, so a stream that kept 0 bytes needed no tail. */
    bool sizes_known;
};
typedef void (*cs_store_attempt_tail_cb)(void *arg, int status, struct cs_store_attempt_tail *tail);
/* The tail of attempt number of run_id (owned by the callback: free it with
 * cs_store_attempt_tail_free); -ENOENT when there is no such attempt. */
void cs_store_attempt_tail_get(struct cs_store *store, int64_t run_id, uint32_t number,
                               cs_store_attempt_tail_cb cb, void *arg);
void cs_store_attempt_tail_free(struct cs_store_attempt_tail *tail);

/* The run with its attempts; -ENOENT if there is none. */
void cs_store_run_get(struct cs_store *store, int64_t run_id, cs_store_run_cb cb, void *arg);
/* The run of job_name made with idempotency_key since the job of that name
 * was created (a job deleted and created again is a new one), or -ENOENT. */
void cs_store_run_find_by_key(struct cs_store *store, const char *job_name,
                              const char *idempotency_key, cs_store_run_cb cb, void *arg);

struct cs_store_run_filter {
    const char *job_name;       /* NULL or "" for every job */
    Csched__V1__RunState state; /* UNSPECIFIED for every state */
    int64_t before_id;          /* only runs with id < before_id; 0 for no bound */
    uint32_t limit;
    /* Without job_name: only the runs of these jobs (n_job_names 0: every
     * job), or with job_names_exclude of any job but these. */
    const char *const *job_names;
    size_t n_job_names;
    bool job_names_exclude;
    /* Only the runs after the newest made before this (unix ms); 0: none. */
    int64_t since_unix_ms;
    /* Only the runs of this array (job names then unused); 0: any. */
    int64_t array_id;
};
/* A run list ends early, after the run that brings the stored size of the
 * runs read (env, job name, idempotency key, message, triggered_by, and 64
 * bytes for the rest) to this many bytes: a page of large runs reads and holds 2 MiB and a
 * run, not limit times the largest run, and fits gRPC's default 4 MiB
 * receive limit. Always at least one run. */
#define CS_STORE_RUN_LIST_BYTES 2097152
/* Runs newest first, each with its attempts, at most limit of them and
 * bounded in bytes as above. */
void cs_store_run_list(struct cs_store *store, const struct cs_store_run_filter *filter,
                       cs_store_runs_cb cb, void *arg);

struct cs_store_audit_filter {
    const char *identity; /* NULL or "" for everyone; likewise method, job_name */
    const char *method;
    const char *job_name;
    int64_t run_id;        /* 0 for every run */
    int64_t since_unix_ms; /* at_unix_ms >= since; 0 for no bound */
    int64_t until_unix_ms; /* at_unix_ms < until; 0 for no bound */
    int64_t before_id;     /* only rows with id < before_id; 0 for no bound */
    uint32_t limit;
};
/* more: matching rows are left past limit; ask again with before_id = the
 * last entry's id. */
typedef void (*cs_store_audit_cb)(void *arg, int status, Csched__V1__AuditEntry **entries, size_t n,
                                  bool more);
/* Audit rows newest first, at most limit of them. */
void cs_store_audit_list(struct cs_store *store, const struct cs_store_audit_filter *filter,
                         cs_store_audit_cb cb, void *arg);
void cs_store_audit_free(Csched__V1__AuditEntry **entries, size_t n);

/* Events with seq > after_seq in seq order, at most limit, optionally for
 * one job only. */
void cs_store_event_list(struct cs_store *store, int64_t after_seq, const char *job_name,
                         uint32_t limit, cs_store_events_cb cb, void *arg);

/* Slots of job schedules (store_slot.c). A slot's row is upserted in the
 * current batch: put it in the same loop turn as the run it makes, and both
 * commit together. A started slot is overwritten only by a skipped row
 * naming its own run (the run never started: its deadline passed). */
void cs_store_slot_put(struct cs_store *store, const Csched__V1__Slot *slot, cs_store_done_cb cb,
                       void *arg);

struct cs_store_slot_filter {
    const char *job_name;
    int64_t from_unix_ms, to_unix_ms; /* slot_unix_ms in [from, to]; to 0: no bound */
    Csched__V1__SlotOutcome outcome;  /* UNSPECIFIED for every outcome */
    uint32_t limit;
};
typedef void (*cs_store_slots_cb)(void *arg, int status, Csched__V1__Slot **slots, size_t n);
/* A job's slots newest first, lateness_ms from the run's start. */
void cs_store_slot_list(struct cs_store *store, const struct cs_store_slot_filter *filter,
                        cs_store_slots_cb cb, void *arg);
/* The newest slot of every job that has one, by job name. */
void cs_store_slot_last(struct cs_store *store, cs_store_slots_cb cb, void *arg);

/* Every replica's row (store_replica_list.c), ordered by id, bytewise:
 * its lease's age and expiry measured on the database's clock at the read;
 * self is left false, for the caller to set. */
typedef void (*cs_store_replicas_cb)(void *arg, int status, Csched__V1__Replica **replicas,
                                     size_t n);
void cs_store_replica_list(struct cs_store *store, cs_store_replicas_cb cb, void *arg);

/* The schema version this build migrates a database to (its newest
 * migration's number). Any thread. */
int cs_store_schema_version(void);

/* Frees an array handed to a read callback, with its messages. */
void cs_store_runs_free(Csched__V1__Run **runs, size_t n);
void cs_store_events_free(Csched__V1__Event **events, size_t n);
void cs_store_jobs_free(Csched__V1__Job **jobs, size_t n);
void cs_store_slots_free(Csched__V1__Slot **slots, size_t n);
void cs_store_replicas_free(Csched__V1__Replica **replicas, size_t n);

#endif
