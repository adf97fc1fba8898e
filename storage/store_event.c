/* The events table: every state change, keyed by its sequence number. On
 * the embedded database the server hands the numbers out, and inserting an
 * event twice keeps the first, so a batch sent again after a reconnect
 * changes nothing. On a shared one the database numbers them in commit
 * order, and a batch sent again skips what it finds committed (migration
 * 0022; store_batch.c reads the numbers back). Its SQL and the mapping of
 * an event to and from a row; loop thread. */
#include <stdlib.h>

#include "store_internal.h"

static const struct cs_store_outcome_cases event_outcome = {
    CSCHED__V1__EVENT__OUTCOME_EXIT_CODE,
    CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL,
};

/* Every event of a batch in one statement, one array per column (see
 * store_bulk.c). Of two rows with one seq, the first stays, as it would
 * inserted one at a time. */
const char cs_store_sql_event_put[] =
    "INSERT INTO events (seq, at_unix_ms, run_id, job_name, attempt, state, exit_code,"
    " term_signal, message, recovered)"
    " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[],"
    " $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[], $10::boolean[])"
    " ON CONFLICT (seq) DO NOTHING";

/* The same rows, $1 the writer's own count (local), numbered from the
 * highest seq committed: the batch's fence took the lock of the events'
 * order (csched_fence_ordered), so this statement's snapshot has every
 * event committed before it, and none can commit meanwhile. Locals at or
 * below the replica's last committed one (this epoch's) were committed by
 * an earlier sending of this batch and are left out. It answers that last
 * local and its seq (ll, sl), and the highest seq before this statement's
 * rows (b): a local x <= ll has seq sl - (ll - x), the k-th of the others
 * b + k. $11 and $12 are the replica's id and epoch. */
const char cs_store_sql_event_put_ordered[] =
    "WITH me AS (SELECT CASE WHEN r.event_epoch = $12 THEN r.event_local ELSE 0 END AS ll,"
    " CASE WHEN r.event_epoch = $12 THEN r.event_seq ELSE 0 END AS sl"
    " FROM replicas r WHERE r.id = $11 AND r.epoch = $12),"
    " fresh AS (SELECT u.*, row_number() OVER (ORDER BY u.lno) AS k"
    " FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[],"
    " $6::bigint[], $7::bigint[], $8::bigint[], $9::text[], $10::boolean[])"
    " AS u(lno, at_unix_ms, run_id, job_name, attempt, state, exit_code, term_signal, message,"
    " recovered), me WHERE u.lno > me.ll),"
    " top AS (SELECT coalesce(max(seq), 0) AS b FROM events),"
    " ins AS (INSERT INTO events (seq, at_unix_ms, run_id, job_name, attempt, state, exit_code,"
    " term_signal, message, recovered)"
    " SELECT top.b + f.k, f.at_unix_ms, f.run_id, f.job_name, f.attempt, f.state, f.exit_code,"
    " f.term_signal, f.message, f.recovered FROM fresh f, top),"
    " mark AS (UPDATE replicas r SET event_epoch = $12, event_local = f.l, event_seq = top.b + f.n"
    " FROM (SELECT max(lno) AS l, count(*) AS n FROM fresh) f, top"
    " WHERE r.id = $11 AND r.epoch = $12 AND f.n > 0)"
    " SELECT me.ll, me.sl, top.b FROM me, top";

const enum cs_store_col_type cs_store_event_cols[CS_STORE_EVENT_COLS] = {
    CS_STORE_COL_INT, CS_STORE_COL_INT, CS_STORE_COL_INT, CS_STORE_COL_TEXT, CS_STORE_COL_INT,
    CS_STORE_COL_INT, CS_STORE_COL_INT, CS_STORE_COL_INT, CS_STORE_COL_TEXT, CS_STORE_COL_BOOL,
};

/* As in store_run.c, one statement per shape keeps the indexes usable. */
#define EVENT_COLUMNS                                                                              \
    "SELECT seq, at_unix_ms, run_id, job_name, attempt, state, exit_code, term_signal, message,"   \
    " recovered"

const char cs_store_sql_event_list[] =
    EVENT_COLUMNS " FROM events WHERE seq > $1::bigint ORDER BY seq LIMIT $2::bigint";

const char cs_store_sql_event_list_job[] =
    EVENT_COLUMNS " FROM events WHERE seq > $1::bigint AND job_name = $3::text"
                  " ORDER BY seq LIMIT $2::bigint";

void cs_store_event_params(const Csched__V1__Event *event, struct cs_store_params *p)
{
    cs_store_params_int(p, event->seq);
    cs_store_params_int(p, event->at_unix_ms);
    cs_store_params_int(p, event->run_id);
    cs_store_params_text(p, event->job_name);
    cs_store_params_int(p, event->attempt);
    cs_store_params_int(p, event->state);
    cs_store_params_outcome(p, &event_outcome, event->outcome_case, event->exit_code,
                            event->term_signal);
    cs_store_params_text(p, event->message);
    cs_store_params_bool(p, event->recovered);
}

Csched__V1__Event *cs_store_event_from_row(const PGresult *res, int row)
{
    Csched__V1__Event *e = cs_store_xmalloc(sizeof(*e));

    csched__v1__event__init(e);
    e->seq = cs_store_row_int(res, row, 0);
    e->at_unix_ms = cs_store_row_int(res, row, 1);
    e->run_id = cs_store_row_int(res, row, 2);
    e->job_name = cs_store_row_strdup(res, row, 3);
    e->attempt = (uint32_t)cs_store_row_int(res, row, 4);
    e->state = (Csched__V1__RunState)cs_store_row_int(res, row, 5);
    e->outcome_case = (Csched__V1__Event__OutcomeCase)cs_store_row_outcome(
        res, row, 6, &event_outcome, &e->exit_code, &e->term_signal);
    e->message = cs_store_row_strdup(res, row, 8);
    e->recovered = cs_store_row_bool(res, row, 9);
    return e;
}

void cs_store_events_free(Csched__V1__Event **events, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&events[i]->base, NULL);
    free(events);
}
