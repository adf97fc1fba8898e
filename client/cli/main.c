/* csched: the command-line client of cschedd. Reads the global flags, makes
 * one client for the invocation and hands the rest of the words to the
 * command. Exit codes are listed in docs/cli.md.
 */
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(struct cs_cli *cli, int argc, char **argv);
    bool offline; /* makes no call: no client is made */
} commands[] = {
    {"job", cs_cmd_job, false},
    {"apply", cs_cmd_apply, false},
    {"trigger", cs_cmd_trigger, false},
    {"runs", cs_cmd_runs, false},
    {"run", cs_cmd_run, false},
    {"cancel", cs_cmd_cancel, false},
    {"logs", cs_cmd_logs, false},
    {"watch", cs_cmd_watch, false},
    {"stats", cs_cmd_stats, false},
    {"health", cs_cmd_health, false},
    {"audit", cs_cmd_audit, false},
    {"token", cs_cmd_token, true},
    {"slots", cs_cmd_slots, false},
    {"pause", cs_cmd_pause, false},
    {"resume", cs_cmd_resume, false},
    {"backfill", cs_cmd_backfill, false},
    {"replicas", cs_cmd_replicas, false},
    {"cluster", cs_cmd_cluster, false}, /* the limits of all replicas together */
    {"hooks", cs_cmd_hooks, false},     /* a job's hook deliveries */
    {"version", cs_cmd_version, false},
    {"completion", cs_cmd_completion, true},
    {"config", cs_cmd_config, true},
    {"ui", cs_cmd_ui, true},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Takes a --context among the command's words (up to a "--"), as the
 * connection is made before the command reads them. */
static void context_flag(struct cs_cli *cli, int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *v;

        if (cs_cli_flag("--context", argc, argv, &i, &v) && v != NULL && v[0] != '\0')
            cli->context = v;
    }
}

/* csched help [COMMAND [SUB]]: the usage, or a command's help. */
static int help(struct cs_cli *cli, int argc, char **argv)
{
    if (argc == 0) {
        cs_cli_print_usage(cli->out);
        return CS_EXIT_OK;
    }
    if (cs_cli_help(cli->out, argv[0], argc > 1 ? argv[1] : NULL) != 0)
        return cs_cli_usage(cli, "help: no command '%s'", argv[0]);
    return CS_EXIT_OK;
}

/* An unknown command: a usage error, naming the command nearest to it. */
static int unknown_command(struct cs_cli *cli, const char *word)
{
    const char *names[N_COMMANDS + 1];
    char meant[32];

    for (size_t c = 0; c < N_COMMANDS; c++)
        names[c] = commands[c].name;
    names[N_COMMANDS] = "help";
    if (cs_cli_suggest(word, names, N_COMMANDS + 1, meant, sizeof(meant))[0] != '\0')
        return cs_cli_usage(cli, "unknown command '%s'; did you mean '%s'?", word, meant);
    return cs_cli_usage(cli, "unknown command '%s'", word);
}

/* True if words (up to a "--") ask for help. */
static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    struct cs_cli cli;
    int i, rc;

    cs_cli_init(&cli);
    for (i = 1; i < argc; i++) {
        if (wants_help(1, argv + i)) {
            cs_cli_print_usage(stdout);
            return CS_EXIT_OK;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("csched %s\n", CS_VERSION);
            return CS_EXIT_OK;
        }
        rc = cs_cli_take_global_flag(&cli, argc, argv, &i);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_NOT_MINE)
            break;
    }
    if (i >= argc) {
        cs_cli_print_usage(stderr);
        return CS_EXIT_USAGE;
    }
    if (strcmp(argv[i], "help") == 0)
        return help(&cli, argc - i - 1, argv + i + 1);
    for (size_t c = 0; c < N_COMMANDS; c++) {
        if (strcmp(argv[i], commands[c].name) != 0)
            continue;
        if (wants_help(argc - i - 1, argv + i + 1)) {
            cs_cli_help(stdout, argv[i], i + 1 < argc ? argv[i + 1] : NULL);
            return CS_EXIT_OK;
        }
        context_flag(&cli, argc - i - 1, argv + i + 1);
        rc = commands[c].offline ? CS_EXIT_OK : cs_cli_context_apply(&cli);
        if (rc == CS_EXIT_OK && !commands[c].offline)
            rc = cs_cli_connect(&cli);
        if (rc == CS_EXIT_OK)
            rc = commands[c].fn(&cli, argc - i - 1, argv + i + 1);
        fflush(cli.out);
        cs_client_free(cli.client);
        cs_cli_config_free(&cli.config);
        return rc;
    }
    return unknown_command(&cli, argv[i]);
}
