/* What the store's files share and the server never sees: statement
 * parameters, binary result readers, the queued operation, the prepared
 * statements, the store itself, and the functions of each layer. Everything
 * here runs on the loop thread.
 *
 * The layers, each calling only those below it (upward news goes through
 * callbacks given at init):
 *   store.c            the store's life: open, close, the end-of-turn flush
 *   store_conn.c       the connection: connect, migrate, prepare, reconnect
 *   store_resolve.c    host names, store_lock.c the server lock,
 *                      store_migrate.c the migration driver
 *   store_write.c store_read.c store_snapshot.c   operations of each kind
 *   store_batch.c      the queue and group commit
 *   store_bulk.c       a batch's statements, coalesced
 *   store_stmt.c       the statement table
 *   store_socket.c     the socket's watch and flush
 *   store_job.c store_run.c store_event.c store_audit.c store_slot.c
 *   store_replica_list.c store_tail.c store_hook.c store_after.c   each table's SQL and mapping
 *   store_state.c      the state machine's tables and their writers
 *   store_row.c store_url.c store_util.c migrate.c   leaves
 * and, on libuv's pool, store_embedded_work.c and pg_embedded_work.c. */
#ifndef CS_STORE_INTERNAL_H
#define CS_STORE_INTERNAL_H

#include <libpq-fe.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "store_state.h"
#include "store_util.h"

/* Aborts unless called on the thread that made the store (its loop's). */
#define CS_STORE_ASSERT_LOOP(store)                                                                \
    do {                                                                                           \
        if (!pthread_equal(pthread_self(), (store)->loop_thread))                                  \
            cs_store_assert_fail("on the store's loop thread", __FILE__, __LINE__);                \
    } while (0)

/* The most columns of a statement: an attempt's row has 23. */
#define CS_STORE_PARAMS_MAX 24

/* Room for an int8 in decimal, its sign and the terminating NUL. */
#define CS_STORE_INT_TEXT 21
/* A replica's address ("host:port" or "unix:path"), and the cluster's key
 * (64 hex digits), each with its NUL. */
#define CS_STORE_ADDRESS_MAX 300
#define CS_STORE_CLUSTER_KEY_MAX 65

/* Parameters of one statement: text format, except bytea values, which go in
 * binary. Text and bytea values are owned (freed by cs_store_params_clear);
 * an integer's text lives in the struct itself beside its value, and a
 * bool's is a literal, so that the many integers of a run's rows cost no
 * allocation, and store_bulk.c reads them back without parsing. */
struct cs_store_params {
    int n;
    char *values[CS_STORE_PARAMS_MAX];
    int lengths[CS_STORE_PARAMS_MAX];
    int formats[CS_STORE_PARAMS_MAX];
    uint32_t borrowed; /* bit i: values[i] is not malloc'd */
    uint32_t is_int;   /* bit i: ints[i] is values[i]'s value */
    int64_t ints[CS_STORE_PARAMS_MAX];
    char int_text[CS_STORE_PARAMS_MAX][CS_STORE_INT_TEXT];
};

/* Appends a copy of s; NULL appends SQL NULL. */
void cs_store_params_text(struct cs_store_params *p, const char *s);
void cs_store_params_int(struct cs_store_params *p, int64_t v);
void cs_store_params_bool(struct cs_store_params *p, bool v);
void cs_store_params_null(struct cs_store_params *p);
/* Appends a bytea value; takes ownership of buf (malloc'd, may be NULL when
 * len is 0). */
void cs_store_params_bytes(struct cs_store_params *p, void *buf, size_t len);
void cs_store_params_clear(struct cs_store_params *p);

/* The outcome oneof of a Run, an Attempt or an Event (exit_code |
 * term_signal) is two nullable columns, exit_code then term_signal. cases
 * names the message's two oneof cases; its not-set case is 0. */
struct cs_store_outcome_cases {
    int exit_code;
    int term_signal;
};
/* Appends the two columns of an outcome. */
void cs_store_params_outcome(struct cs_store_params *p, const struct cs_store_outcome_cases *cases,
                             int outcome_case, int32_t exit_code, int32_t term_signal);
/* Reads the two columns at col and col + 1; returns the outcome case and
 * sets the field it names. */
int cs_store_row_outcome(const PGresult *res, int row, int col,
                         const struct cs_store_outcome_cases *cases, int32_t *exit_code,
                         int32_t *term_signal);

/* A one-dimensional array parameter in binary format (PostgreSQL's
 * array_recv layout), built one element at a time: the many rows of one
 * statement travel as one array per column. Elements are int8, bool, text or
 * bytea, named by the element type's OID. */
#define CS_STORE_OID_BOOL 16
#define CS_STORE_OID_BYTEA 17
#define CS_STORE_OID_INT8 20
#define CS_STORE_OID_TEXT 25

struct cs_store_array {
    uint8_t *buf; /* header, then each element's length and bytes */
    size_t len;
    size_t cap;
    int32_t n;
    bool has_null;
    uint32_t elem_oid;
};

void cs_store_array_init(struct cs_store_array *a, uint32_t elem_oid);
void cs_store_array_null(struct cs_store_array *a);
void cs_store_array_int(struct cs_store_array *a, int64_t v);
void cs_store_array_bool(struct cs_store_array *a, bool v);
/* Text or bytea: len bytes of p, taken as they are (no escaping). */
void cs_store_array_bytes(struct cs_store_array *a, const void *p, size_t len);
/* Completes the header and appends the array to p as a binary parameter;
 * p takes the buffer, and a is left empty. */
void cs_store_array_param(struct cs_store_array *a, struct cs_store_params *p);

/* Readers of binary-format results. A NULL field reads as 0, false or "". */
bool cs_store_row_is_null(const PGresult *res, int row, int col);
/* An int2, int4 or int8 field (told apart by its length). */
int64_t cs_store_row_int(const PGresult *res, int row, int col);
bool cs_store_row_bool(const PGresult *res, int row, int col);
/* A text field as a malloc'd string, for a protobuf-c message to own. */
char *cs_store_row_strdup(const PGresult *res, int row, int col);
const uint8_t *cs_store_row_bytes(const PGresult *res, int row, int col, size_t *len);

/* The column types of a table written many rows per statement. Integers of
 * every width travel as int8; the INSERT's assignment cast to the column
 * narrows them, and refuses what does not fit, as a single row would. */
enum cs_store_col_type {
    CS_STORE_COL_INT,
    CS_STORE_COL_BOOL,
    CS_STORE_COL_TEXT,
    CS_STORE_COL_BYTEA,
};

/* The prepared statements, prepared once per connection (store_stmt.c). */
enum cs_store_stmt {
    CS_STORE_STMT_JOB_PUT,
    CS_STORE_STMT_JOB_DELETE,
    CS_STORE_STMT_JOB_ALL,
    CS_STORE_STMT_RUN_PUT,
    CS_STORE_STMT_ATTEMPT_PUT,
    CS_STORE_STMT_RUN_GET,
    CS_STORE_STMT_RUN_BY_KEY,
    CS_STORE_STMT_RUN_LIST,
    CS_STORE_STMT_RUN_LIST_JOB,
    CS_STORE_STMT_RUN_LIST_JOBS,
    CS_STORE_STMT_RUN_LIST_NOT_JOBS,
    CS_STORE_STMT_RUN_LIST_ARRAY,
    CS_STORE_STMT_RUN_ACTIVE,
    CS_STORE_STMT_MAX_IDS,
    CS_STORE_STMT_EVENT_PUT,
    CS_STORE_STMT_EVENT_PUT_ORDERED,
    CS_STORE_STMT_EVENT_LIST,
    CS_STORE_STMT_EVENT_LIST_JOB,
    CS_STORE_STMT_SLOT_PUT,
    CS_STORE_STMT_SLOT_LIST,
    CS_STORE_STMT_SLOT_LAST,
    CS_STORE_STMT_PING,
    CS_STORE_STMT_AUDIT_PUT,
    CS_STORE_STMT_AUDIT_LIST,
    CS_STORE_STMT_AUDIT_EXPIRE,
    CS_STORE_STMT_FENCE,
    CS_STORE_STMT_FENCE_ORDERED,
    CS_STORE_STMT_REPLICA_RENEW,
    CS_STORE_STMT_REPLICA_TAKE_OVER,
    CS_STORE_STMT_REPLICA_LEAVE,
    CS_STORE_STMT_REPLICA_DRAIN,
    CS_STORE_STMT_REMOTE_ATTEMPTS,
    CS_STORE_STMT_REPLICA_LIST,
    CS_STORE_STMT_ATTEMPT_TAIL_PUT,
    CS_STORE_STMT_ATTEMPT_TAIL_GET,
    CS_STORE_STMT_HISTORY_PURGE,
    CS_STORE_STMT_HISTORY_PURGE_JOB,
    CS_STORE_STMT_HISTORY_PURGE_CAUSES,
    CS_STORE_STMT_CLUSTER_LIMITS_SET,
    CS_STORE_STMT_HOOK_PUT,
    CS_STORE_STMT_HOOK_UPDATE,
    CS_STORE_STMT_HOOK_DUE,
    CS_STORE_STMT_HOOK_LIST,
    CS_STORE_STMT_AFTER_PUT,
    CS_STORE_STMT_AFTER_LOAD,
    CS_STORE_STMT_AFTER_LIST,
    CS_STORE_STMT_COUNT,
};

struct cs_store_stmt_def {
    const char *name;
    const char *sql;
};

/* Indexed by enum cs_store_stmt. */
extern const struct cs_store_stmt_def cs_store_stmts[CS_STORE_STMT_COUNT];

struct cs_store_op;

/* Called once per operation when its batch has ended: status is 0 (res is a
 * read's result, NULL for a write), -EIO or -ENOTCONN (res NULL). It
 * reports to the caller's callback; the op is freed after it returns. */
typedef void (*cs_store_op_done_cb)(struct cs_store_op *op, int status, const PGresult *res);

/* One operation waiting to be sent, or sent and waiting for its batch. A
 * read is one statement; writes of runs, attempts and events are rows that
 * store_bulk.c gathers into one statement per table and batch. */
struct cs_store_op {
    struct cs_store_op *next;
    enum cs_store_stmt stmt;
    bool is_write;  /* counts in the backlog; sent again after a reconnect */
    bool replay;    /* sent again after a reconnect (writes, the snapshot) */
    bool tie_next;  /* the next operation queued goes in the same batch */
    int64_t key[2]; /* the row's key, for coalescing: run id; run id and number */
    struct cs_store_params params;
    PGresult *result;
    cs_store_op_done_cb done_cb;
    void (*cb)(void); /* the caller's callback, cast back by done_cb */
    void *arg;
    struct cs_store *store;
};

/* Addresses of a database host name tried in turn. */
#define CS_STORE_MAX_ADDRS 8

struct cs_store_queue {
    struct cs_store_op *head;
    struct cs_store_op *tail;
};

/* One statement sent in a batch, and the read that takes its result (NULL
 * for a write or a prepare). */
struct cs_store_sent {
    enum cs_store_stmt stmt;
    struct cs_store_op *op;
};

/* Called when a batch made with a done_cb has ended: status 0, or -EIO when
 * one of its statements failed. */
typedef void (*cs_store_batch_done_cb)(struct cs_store *store, int status);

struct cs_store_batch {
    struct cs_store_batch *next;
    struct cs_store_queue ops;  /* every operation, in the order queued */
    struct cs_store_sent *sent; /* the statements sent, in order */
    size_t n_sent;
    size_t cap_sent;
    size_t next_result; /* index in sent of the statement whose result comes next */
    bool failed;
    int failed_status;              /* its operations' status once failed (store_batch.c) */
    enum cs_store_stmt failed_stmt; /* the statement that failed first */
    int64_t sent_ns;                /* when it was sent, for store_stats */
    cs_store_batch_done_cb done_cb; /* the prepares of a new connection, else NULL */
    /* A replica's batch with events: they are numbered by the database
     * (cs_store_sql_event_put_ordered), and these are its parameters. */
    const char *ordered_by; /* the replica's id, or NULL */
    int64_t ordered_epoch;
};

/* This replica's part among those sharing the database (store_replica.c). */
enum cs_store_role {
    CS_STORE_ROLE_STANDBY, /* waits to take the active role */
    CS_STORE_ROLE_ACTIVE,  /* runs the cluster's work */
};

struct cs_store_replica {
    char id[64];
    char instance[64];
    char version[64];
    char address[CS_STORE_ADDRESS_MAX];
    /* The address the last renewal that succeeded carried, and the one in
     * flight: a renewal that carries a new one tells the others. */
    char address_told[CS_STORE_ADDRESS_MAX];
    char address_sent[CS_STORE_ADDRESS_MAX];
    int64_t heartbeat_ms;
    int64_t attempt_lease_ms;
    uint32_t max_running;
    int64_t epoch; /* 0 until joined */
    enum cs_store_role role;
    bool replaced; /* the join took the id over from another instance */
    bool joining;  /* the join's query is in flight */
    bool asking;   /* a renewal or a takeover is queued or in flight */
    bool left;
    bool told_legacy; /* the log said a server from before replicas holds the database */
    bool poll_only;   /* no LISTEN: see cs_store_config */
    char cluster_key[CS_STORE_CLUSTER_KEY_MAX]; /* cluster_key's, read at the join */
    int runs_held;
    int64_t join_sent_mono_ns, join_sent_boot_ns;
    int64_t renew_sent_mono_ns, renew_sent_boot_ns;
    int64_t renewed_mono_ns; /* when the last renewal that succeeded was sent */
    /* A standby's view of the active replica, and since when it has not
     * changed. */
    char seen_id[64];
    char seen_address[CS_STORE_ADDRESS_MAX];
    int64_t seen_epoch;
    int64_t seen_renewed_us;
    int64_t seen_since_mono_ns;
    /* The active replica's silence counts only from here: a standby that
     * could not reach the database itself saw nothing of it. */
    int64_t watch_from_mono_ns;
    bool beats_started;
    uv_timer_t beat_timer;
    cs_store_renewed_cb renewed_cb;
    void *renewed_arg;
    void (*promoted_cb)(struct cs_store *store); /* store.c's: the standby is active now */
};

/* The migrations' steps (store_migrate.c), each one simple query; DONE
 * once they all succeeded, FAILED once one did not. */
enum cs_store_migrate_step {
    CS_STORE_MIGRATE_LOCK,
    CS_STORE_MIGRATE_LIST,
    CS_STORE_MIGRATE_APPLY,
    CS_STORE_MIGRATE_UNLOCK,
    CS_STORE_MIGRATE_DONE,
    CS_STORE_MIGRATE_FAILED,
};

/* What the connection layer tells the store's life (store.c), given by
 * cs_store_conn_init. */
struct cs_store_conn_cbs {
    /* Connected, migrated and prepared: the connection is READY. */
    void (*ready_cb)(struct cs_store *store);
    /* The open cannot succeed (status a negative errno; already logged). */
    void (*failed_cb)(struct cs_store *store, int status);
    /* After the open, the replica was fenced: the connection is gone for
     * good (already logged). */
    void (*fenced_cb)(struct cs_store *store);
    /* The wait after a lost connection is over: the store may first see to
     * its embedded server, then calls cs_store_conn_start. */
    void (*retry_cb)(struct cs_store *store);
};

/* The store itself. store.c owns its life; each field's comment names the
 * layer that writes it when that is not store.c. */
struct cs_store {
    /* The two regions of the state machine, written only by cs_store_step
     * and cs_store_conn_step (store_state.c). */
    enum cs_store_state state;
    enum cs_store_conn_state conn_state;

    uv_loop_t *loop;
    pthread_t loop_thread;
    struct cs_store_logger log;
    char *database_url;
    char *embedded_dir;
    size_t max_pending_writes;
    /* What we connect with: database_url, or the embedded server's once it
     * has started (and the close must stop it). */
    char *conninfo;
    char application_name[64];    /* "cschedd pid N.K on HOST": names this store's sessions */
    cs_store_fenced_cb fenced_cb; /* the caller's, from the config */
    void *fenced_arg;
    int backend_nice; /* from the config: the backend's session nice, or 0 */

    /* store_conn.c and store_resolve.c */
    char host[256];                                        /* to resolve, or "" */
    char hostaddrs[CS_STORE_MAX_ADDRS * INET6_ADDRSTRLEN]; /* its addresses */
    char hosts[CS_STORE_MAX_ADDRS * 257];                  /* its name, once per address */
    PGconn *conn;
    struct cs_store_conn_cbs conn_cbs;
    uv_timer_t retry_timer; /* reconnect backoff, or connect timeout */
    unsigned backoff_ms;
    int64_t open_deadline_ns;

    /* store_socket.c */
    uv_poll_t *poll;
    int poll_events;
    uv_poll_cb poll_cb; /* the connection layer's */

    struct cs_store_replica replica; /* store_replica.c */
    /* The replica's epoch is no longer its own (a renewal or a batch's fence
     * said so): the connection layer's, which logs why, closes the
     * connection for good and tells the store's life. */
    void (*fence_cb)(struct cs_store *store, const char *why);

    /* store_migrate.c */
    enum cs_store_migrate_step migrate_step;
    size_t migrate_first;

    /* store_batch.c; kick starts flush_handle with flush_cb (store.c's) */
    uv_prepare_t flush_handle;
    uv_prepare_cb flush_cb;
    struct cs_store_queue pending;
    struct cs_store_queue failed; /* reads to fail with -ENOTCONN at end of turn */
    struct cs_store_batch *inflight_head;
    struct cs_store_batch *inflight_tail;
    int n_inflight;
    size_t n_writes;          /* writes not yet committed */
    int64_t last_event_local; /* the seq of the event put last (store_write.c) */
    /* The watchdog (cs_store_answer_wait); its callback is the connection
     * layer's; store.c makes and closes the handle. */
    uv_timer_t answer_timer;
    uv_timer_cb answer_cb;
    int64_t unanswered_since_ns; /* store_conn.c: when the watchdog first fired, or 0 */
    /* When a batch last failed for want of disk space, and the statement
     * that failed; 0 once a batch with that statement has committed since
     * (cs_store_is_out_of_space). */
    int64_t out_of_space_ns;
    enum cs_store_stmt out_of_space_stmt;
    /* When a failed statement was last logged, and how many failed since. */
    int64_t stmt_failure_logged_ns;
    uint64_t stmt_failures_unlogged;

    /* the embedded server, started and stopped on libuv's pool: busy while
     * conn_state is STARTING, and while the state is FINISHING */
    uv_work_t work;
    int work_status;
    char work_conninfo[512];

    struct cs_store_stats stats; /* store_batch.c and store_conn.c, through store_stats.h */

    cs_store_open_cb open_cb; /* NULL once called: the open is answered once */
    void *open_arg;

    uv_timer_t close_timer;
    int handles_open;
    void (*closed_cb)(void *arg);
    void *closed_arg;
};

/* Silence with a batch in flight that takes the connection for dead: a
 * frozen server keeps its TCP connection and fires no statement_timeout. */
#define CS_STORE_ANSWER_TIMEOUT_MS 5000
/* The longest wait before a lost connection is tried again. */
#define CS_STORE_BACKOFF_MAX_MS 5000
/* Idleness after which a ping asks a ready connection for an answer. */
#define CS_STORE_PING_IDLE_MS 2000

/* store_conn.c: the connection. */
/* Sets the socket's poll callback, the watchdog's callback and the callbacks
 * to the store's life. */
void cs_store_conn_init(struct cs_store *store, const struct cs_store_conn_cbs *cbs);
/* Connects to store->conninfo (resolving its host name first when it has
 * one), then migrates and prepares; retries with backoff when that fails. */
void cs_store_conn_start(struct cs_store *store);
/* Closes the connection and its watch (DROP: the connection is IDLE). */
void cs_store_conn_teardown(struct cs_store *store);
/* Tears the connection down, requeues what was in flight, and schedules a
 * reconnect (or fails the open once its deadline has passed). */
void cs_store_conn_lost(struct cs_store *store, const char *why);

/* store_resolve.c: status 0 (store->hostaddrs and hosts are set) or a
 * negative errno with err saying why. */
typedef void (*cs_store_resolve_cb)(struct cs_store *store, int status,
                                    const struct cs_store_err *err);
/* Resolves store->host with uv_getaddrinfo (on libuv's pool); resolve_cb
 * runs once, unless this returns a negative errno. */
int cs_store_resolve(struct cs_store *store, cs_store_resolve_cb resolve_cb);

/* store_replica.c: the replica's membership. The join runs on the first
 * connection outside pipeline mode: start sends it, read takes what
 * arrived and sets *done once answered; both return 0 or a negative errno:
 * -ENOTCONN when the connection failed (err says why), -EIO when the
 * database refused it (logged), -EBUSY when the id is another instance's
 * (logged). */
int cs_store_join_start(struct cs_store *store, struct cs_store_err *err);
int cs_store_join_read(struct cs_store *store, bool *done, struct cs_store_err *err);
/* Renews the lease every heartbeat from now on. */
void cs_store_replica_start_beats(struct cs_store *store);
/* SQLSTATE of csched_fence's refusal (0010_replicas.sql). */
#define CS_STORE_SQLSTATE_FENCED "CSFEN"

/* store_migrate.c: the migrations, on a connection outside pipeline mode.
 * Both return 0 or a negative errno: -ENOTCONN when the connection failed
 * (err says why), -EIO when the migrations failed (logged). */
int cs_store_migrate_start(struct cs_store *store, struct cs_store_err *err);
/* Takes the results that have arrived and sends the next step;
 * store->migrate_step is DONE once the last step is done. */
int cs_store_migrate_read(struct cs_store *store, struct cs_store_err *err);

/* store_socket.c: the connection's socket. */
/* Watches it for events (renew: with a new handle, as during connect the
 * socket may be replaced under the same number). 0 or a negative errno. */
int cs_store_watch(struct cs_store *store, int events, bool renew, struct cs_store_err *err);
/* Stops the watch, before libpq closes the socket. */
void cs_store_unwatch(struct cs_store *store);
/* PQflush, then watch the socket for reading, and for writing while libpq
 * has more to send. 0 or -ENOTCONN (err says why). */
int cs_store_flush_out(struct cs_store *store, struct cs_store_err *err);
/* True when an error result means the connection, not the batch, failed. */
bool cs_store_is_conn_error(const struct cs_store *store, const PGresult *res);

/* store_batch.c: the queue and group commit. */
struct cs_store_op *cs_store_op_new(struct cs_store *store, enum cs_store_stmt stmt, bool is_write,
                                    cs_store_op_done_cb done_cb, void (*cb)(void), void *arg);
/* Queues op behind everything queued before it. A read queued while the
 * store is not connected fails with -ENOTCONN (its callback runs later in
 * this loop turn, never from inside the call). */
void cs_store_op_submit(struct cs_store *store, struct cs_store_op *op);
/* Makes sure the queue is looked at by the end of this loop turn. */
void cs_store_kick(struct cs_store *store);
/* Sends queued operations as batches, while READY and there is room in
 * flight. 0 or -ENOTCONN (err says why). */
int cs_store_send_pending(struct cs_store *store, struct cs_store_err *err);
/* Reads every result that has arrived; ends the batches whose sync came.
 * 0 or -ENOTCONN (err says why). */
int cs_store_read_results(struct cs_store *store, struct cs_store_err *err);
/* After a lost connection: writes (and the snapshot) of unanswered batches
 * go back to the front of the queue, other reads to `failed`. */
void cs_store_requeue_inflight(struct cs_store *store);
void cs_store_fail_queue(struct cs_store *store, struct cs_store_queue *q, int status);
/* (Re)starts the watchdog: the answer timeout while something is in
 * flight, the idle ping on a ready connection, else nothing. Called when a
 * batch is sent or ends, and whenever the server sends anything. */
void cs_store_answer_wait(struct cs_store *store);
/* Makes b the only batch in flight: the prepares of a new connection. */
void cs_store_batch_start_setup(struct cs_store *store, struct cs_store_batch *b);
void cs_store_batch_free(struct cs_store_batch *b);

/* store_bulk.c: a batch's statements. */
/* Records that stmt was sent as the next statement of b. */
void cs_store_batch_sent(struct cs_store_batch *b, enum cs_store_stmt stmt, struct cs_store_op *op);

/* The channel a replica's role changes are told on (a takeover, a leave):
 * the others renew at once instead of at their next heartbeat. */
#define CS_STORE_WAKE_CHANNEL "csched_replicas"

/* cs_store_replica_listens says whether this store's connections LISTEN
 * on CS_STORE_WAKE_CHANNEL: a replica on a shared database, not
 * --poll-only. */
bool cs_store_replica_listens(const struct cs_store *store);

/* cs_store_replica_woken takes the notifications that arrived on the
 * connection: another replica's role changed, so this one renews now (a
 * standby learns of a leave or of the new active replica's address at
 * once). */
void cs_store_replica_woken(struct cs_store *store);
/* Sends the operations of b (already in b->ops) as statements, writes
 * coalesced, and records each in b->sent; not the sync. Returns 0, or
 * -ENOTCONN when libpq refused to queue a statement. */
int cs_store_batch_send(PGconn *conn, struct cs_store_batch *b);

/* store_read.c: a statement that only asks the server to answer. */
void cs_store_ping(struct cs_store *store);

/* store_snapshot.c */
typedef void (*cs_store_snapshot_cb)(struct cs_store *store, int status,
                                     struct cs_store_snapshot *snapshot);
/* Queues the snapshot's reads (sent again after a reconnect, like writes);
 * snapshot_cb gets the snapshot (owned by the callee) or a negative errno
 * and NULL. Called once connected at open, before anything else is queued. */
void cs_store_snapshot_load(struct cs_store *store, cs_store_snapshot_cb snapshot_cb);

/* store_embedded_work.c: libuv pool work of the embedded server; req->data
 * is the store. The result goes to store->work_status. */
void cs_store_embedded_start_work(uv_work_t *req);
/* Starts the embedded server again if it no longer runs (killed, or stopped
 * by hand); one that runs is left alone. */
void cs_store_embedded_restart_work(uv_work_t *req);
void cs_store_embedded_stop_work(uv_work_t *req);

/* store_url.c */
/* Decides whether conninfo (a libpq keyword string or URI) names a host
 * that must be resolved before connecting: sets host to it, or to "" when
 * none is needed (a unix socket, a numeric address, hostaddr given).
 * Returns 0, -EINVAL when conninfo does not parse, -ENOTSUP for a list of
 * several host names, -ENAMETOOLONG; err says why. */
int cs_store_url_host(const char *conninfo, char *host, size_t cap, struct cs_store_err *err);

/* Writes the addresses of res (at most CS_STORE_MAX_ADDRS) to hostaddrs as
 * a comma-separated list for libpq's hostaddr, and host once per address to
 * hosts, for libpq's host. Returns how many addresses it wrote. */
size_t cs_store_addr_lists(const struct addrinfo *res, const char *host, char *hostaddrs,
                           size_t cap_addrs, char *hosts, size_t cap_hosts);

/* Row <-> message mapping, one table each. The *_from_row functions return
 * messages that protobuf_c_message_free_unpacked(m, NULL) frees. */
extern const char cs_store_sql_job_put[];
extern const char cs_store_sql_job_delete[];
extern const char cs_store_sql_job_all[];
void cs_store_job_params(const Csched__V1__Job *job, int64_t first_run_id,
                         struct cs_store_params *p);
/* NULL when the stored spec does not unpack (logged). */
Csched__V1__Job *cs_store_job_from_row(const struct cs_store_logger *log, const PGresult *res,
                                       int row);

/* cs_store_sql_run_put and cs_store_sql_attempt_put take one array per
 * column, of the types below, in the column order of cs_store_run_params and
 * cs_store_attempt_params. */
extern const char cs_store_sql_run_put[];
extern const char cs_store_sql_attempt_put[];
#define CS_STORE_RUN_COLS 15
#define CS_STORE_ATTEMPT_COLS 24
#define CS_STORE_ATTEMPT_COL_DIR 12 /* attempt_dir: '' keeps the one recorded */
extern const enum cs_store_col_type cs_store_run_cols[CS_STORE_RUN_COLS];
extern const enum cs_store_col_type cs_store_attempt_cols[CS_STORE_ATTEMPT_COLS];
extern const char cs_store_sql_run_get[];
extern const char cs_store_sql_run_by_key[];
extern const char cs_store_sql_run_list[];
extern const char cs_store_sql_run_list_job[];
extern const char cs_store_sql_run_list_jobs[];
extern const char cs_store_sql_run_list_not_jobs[];
extern const char cs_store_sql_run_list_array[];
extern const char cs_store_sql_run_active[];
extern const char cs_store_sql_max_ids[];
extern const char cs_store_sql_history_purge[];
extern const char cs_store_sql_history_purge_job[];
extern const char cs_store_sql_history_purge_causes[];
extern const char cs_store_sql_cluster_limits_set[];
extern const char cs_store_sql_remote_attempts[];
void cs_store_run_params(const Csched__V1__Run *run, struct cs_store_params *p);
void cs_store_attempt_params(int64_t run_id, const Csched__V1__Attempt *attempt,
                             const char *attempt_dir, struct cs_store_params *p);
/* Parameters of cs_store_sql_run_list, or of cs_store_sql_run_list_job when
 * the filter names a job; returns which of the two statements to use. */
enum cs_store_stmt cs_store_run_filter_params(const struct cs_store_run_filter *filter,
                                              struct cs_store_params *p);
/* Groups the rows of a runs-joined-with-attempts result (ordered by run, then
 * attempt number) into runs with their attempts. Sets *runs (NULL when there
 * are none) and, when dirs is not NULL, *dirs: each run's last attempt
 * directory or NULL. A stored env that does not unpack is logged to log.
 * Returns the number of runs. */
size_t cs_store_runs_from_rows(const struct cs_store_logger *log, const PGresult *res,
                               Csched__V1__Run ***runs, char ***dirs);
/* Whether a run list's result (cs_store_sql_run_list*) left matching runs
 * out, at the limit or the byte budget. */
bool cs_store_run_list_more(const PGresult *res);

/* Takes one array per column, as cs_store_sql_run_put does. */
extern const char cs_store_sql_event_put[];
extern const char cs_store_sql_event_put_ordered[];
#define CS_STORE_EVENT_COLS 10
extern const enum cs_store_col_type cs_store_event_cols[CS_STORE_EVENT_COLS];
extern const char cs_store_sql_event_list[];
extern const char cs_store_sql_event_list_job[];
void cs_store_event_params(const Csched__V1__Event *event, struct cs_store_params *p);
Csched__V1__Event *cs_store_event_from_row(const PGresult *res, int row);

/* store_slot.c: the slots of a batch go out as one statement of arrays
 * (store_bulk.c), as runs do. */
#define CS_STORE_SLOT_COLS 9
#define CS_STORE_SLOT_COL_OUTCOME 2
#define CS_STORE_SLOT_COL_RUN_ID 4
extern const char cs_store_sql_slot_put[];
extern const enum cs_store_col_type cs_store_slot_cols[CS_STORE_SLOT_COLS];
/* Whether a put of a slot whose row is old (params) leaves new in its place:
 * the upsert's own rule, for two puts of one slot in one batch. */
bool cs_store_slot_replaces(const struct cs_store_params *old, const struct cs_store_params *new);
extern const char cs_store_sql_slot_list[];
extern const char cs_store_sql_slot_last[];
void cs_store_slot_params(const Csched__V1__Slot *slot, struct cs_store_params *p);
void cs_store_slot_filter_params(const struct cs_store_slot_filter *filter,
                                 struct cs_store_params *p);
/* A row of cs_store_sql_slot_list or cs_store_sql_slot_last. */
Csched__V1__Slot *cs_store_slot_from_row(const PGresult *res, int row);
/* store_audit.c: as events, one array per column. */
extern const char cs_store_sql_audit_put[];
#define CS_STORE_AUDIT_COLS 8
extern const enum cs_store_col_type cs_store_audit_cols[CS_STORE_AUDIT_COLS];
extern const char cs_store_sql_audit_list[];
extern const char cs_store_sql_audit_expire[];
void cs_store_audit_params(const Csched__V1__AuditEntry *entry, struct cs_store_params *p);
/* Parameters of cs_store_sql_audit_list. */
void cs_store_audit_filter_params(const struct cs_store_audit_filter *filter,
                                  struct cs_store_params *p);
Csched__V1__AuditEntry *cs_store_audit_from_row(const PGresult *res, int row);
/* store_tail.c: the tails of attempts' output (migration 0012), a batch's
 * puts as one statement of arrays (store_bulk.c), as runs. */
#define CS_STORE_TAIL_COLS 4
extern const char cs_store_sql_attempt_tail_put[];
extern const enum cs_store_col_type cs_store_tail_cols[CS_STORE_TAIL_COLS];
extern const char cs_store_sql_attempt_tail_get[];
/* The only row of cs_store_sql_attempt_tail_get's result. */
struct cs_store_attempt_tail *cs_store_attempt_tail_from_row(const PGresult *res, int row);
/* store_replica_list.c: every replica's row, ages and expiry on the
 * database's clock. */
extern const char cs_store_sql_replica_list[];
/* A row of cs_store_sql_replica_list; self is left false. */
Csched__V1__Replica *cs_store_replica_from_row(const PGresult *res, int row);
/* store_hook.c: hook deliveries (migration 0016), a batch's puts and
 * updates each as one statement of arrays (store_bulk.c). */
#define CS_STORE_HOOK_PUT_COLS 16
#define CS_STORE_HOOK_UPDATE_COLS 11
extern const char cs_store_sql_hook_put[];
extern const char cs_store_sql_hook_update[];
extern const char cs_store_sql_hook_due[];
extern const char cs_store_sql_hook_list[];
extern const enum cs_store_col_type cs_store_hook_put_cols[CS_STORE_HOOK_PUT_COLS];
extern const enum cs_store_col_type cs_store_hook_update_cols[CS_STORE_HOOK_UPDATE_COLS];
void cs_store_hook_put_params(const struct cs_store_hook_new *d, struct cs_store_params *p);
void cs_store_hook_update_params(const struct cs_store_hook_result *r, struct cs_store_params *p);
/* Fills d from a row of cs_store_sql_hook_due (strings malloc'd). */
void cs_store_hook_due_from_row(const PGresult *res, int row, struct cs_store_hook_due *d);
Csched__V1__HookDelivery *cs_store_hook_delivery_from_row(const PGresult *res, int row);
/* store_after.c: dependency causes (migration 0017), one statement a row:
 * an upstream end changes a few. */
extern const char cs_store_sql_after_put[];
extern const char cs_store_sql_after_load[];
extern const char cs_store_sql_after_list[];
/* c's row, and up's (NULL: none) the end that changed it. */
void cs_store_after_params(const Csched__V1__DependencyCause *c,
                           const Csched__V1__DependencyUpstream *up, struct cs_store_params *p);
/* The causes of a result whose one column is the packed body; a body that
 * does not unpack is logged and left out. */
size_t cs_store_after_from_rows(const struct cs_store_logger *log, const PGresult *res,
                                Csched__V1__DependencyCause ***out);

#endif
