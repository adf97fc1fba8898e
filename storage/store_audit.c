/* The audit table: one row per change, trigger, cancel and refusal, keyed by
 * the id the server hands out. Inserting a row twice keeps the first, so a
 * batch sent again after a reconnect changes nothing. Its SQL and the
 * mapping of an entry to and from a row; the put is coalesced with a batch's
 * other audit rows as events are. Loop thread. */
#include <stdlib.h>

#include "store_internal.h"

const char cs_store_sql_audit_put[] =
    "INSERT INTO audit (id, at_unix_ms, method, identity, job_name, run_id, code, message)"
    " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[],"
    " $6::bigint[], $7::bigint[], $8::text[])"
    " ON CONFLICT (id) DO NOTHING";

const enum cs_store_col_type cs_store_audit_cols[CS_STORE_AUDIT_COLS] = {
    CS_STORE_COL_INT,  CS_STORE_COL_INT, CS_STORE_COL_TEXT, CS_STORE_COL_TEXT,
    CS_STORE_COL_TEXT, CS_STORE_COL_INT, CS_STORE_COL_INT,  CS_STORE_COL_TEXT,
};

/* Audit reads are rare (an operator's question), so one statement serves
 * every combination of filters; it reads one row past the limit to tell
 * whether more are left. */
const char cs_store_sql_audit_list[] =
    "SELECT id, at_unix_ms, method, identity, job_name, run_id, code, message FROM audit"
    " WHERE ($1::text = '' OR identity = $1::text) AND ($2::text = '' OR method = $2::text)"
    " AND ($3::text = '' OR job_name = $3::text) AND ($4::bigint = 0 OR run_id = $4::bigint)"
    " AND ($5::bigint = 0 OR at_unix_ms >= $5::bigint)"
    " AND ($6::bigint = 0 OR at_unix_ms < $6::bigint)"
    " AND ($7::bigint = 0 OR id < $7::bigint) ORDER BY id DESC LIMIT $8::bigint + 1";

#define STR_(x) #x
#define STR(x) STR_(x)
const char cs_store_sql_audit_expire[] =
    "WITH d AS (DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE at_unix_ms < $1::bigint"
    " ORDER BY id LIMIT " STR(CS_STORE_AUDIT_EXPIRE_ROWS) ") RETURNING 1)"
                                                          " SELECT count(*) FROM d";

void cs_store_audit_params(const Csched__V1__AuditEntry *entry, struct cs_store_params *p)
{
    cs_store_params_int(p, entry->id);
    cs_store_params_int(p, entry->at_unix_ms);
    cs_store_params_text(p, entry->method);
    cs_store_params_text(p, entry->identity);
    cs_store_params_text(p, entry->job_name);
    cs_store_params_int(p, entry->run_id);
    cs_store_params_int(p, entry->code);
    cs_store_params_text(p, entry->message);
}

static const char *or_empty(const char *s)
{
    return s != NULL ? s : "";
}

void cs_store_audit_filter_params(const struct cs_store_audit_filter *filter,
                                  struct cs_store_params *p)
{
    cs_store_params_text(p, or_empty(filter->identity));
    cs_store_params_text(p, or_empty(filter->method));
    cs_store_params_text(p, or_empty(filter->job_name));
    cs_store_params_int(p, filter->run_id);
    cs_store_params_int(p, filter->since_unix_ms);
    cs_store_params_int(p, filter->until_unix_ms);
    cs_store_params_int(p, filter->before_id);
    cs_store_params_int(p, filter->limit > 0 ? filter->limit : 100);
}

Csched__V1__AuditEntry *cs_store_audit_from_row(const PGresult *res, int row)
{
    Csched__V1__AuditEntry *e = cs_store_xmalloc(sizeof(*e));

    csched__v1__audit_entry__init(e);
    e->id = cs_store_row_int(res, row, 0);
    e->at_unix_ms = cs_store_row_int(res, row, 1);
    e->method = cs_store_row_strdup(res, row, 2);
    e->identity = cs_store_row_strdup(res, row, 3);
    e->job_name = cs_store_row_strdup(res, row, 4);
    e->run_id = cs_store_row_int(res, row, 5);
    e->code = (int32_t)cs_store_row_int(res, row, 6);
    e->message = cs_store_row_strdup(res, row, 7);
    return e;
}

void cs_store_audit_free(Csched__V1__AuditEntry **entries, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&entries[i]->base, NULL);
    free(entries);
}
