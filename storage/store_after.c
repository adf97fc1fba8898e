/* The dependency_causes table (migration 0017): what became of each cause
 * of a job's runs after its upstreams. Its SQL and the mapping of its rows;
 * loop thread.
 *
 * A row is put in the batch of the upstream run's end that changes it,
 * tied to that end's writes and to the run it makes (store_write.c), so
 * they commit in one transaction. A decided row is never changed again:
 * the key (job_name, cause) and the WHERE below keep a downstream run to
 * one per cause, whatever is sent again after a reconnect. */
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* The cause's row (a waiting one only ever gains an outcome) and, when $8
 * names one, the upstream end that changed it, inserted once. */
const char cs_store_sql_after_put[] =
    "WITH c AS (INSERT INTO dependency_causes (job_name, cause, outcome, run_id,"
    " created_unix_ms, decided_unix_ms, body)"
    " VALUES ($1, $2, $3::smallint, $4::bigint, $5::bigint, $6::bigint, $7::bytea)"
    " ON CONFLICT (job_name, cause) DO UPDATE SET outcome = EXCLUDED.outcome,"
    " run_id = EXCLUDED.run_id, decided_unix_ms = EXCLUDED.decided_unix_ms, body = EXCLUDED.body"
    " WHERE dependency_causes.outcome = 1)"
    " INSERT INTO dependency_upstreams (job_name, cause, upstream_job, run_id, state, started,"
    " recorded_unix_ms)"
    " SELECT $1::text, $2::text, $8::text, $9::bigint, $10::smallint, $11::boolean, $5::bigint"
    " WHERE $8::text <> ''"
    " ON CONFLICT DO NOTHING";

/* A cause's rows, one per upstream recorded (or one with NULLs for none),
 * in the order of the causes. */
#define CAUSE_ROWS                                                                                 \
    "SELECT c.body, u.upstream_job, u.run_id, u.state, u.started FROM dependency_causes c"         \
    " LEFT JOIN dependency_upstreams u USING (job_name, cause)"

/* What a start takes back: every cause still waiting, and those decided
 * since $1 (an upstream's late end for one of those is not a new cause). */
const char cs_store_sql_after_load[] =
    CAUSE_ROWS " WHERE c.outcome = 1 OR c.decided_unix_ms >= $1::bigint"
               " ORDER BY c.job_name, c.cause, u.recorded_unix_ms, u.upstream_job";

const char cs_store_sql_after_list[] =
    CAUSE_ROWS " WHERE c.cause IN (SELECT cause FROM dependency_causes WHERE job_name = $1"
               "   ORDER BY created_unix_ms DESC, cause DESC LIMIT $2::bigint)"
               " AND c.job_name = $1"
               " ORDER BY c.created_unix_ms DESC, c.cause DESC, u.recorded_unix_ms, u.upstream_job";

void cs_store_after_params(const Csched__V1__DependencyCause *c,
                           const Csched__V1__DependencyUpstream *up, struct cs_store_params *p)
{
    /* The upstreams are rows of their own. */
    Csched__V1__DependencyCause body = *c;
    body.n_upstreams = 0;
    body.upstreams = NULL;
    size_t len = csched__v1__dependency_cause__get_packed_size(&body);
    uint8_t *buf = cs_store_xmalloc(len ? len : 1);

    csched__v1__dependency_cause__pack(&body, buf);
    cs_store_params_text(p, c->job_name);
    cs_store_params_text(p, c->cause);
    cs_store_params_int(p, c->outcome);
    cs_store_params_int(p, c->run_id);
    cs_store_params_int(p, c->created_unix_ms);
    cs_store_params_int(p, c->decided_unix_ms);
    cs_store_params_bytes(p, buf, len);
    cs_store_params_text(p, up != NULL ? up->job : "");
    cs_store_params_int(p, up != NULL ? up->run_id : 0);
    cs_store_params_int(p, up != NULL ? up->state : 0);
    cs_store_params_bool(p, up != NULL && up->started);
}

static void upstream_add(Csched__V1__DependencyCause *c, const PGresult *res, int row)
{
    Csched__V1__DependencyUpstream *u = cs_store_xmalloc(sizeof(*u));

    csched__v1__dependency_upstream__init(u);
    u->job = cs_store_row_strdup(res, row, 1);
    u->run_id = cs_store_row_int(res, row, 2);
    u->state = (Csched__V1__RunState)cs_store_row_int(res, row, 3);
    u->started = cs_store_row_bool(res, row, 4);
    c->upstreams = cs_store_xrealloc(c->upstreams, (c->n_upstreams + 1) * sizeof(*c->upstreams));
    c->upstreams[c->n_upstreams++] = u;
}

size_t cs_store_after_from_rows(const struct cs_store_logger *log, const PGresult *res,
                                Csched__V1__DependencyCause ***out)
{
    size_t n = (size_t)PQntuples(res), kept = 0;
    Csched__V1__DependencyCause **causes = n > 0 ? cs_store_xmalloc(n * sizeof(*causes)) : NULL;

    for (size_t i = 0; i < n; i++) {
        size_t len;
        const uint8_t *buf = cs_store_row_bytes(res, (int)i, 0, &len);
        Csched__V1__DependencyCause *c =
            buf != NULL ? csched__v1__dependency_cause__unpack(NULL, len, buf) : NULL;

        if (c == NULL) {
            cs_store_log(log, CS_STORE_LOG_ERROR,
                         "dependency_causes: a stored row does not unpack (%zu bytes)",
                         buf != NULL ? len : 0);
            continue;
        }
        /* The rows of one cause come together: its first row makes it. */
        Csched__V1__DependencyCause *last = kept > 0 ? causes[kept - 1] : NULL;
        if (last != NULL && strcmp(last->job_name, c->job_name) == 0 &&
            strcmp(last->cause, c->cause) == 0) {
            csched__v1__dependency_cause__free_unpacked(c, NULL);
            c = last;
        } else {
            causes[kept++] = c;
        }
        if (!cs_store_row_is_null(res, (int)i, 1))
            upstream_add(c, res, (int)i);
    }
    *out = causes;
    return kept;
}

void cs_store_after_causes_free(Csched__V1__DependencyCause **causes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        csched__v1__dependency_cause__free_unpacked(causes[i], NULL);
    free(causes);
}
