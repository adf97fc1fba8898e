/* The events table: every state change, keyed by the sequence number the
 * server hands out. Inserting an event twice keeps the first, so a batch
 * sent again after a reconnect changes nothing. */
#define CS_LOG_COMPONENT "store"
#include <stdlib.h>

#include "store_internal.h"
#include "util.h"

/* Every event of a batch in one statement, one array per column (see
 * store_bulk.c). Of two rows with one seq, the first stays, as it would
 * inserted one at a time. */
const char cs_sql_event_put[] =
    "INSERT INTO events (seq, at_unix_ms, run_id, job_name, attempt, state, exit_code,"
    " term_signal, message)"
    " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[],"
    " $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[])"
    " ON CONFLICT (seq) DO NOTHING";

const enum cs_col_type cs_event_cols[CS_EVENT_COLS] = {
    CS_COL_INT, CS_COL_INT, CS_COL_INT, CS_COL_TEXT, CS_COL_INT,
    CS_COL_INT, CS_COL_INT, CS_COL_INT, CS_COL_TEXT,
};

/* As in store_run.c, one statement per shape keeps the indexes usable. */
#define EVENT_COLUMNS                                                                              \
    "SELECT seq, at_unix_ms, run_id, job_name, attempt, state, exit_code, term_signal, message"

const char cs_sql_event_list[] =
    EVENT_COLUMNS " FROM events WHERE seq > $1::bigint ORDER BY seq LIMIT $2::bigint";

const char cs_sql_event_list_job[] =
    EVENT_COLUMNS " FROM events WHERE seq > $1::bigint AND job_name = $3::text"
                  " ORDER BY seq LIMIT $2::bigint";

void cs_event_params(const Csched__V1__Event *event, struct cs_params *p)
{
    cs_params_int(p, event->seq);
    cs_params_int(p, event->at_unix_ms);
    cs_params_int(p, event->run_id);
    cs_params_text(p, event->job_name);
    cs_params_int(p, event->attempt);
    cs_params_int(p, event->state);
    if (event->outcome_case == CSCHED__V1__EVENT__OUTCOME_EXIT_CODE)
        cs_params_int(p, event->exit_code);
    else
        cs_params_null(p);
    if (event->outcome_case == CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL)
        cs_params_int(p, event->term_signal);
    else
        cs_params_null(p);
    cs_params_text(p, event->message);
}

Csched__V1__Event *cs_event_from_row(const PGresult *res, int row)
{
    Csched__V1__Event *e = cs_xmalloc(sizeof(*e));

    csched__v1__event__init(e);
    e->seq = cs_row_int(res, row, 0);
    e->at_unix_ms = cs_row_int(res, row, 1);
    e->run_id = cs_row_int(res, row, 2);
    e->job_name = cs_row_strdup(res, row, 3);
    e->attempt = (uint32_t)cs_row_int(res, row, 4);
    e->state = (Csched__V1__RunState)cs_row_int(res, row, 5);
    if (!cs_row_is_null(res, row, 6)) {
        e->outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
        e->exit_code = (int32_t)cs_row_int(res, row, 6);
    } else if (!cs_row_is_null(res, row, 7)) {
        e->outcome_case = CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL;
        e->term_signal = (int32_t)cs_row_int(res, row, 7);
    }
    e->message = cs_row_strdup(res, row, 8);
    return e;
}

void cs_store_event_put(struct cs_store *store, const Csched__V1__Event *event, cs_store_done_cb cb,
                        void *arg)
{
    struct cs_store_op *op = cs_store_op_new(store, CS_STMT_EVENT_PUT, true, cs_store_write_done,
                                             (void (*)(void))cb, arg);

    cs_event_params(event, &op->params);
    cs_store_op_submit(store, op);
}

static void event_list_done(struct cs_store_op *op, int status, const PGresult *res)
{
    cs_store_events_cb cb = (cs_store_events_cb)op->cb;
    Csched__V1__Event **events = NULL;
    size_t n = 0;

    if (status == 0) {
        n = (size_t)PQntuples(res);
        if (n > 0)
            events = cs_xmalloc(n * sizeof(*events));
        for (size_t i = 0; i < n; i++)
            events[i] = cs_event_from_row(res, (int)i);
    }
    if (cb != NULL)
        cb(op->arg, status, events, n);
    else
        cs_store_events_free(events, n);
}

void cs_store_event_list(struct cs_store *store, int64_t after_seq, const char *job_name,
                         uint32_t limit, cs_store_events_cb cb, void *arg)
{
    struct cs_store_op *op =
        cs_store_op_new(store, CS_STMT_EVENT_LIST, false, event_list_done, (void (*)(void))cb, arg);

    cs_params_int(&op->params, after_seq);
    cs_params_int(&op->params, limit > 0 ? limit : 100);
    if (job_name != NULL && job_name[0] != '\0') {
        op->stmt = CS_STMT_EVENT_LIST_JOB;
        cs_params_text(&op->params, job_name);
    }
    cs_store_op_submit(store, op);
}

void cs_store_events_free(Csched__V1__Event **events, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&events[i]->base, NULL);
    free(events);
}
