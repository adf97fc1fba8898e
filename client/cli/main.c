/* csched: the command-line client of cschedd. Reads the global flags, makes
 * one client for the invocation and hands the rest of the words to the
 * command. Exit codes are listed in docs/cli.md.
 */
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "usage: csched [--server HOST:PORT] [-o table|json|yaml] [--timeout S] [--wait-for-ready]\n"
    "              [--ca FILE] [--cert FILE --key FILE] [--token-file FILE | --token T]\n"
    "              [--version] [--help]\n"
    "              COMMAND [ARGS...]\n"
    "\n"
    "commands:\n"
    "  job create NAME (-- ARGV... | --shell STR) [--env K=V]... [--workdir D]\n"
    "             [--max-running N] [--timeout S] [--max-attempts N]\n"
    "             [--retry-backoff-ms N] [--retry-initial-ms N] [--retry-max-ms N]\n"
    "             [--retry-multiplier X] [--retry-jitter F] [--retry-on failure|timeout|\n"
    "             failure,timeout] [--run-deadline-seconds N] [--kill-grace-seconds N]\n"
    "             [--kill-signal TERM|INT|HUP|QUIT|USR1|USR2] [--label K=V]...\n"
    "             [--run-as-user U] [--run-as-group G]\n"
    "             [--secret-env NAME=file:/PATH|NAME=env:VAR]...\n"
    "             [--schedule S] [--time-zone Z] [--misfire skip|run_once|run_all]\n"
    "             [--overlap allow|forbid|replace|queue_one] [--jitter-seconds N]\n"
    "             [--max-catchup N] [--starting-deadline-seconds N]\n"
    "  job update NAME ...            same flags; replaces the job\n"
    "  job get NAME | job list | job delete NAME\n"
    "  job next NAME [--count N]      the next fire times of its schedule\n"
    "  apply -f jobs.yaml [--dry-run] [--prune -l K=V]\n"
    "                                 create, update or prune the jobs of the file\n"
    "  trigger JOB [--env K=V]... [--idempotency-key K] [--at TIME | --in DURATION]\n"
    "             [--wait [-v]]\n"
    "  runs [--job J] [--state S] [--limit N]\n"
    "  run ID | cancel ID\n"
    "  logs ID [--attempt N] [--stdout|--stderr] [-f|--follow]\n"
    "  watch [--job J] [--after-seq N]\n"
    "  slots JOB [--outcome started|skipped] [--limit N]   what became of each slot\n"
    "  pause JOB [--reason R] | resume JOB\n"
    "  backfill JOB --from WHEN --to WHEN   runs for past slots (WHEN: ...T10:00:00Z)\n"
    "  stats | health\n"
    "  replicas                       the replicas sharing the database, their leases\n"
    "  audit [--identity I] [--method M] [--job J] [--run ID] [--since T]\n"
    "        [--until T] [--limit N]\n"
    "  token new NAME ROLE            make a bearer token and its --tokens-file line\n"
    "\n"
    "The server defaults to $CSCHED_SERVER, else unix:$CSCHED_SOCKET, else\n"
    "unix:/run/csched/csched.sock (HOST:PORT for TCP). --timeout is\n"
    "the deadline of each call in seconds (in job create/update, put it before\n"
    "the command: there --timeout is the job's own timeout).\n"
    "--ca, --cert, --key, --token-file and --token (or CSCHED_CA, CSCHED_CERT,\n"
    "CSCHED_KEY, CSCHED_TOKEN_FILE, CSCHED_TOKEN) connect over TLS; a token on\n"
    "the command line shows in ps, so prefer --token-file.\n"
    "csched COMMAND --help describes the flags of that command.\n";

static const struct {
    const char *name;
    int (*fn)(struct cs_cli *cli, int argc, char **argv);
    bool offline; /* makes no call: no client is made */
} commands[] = {
    {"job", cs_cmd_job, false},           {"apply", cs_cmd_apply, false},
    {"trigger", cs_cmd_trigger, false},   {"runs", cs_cmd_runs, false},
    {"run", cs_cmd_run, false},           {"cancel", cs_cmd_cancel, false},
    {"logs", cs_cmd_logs, false},         {"watch", cs_cmd_watch, false},
    {"stats", cs_cmd_stats, false},       {"health", cs_cmd_health, false},
    {"audit", cs_cmd_audit, false},       {"token", cs_cmd_token, true},
    {"slots", cs_cmd_slots, false},       {"pause", cs_cmd_pause, false},
    {"resume", cs_cmd_resume, false},     {"backfill", cs_cmd_backfill, false},
    {"replicas", cs_cmd_replicas, false},
};

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
            fputs(usage_text, stdout);
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
        fputs(usage_text, stderr);
        return CS_EXIT_USAGE;
    }
    for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
        if (strcmp(argv[i], commands[c].name) != 0)
            continue;
        if (wants_help(argc - i - 1, argv + i + 1)) {
            cs_cli_help(stdout, argv[i], i + 1 < argc ? argv[i + 1] : NULL);
            return CS_EXIT_OK;
        }
        rc = commands[c].offline ? CS_EXIT_OK : cs_cli_connect(&cli);
        if (rc != CS_EXIT_OK)
            return rc;
        rc = commands[c].fn(&cli, argc - i - 1, argv + i + 1);
        fflush(cli.out);
        cs_client_free(cli.client);
        return rc;
    }
    return cs_cli_usage(&cli, "unknown command '%s'", argv[i]);
}
