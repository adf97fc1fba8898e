/* The jobs table: a job is kept whole as its packed csched.v1.Job, with the
 * name, version and times beside it in columns. Its SQL and the mapping of
 * a job to and from a row; loop thread. */
#include <stdlib.h>

#include "store_internal.h"

/* first_run_id is set by the insert only: an update keeps the job's. */
const char cs_store_sql_job_put[] =
    "INSERT INTO jobs (name, spec, version, created_unix_ms, updated_unix_ms, first_run_id)"
    " VALUES ($1, $2, $3, $4, $5, $6)"
    " ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec, version = EXCLUDED.version,"
    " created_unix_ms = EXCLUDED.created_unix_ms, updated_unix_ms = EXCLUDED.updated_unix_ms";

const char cs_store_sql_job_delete[] = "DELETE FROM jobs WHERE name = $1";

/* With each job the state of its own last run to end (runs_job_name_id,
 * newest first: one probe a job). */
const char cs_store_sql_job_all[] =
    "SELECT name, spec, version, created_unix_ms, updated_unix_ms,"
    " (SELECT r.state FROM runs r WHERE r.job_name = j.name AND r.id >= j.first_run_id"
    " AND r.ended_unix_ms > 0 ORDER BY r.id DESC LIMIT 1)"
    " FROM jobs j ORDER BY name";

void cs_store_job_params(const Csched__V1__Job *job, int64_t first_run_id,
                         struct cs_store_params *p)
{
    size_t len = protobuf_c_message_get_packed_size(&job->base);
    uint8_t *buf = len > 0 ? cs_store_xmalloc(len) : NULL;

    if (len > 0)
        protobuf_c_message_pack(&job->base, buf);
    cs_store_params_text(p, job->name);
    cs_store_params_bytes(p, buf, len);
    cs_store_params_int(p, (int64_t)job->version);
    cs_store_params_int(p, job->created_unix_ms);
    cs_store_params_int(p, job->updated_unix_ms);
    cs_store_params_int(p, first_run_id);
}

Csched__V1__Job *cs_store_job_from_row(const struct cs_store_logger *log, const PGresult *res,
                                       int row)
{
    size_t len;
    const uint8_t *spec = cs_store_row_bytes(res, row, 1, &len);
    Csched__V1__Job *job = csched__v1__job__unpack(NULL, len, spec);

    if (job == NULL) {
        cs_store_log(log, CS_STORE_LOG_ERROR, "job %s: stored spec does not unpack (%zu bytes)",
                     PQgetvalue(res, row, 0), len);
        return NULL;
    }
    /* The columns are what the server last wrote; the spec carries the same
     * values, but the columns win so an operator's UPDATE is honoured. */
    job->version = (uint64_t)cs_store_row_int(res, row, 2);
    job->created_unix_ms = cs_store_row_int(res, row, 3);
    job->updated_unix_ms = cs_store_row_int(res, row, 4);
    return job;
}

void cs_store_jobs_free(Csched__V1__Job **jobs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&jobs[i]->base, NULL);
    free(jobs);
}
