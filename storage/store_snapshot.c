/* The snapshot handed to the server at open: every job, every run not yet
 * ended with its attempts, the attempts among them another replica's
 * machine runs, and the highest run id and event seq. Its reads go in one
 * batch, so they see one state of the database. Loop
 * thread; the result goes to the callback given to cs_store_snapshot_load. */
#include <errno.h>
#include <stdlib.h>

#include "store_internal.h"

struct snapshot_load {
    struct cs_store *store;
    struct cs_store_snapshot *snapshot;
    int status;
    cs_store_snapshot_cb snapshot_cb;
};

static void jobs_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    struct snapshot_load *load = op->arg;
    struct cs_store_snapshot *snap = load->snapshot;
    int rows;

    if (status != 0) {
        load->status = status;
        return;
    }
    rows = PQntuples(res);
    snap->jobs = rows > 0 ? cs_store_xcalloc((size_t)rows, sizeof(*snap->jobs)) : NULL;
    snap->job_last_ended =
        rows > 0 ? cs_store_xcalloc((size_t)rows, sizeof(*snap->job_last_ended)) : NULL;
    for (int row = 0; row < rows; row++) {
        Csched__V1__Job *job = cs_store_job_from_row(&load->store->log, res, row);

        if (job == NULL) {
            load->status = -EIO;
            continue;
        }
        /* NULL (no run has ended) reads as 0, UNSPECIFIED. */
        snap->job_last_ended[snap->n_jobs] = (Csched__V1__RunState)cs_store_row_int(res, row, 5);
        snap->jobs[snap->n_jobs++] = job;
    }
}

static void runs_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    struct snapshot_load *load = op->arg;
    struct cs_store_snapshot *snap = load->snapshot;

    if (status != 0) {
        load->status = status;
        return;
    }
    snap->n_active_runs = cs_store_runs_from_rows(&load->store->log, res, &snap->active_runs,
                                                  &snap->active_attempt_dirs);
}

static void remote_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    struct snapshot_load *load = op->arg;
    struct cs_store_snapshot *snap = load->snapshot;
    int rows;

    if (status != 0) {
        load->status = status;
        return;
    }
    rows = PQntuples(res);
    snap->remote_attempts =
        rows > 0 ? cs_store_xcalloc((size_t)rows, sizeof(*snap->remote_attempts)) : NULL;
    for (int row = 0; row < rows; row++) {
        struct cs_store_remote_attempt *a = &snap->remote_attempts[snap->n_remote_attempts++];

        a->run_id = cs_store_row_int(res, row, 0);
        a->number = (uint32_t)cs_store_row_int(res, row, 1);
        a->replica = cs_store_row_strdup(res, row, 2);
        a->wait_ms = cs_store_row_int(res, row, 3);
    }
}

static void max_ids_done_cb(struct cs_store_op *op, int status, const PGresult *res)
{
    struct snapshot_load *load = op->arg;
    struct cs_store_snapshot *snap = load->snapshot;

    if (status == 0) {
        snap->max_run_id = cs_store_row_int(res, 0, 0);
        snap->max_event_seq = cs_store_row_int(res, 0, 1);
        snap->max_audit_id = cs_store_row_int(res, 0, 2);
        snap->purged_event_seq = cs_store_row_int(res, 0, 3);
        snap->cluster_max_running = (uint32_t)cs_store_row_int(res, 0, 4);
    } else {
        load->status = status;
    }
    if (load->status != 0) {
        cs_store_log(&load->store->log, CS_STORE_LOG_ERROR, "loading the snapshot failed");
        cs_store_snapshot_free(snap);
        snap = NULL;
    } else {
        cs_store_log(&load->store->log, CS_STORE_LOG_INFO,
                     "snapshot loaded: %zu jobs, %zu active runs, max run id %lld, max event "
                     "seq %lld",
                     snap->n_jobs, snap->n_active_runs, (long long)snap->max_run_id,
                     (long long)snap->max_event_seq);
    }
    load->snapshot_cb(load->store, load->status, snap);
    free(load);
}

static struct cs_store_op *snapshot_op(struct cs_store *store, enum cs_store_stmt stmt,
                                       cs_store_op_done_cb done_cb, struct snapshot_load *load)
{
    struct cs_store_op *op = cs_store_op_new(store, stmt, false, done_cb, NULL, load);

    op->replay = true;
    return op;
}

static void submit(struct cs_store *store, enum cs_store_stmt stmt, cs_store_op_done_cb done_cb,
                   struct snapshot_load *load)
{
    cs_store_op_submit(store, snapshot_op(store, stmt, done_cb, load));
}

/* The embedded database is this machine's alone: every attempt in it is
 * this replica's. */
static void submit_remote(struct cs_store *store, struct snapshot_load *load)
{
    struct cs_store_op *op;

    if (store->embedded_dir != NULL)
        return;
    op = snapshot_op(store, CS_STORE_STMT_REMOTE_ATTEMPTS, remote_done_cb, load);
    cs_store_params_text(&op->params, store->replica.id);
    cs_store_params_bool(&op->params, store->replica.replaced);
    cs_store_op_submit(store, op);
}

void cs_store_snapshot_load(struct cs_store *store, cs_store_snapshot_cb snapshot_cb)
{
    struct snapshot_load *load = cs_store_xcalloc(1, sizeof(*load));

    load->store = store;
    load->snapshot_cb = snapshot_cb;
    load->snapshot = cs_store_xcalloc(1, sizeof(*load->snapshot));
    submit(store, CS_STORE_STMT_JOB_ALL, jobs_done_cb, load);
    submit(store, CS_STORE_STMT_RUN_ACTIVE, runs_done_cb, load);
    submit_remote(store, load);
    submit(store, CS_STORE_STMT_MAX_IDS, max_ids_done_cb, load);
}

void cs_store_snapshot_free(struct cs_store_snapshot *snapshot)
{
    if (snapshot == NULL)
        return;
    cs_store_jobs_free(snapshot->jobs, snapshot->n_jobs);
    free(snapshot->job_last_ended);
    if (snapshot->active_attempt_dirs != NULL) {
        for (size_t i = 0; i < snapshot->n_active_runs; i++)
            free(snapshot->active_attempt_dirs[i]);
        free(snapshot->active_attempt_dirs);
    }
    cs_store_runs_free(snapshot->active_runs, snapshot->n_active_runs);
    for (size_t i = 0; i < snapshot->n_remote_attempts; i++)
        free(snapshot->remote_attempts[i].replica);
    free(snapshot->remote_attempts);
    free(snapshot);
}
