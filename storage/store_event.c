/* The events table: every state change, keyed by the sequence number the
 * server hands out. Inserting an event twice keeps the first, so a batch
 * sent again after a reconnect changes nothing. Its SQL and the mapping of
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
