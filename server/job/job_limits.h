/* job_limits: a job's ResourceLimits: the values it may take, what the
 * minder is told of them, and whether this host can enforce them (the
 * cgroups cschedd found at start, host/limits_probe_work.c). Pure code,
 * any thread. docs/limits.md. */
#ifndef CS_JOB_LIMITS_H
#define CS_JOB_LIMITS_H

#include <stdbool.h>

#include "attempt_limits.h"
#include "csched/v1/scheduler.pb-c.h"
#include "util.h"

/* Checks each value against its bounds; 0, or -EINVAL naming the field
 * ("job.resources.memory_bytes: ..."). r may be NULL (no limits). */
int cs_job_limits_validate(const Csched__V1__ResourceLimits *r, struct cs_err *err);

/* The values of r (NULL: none) as the minder takes them. */
void cs_job_limits_get(const Csched__V1__ResourceLimits *r, struct cs_limits *out);

/* Whether this host enforces every limit r sets, with the cgroup parents
 * p; 0, or under strict -EBUSY (FAILED_PRECONDITION) naming the first
 * limit it does not and why. Under warn, 0: the attempts record it. */
int cs_job_limits_check(const Csched__V1__ResourceLimits *r, const struct cs_cgroup_parents *p,
                        bool strict, struct cs_err *err);

#endif
