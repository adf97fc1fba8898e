/* limits_probe: which cgroups can hold the jobs' resource limits on this
 * host, found once at start (blocking file work, before the loop runs):
 * a delegated cgroup v2 subtree with the memory and pids controllers
 * first, else writable cgroup v1 memory and pids hierarchies, else none
 * (rlimits alone). docs/limits.md. */
#ifndef CS_LIMITS_PROBE_H
#define CS_LIMITS_PROBE_H

#include <stddef.h>

#include "attempt_limits.h"

/* Fills *out with the cgroup parents the attempts' cgroups go in (made
 * here, as "csched" below cschedd's own cgroup, or its parent's when
 * cschedd's own holds processes), and mechanism with what is in force and
 * why the rest is not, for a person (the start's log line, GetStats).
 * Never fails: what cannot be used is said in mechanism. Blocking. */
void cs_limits_probe(struct cs_cgroup_parents *out, char *mechanism, size_t cap);

#endif
