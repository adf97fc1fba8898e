#include "job_table.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Binary search: the index of name, or where it would go. */
static size_t lower_bound(const struct cs_sched *sched, const char *name)
{
    size_t lo = 0, hi = sched->n_jobs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(sched->jobs[mid]->spec->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct cs_job *cs_job_find(const struct cs_sched *sched, const char *name)
{
    CS_ASSERT_LOOP();
    size_t i = lower_bound(sched, name);
    if (i < sched->n_jobs && strcmp(sched->jobs[i]->spec->name, name) == 0)
        return sched->jobs[i];
    return NULL;
}

size_t cs_job_index_after(const struct cs_sched *sched, const char *name)
{
    CS_ASSERT_LOOP();
    size_t i = lower_bound(sched, name);
    if (i < sched->n_jobs && strcmp(sched->jobs[i]->spec->name, name) == 0)
        i++;
    return i;
}

struct cs_job *cs_job_insert(struct cs_sched *sched, Csched__V1__Job *spec)
{
    CS_ASSERT_LOOP();
    size_t i = lower_bound(sched, spec->name);
    CS_ASSERT(i == sched->n_jobs || strcmp(sched->jobs[i]->spec->name, spec->name) != 0);
    if (sched->n_jobs == sched->cap_jobs) {
        sched->cap_jobs = sched->cap_jobs ? sched->cap_jobs * 2 : 64;
        sched->jobs = cs_xrealloc(sched->jobs, sched->cap_jobs * sizeof(*sched->jobs));
    }
    memmove(&sched->jobs[i + 1], &sched->jobs[i], (sched->n_jobs - i) * sizeof(*sched->jobs));
    struct cs_job *job = cs_xcalloc(1, sizeof(*job));
    job->spec = spec;
    job->heap_index = CS_NOT_IN_HEAP;
    job->slot.heap_index = CS_NOT_IN_HEAP;
    sched->jobs[i] = job;
    sched->n_jobs++;
    sched->jobs_generation++;
    return job;
}

void cs_job_replace_spec(struct cs_sched *sched, struct cs_job *job, Csched__V1__Job *spec)
{
    CS_ASSERT_LOOP();
    sched->jobs_generation++;
    protobuf_c_message_free_unpacked(&job->spec->base, NULL);
    job->spec = spec;
}

static void job_free(struct cs_job *job)
{
    protobuf_c_message_free_unpacked(&job->spec->base, NULL);
    free(job->schedule);
    free(job);
}

void cs_job_remove(struct cs_sched *sched, struct cs_job *job)
{
    CS_ASSERT_LOOP();
    CS_ASSERT(job->active == 0 && job->heap_index == CS_NOT_IN_HEAP);
    size_t i = lower_bound(sched, job->spec->name);
    CS_ASSERT(i < sched->n_jobs && sched->jobs[i] == job);
    memmove(&sched->jobs[i], &sched->jobs[i + 1], (sched->n_jobs - i - 1) * sizeof(*sched->jobs));
    sched->n_jobs--;
    sched->jobs_generation++;
    job_free(job);
}

void cs_job_free_all(struct cs_sched *sched)
{
    CS_ASSERT_LOOP();
    for (size_t i = 0; i < sched->n_jobs; i++)
        job_free(sched->jobs[i]);
    free(sched->jobs);
    sched->jobs = NULL;
    sched->n_jobs = sched->cap_jobs = 0;
    cs_zones_free(&sched->zones);
}
