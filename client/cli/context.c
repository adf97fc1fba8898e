/* The context an invocation runs in: the config file's context named by
 * --context, else its current one, put under what the flags set. A
 * --context is a choice made on the command line, so it wins over the
 * CSCHED_* variables too; the file's current context is a default, which
 * the variables override.
 *
 * Single-threaded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Whether a context's value goes where a flag (set) or a variable (env)
 * did not. */
static bool takes(const char *set, const char *env, bool chosen)
{
    const char *v = env != NULL ? getenv(env) : NULL;

    return set == NULL && (chosen || v == NULL || v[0] == '\0');
}

static int apply(struct cs_cli *cli, const struct cs_cli_context *ctx, bool chosen)
{
    struct cs_cli_security *sec = &cli->security;

    if (ctx->server != NULL && !cli->server_flag && takes(NULL, "CSCHED_SERVER", chosen))
        cli->server = ctx->server;
    if (ctx->ca != NULL && takes(sec->ca, "CSCHED_CA", chosen))
        sec->ca = ctx->ca;
    if (ctx->cert != NULL && takes(sec->cert, "CSCHED_CERT", chosen))
        sec->cert = ctx->cert;
    if (ctx->key != NULL && takes(sec->key, "CSCHED_KEY", chosen))
        sec->key = ctx->key;
    /* A token given any other way wins over the context's file. */
    if (ctx->token_file != NULL && sec->token == NULL &&
        takes(sec->token_file, "CSCHED_TOKEN_FILE", chosen) && takes(NULL, "CSCHED_TOKEN", false))
        sec->token_file = ctx->token_file;
    if (ctx->output != NULL && !cli->format_flag) {
        char *argv[] = {"--output", ctx->output};
        struct cs_cli_err err;
        int i = 0;

        if (cs_cli_global_flag(cli, 2, argv, &i, &err) < 0)
            return cs_cli_usage(cli, "context %s: output: %s", ctx->name, err.msg);
    }
    return CS_EXIT_OK;
}

int cs_cli_context_apply(struct cs_cli *cli)
{
    const struct cs_cli_context *ctx;
    char path[4096], err[512];
    int rc;

    if (cs_cli_config_path(path, sizeof(path)) != 0) {
        if (cli->context == NULL)
            return CS_EXIT_OK;
        return cs_cli_usage(cli, "--context %s: no config file (set CSCHED_CONFIG or HOME)",
                            cli->context);
    }
    rc = cs_cli_config_load(path, &cli->config, err, sizeof(err));
    /* Without --context, no file is no contexts; nor is one at the default
     * place that this user may not read: runuser and sudo keep the HOME of
     * the user who called them. A file named by CSCHED_CONFIG must be read. */
    const char *named = getenv("CSCHED_CONFIG");
    bool default_place = named == NULL || named[0] == '\0';
    if (cli->context == NULL && (rc == -ENOENT || (rc == -EACCES && default_place)))
        return CS_EXIT_OK;
    if (rc != 0) {
        fprintf(cli->err, "csched: config: %s\n", err);
        return rc == -EINVAL ? CS_EXIT_DATAERR : CS_EXIT_NOINPUT;
    }
    ctx =
        cs_cli_config_find(&cli->config, cli->context != NULL ? cli->context : cli->config.current);
    if (ctx == NULL && cli->context != NULL)
        return cs_cli_usage(cli, "--context %s: no such context in %s (csched config get-contexts)",
                            cli->context, path);
    if (ctx == NULL)
        return CS_EXIT_OK;
    return apply(cli, ctx, cli->context != NULL);
}
