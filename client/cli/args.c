/* Flag parsing for csched: the global flags, the loops of the commands'
 * flags, and the job flags shared by "job create" and "job update", which
 * take the connection's (connect.c), the retry's (jobstop.c) and the
 * schedule's (schedule.c) flags too. The top of the flag code: nothing
 * below it calls back in.
 *
 * Single-threaded; messages are built on the heap in protobuf-c's unpacked
 * layout (see cli.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cs_cli_init(struct cs_cli *cli)
{
    const char *env = getenv("CSCHED_SERVER");

    memset(cli, 0, sizeof(*cli));
    cli->server = env;
    /* A socket path too long for the buffer leaves the target empty, which
     * cs_client_new refuses with -EINVAL. */
    if (env == NULL || env[0] == '\0') {
        (void)cs_client_default_target(cli->default_server, sizeof(cli->default_server));
        cli->server = cli->default_server;
    }
    cli->format = CS_FORMAT_TABLE;
    cli->out = stdout;
    cli->err = stderr;
}

int cs_cli_global_flag(struct cs_cli *cli, int argc, char **argv, int *i, struct cs_cli_err *err)
{
    const char *v;

    int rc = cs_cli_security_flag(cli, argc, argv, i, err);

    if (rc != CS_CLI_FLAG_NOT_MINE)
        return rc;
    if (strcmp(argv[*i], "--wait-for-ready") == 0) {
        cli->wait_for_ready = true;
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--server", argc, argv, i, &v)) {
        if (v == NULL || v[0] == '\0')
            return cs_cli_err_set(err, -EINVAL, "--server needs HOST:PORT");
        cli->server = v;
        cli->server_flag = true;
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--context", argc, argv, i, &v)) {
        if (v == NULL || v[0] == '\0')
            return cs_cli_err_set(err, -EINVAL, "--context needs a context's name");
        cli->context = v;
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("-o", argc, argv, i, &v) || cs_cli_flag("--output", argc, argv, i, &v)) {
        if (v != NULL && strcmp(v, "json") == 0)
            cli->format = CS_FORMAT_JSON;
        else if (v != NULL && strcmp(v, "yaml") == 0)
            cli->format = CS_FORMAT_YAML;
        else if (v != NULL && (strcmp(v, "table") == 0 || strcmp(v, "wide") == 0))
            cli->format = CS_FORMAT_TABLE;
        else
            return cs_cli_err_set(err, -EINVAL, "-o takes table, wide, json or yaml, not '%s'",
                                  v ? v : "");
        cli->wide = v != NULL && strcmp(v, "wide") == 0;
        cli->format_flag = true;
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--timeout", argc, argv, i, &v)) {
        if (v == NULL || cs_cli_parse_seconds(v, &cli->timeout_ms) != 0)
            return cs_cli_err_set(
                err, -EINVAL, "--timeout takes seconds > 0, e.g. 30 or 1.5, not '%s'", v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    return CS_CLI_FLAG_NOT_MINE;
}

/* A flag parser's result, its error printed as a usage error: the exit code
 * is the caller's to return, which -EINVAL tells it to. */
static int print_failure(struct cs_cli *cli, int rc, const struct cs_cli_err *err)
{
    if (rc < 0)
        (void)cs_cli_usage(cli, "%s", err->msg);
    return rc;
}

int cs_cli_take_global_flag(struct cs_cli *cli, int argc, char **argv, int *i)
{
    struct cs_cli_err err;

    return print_failure(cli, cs_cli_global_flag(cli, argc, argv, i, &err), &err);
}

int cs_cli_take_flag_value(struct cs_cli *cli, const char *name, const char *what, int argc,
                           char **argv, int *i, const char **value)
{
    struct cs_cli_err err;

    return print_failure(cli, cs_cli_flag_value(name, what, argc, argv, i, value, &err), &err);
}

int cs_cli_take_selector(struct cs_cli *cli, int argc, char **argv, int *i, const char **value)
{
    int rc = cs_cli_take_flag_value(cli, "-l", "a label selector", argc, argv, i, value);

    if (rc == CS_CLI_FLAG_NOT_MINE)
        rc = cs_cli_take_flag_value(cli, "--selector", "a label selector", argc, argv, i, value);
    return rc;
}

int cs_cli_take_global_or_word(struct cs_cli *cli, int argc, char **argv, int *i, const char **word,
                               const char *name, const char *usage)
{
    int rc = cs_cli_take_global_flag(cli, argc, argv, i);

    if (rc < 0)
        return CS_EXIT_USAGE;
    if (rc == CS_CLI_FLAG_TAKEN)
        return 0;
    if (word != NULL && *word == NULL && argv[*i][0] != '-') {
        *word = argv[*i];
        return 0;
    }
    if (argv[*i][0] == '-') {
        char meant[64];

        if (cs_cli_suggest_flag(name, argv[*i], meant, sizeof(meant))[0] != '\0')
            return cs_cli_usage(cli, "%s: unknown flag '%s'; did you mean '%s'? usage: %s", name,
                                argv[*i], meant, usage);
    }
    return cs_cli_usage(cli, "%s: unexpected '%s'; usage: %s", name, argv[*i], usage);
}

int cs_cli_take_global_or_fail(struct cs_cli *cli, int argc, char **argv, int *i, const char *name,
                               const char *usage)
{
    return cs_cli_take_global_or_word(cli, argc, argv, i, NULL, name, usage);
}

/* Takes one job flag with its value: a cs_cli_flag_result, or -EINVAL
 * with err on a bad value. */
static int job_flag(Csched__V1__Job *job, int argc, char **argv, int *i, struct cs_cli_err *err)
{
    static const struct {
        const char *flag;
        size_t offset;
    } nums[] = {
        {"--max-running", offsetof(Csched__V1__Job, max_running)},
        {"--timeout-seconds", offsetof(Csched__V1__Job, timeout_seconds)},
        {"--max-attempts", offsetof(Csched__V1__Job, max_attempts)},
        {"--retry-backoff-ms", offsetof(Csched__V1__Job, retry_backoff_ms)},
        {"--run-deadline-seconds", offsetof(Csched__V1__Job, run_deadline_seconds)},
        {"--kill-grace-seconds", offsetof(Csched__V1__Job, kill_grace_seconds)},
    };
    static const struct {
        const char *flag, *wants;
        size_t offset;
    } strs[] = {
        {"--workdir", "a directory", offsetof(Csched__V1__Job, working_dir)},
        {"--run-as-user", "a user name or uid", offsetof(Csched__V1__Job, run_as_user)},
        {"--run-as-group", "a group name or gid", offsetof(Csched__V1__Job, run_as_group)},
    };
    const char *v;
    int rc = cs_cli_retry_flag(job, argc, argv, i, err);

    if (rc != CS_CLI_FLAG_NOT_MINE)
        return rc;
    if (cs_cli_flag("--kill-signal", argc, argv, i, &v)) {
        if (v == NULL || v[0] == '\0')
            return cs_cli_err_set(err, -EINVAL, "--kill-signal needs a signal name, e.g. INT");
        cs_cli_set_string(&job->kill_signal, v);
        return CS_CLI_FLAG_TAKEN;
    }

    if (cs_cli_flag("--env", argc, argv, i, &v)) {
        if (cs_cli_map_put_kv(&csched__v1__job__env_entry__descriptor, (void ***)&job->env,
                              &job->n_env, v) != 0)
            return cs_cli_err_set(err, -EINVAL, "--env takes KEY=VALUE, not '%s'", v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--secret-env", argc, argv, i, &v)) {
        const char *eq = v != NULL ? strchr(v, '=') : NULL;
        char name[257];

        if (eq == NULL || eq == v || (size_t)(eq - v) >= sizeof(name))
            return cs_cli_err_set(err, -EINVAL,
                                  "--secret-env takes NAME=file:/PATH or NAME=env:VAR, not '%s'",
                                  v ? v : "");
        memcpy(name, v, (size_t)(eq - v));
        name[eq - v] = '\0';
        if (cs_cli_secret_put(job, name, eq + 1) != 0)
            return cs_cli_err_set(
                err, -EINVAL, "--secret-env %s: the reference is file:/PATH or env:VAR, not '%s'",
                name, eq + 1);
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--trigger-env", argc, argv, i, &v)) {
        if (v == NULL || v[0] == '\0')
            return cs_cli_err_set(err, -EINVAL,
                                  "--trigger-env needs a variable name an operator may set");
        cs_cli_strings_add(&job->trigger_env, &job->n_trigger_env, v);
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--label", argc, argv, i, &v)) {
        if (cs_cli_map_put_kv(&csched__v1__job__labels_entry__descriptor, (void ***)&job->labels,
                              &job->n_labels, v) != 0)
            return cs_cli_err_set(err, -EINVAL, "--label takes KEY=VALUE, not '%s'", v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++) {
        rc = cs_cli_flag_value(strs[k].flag, strs[k].wants, argc, argv, i, &v, err);
        if (rc == CS_CLI_FLAG_TAKEN)
            cs_cli_set_string((char **)((char *)job + strs[k].offset), v);
        if (rc != CS_CLI_FLAG_NOT_MINE)
            return rc;
    }
    if (cs_cli_flag("--shell", argc, argv, i, &v)) {
        if (v == NULL || v[0] == '\0')
            return cs_cli_err_set(err, -EINVAL, "--shell needs a command line");
        cs_cli_set_string(&job->shell, v);
        return CS_CLI_FLAG_TAKEN;
    }
    /* The job's own --timeout (in whole seconds) shadows the global one
     * here; --timeout-seconds is its long spelling. */
    if (cs_cli_flag("--timeout", argc, argv, i, &v)) {
        if (cs_cli_parse_u32(v, &job->timeout_seconds) != 0)
            return cs_cli_err_set(err, -EINVAL, "--timeout takes whole seconds, not '%s'",
                                  v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
        if (cs_cli_flag(nums[k].flag, argc, argv, i, &v)) {
            if (cs_cli_parse_u32(v, (uint32_t *)((char *)job + nums[k].offset)) != 0)
                return cs_cli_err_set(err, -EINVAL, "%s takes a whole number >= 0, not '%s'",
                                      nums[k].flag, v ? v : "");
            return CS_CLI_FLAG_TAKEN;
        }
    }
    return CS_CLI_FLAG_NOT_MINE;
}

int cs_cli_parse_job_args(struct cs_cli *cli, int argc, char **argv, Csched__V1__Job **out,
                          struct cs_cli_err *err)
{
    Csched__V1__Job *job = cs_cli_job_new();
    bool have_argv = false;
    int rc;

    *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            for (i++; i < argc; i++)
                cs_cli_job_add_command(job, argv[i]);
            have_argv = true;
            break;
        }
        rc = job_flag(job, argc, argv, &i, err);
        if (rc == CS_CLI_FLAG_NOT_MINE)
            rc = cs_cli_schedule_flag(job, argc, argv, &i, err);
        if (rc == CS_CLI_FLAG_NOT_MINE)
            rc = cs_cli_global_flag(cli, argc, argv, &i, err);
        if (rc < 0)
            goto err_free;
        if (rc == CS_CLI_FLAG_TAKEN)
            continue;
        if (argv[i][0] == '-') {
            rc = cs_cli_err_set(err, -EINVAL, "unknown flag '%s'", argv[i]);
            goto err_free;
        }
        if (job->name[0] != '\0') {
            rc = cs_cli_err_set(err, -EINVAL, "unexpected argument '%s' (put the command after --)",
                                argv[i]);
            goto err_free;
        }
        cs_cli_set_string(&job->name, argv[i]);
    }
    if (job->name[0] == '\0') {
        rc = cs_cli_err_set(err, -EINVAL, "missing job NAME");
        goto err_free;
    }
    if (have_argv && job->n_command == 0) {
        rc = cs_cli_err_set(err, -EINVAL, "nothing after --: give the command to run");
        goto err_free;
    }
    if (have_argv == (job->shell[0] != '\0')) {
        rc = cs_cli_err_set(err, -EINVAL,
                            have_argv ? "give either -- ARGV... or --shell STR, not both"
                                      : "missing command: add -- ARGV... or --shell STR");
        goto err_free;
    }
    *out = job;
    return 0;

err_free:
    csched__v1__job__free_unpacked(job, NULL);
    return rc;
}

int cs_cli_positionals(struct cs_cli *cli, int argc, char **argv, const char **pos, int npos,
                       const char *usage)
{
    int got = 0;

    for (int i = 0; i < argc; i++) {
        int rc = cs_cli_take_global_flag(cli, argc, argv, &i);

        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cs_cli_usage(cli, "unknown flag '%s'; usage: %s", argv[i], usage);
        if (got == npos)
            return cs_cli_usage(cli, "unexpected argument '%s'; usage: %s", argv[i], usage);
        pos[got++] = argv[i];
    }
    if (got < npos)
        return cs_cli_usage(cli, "missing argument; usage: %s", usage);
    return 0;
}
