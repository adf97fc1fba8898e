/* launch_build: an attempt's launch from its job's definition (see
 * launch_build.h). */
#include "launch_build.h"

#include "env.h"
#include "job.h"
#include "job_limits.h"
#include "minder_contract.h"
#include "retry.h"
#include "secret.h"
#include "util.h"

_Static_assert(CS_JOB_ARGS_MAX <= CS_MINDER_COMMAND_ARGS_MAX,
               "the minder refuses a command with more arguments than a job may have");

struct cs_launch *cs_launch_build(struct cs_sched *s, struct cs_run *run, uint32_t number,
                                  const char *dir, int64_t now_unix_ms)
{
    return cs_launch_build_from(s, run->job->spec, run->msg, number, dir,
                                cs_retry_attempt_timeout_ms(run, now_unix_ms));
}

struct cs_launch *cs_launch_build_from(struct cs_sched *s, const Csched__V1__Job *spec,
                                       const Csched__V1__Run *run, uint32_t number, const char *dir,
                                       uint64_t timeout_ms)
{
    CS_ASSERT_LOOP();
    struct cs_limits limits;
    cs_job_limits_get(spec->resources, &limits);
    struct cs_minder_cmd cmd = {
        .minder_path = s->minder_path,
        .dir = dir,
        .timeout_ms = timeout_ms,
        .grace_ms = cs_job_kill_grace_ms(spec),
        .stop_signal = cs_job_kill_signal(spec),
        .workdir = spec->working_dir,
        .lease_path = s->lease_path,
        .limits = &limits,
        .cgroups = &s->cgroups,
        .command = spec->command,
        .n_command = spec->n_command,
        .shell = spec->shell,
    };
    struct cs_launch *launch = cs_xcalloc(1, sizeof(*launch));
    launch->dir = cs_xstrdup(dir);
    launch->argv = cs_minder_argv_new(&cmd);
    CS_ASSERT(launch->argv != NULL);
    launch->envp = cs_env_build_attempt(s->base_env, spec, run, number);
    launch->run_as_user = cs_xstrdup(spec->run_as_user);
    launch->run_as_group = cs_xstrdup(spec->run_as_group);
    launch->default_user = s->job_user;
    launch->secrets = cs_secrets_copy(spec, &launch->n_secrets);
    launch->server_env = s->server_env;
    return launch;
}
