/* What the store's files share and the server never sees: statement
 * parameters, binary result readers, the queued operation, the prepared
 * statements, and the row <-> message mapping of each table. Everything here
 * runs on the loop thread. */
#ifndef CS_STORE_INTERNAL_H
#define CS_STORE_INTERNAL_H

#include <libpq-fe.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define CS_PARAMS_MAX 14

/* Parameters of one statement: text format, except bytea values, which go in
 * binary. Every value is owned (freed by cs_params_clear). */
struct cs_params {
    int n;
    char *values[CS_PARAMS_MAX];
    int lengths[CS_PARAMS_MAX];
    int formats[CS_PARAMS_MAX];
};

/* Appends a copy of s; NULL appends SQL NULL. */
void cs_params_text(struct cs_params *p, const char *s);
void cs_params_int(struct cs_params *p, int64_t v);
void cs_params_bool(struct cs_params *p, bool v);
void cs_params_null(struct cs_params *p);
/* Appends a bytea value; takes ownership of buf (malloc'd, may be NULL when
 * len is 0). */
void cs_params_bytes(struct cs_params *p, void *buf, size_t len);
void cs_params_clear(struct cs_params *p);

/* A one-dimensional array parameter in binary format (PostgreSQL's
 * array_recv layout), built one element at a time: the many rows of one
 * statement travel as one array per column. Elements are int8, bool, text or
 * bytea, named by the element type's OID. */
#define CS_OID_BOOL 16
#define CS_OID_BYTEA 17
#define CS_OID_INT8 20
#define CS_OID_TEXT 25

struct cs_array {
    uint8_t *buf; /* header, then each element's length and bytes */
    size_t len;
    size_t cap;
    int32_t n;
    bool has_null;
    uint32_t elem_oid;
};

void cs_array_init(struct cs_array *a, uint32_t elem_oid);
void cs_array_null(struct cs_array *a);
void cs_array_int(struct cs_array *a, int64_t v);
void cs_array_bool(struct cs_array *a, bool v);
/* Text or bytea: len bytes of p, taken as they are (no escaping). */
void cs_array_bytes(struct cs_array *a, const void *p, size_t len);
/* Completes the header and appends the array to p as a binary parameter;
 * p takes the buffer, and a is left empty. */
void cs_array_param(struct cs_array *a, struct cs_params *p);

/* Readers of binary-format results. A NULL field reads as 0, false or "". */
bool cs_row_is_null(const PGresult *res, int row, int col);
/* An int2, int4 or int8 field (told apart by its length). */
int64_t cs_row_int(const PGresult *res, int row, int col);
bool cs_row_bool(const PGresult *res, int row, int col);
/* A text field as a malloc'd string, for a protobuf-c message to own. */
char *cs_row_strdup(const PGresult *res, int row, int col);
const uint8_t *cs_row_bytes(const PGresult *res, int row, int col, size_t *len);

/* The prepared statements, prepared once per connection. */
enum cs_stmt {
    CS_STMT_JOB_PUT,
    CS_STMT_JOB_DELETE,
    CS_STMT_JOB_ALL,
    CS_STMT_RUN_PUT,
    CS_STMT_ATTEMPT_PUT,
    CS_STMT_RUN_GET,
    CS_STMT_RUN_BY_KEY,
    CS_STMT_RUN_LIST,
    CS_STMT_RUN_LIST_JOB,
    CS_STMT_RUN_ACTIVE,
    CS_STMT_MAX_IDS,
    CS_STMT_EVENT_PUT,
    CS_STMT_EVENT_LIST,
    CS_STMT_EVENT_LIST_JOB,
    CS_STMT_COUNT,
};

struct cs_stmt_def {
    const char *name;
    const char *sql;
};

/* Indexed by enum cs_stmt. */
extern const struct cs_stmt_def cs_stmts[CS_STMT_COUNT];

struct cs_store_op;

/* The column types of a table written many rows per statement. Integers of
 * every width travel as int8; the INSERT's assignment cast to the column
 * narrows them, and refuses what does not fit, as a single row would. */
enum cs_col_type {
    CS_COL_INT,
    CS_COL_BOOL,
    CS_COL_TEXT,
    CS_COL_BYTEA,
};

/* Called once per operation when its batch has ended: status is 0 (res is a
 * read's result, NULL for a write), -EIO or -ENOTCONN (res NULL). It
 * reports to the caller's callback; the op is freed after it returns. */
typedef void (*cs_store_op_done_fn)(struct cs_store_op *op, int status, const PGresult *res);

/* One operation waiting to be sent, or sent and waiting for its batch. A
 * read is one statement; writes of runs, attempts and events are rows that
 * store_bulk.c gathers into one statement per table and batch. */
struct cs_store_op {
    struct cs_store_op *next;
    enum cs_stmt stmt;
    bool is_write;  /* counts in the backlog; sent again after a reconnect */
    bool replay;    /* sent again after a reconnect (writes, the snapshot) */
    int64_t key[2]; /* the row's key, for coalescing: run id; run id and number */
    struct cs_params params;
    PGresult *result;
    cs_store_op_done_fn done;
    void (*cb)(void); /* the caller's callback, cast back by done */
    void *arg;
    struct cs_store *store;
};

struct cs_store_op *cs_store_op_new(struct cs_store *store, enum cs_stmt stmt, bool is_write,
                                    cs_store_op_done_fn done, void (*cb)(void), void *arg);

/* Queues op behind everything queued before it. A read queued while the
 * store is not connected fails with -ENOTCONN (its callback runs later in
 * this loop turn, never from inside the call). */
void cs_store_op_submit(struct cs_store *store, struct cs_store_op *op);

/* The done function of a plain write: reports status to its
 * cs_store_done_cb. */
void cs_store_write_done(struct cs_store_op *op, int status, const PGresult *res);

/* Queues the snapshot's reads (sent again after a reconnect, like writes);
 * they call cs_store_snapshot_loaded when done. Called once connected at
 * open, before anything else is queued. */
void cs_store_snapshot_load(struct cs_store *store);
void cs_store_snapshot_loaded(struct cs_store *store, int status,
                              struct cs_store_snapshot *snapshot);

/* Addresses of a database host name tried in turn. */
#define CS_STORE_MAX_ADDRS 8

/* The store itself, shared by store_conn.c (the connection and the store's
 * life) and store_batch.c (the queue and group commit). */
enum cs_store_conn_state {
    CONN_IDLE,       /* no connection; a reconnect may be due */
    CONN_STARTING,   /* the embedded server starts, or a host name resolves */
    CONN_CONNECTING, /* PQconnectPoll */
    CONN_MIGRATING,  /* migrations, simple queries outside pipeline mode */
    CONN_PREPARING,  /* pipeline mode: the statements being prepared */
    CONN_READY,
};

struct cs_store_queue {
    struct cs_store_op *head;
    struct cs_store_op *tail;
};

/* One statement sent in a batch, and the read that takes its result (NULL
 * for a write or a prepare). */
struct cs_store_sent {
    enum cs_stmt stmt;
    struct cs_store_op *op;
};

struct cs_store_batch {
    struct cs_store_batch *next;
    struct cs_store_queue ops;  /* every operation, in the order queued */
    struct cs_store_sent *sent; /* the statements sent, in order */
    size_t n_sent;
    size_t cap_sent;
    size_t next_result; /* index in sent of the statement whose result comes next */
    bool failed;
    bool setup; /* the prepares of a new connection */
};

enum cs_store_migrate_step {
    MIGRATE_LOCK,
    MIGRATE_LIST,
    MIGRATE_APPLY,
    MIGRATE_UNLOCK,
    MIGRATE_DONE,
};

struct cs_store {
    uv_loop_t *loop;
    char *database_url;
    char *embedded_dir;
    size_t max_pending_writes;
    char *conninfo; /* what we connect with: database_url or the embedded one */
    char host[256]; /* to resolve, or "" */
    char hostaddrs[CS_STORE_MAX_ADDRS * INET6_ADDRSTRLEN]; /* its addresses */
    char hosts[CS_STORE_MAX_ADDRS * 257];                  /* its name, once per address */

    enum cs_store_conn_state state;
    PGconn *conn;
    uv_poll_t *poll;
    int poll_events;
    uv_prepare_t flush_handle;
    uv_timer_t retry_timer; /* reconnect backoff, or connect timeout */
    uv_timer_t close_timer;
    uv_work_t work;
    bool work_busy;
    int work_status;
    char work_conninfo[512];
    uv_getaddrinfo_t *resolve; /* in flight, or NULL */

    struct cs_store_queue pending;
    struct cs_store_queue failed; /* reads to fail with -ENOTCONN at end of turn */
    struct cs_store_batch *inflight_head;
    struct cs_store_batch *inflight_tail;
    int n_inflight;
    size_t n_writes; /* writes not yet committed */
    unsigned backoff_ms;
    int64_t open_deadline_ns;

    enum cs_store_migrate_step migrate_step;
    bool migrate_failed;
    size_t migrate_first;
    bool migrated;
    bool pg_started;
    bool snapshot_queued; /* its reads are sent again after a reconnect */
    bool opened;          /* open_cb has run */
    bool live;            /* and the open succeeded */
    cs_store_open_cb open_cb;
    void *open_arg;

    bool closing;
    bool close_deadline_passed;
    bool finishing;
    int handles_open;
    void (*closed_cb)(void *arg);
    void *closed_arg;
};

/* store_batch.c */
void cs_store_queue_push(struct cs_store_queue *q, struct cs_store_op *op);
/* Makes sure the queue is looked at by the end of this loop turn. */
void cs_store_kick(struct cs_store *store);
/* PQflush, then watch the socket for reading, and for writing while libpq
 * has more to send. */
void cs_store_flush_out(struct cs_store *store);
/* Reads every result that has arrived; ends the batches whose sync came. */
void cs_store_read_results(struct cs_store *store);
/* After a lost connection: writes (and the snapshot) of unanswered batches
 * go back to the front of the queue, other reads to `failed`. */
void cs_store_requeue_inflight(struct cs_store *store);
void cs_store_fail_queue(struct cs_store *store, struct cs_store_queue *q, int status);
/* True when an error result means the connection, not the batch, failed. */
bool cs_store_is_conn_error(const struct cs_store *store, const PGresult *res);

/* Records that stmt was sent as the next statement of b. */
void cs_store_batch_sent(struct cs_store_batch *b, enum cs_stmt stmt, struct cs_store_op *op);
void cs_store_batch_free(struct cs_store_batch *b);

/* store_bulk.c */
/* Sends the operations of b (already in b->ops) as statements, writes
 * coalesced (see store_bulk.c), and records each in b->sent; not the sync.
 * Returns false when libpq refused to queue a statement (the connection is
 * lost; the caller tears it down). */
bool cs_store_batch_send(struct cs_store *store, struct cs_store_batch *b);

/* store_conn.c */
int cs_store_watch(struct cs_store *store, int events, bool renew);
/* Tears the connection down, requeues, and schedules a reconnect. */
void cs_store_conn_lost(struct cs_store *store, const char *why);
/* The batch of prepares of a new connection has ended. */
void cs_store_setup_done(struct cs_store *store, bool failed);
void cs_store_maybe_finish_close(struct cs_store *store);

/* Copies a libpq message (several lines, ending in a newline) as one line,
 * for the log. */
void cs_store_oneline(const char *msg, char *out, size_t cap);

/* Decides whether conninfo (a libpq keyword string or URI) names a host
 * that must be resolved before connecting. Returns 1 and copies the name to
 * host; 0 when none is needed (a unix socket, a numeric address, hostaddr
 * given); -EINVAL when conninfo does not parse; -ENOTSUP for a list of
 * several host names. */
int cs_store_url_host(const char *conninfo, char *host, size_t cap);

/* Writes the addresses of res (at most CS_STORE_MAX_ADDRS) to hostaddrs as
 * a comma-separated list for libpq's hostaddr, and host once per address to
 * hosts, for libpq's host. Returns how many addresses it wrote. */
size_t cs_store_addr_lists(const struct addrinfo *res, const char *host, char *hostaddrs,
                           size_t cap_addrs, char *hosts, size_t cap_hosts);

/* Row <-> message mapping, one table each. The *_from_row functions return
 * messages that protobuf_c_message_free_unpacked(m, NULL) frees. */
extern const char cs_sql_job_put[];
extern const char cs_sql_job_delete[];
extern const char cs_sql_job_all[];
void cs_job_params(const Csched__V1__Job *job, struct cs_params *p);
/* NULL when the stored spec does not unpack (logged). */
Csched__V1__Job *cs_job_from_row(const PGresult *res, int row);

/* cs_sql_run_put and cs_sql_attempt_put take one array per column, of the
 * types below, in the column order of cs_run_params and cs_attempt_params. */
extern const char cs_sql_run_put[];
extern const char cs_sql_attempt_put[];
#define CS_RUN_COLS 12
#define CS_ATTEMPT_COLS 13
#define CS_ATTEMPT_COL_DIR 12 /* attempt_dir: '' keeps the one recorded */
extern const enum cs_col_type cs_run_cols[CS_RUN_COLS];
extern const enum cs_col_type cs_attempt_cols[CS_ATTEMPT_COLS];
extern const char cs_sql_run_get[];
extern const char cs_sql_run_by_key[];
extern const char cs_sql_run_list[];
extern const char cs_sql_run_list_job[];
extern const char cs_sql_run_active[];
extern const char cs_sql_max_ids[];
void cs_run_params(const Csched__V1__Run *run, struct cs_params *p);
void cs_attempt_params(int64_t run_id, const Csched__V1__Attempt *attempt, const char *attempt_dir,
                       struct cs_params *p);
/* Parameters of cs_sql_run_list, or of cs_sql_run_list_job when the filter
 * names a job; returns which of the two statements to use. */
enum cs_stmt cs_run_filter_params(const struct cs_store_run_filter *filter, struct cs_params *p);
/* Groups the rows of a runs-joined-with-attempts result (ordered by run, then
 * attempt number) into runs with their attempts. Sets *runs (NULL when there
 * are none) and, when dirs is not NULL, *dirs: each run's last attempt
 * directory or NULL. Returns the number of runs. */
size_t cs_runs_from_rows(const PGresult *res, Csched__V1__Run ***runs, char ***dirs);

/* Takes one array per column, as cs_sql_run_put does. */
extern const char cs_sql_event_put[];
#define CS_EVENT_COLS 9
extern const enum cs_col_type cs_event_cols[CS_EVENT_COLS];
extern const char cs_sql_event_list[];
extern const char cs_sql_event_list_job[];
void cs_event_params(const Csched__V1__Event *event, struct cs_params *p);
Csched__V1__Event *cs_event_from_row(const PGresult *res, int row);

#endif
