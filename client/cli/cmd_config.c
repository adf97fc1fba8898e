/* csched config get-contexts | use-context NAME | current-context |
 * set-context NAME [--server S] [--ca F] [--cert F] [--key F]
 * [--token-file F] [--output O]: the contexts of the config file (config.c).
 * No call is made. Paths are stored absolute, so that a context works from
 * any directory; a token is never stored, only its file's path.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define SET_USAGE                                                                                  \
    "csched config set-context NAME [--server S] [--ca F] [--cert F] [--key F] "                   \
    "[--token-file F] [--output O]"

/* Reads the config file into cli->config (none yet is an empty one), its
 * path into path. 0 or the exit code of the printed failure. */
static int load(struct cs_cli *cli, char *path, size_t len)
{
    char err[512];
    int rc;

    if (cs_cli_config_path(path, len) != 0)
        return cs_cli_usage(cli, "config: no config file path (set CSCHED_CONFIG or HOME)");
    rc = cs_cli_config_load(path, &cli->config, err, sizeof(err));
    if (rc == 0 || rc == -ENOENT)
        return 0;
    fprintf(cli->err, "csched: config: %s\n", err);
    return rc == -EINVAL ? CS_EXIT_DATAERR : CS_EXIT_NOINPUT;
}

static int save(struct cs_cli *cli, const char *path)
{
    char err[512];

    if (cs_cli_config_save(path, &cli->config, err, sizeof(err)) == 0)
        return 0;
    fprintf(cli->err, "csched: config: %s\n", err);
    return CS_EXIT_SOFTWARE;
}

static void print_context_json(FILE *f, struct cs_cli_context *ctx)
{
    static const char *const keys[][2] = {
        {"server", "server"},        {"ca", "ca"},        {"cert", "cert"}, {"key", "key"},
        {"token-file", "tokenFile"}, {"output", "output"}};

    fputs("{\"name\":", f);
    cs_json_write_string(f, ctx->name, strlen(ctx->name));
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const char *v = *cs_cli_context_field(ctx, keys[k][0]);

        fprintf(f, ",\"%s\":", keys[k][1]);
        cs_json_write_string(f, v != NULL ? v : "", v != NULL ? strlen(v) : 0);
    }
    fputc('}', f);
}

static int get_contexts(struct cs_cli *cli)
{
    struct cs_cli_config *cfg = &cli->config;
    struct cs_cli_table t;

    if (cli->format != CS_FORMAT_TABLE) {
        fputs("{\"currentContext\":", cli->out);
        cs_json_write_string(cli->out, cfg->current ? cfg->current : "",
                             cfg->current ? strlen(cfg->current) : 0);
        fputs(",\"contexts\":[", cli->out);
        for (size_t i = 0; i < cfg->n; i++) {
            fputs(i ? "," : "", cli->out);
            print_context_json(cli->out, &cfg->contexts[i]);
        }
        fputs("]}\n", cli->out);
        return 0;
    }
    cs_cli_table_init(&t, 5, "CURRENT", "NAME", "SERVER", "TOKEN FILE", "OUTPUT");
    for (size_t i = 0; i < cfg->n; i++) {
        const struct cs_cli_context *c = &cfg->contexts[i];
        bool current = cfg->current != NULL && strcmp(cfg->current, c->name) == 0;

        cs_cli_table_row(&t, (const char *const[]){
                                 current ? "*" : "", c->name, c->server ? c->server : "-",
                                 c->token_file ? c->token_file : "-", c->output ? c->output : "-"});
    }
    cs_cli_table_print(&t, cli->out, "");
    return 0;
}

/* path as an absolute path: resolved if it exists, else under the working
 * directory. A heap string. */
static char *absolute(const char *path)
{
    char buf[PATH_MAX], cwd[PATH_MAX];
    char *joined;

    if (realpath(path, buf) != NULL)
        return cs_cli_xstrdup(buf);
    if (path[0] == '/' || getcwd(cwd, sizeof(cwd)) == NULL)
        return cs_cli_xstrdup(path);
    joined = cs_cli_xmalloc(strlen(cwd) + strlen(path) + 2);
    sprintf(joined, "%s/%s", cwd, path);
    return joined;
}

/* Takes one flag of set-context into ctx: CS_CLI_FLAG_TAKEN or
 * CS_CLI_FLAG_NOT_MINE; a usage error is taken, with CS_EXIT_USAGE in
 * *exit_code. */
static int set_flag(struct cs_cli *cli, struct cs_cli_context *ctx, int argc, char **argv, int *i,
                    int *exit_code)
{
    static const struct {
        const char *flag, *key;
        bool path;
    } flags[] = {
        {"--server", "server", false},
        {"--ca", "ca", true},
        {"--cert", "cert", true},
        {"--key", "key", true},
        {"--token-file", "token-file", true},
        {"--output", "output", false},
        {"-o", "output", false},
    };
    const char *v;

    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        char **field = cs_cli_context_field(ctx, flags[k].key);
        int rc = cs_cli_take_flag_value(cli, flags[k].flag, "a value", argc, argv, i, &v);

        if (rc < 0) {
            *exit_code = CS_EXIT_USAGE;
            return CS_CLI_FLAG_TAKEN;
        }
        if (rc == CS_CLI_FLAG_NOT_MINE)
            continue;
        free(*field);
        /* An empty value takes the field out of the context. */
        *field = v[0] == '\0' ? NULL : flags[k].path ? absolute(v) : cs_cli_xstrdup(v);
        return CS_CLI_FLAG_TAKEN;
    }
    return CS_CLI_FLAG_NOT_MINE;
}

static int set_context(struct cs_cli *cli, const char *path, int argc, char **argv)
{
    struct cs_cli_context *ctx;
    struct cs_cli check;
    int exit_code = 0;

    if (argc < 1 || argv[0][0] == '-' || argv[0][0] == '\0')
        return cs_cli_usage(cli, "config set-context: missing NAME; usage: %s", SET_USAGE);
    ctx = cs_cli_config_add(&cli->config, argv[0]);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--token", 7) == 0 && strncmp(argv[i], "--token-file", 12) != 0)
            return cs_cli_usage(cli, "a context names a token file (--token-file), never the "
                                     "token itself");
        if (set_flag(cli, ctx, argc, argv, &i, &exit_code) == 0)
            return cs_cli_usage(cli, "config set-context: unexpected '%s'; usage: %s", argv[i],
                                SET_USAGE);
        if (exit_code != 0)
            return exit_code;
    }
    if (ctx->output != NULL) {
        char *out_argv[] = {"--output", ctx->output};
        struct cs_cli_err err;
        int i = 0;

        cs_cli_init(&check);
        if (cs_cli_global_flag(&check, 2, out_argv, &i, &err) < 0)
            return cs_cli_usage(cli, "%s", err.msg);
    }
    if ((ctx->cert == NULL) != (ctx->key == NULL))
        return cs_cli_usage(cli, "--cert and --key go together");
    exit_code = save(cli, path);
    if (exit_code == 0)
        fprintf(cli->out, "context %s set in %s\n", ctx->name, path);
    return exit_code;
}

static int use_context(struct cs_cli *cli, const char *path, int argc, char **argv)
{
    if (argc != 1)
        return cs_cli_usage(cli, "usage: csched config use-context NAME");
    if (cs_cli_config_find(&cli->config, argv[0]) == NULL)
        return cs_cli_usage(cli, "config: no context %s in %s (csched config get-contexts)",
                            argv[0], path);
    free(cli->config.current);
    cli->config.current = cs_cli_xstrdup(argv[0]);
    if (save(cli, path) != 0)
        return CS_EXIT_SOFTWARE;
    fprintf(cli->out, "switched to context %s\n", argv[0]);
    return 0;
}

int cs_cmd_config(struct cs_cli *cli, int argc, char **argv)
{
    static const char *const verbs[] = {"get-contexts", "use-context", "set-context",
                                        "current-context"};
    const char *verb = argc > 0 ? argv[0] : "";
    char path[4096], meant[32];
    int rc;

    rc = load(cli, path, sizeof(path));
    if (rc != 0)
        return rc;
    if (strcmp(verb, "get-contexts") == 0)
        return get_contexts(cli);
    if (strcmp(verb, "set-context") == 0)
        return set_context(cli, path, argc - 1, argv + 1);
    if (strcmp(verb, "use-context") == 0)
        return use_context(cli, path, argc - 1, argv + 1);
    if (strcmp(verb, "current-context") == 0) {
        if (cli->config.current == NULL)
            return cs_cli_usage(cli, "config: no current context in %s", path);
        fprintf(cli->out, "%s\n", cli->config.current);
        return 0;
    }
    if (cs_cli_suggest(verb, verbs, sizeof(verbs) / sizeof(verbs[0]), meant, sizeof(meant))[0])
        return cs_cli_usage(cli, "config: unknown subcommand '%s'; did you mean '%s'?", verb,
                            meant);
    return cs_cli_usage(cli,
                        "config: expected get-contexts, use-context, set-context or "
                        "current-context, not '%s'",
                        verb);
}
