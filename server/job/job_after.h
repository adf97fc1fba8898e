/* job_after: the rules of a job's after list (docs/dependencies.md): each
 * upstream a valid job name, named once, not the job itself, at most
 * CS_JOB_AFTER_MAX of them; and the cycle a list would close among the
 * other jobs' lists. Pure code, any thread. */
#ifndef CS_JOB_AFTER_H
#define CS_JOB_AFTER_H

#include <stdbool.h>

#include "csched/v1/scheduler.pb-c.h"
#include "util.h"

#define CS_JOB_AFTER_MAX 100

/* Checks spec's after list alone: 0 or -EINVAL with err naming the entry. */
int cs_job_after_validate(const Csched__V1__Job *spec, struct cs_err *err);
/* The job named name as it stands (borrowed), or NULL when there is none. */
typedef const Csched__V1__Job *(*cs_job_lookup_fn)(void *ctx, const char *name);
/* 0, or -EINVAL with err naming job.after and the cycle that spec's after
 * list closes ("a -> b -> a": a runs after b, b after a) among the jobs
 * lookup finds, spec standing in for the job of its name. */
int cs_job_after_find_cycle(const Csched__V1__Job *spec, cs_job_lookup_fn lookup, void *ctx,
                            struct cs_err *err);
/* Whether an upstream run that ended in state (with started_unix_ms, 0 for
 * a run that never started) meets on. */
bool cs_job_after_met(Csched__V1__DependencyOn on, Csched__V1__RunState state, bool started);
/* "succeeded", "failed" or "any": on as job files write it. */
const char *cs_job_after_on_name(Csched__V1__DependencyOn on);

#endif
