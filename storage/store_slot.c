/* The slots table: one row per (job, scheduled time) of a job's schedule,
 * saying whether it started a run or why not. Its SQL and the mapping of a
 * slot to and from a row; loop thread.
 *
 * A row is written in the same batch (one transaction) as the run it
 * makes, so a slot never has a run the database lost, nor a run two slots.
 * Writing a row again keeps a started slot as it is: a backfill may turn a
 * skipped slot into a started one, never the other way, but for the one
 * case that names the slot's own run: it waited past the starting deadline
 * and never started. */
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* One statement for every slot of a batch (store_bulk.c), each column an
 * array; the row's WHERE is the rule above. */
const char cs_store_sql_slot_put[] =
    "INSERT INTO slots (job_name, slot_unix_ms, outcome, skip_reason, run_id, due_unix_ms,"
    " decided_unix_ms, message, backfill)"
    " SELECT n, t, o::smallint, r::smallint, id, due, dec, m, b FROM unnest($1::text[],"
    " $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[],"
    " $8::text[], $9::boolean[]) AS u(n, t, o, r, id, due, dec, m, b)"
    " ON CONFLICT (job_name, slot_unix_ms) DO UPDATE SET outcome = EXCLUDED.outcome,"
    " skip_reason = EXCLUDED.skip_reason, run_id = EXCLUDED.run_id,"
    " due_unix_ms = EXCLUDED.due_unix_ms, decided_unix_ms = EXCLUDED.decided_unix_ms,"
    " message = EXCLUDED.message, backfill = EXCLUDED.backfill"
    " WHERE slots.outcome = 2 OR slots.run_id = EXCLUDED.run_id";

const enum cs_store_col_type cs_store_slot_cols[CS_STORE_SLOT_COLS] = {
    CS_STORE_COL_TEXT, CS_STORE_COL_INT, CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,
    CS_STORE_COL_INT,  CS_STORE_COL_INT, CS_STORE_COL_TEXT, CS_STORE_COL_BOOL,
};

bool cs_store_slot_replaces(const struct cs_store_params *old, const struct cs_store_params *new)
{
    return strcmp(old->values[CS_STORE_SLOT_COL_OUTCOME], "2") == 0 ||
           strcmp(old->values[CS_STORE_SLOT_COL_RUN_ID], new->values[CS_STORE_SLOT_COL_RUN_ID]) ==
               0;
}

/* Newest first; the lateness is read from the run's start (-1 before it).
 * $2..$4 bound the range and the outcome, 0 meaning none. */
const char cs_store_sql_slot_list[] =
    "SELECT s.job_name, s.slot_unix_ms, s.outcome, s.skip_reason, s.run_id, s.due_unix_ms,"
    " s.decided_unix_ms, s.message, s.backfill,"
    " CASE WHEN r.started_unix_ms > 0 THEN r.started_unix_ms - s.slot_unix_ms ELSE -1 END"
    " FROM slots s LEFT JOIN runs r ON r.id = s.run_id AND s.run_id <> 0"
    " WHERE s.job_name = $1 AND s.slot_unix_ms >= $2::bigint"
    " AND ($3::bigint = 0 OR s.slot_unix_ms <= $3::bigint)"
    " AND ($4::smallint = 0 OR s.outcome = $4::smallint)"
    " ORDER BY s.slot_unix_ms DESC LIMIT $5::bigint";

/* The newest slot of every job: where a start goes on from. */
const char cs_store_sql_slot_last[] =
    "SELECT DISTINCT ON (job_name) job_name, slot_unix_ms, outcome, skip_reason, run_id,"
    " due_unix_ms, decided_unix_ms, message, backfill, -1 FROM slots"
    " ORDER BY job_name, slot_unix_ms DESC";

void cs_store_slot_params(const Csched__V1__Slot *slot, struct cs_store_params *p)
{
    cs_store_params_text(p, slot->job_name);
    cs_store_params_int(p, slot->slot_unix_ms);
    cs_store_params_int(p, slot->outcome);
    cs_store_params_int(p, slot->skip_reason);
    cs_store_params_int(p, slot->run_id);
    cs_store_params_int(p, slot->due_unix_ms);
    cs_store_params_int(p, slot->decided_unix_ms);
    cs_store_params_text(p, slot->message);
    cs_store_params_bool(p, slot->backfill);
}

void cs_store_slot_filter_params(const struct cs_store_slot_filter *filter,
                                 struct cs_store_params *p)
{
    cs_store_params_text(p, filter->job_name);
    cs_store_params_int(p, filter->from_unix_ms);
    cs_store_params_int(p, filter->to_unix_ms);
    cs_store_params_int(p, filter->outcome);
    cs_store_params_int(p, filter->limit > 0 ? filter->limit : 100);
}

Csched__V1__Slot *cs_store_slot_from_row(const PGresult *res, int row)
{
    Csched__V1__Slot *s = cs_store_xmalloc(sizeof(*s));

    csched__v1__slot__init(s);
    s->job_name = cs_store_row_strdup(res, row, 0);
    s->slot_unix_ms = cs_store_row_int(res, row, 1);
    s->outcome = (Csched__V1__SlotOutcome)cs_store_row_int(res, row, 2);
    s->skip_reason = (Csched__V1__SkipReason)cs_store_row_int(res, row, 3);
    s->run_id = cs_store_row_int(res, row, 4);
    s->due_unix_ms = cs_store_row_int(res, row, 5);
    s->decided_unix_ms = cs_store_row_int(res, row, 6);
    s->message = cs_store_row_strdup(res, row, 7);
    s->backfill = cs_store_row_bool(res, row, 8);
    s->lateness_ms = cs_store_row_int(res, row, 9);
    return s;
}

void cs_store_slots_free(Csched__V1__Slot **slots, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&slots[i]->base, NULL);
    free(slots);
}
