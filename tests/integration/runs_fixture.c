/* runs_fixture: the shared helpers of the end-to-end tests of runs (see
 * runs_fixture.h). The group shell writes its own process group id, field 5
 * of /proc/$$/stat, to a file in the run's temp dir, where the test reads it
 * once the command has started. */
#include "runs_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "testlib.h"

Csched__V1__Run *run_shell(struct cs_e2e *e, const char *prefix, const char *shell)
{
    char name[64];

    cs_e2e_name(name, sizeof(name), prefix);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    return cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
}

void assert_run_state(const Csched__V1__Run *run, Csched__V1__RunState want)
{
    if (run->state != want)
        fail_msg("run %lld is %s, want %s (message \"%s\")", (long long)run->id,
                 cs_test_run_state_name(run->state), cs_test_run_state_name(want), run->message);
}

/* The shell records its process group, then waits on a child so the group
 * holds two processes to stop. */
#define GROUP_SHELL "cut -d' ' -f5 /proc/$$/stat > %s/pgid; sleep 30 & wait"

void start_group_run(struct cs_e2e *e, const char *prefix, const char *shell_head,
                     Csched__V1__Job *job, struct group_run *g)
{
    char shell[2 * PATH_MAX], path[PATH_MAX + 8], name[64];

    cs_e2e_tmpdir(g->dir);
    snprintf(shell, sizeof(shell), "%s" GROUP_SHELL, shell_head, g->dir);
    snprintf(path, sizeof(path), "%s/pgid", g->dir);
    cs_e2e_name(name, sizeof(name), prefix);
    job->name = name;
    job->shell = shell;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    job->name = job->shell = NULL;
    g->id = cs_e2e_trigger(e, name);
    g->pgid = cs_e2e_read_pgid(path, 5000);
}
