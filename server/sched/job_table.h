/* job_table: the loop's table of jobs, sorted by name so ListJobs pages in a
 * stable order. Loop thread only. */
#ifndef CS_JOB_TABLE_H
#define CS_JOB_TABLE_H

#include "sched_state.h"

struct cs_job *cs_job_find(const struct cs_sched *sched, const char *name);
/* Index of the first job whose name sorts after name ("" for the start). */
size_t cs_job_index_after(const struct cs_sched *sched, const char *name);
/* Takes ownership of spec. name must not be present. */
struct cs_job *cs_job_insert(struct cs_sched *sched, Csched__V1__Job *spec);
/* Replaces the spec (taking ownership of the new one, freeing the old). */
void cs_job_replace_spec(struct cs_sched *sched, struct cs_job *job, Csched__V1__Job *spec);
/* Removes and frees a job with no active runs. */
void cs_job_remove(struct cs_sched *sched, struct cs_job *job);
/* Frees every job, then the zones their schedules borrowed. */
void cs_job_free_all(struct cs_sched *sched);

#endif
