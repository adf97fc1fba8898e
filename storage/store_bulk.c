/* Coalescing: the operations of one batch go out as few statements as the
 * tables allow, because PostgreSQL's CPU per statement, not per row, is what
 * a busy server pays for. Runs on the loop thread, when store_batch.c sends a
 * batch; it also records each statement sent, whose result the batch then
 * waits for.
 *
 * A batch is cut at each read into segments of writes, so a read sees every
 * write queued before it and none queued after. Within a segment the last
 * write of a row wins: later puts of one run (id), attempt (run id, number)
 * or job (name; a delete counts as a write of its name) replace earlier ones,
 * and every operation's callback still runs when the batch commits; of two
 * puts of one slot (job name, time) the later wins only as its upsert would
 * (cs_store_slot_replaces); of two tails of one attempt, the later. The rows
 * left go out as one statement per table, each column one binary array:
 * runs, then attempts (which reference runs), then the attempts' tails
 * (which update attempts and nothing else writes), the slots, the events and
 * then the audit rows, then the hook deliveries (which reference runs) and
 * their results, each in the order queued. A replica's events on a shared
 * database go out numbered by the database (cs_store_sql_event_put_ordered).
 * Jobs, few and large, keep one statement each; no other table refers to
 * them, so their place among the others is free.
 *
 * Invariant: what a segment's statements leave in the database is what its
 * operations, sent one at a time in order, would have left. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* A write, and its place in the batch: of two writes of one row, the later
 * wins. */
struct entry {
    struct cs_store_op *op;
    size_t idx;
};

/* The writes of the current segment, by table. Each array has room for
 * every operation of the batch. */
struct segment {
    struct entry *runs;
    struct entry *attempts;
    struct entry *jobs;
    struct entry *slots;
    struct entry *tails;
    struct cs_store_op **events;
    struct cs_store_op **audit;
    struct cs_store_op **hooks;
    struct entry *hook_results;
    size_t n_runs;
    size_t n_attempts;
    size_t n_jobs;
    size_t n_slots;
    size_t n_tails;
    size_t n_events;
    size_t n_audit;
    size_t n_hooks;
    size_t n_hook_results;
};

/* The arrays of one statement being built, one per column. */
struct bulk {
    struct cs_store_array cols[CS_STORE_PARAMS_MAX];
    const enum cs_store_col_type *types;
    int n_cols;
    size_t n_rows;
};

static int key_cmp(const struct entry *a, const struct entry *b)
{
    for (int i = 0; i < 2; i++) {
        if (a->op->key[i] != b->op->key[i])
            return a->op->key[i] < b->op->key[i] ? -1 : 1;
    }
    return 0;
}

/* By key, then in the order queued. */
static int by_key(const void *x, const void *y)
{
    const struct entry *a = x;
    const struct entry *b = y;
    int c = key_cmp(a, b);

    return c != 0 ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* A job's name is its first parameter (NULL only for a bad job, which the
 * database then refuses). */
static int name_cmp(const struct entry *a, const struct entry *b)
{
    const char *na = a->op->params.values[0];
    const char *nb = b->op->params.values[0];

    if (na == NULL || nb == NULL)
        return (na != NULL) - (nb != NULL);
    return strcmp(na, nb);
}

static int by_name(const void *x, const void *y)
{
    const struct entry *a = x;
    const struct entry *b = y;
    int c = name_cmp(a, b);

    return c != 0 ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

void cs_store_batch_sent(struct cs_store_batch *b, enum cs_store_stmt stmt, struct cs_store_op *op)
{
    if (b->n_sent == b->cap_sent) {
        b->cap_sent = b->cap_sent > 0 ? b->cap_sent * 2 : 8;
        b->sent = cs_store_xrealloc(b->sent, b->cap_sent * sizeof(*b->sent));
    }
    b->sent[b->n_sent++] = (struct cs_store_sent){stmt, op};
}

static int send_params(PGconn *conn, struct cs_store_batch *b, enum cs_store_stmt stmt,
                       const struct cs_store_params *p, struct cs_store_op *reader)
{
    if (!PQsendQueryPrepared(conn, cs_store_stmts[stmt].name, p->n, (const char *const *)p->values,
                             p->lengths, p->formats, 1))
        return -ENOTCONN;
    cs_store_batch_sent(b, stmt, reader);
    return 0;
}

static void bulk_init(struct bulk *bk, const enum cs_store_col_type *types, int n_cols)
{
    CS_STORE_ASSERT(n_cols <= CS_STORE_PARAMS_MAX);
    bk->types = types;
    bk->n_cols = n_cols;
    bk->n_rows = 0;
}

/* Appends one row. Rows are made as a single statement's parameters (text,
 * bytea in binary; see cs_store_run_params): integers are taken as the
 * values they were made from (or read back from their decimal text when
 * given as text), text and bytea are copied as they are. */
static void bulk_add(struct bulk *bk, const struct cs_store_params *p)
{
    static const uint32_t oids[] = {
        [CS_STORE_COL_INT] = CS_STORE_OID_INT8,
        [CS_STORE_COL_BOOL] = CS_STORE_OID_BOOL,
        [CS_STORE_COL_TEXT] = CS_STORE_OID_TEXT,
        [CS_STORE_COL_BYTEA] = CS_STORE_OID_BYTEA,
    };

    CS_STORE_ASSERT(p->n == bk->n_cols);
    if (bk->n_rows == 0) {
        for (int i = 0; i < bk->n_cols; i++)
            cs_store_array_init(&bk->cols[i], oids[bk->types[i]]);
    }
    for (int i = 0; i < bk->n_cols; i++) {
        const char *v = p->values[i];
        struct cs_store_array *a = &bk->cols[i];

        if (v == NULL) {
            cs_store_array_null(a);
            continue;
        }
        switch (bk->types[i]) {
        case CS_STORE_COL_INT:
            cs_store_array_int(a, (p->is_int & (1u << i)) != 0 ? p->ints[i] : strtoll(v, NULL, 10));
            break;
        case CS_STORE_COL_BOOL:
            cs_store_array_bool(a, v[0] == 't');
            break;
        case CS_STORE_COL_TEXT:
            cs_store_array_bytes(a, v, strlen(v));
            break;
        case CS_STORE_COL_BYTEA:
            cs_store_array_bytes(a, v, (size_t)p->lengths[i]);
            break;
        }
    }
    bk->n_rows++;
}

/* Sends the statement, if it has rows, and frees its arrays. A replica's
 * events add its id and epoch after the arrays, and reader (their first
 * op) takes the numbers back (store_batch.c gives each event its seq). */
static int bulk_send(PGconn *conn, struct cs_store_batch *b, enum cs_store_stmt stmt,
                     struct bulk *bk, struct cs_store_op *reader)
{
    struct cs_store_params p = {0};
    int rc;

    if (bk->n_rows == 0)
        return 0;
    for (int i = 0; i < bk->n_cols; i++)
        cs_store_array_param(&bk->cols[i], &p);
    if (stmt == CS_STORE_STMT_EVENT_PUT_ORDERED) {
        cs_store_params_text(&p, b->ordered_by);
        cs_store_params_int(&p, b->ordered_epoch);
    }
    rc = send_params(conn, b, stmt, &p, reader);
    cs_store_params_clear(&p);
    return rc;
}

/* By job name, then slot time, then in the order queued. */
static int by_slot(const void *x, const void *y)
{
    const struct entry *a = x;
    const struct entry *b = y;
    int c = name_cmp(a, b);

    if (c == 0)
        c = (a->op->key[0] > b->op->key[0]) - (a->op->key[0] < b->op->key[0]);
    return c != 0 ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* One row per slot: of its puts in the order queued, each replaces the one
 * kept so far as the upsert would. */
static int send_slots(PGconn *conn, struct cs_store_batch *b, struct segment *seg)
{
    struct entry *e = seg->slots;
    const struct cs_store_params *kept = NULL;
    struct bulk bk;

    qsort(e, seg->n_slots, sizeof(*e), by_slot);
    bulk_init(&bk, cs_store_slot_cols, CS_STORE_SLOT_COLS);
    for (size_t i = 0; i < seg->n_slots; i++) {
        const struct cs_store_params *p = &e[i].op->params;
        if (kept == NULL || cs_store_slot_replaces(kept, p))
            kept = p;
        if (i + 1 < seg->n_slots && name_cmp(&e[i], &e[i + 1]) == 0 &&
            e[i].op->key[0] == e[i + 1].op->key[0])
            continue;
        bulk_add(&bk, kept);
        kept = NULL;
    }
    return bulk_send(conn, b, CS_STORE_STMT_SLOT_PUT, &bk, NULL);
}

/* The last write of each name: a put or a delete. */
static int send_jobs(PGconn *conn, struct cs_store_batch *b, struct segment *seg)
{
    struct entry *e = seg->jobs;
    int rc;

    qsort(e, seg->n_jobs, sizeof(*e), by_name);
    for (size_t i = 0; i < seg->n_jobs; i++) {
        if (i + 1 < seg->n_jobs && name_cmp(&e[i], &e[i + 1]) == 0)
            continue;
        rc = send_params(conn, b, e[i].op->stmt, &e[i].op->params, NULL);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The last write of each key (runs: id; tails: run id and number). */
static int send_last_of_key(PGconn *conn, struct cs_store_batch *b, enum cs_store_stmt stmt,
                            const enum cs_store_col_type *types, int n_cols, struct entry *e,
                            size_t n)
{
    struct bulk bk;

    qsort(e, n, sizeof(*e), by_key);
    bulk_init(&bk, types, n_cols);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && key_cmp(&e[i], &e[i + 1]) == 0)
            continue;
        bulk_add(&bk, &e[i].op->params);
    }
    return bulk_send(conn, b, stmt, &bk, NULL);
}

/* As runs, but a put without a directory keeps the directory of an earlier
 * put of the same attempt, as cs_store_sql_attempt_put keeps the one recorded. */
static int send_attempts(PGconn *conn, struct cs_store_batch *b, struct segment *seg)
{
    struct entry *e = seg->attempts;
    size_t first = 0;
    struct bulk bk;

    qsort(e, seg->n_attempts, sizeof(*e), by_key);
    bulk_init(&bk, cs_store_attempt_cols, CS_STORE_ATTEMPT_COLS);
    for (size_t i = 0; i < seg->n_attempts; i++) {
        struct cs_store_params row;

        if (i + 1 < seg->n_attempts && key_cmp(&e[i], &e[i + 1]) == 0)
            continue;
        /* e[first..i] are the puts of one attempt in the order queued. */
        row = e[i].op->params;
        for (size_t j = i + 1; j-- > first;) {
            const char *dir = e[j].op->params.values[CS_STORE_ATTEMPT_COL_DIR];

            if (dir != NULL && dir[0] != '\0') {
                row.values[CS_STORE_ATTEMPT_COL_DIR] = (char *)dir;
                break;
            }
        }
        bulk_add(&bk, &row);
        first = i + 1;
    }
    return bulk_send(conn, b, CS_STORE_STMT_ATTEMPT_PUT, &bk, NULL);
}

/* Rows that are only ever inserted (events, audit rows), in the order
 * queued. */
static int send_inserts(PGconn *conn, struct cs_store_batch *b, enum cs_store_stmt stmt,
                        const enum cs_store_col_type *types, int n_cols,
                        struct cs_store_op *const *ops, size_t n)
{
    struct bulk bk;

    bulk_init(&bk, types, n_cols);
    for (size_t i = 0; i < n; i++)
        bulk_add(&bk, &ops[i]->params);
    return bulk_send(conn, b, stmt, &bk, stmt == CS_STORE_STMT_EVENT_PUT_ORDERED ? ops[0] : NULL);
}

/* Sends the segment's writes and empties it. */
static int segment_send(PGconn *conn, struct cs_store_batch *b, struct segment *seg)
{
    int rc = send_jobs(conn, b, seg);

    if (rc == 0)
        rc = send_last_of_key(conn, b, CS_STORE_STMT_RUN_PUT, cs_store_run_cols, CS_STORE_RUN_COLS,
                              seg->runs, seg->n_runs);
    if (rc == 0)
        rc = send_attempts(conn, b, seg);
    /* A tail updates its attempt's row, written before it. */
    if (rc == 0)
        rc = send_last_of_key(conn, b, CS_STORE_STMT_ATTEMPT_TAIL_PUT, cs_store_tail_cols,
                              CS_STORE_TAIL_COLS, seg->tails, seg->n_tails);
    if (rc == 0)
        rc = send_slots(conn, b, seg);
    if (rc == 0)
        rc = send_inserts(conn, b,
                          b->ordered_by != NULL ? CS_STORE_STMT_EVENT_PUT_ORDERED
                                                : CS_STORE_STMT_EVENT_PUT,
                          cs_store_event_cols, CS_STORE_EVENT_COLS, seg->events, seg->n_events);
    if (rc == 0)
        rc = send_inserts(conn, b, CS_STORE_STMT_AUDIT_PUT, cs_store_audit_cols,
                          CS_STORE_AUDIT_COLS, seg->audit, seg->n_audit);
    /* A delivery references its run, written above. */
    if (rc == 0)
        rc = send_inserts(conn, b, CS_STORE_STMT_HOOK_PUT, cs_store_hook_put_cols,
                          CS_STORE_HOOK_PUT_COLS, seg->hooks, seg->n_hooks);
    if (rc == 0)
        rc = send_last_of_key(conn, b, CS_STORE_STMT_HOOK_UPDATE, cs_store_hook_update_cols,
                              CS_STORE_HOOK_UPDATE_COLS, seg->hook_results, seg->n_hook_results);
    seg->n_runs = seg->n_attempts = seg->n_jobs = seg->n_slots = seg->n_tails = 0;
    seg->n_events = seg->n_audit = seg->n_hooks = seg->n_hook_results = 0;
    return rc;
}

int cs_store_batch_send(PGconn *conn, struct cs_store_batch *b)
{
    struct segment seg = {0};
    size_t n = 0;
    size_t idx = 0;
    int rc = 0;

    for (struct cs_store_op *op = b->ops.head; op != NULL; op = op->next)
        n++;
    seg.runs = cs_store_xmalloc(n * sizeof(*seg.runs));
    seg.attempts = cs_store_xmalloc(n * sizeof(*seg.attempts));
    seg.jobs = cs_store_xmalloc(n * sizeof(*seg.jobs));
    seg.slots = cs_store_xmalloc(n * sizeof(*seg.slots));
    seg.tails = cs_store_xmalloc(n * sizeof(*seg.tails));
    seg.events = cs_store_xmalloc(n * sizeof(*seg.events));
    seg.audit = cs_store_xmalloc(n * sizeof(*seg.audit));
    seg.hooks = cs_store_xmalloc(n * sizeof(*seg.hooks));
    seg.hook_results = cs_store_xmalloc(n * sizeof(*seg.hook_results));
    for (struct cs_store_op *op = b->ops.head; rc == 0 && op != NULL; op = op->next, idx++) {
        switch (op->stmt) {
        case CS_STORE_STMT_RUN_PUT:
            seg.runs[seg.n_runs++] = (struct entry){op, idx};
            break;
        case CS_STORE_STMT_ATTEMPT_PUT:
            seg.attempts[seg.n_attempts++] = (struct entry){op, idx};
            break;
        case CS_STORE_STMT_JOB_PUT:
        case CS_STORE_STMT_JOB_DELETE:
            seg.jobs[seg.n_jobs++] = (struct entry){op, idx};
            break;
        case CS_STORE_STMT_SLOT_PUT:
            seg.slots[seg.n_slots++] = (struct entry){op, idx};
            break;
        case CS_STORE_STMT_ATTEMPT_TAIL_PUT:
            seg.tails[seg.n_tails++] = (struct entry){op, idx};
            break;
        case CS_STORE_STMT_EVENT_PUT:
            seg.events[seg.n_events++] = op;
            break;
        case CS_STORE_STMT_AUDIT_PUT:
            seg.audit[seg.n_audit++] = op;
            break;
        case CS_STORE_STMT_HOOK_PUT:
            seg.hooks[seg.n_hooks++] = op;
            break;
        case CS_STORE_STMT_HOOK_UPDATE:
            seg.hook_results[seg.n_hook_results++] = (struct entry){op, idx};
            break;
        default:
            /* A read: the writes queued before it go first. */
            rc = segment_send(conn, b, &seg);
            if (rc == 0)
                rc = send_params(conn, b, op->stmt, &op->params, op);
            break;
        }
    }
    if (rc == 0)
        rc = segment_send(conn, b, &seg);
    free(seg.runs);
    free(seg.attempts);
    free(seg.jobs);
    free(seg.slots);
    free(seg.tails);
    free(seg.events);
    free(seg.audit);
    free(seg.hooks);
    free(seg.hook_results);
    return rc;
}
