/* hook_command: the job a command hook runs as, and its launch (see
 * hook_command.h). Loop thread. */
#include "hook_command.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "hook_spec.h"
#include "job.h"
#include "job_limits.h"
#include "json_codec.h"
#include "minder_contract.h"
#include "secret.h"

_Static_assert(CS_HOOK_COMMAND_ARGS_MAX <= CS_MINDER_COMMAND_ARGS_MAX,
               "the minder refuses a command with more arguments than a hook may have");

/* The event's variables, at most this many. */
#define OUTCOME_VARS 16

struct outcome_env {
    Csched__V1__Job__EnvEntry entries[OUTCOME_VARS];
    char values[OUTCOME_VARS][32];
    size_t n;
};

static void put(struct outcome_env *o, const char *key, const char *value)
{
    CS_ASSERT(o->n < OUTCOME_VARS);
    Csched__V1__Job__EnvEntry *e = &o->entries[o->n++];
    csched__v1__job__env_entry__init(e);
    e->key = (char *)key;
    e->value = (char *)value;
}

static void put_int(struct outcome_env *o, const char *key, int64_t value)
{
    char *buf = o->values[o->n];
    (void)snprintf(buf, sizeof(o->values[0]), "%" PRId64, value);
    put(o, key, buf);
}

/* What the command is told: the body's fields, as variables. */
static void outcome_vars(struct outcome_env *o, const struct cs_hook_body *b, char *link,
                         size_t cap)
{
    const Csched__V1__Run *run = b->run;
    put(o, "CSCHED_HOOK_EVENT", cs_hook_event_name(b->event));
    put(o, "CSCHED_HOOK_NAME", b->hook_name);
    put(o, "CSCHED_HOOK_DELIVERY", b->delivery);
    put(o, "CSCHED_JOB", run->job_name);
    put_int(o, "CSCHED_RUN_ID", run->id);
    put_int(o, "CSCHED_ATTEMPT", (int64_t)run->n_attempts);
    put(o, "CSCHED_OUTCOME", cs_hook_state_name(run->state));
    if (run->outcome_case == CSCHED__V1__RUN__OUTCOME_EXIT_CODE)
        put_int(o, "CSCHED_EXIT_CODE", run->exit_code);
    if (run->outcome_case == CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL)
        put_int(o, "CSCHED_TERM_SIGNAL", run->term_signal);
    put(o, "CSCHED_MESSAGE", run->message);
    put(o, "CSCHED_TRIGGERED_BY", run->triggered_by);
    put_int(o, "CSCHED_STARTED_UNIX_MS", run->started_unix_ms);
    put_int(o, "CSCHED_ENDED_UNIX_MS", run->ended_unix_ms);
    if (b->console_url != NULL) {
        cs_hook_console_link(b->console_url, run->id, link, cap);
        put(o, "CSCHED_CONSOLE_URL", link);
    }
}

char *cs_hook_command_new(const Csched__V1__Job *spec, const Csched__V1__Hook *hook,
                          const struct cs_hook_body *b)
{
    struct outcome_env o = {.n = 0};
    char link[2048];
    outcome_vars(&o, b, link, sizeof(link));

    /* The job's own env first, the event's after it: cs_env_build lets the
     * later win, so a job cannot hide what happened behind its own env. */
    size_t n_env = spec->n_env + o.n;
    Csched__V1__Job__EnvEntry **env = cs_xmalloc(n_env * sizeof(*env));
    for (size_t i = 0; i < spec->n_env; i++)
        env[i] = spec->env[i];
    for (size_t i = 0; i < o.n; i++)
        env[spec->n_env + i] = &o.entries[i];

    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    job.name = spec->name;
    job.command = hook->command;
    job.n_command = hook->n_command;
    job.shell = hook->shell;
    job.env = env;
    job.n_env = n_env;
    job.working_dir = spec->working_dir;
    job.run_as_user = spec->run_as_user;
    job.run_as_group = spec->run_as_group;
    job.secret_env = spec->secret_env;
    job.n_secret_env = spec->n_secret_env;
    job.kill_grace_seconds = spec->kill_grace_seconds;
    job.kill_signal = spec->kill_signal;
    job.resources = spec->resources;

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CS_ASSERT(f != NULL);
    cs_json_write_message(f, &job.base);
    CS_ASSERT(fclose(f) == 0);
    free(env);
    return text;
}

int cs_hook_command_launch(const struct cs_hook_command_config *c,
                           const struct cs_store_hook_due *due, int64_t now_unix_ms,
                           struct cs_launch **out, struct cs_err *err)
{
    ProtobufCMessage *msg = NULL;
    struct cs_json_error jerr = {0};
    if (cs_json_read_message(due->command, strlen(due->command), &csched__v1__job__descriptor, &msg,
                             &jerr) != 0)
        return cs_err_set(err, -EINVAL, "the delivery's command is not a job: %s: %s", jerr.field,
                          jerr.why);
    const Csched__V1__Job *job = (const Csched__V1__Job *)msg;
    char dir[4096];
    (void)snprintf(dir, sizeof(dir), "%s/%s/%" PRId64 "-%" PRIu32 "-%" PRId64, c->state_dir,
                   CS_HOOKS_DIR, due->id, due->attempts + 1, now_unix_ms);
    struct cs_limits limits;
    cs_job_limits_get(job->resources, &limits);
    struct cs_minder_cmd cmd = {
        .minder_path = c->minder_path,
        .dir = dir,
        .timeout_ms = due->timeout_ms,
        .grace_ms = cs_job_kill_grace_ms(job),
        .stop_signal = cs_job_kill_signal(job),
        .workdir = job->working_dir,
        .lease_path = c->lease_path,
        .limits = &limits,
        .cgroups = c->cgroups,
        .command = job->command,
        .n_command = job->n_command,
        .shell = job->shell,
    };
    struct cs_launch *launch = cs_xcalloc(1, sizeof(*launch));
    launch->dir = cs_xstrdup(dir);
    launch->argv = cs_minder_argv_new(&cmd);
    CS_ASSERT(launch->argv != NULL);
    struct cs_env_source env = {(struct cs_kv *const *)job->env, job->n_env};
    launch->envp = cs_env_build(c->base_env, &env, 1);
    launch->run_as_user = cs_xstrdup(job->run_as_user);
    launch->run_as_group = cs_xstrdup(job->run_as_group);
    launch->default_user = c->job_user;
    launch->secrets = cs_secrets_copy(job, &launch->n_secrets);
    launch->server_env = c->server_env;
    protobuf_c_message_free_unpacked(msg, NULL);
    *out = launch;
    return 0;
}
