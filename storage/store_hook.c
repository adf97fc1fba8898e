/* The hook_deliveries table (migration 0016): the queue of what hooks are
 * told. Its SQL and the mapping of its rows; loop thread.
 *
 * A delivery is inserted in the batch, and so the transaction, of the run
 * state change that causes it (store_bulk.c sends them after the runs they
 * reference), once per dedup_key whatever the reconnects. A hook that
 * wants changes only is filtered in the insert itself, against the
 * outcome of the job's previous ended run as the database has it: the same
 * answer after a restart or on another replica. */
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* The rows of a batch in one statement; a row with changed_only whose
 * outcome is that of the previous ended run of its job is left out. So is
 * one whose run has no row: a delivery must never fail the batch that
 * carries the run's own change (the foreign key would). */
const char cs_store_sql_hook_put[] =
    "INSERT INTO hook_deliveries (dedup_key, job_name, hook_name, event, run_id, url,"
    " secret_file, secret_env, ca_file, timeout_ms, max_attempts, body, created_unix_ms,"
    " next_unix_ms, command)"
    " SELECT k, j, h, e::smallint, r, u, sf, se, ca, t::integer, m::integer, b, c, c, cmd"
    " FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[],"
    " $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[],"
    " $13::bigint[], $14::boolean[], $15::bigint[], $16::text[])"
    " AS d(k, j, h, e, r, u, sf, se, ca, t, m, b, c, only_changed, st, cmd)"
    " WHERE EXISTS (SELECT 1 FROM runs WHERE id = d.r)"
    " AND (NOT only_changed OR st IS DISTINCT FROM (SELECT p.ended_state FROM runs p"
    "   WHERE p.job_name = d.j AND p.ended_unix_ms > 0 AND p.id < d.r"
    "   ORDER BY p.id DESC LIMIT 1))"
    " ON CONFLICT (dedup_key) DO NOTHING";

const enum cs_store_col_type cs_store_hook_put_cols[CS_STORE_HOOK_PUT_COLS] = {
    CS_STORE_COL_TEXT, CS_STORE_COL_TEXT, CS_STORE_COL_TEXT, CS_STORE_COL_INT,
    CS_STORE_COL_INT,  CS_STORE_COL_TEXT, CS_STORE_COL_TEXT, CS_STORE_COL_TEXT,
    CS_STORE_COL_TEXT, CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_TEXT,
    CS_STORE_COL_INT,  CS_STORE_COL_BOOL, CS_STORE_COL_INT,  CS_STORE_COL_TEXT,
};

/* An attempt's result, keyed by the delivery's id. */
const char cs_store_sql_hook_update[] =
    "UPDATE hook_deliveries h SET status = d.s::smallint, attempts = d.a::integer,"
    " response_code = d.rc::integer, last_error = d.err, next_unix_ms = d.nx,"
    " last_unix_ms = d.l, exit_code = d.x::integer, term_signal = d.sig::integer,"
    " stdout_tail = d.o, stderr_tail = d.e"
    " FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[],"
    " $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $11::text[])"
    " AS d(id, s, a, rc, err, nx, l, x, sig, o, e) WHERE h.id = d.id";

const enum cs_store_col_type cs_store_hook_update_cols[CS_STORE_HOOK_UPDATE_COLS] = {
    CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,
    CS_STORE_COL_TEXT, CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,
    CS_STORE_COL_INT,  CS_STORE_COL_TEXT, CS_STORE_COL_TEXT,
};

/* The head of each job's queue (its oldest pending delivery), due or not:
 * the caller sends the due ones and waits for the earliest of the others.
 * A job's later deliveries wait behind its head, which keeps them in order. */
const char cs_store_sql_hook_due[] =
    "SELECT id, job_name, hook_name, url, secret_file, secret_env, ca_file, timeout_ms,"
    " max_attempts, attempts, body, next_unix_ms, event, run_id, command FROM ("
    " SELECT DISTINCT ON (job_name) * FROM hook_deliveries WHERE status = 1"
    " ORDER BY job_name, id) heads ORDER BY next_unix_ms LIMIT $1::bigint";

const char cs_store_sql_hook_list[] =
    "SELECT id, job_name, hook_name, event, run_id, url, status, created_unix_ms, attempts,"
    " response_code, last_error, next_unix_ms, last_unix_ms, exit_code, term_signal,"
    " stdout_tail, stderr_tail FROM hook_deliveries"
    " WHERE job_name = $1 AND ($2::bigint = 0 OR id < $2::bigint)"
    " ORDER BY id DESC LIMIT $3::bigint";

void cs_store_hook_put_params(const struct cs_store_hook_new *d, struct cs_store_params *p)
{
    cs_store_params_text(p, d->dedup_key);
    cs_store_params_text(p, d->job_name);
    cs_store_params_text(p, d->hook_name);
    cs_store_params_int(p, d->event);
    cs_store_params_int(p, d->run_id);
    cs_store_params_text(p, d->url);
    cs_store_params_text(p, d->secret_file != NULL ? d->secret_file : "");
    cs_store_params_text(p, d->secret_env != NULL ? d->secret_env : "");
    cs_store_params_text(p, d->ca_file != NULL ? d->ca_file : "");
    cs_store_params_int(p, d->timeout_ms);
    cs_store_params_int(p, d->max_attempts);
    cs_store_params_text(p, d->body);
    cs_store_params_int(p, d->created_unix_ms);
    cs_store_params_bool(p, d->changed_only);
    cs_store_params_int(p, d->outcome_state);
    cs_store_params_text(p, d->command != NULL ? d->command : "");
}

void cs_store_hook_update_params(const struct cs_store_hook_result *r, struct cs_store_params *p)
{
    cs_store_params_int(p, r->id);
    cs_store_params_int(p, r->status);
    cs_store_params_int(p, r->attempts);
    cs_store_params_int(p, r->response_code);
    cs_store_params_text(p, r->last_error != NULL ? r->last_error : "");
    cs_store_params_int(p, r->next_unix_ms);
    cs_store_params_int(p, r->last_unix_ms);
    cs_store_params_int(p, r->exit_code);
    cs_store_params_int(p, r->term_signal);
    cs_store_params_text(p, r->stdout_tail != NULL ? r->stdout_tail : "");
    cs_store_params_text(p, r->stderr_tail != NULL ? r->stderr_tail : "");
}

void cs_store_hook_due_from_row(const PGresult *res, int row, struct cs_store_hook_due *d)
{
    d->id = cs_store_row_int(res, row, 0);
    d->job_name = cs_store_row_strdup(res, row, 1);
    d->hook_name = cs_store_row_strdup(res, row, 2);
    d->url = cs_store_row_strdup(res, row, 3);
    d->secret_file = cs_store_row_strdup(res, row, 4);
    d->secret_env = cs_store_row_strdup(res, row, 5);
    d->ca_file = cs_store_row_strdup(res, row, 6);
    d->timeout_ms = (uint32_t)cs_store_row_int(res, row, 7);
    d->max_attempts = (uint32_t)cs_store_row_int(res, row, 8);
    d->attempts = (uint32_t)cs_store_row_int(res, row, 9);
    d->body = cs_store_row_strdup(res, row, 10);
    d->next_unix_ms = cs_store_row_int(res, row, 11);
    d->event = (int)cs_store_row_int(res, row, 12);
    d->run_id = cs_store_row_int(res, row, 13);
    d->command = cs_store_row_strdup(res, row, 14);
}

void cs_store_hook_due_clear(struct cs_store_hook_due *d)
{
    free(d->job_name);
    free(d->hook_name);
    free(d->url);
    free(d->secret_file);
    free(d->secret_env);
    free(d->ca_file);
    free(d->body);
    free(d->command);
    memset(d, 0, sizeof(*d));
}

void cs_store_hook_due_free(struct cs_store_hook_due *due, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cs_store_hook_due_clear(&due[i]);
    free(due);
}

Csched__V1__HookDelivery *cs_store_hook_delivery_from_row(const PGresult *res, int row)
{
    Csched__V1__HookDelivery *d = cs_store_xmalloc(sizeof(*d));

    csched__v1__hook_delivery__init(d);
    d->id = cs_store_row_int(res, row, 0);
    d->job_name = cs_store_row_strdup(res, row, 1);
    d->hook_name = cs_store_row_strdup(res, row, 2);
    d->event = (Csched__V1__HookEvent)cs_store_row_int(res, row, 3);
    d->run_id = cs_store_row_int(res, row, 4);
    d->url = cs_store_row_strdup(res, row, 5);
    d->status = (Csched__V1__HookDeliveryStatus)cs_store_row_int(res, row, 6);
    d->created_unix_ms = cs_store_row_int(res, row, 7);
    d->attempts = (uint32_t)cs_store_row_int(res, row, 8);
    d->response_code = (int32_t)cs_store_row_int(res, row, 9);
    d->last_error = cs_store_row_strdup(res, row, 10);
    d->next_unix_ms = cs_store_row_int(res, row, 11);
    d->last_unix_ms = cs_store_row_int(res, row, 12);
    d->exit_code = (int32_t)cs_store_row_int(res, row, 13);
    d->term_signal = (int32_t)cs_store_row_int(res, row, 14);
    d->stdout_tail = cs_store_row_strdup(res, row, 15);
    d->stderr_tail = cs_store_row_strdup(res, row, 16);
    return d;
}

void cs_store_hook_deliveries_free(Csched__V1__HookDelivery **deliveries, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&deliveries[i]->base, NULL);
    free(deliveries);
}
