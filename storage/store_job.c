/* The jobs table: a job is kept whole as its packed csched.v1.Job, with the
 * name, version and times beside it in columns. */
#define CS_LOG_COMPONENT "store"
#include <stdlib.h>

#include "log.h"
#include "store_internal.h"
#include "util.h"

const char cs_sql_job_put[] =
    "INSERT INTO jobs (name, spec, version, created_unix_ms, updated_unix_ms)"
    " VALUES ($1, $2, $3, $4, $5)"
    " ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec, version = EXCLUDED.version,"
    " created_unix_ms = EXCLUDED.created_unix_ms, updated_unix_ms = EXCLUDED.updated_unix_ms";

const char cs_sql_job_delete[] = "DELETE FROM jobs WHERE name = $1";

const char cs_sql_job_all[] =
    "SELECT name, spec, version, created_unix_ms, updated_unix_ms FROM jobs ORDER BY name";

void cs_job_params(const Csched__V1__Job *job, struct cs_params *p)
{
    size_t len = protobuf_c_message_get_packed_size(&job->base);
    uint8_t *buf = len > 0 ? cs_xmalloc(len) : NULL;

    if (len > 0)
        protobuf_c_message_pack(&job->base, buf);
    cs_params_text(p, job->name);
    cs_params_bytes(p, buf, len);
    cs_params_int(p, (int64_t)job->version);
    cs_params_int(p, job->created_unix_ms);
    cs_params_int(p, job->updated_unix_ms);
}

Csched__V1__Job *cs_job_from_row(const PGresult *res, int row)
{
    size_t len;
    const uint8_t *spec = cs_row_bytes(res, row, 1, &len);
    Csched__V1__Job *job = csched__v1__job__unpack(NULL, len, spec);

    if (job == NULL) {
        cs_log_error("job %s: stored spec does not unpack (%zu bytes)", PQgetvalue(res, row, 0),
                     len);
        return NULL;
    }
    /* The columns are what the server last wrote; the spec carries the same
     * values, but the columns win so an operator's UPDATE is honoured. */
    job->version = (uint64_t)cs_row_int(res, row, 2);
    job->created_unix_ms = cs_row_int(res, row, 3);
    job->updated_unix_ms = cs_row_int(res, row, 4);
    return job;
}

void cs_store_job_put(struct cs_store *store, const Csched__V1__Job *job, cs_store_done_cb cb,
                      void *arg)
{
    struct cs_store_op *op =
        cs_store_op_new(store, CS_STMT_JOB_PUT, true, cs_store_write_done, (void (*)(void))cb, arg);

    cs_job_params(job, &op->params);
    cs_store_op_submit(store, op);
}

void cs_store_job_delete(struct cs_store *store, const char *name, cs_store_done_cb cb, void *arg)
{
    struct cs_store_op *op = cs_store_op_new(store, CS_STMT_JOB_DELETE, true, cs_store_write_done,
                                             (void (*)(void))cb, arg);

    cs_params_text(&op->params, name);
    cs_store_op_submit(store, op);
}

void cs_store_jobs_free(Csched__V1__Job **jobs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&jobs[i]->base, NULL);
    free(jobs);
}
