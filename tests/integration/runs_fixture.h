/* runs_fixture: what the end-to-end tests of runs (test_e2e_runs_*.c)
 * share, over the e2e fixture: a shell job run once to its end, a run's
 * state checked with its message shown, and a run whose command holds a
 * process group of two, for the tests that stop that group. Runs on the
 * test's main thread; helpers assert with cmocka. */
#ifndef CS_RUNS_FIXTURE_H
#define CS_RUNS_FIXTURE_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "e2e.h"

/* Creates a shell job named after prefix and runs it once to its end;
 * returns the final run, which the caller frees. */
Csched__V1__Run *run_shell(struct cs_e2e *e, const char *prefix, const char *shell);

/* Fails the test, naming both states and the run's message, unless run is
 * in state want. */
void assert_run_state(const Csched__V1__Run *run, Csched__V1__RunState want);

/* A run whose shell records its process group, then waits on a child so the
 * group holds two processes to stop; made by start_group_run in a fresh temp
 * dir, which the test removes. */
struct group_run {
    char dir[PATH_MAX];
    int64_t id;
    pid_t pgid;
};

/* Creates a job from job (which carries the limits: timeout, attempts) with
 * shell_head before the group shell, triggers it and waits until the
 * command's group exists. job's name and shell are set here and cleared. */
void start_group_run(struct cs_e2e *e, const char *prefix, const char *shell_head,
                     Csched__V1__Job *job, struct group_run *g);

#endif
