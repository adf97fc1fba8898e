/* csched COMMAND --help: each command's own usage and flags, so that help
 * for one command is not the whole tool's. The texts are kept beside each
 * other here, in the order of csched --help; docs/cli.md says the same at
 * more length.
 *
 * Single-threaded.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"

#define JOB_FLAGS                                                                                  \
    "  -- ARGV...                 the command, run without a shell\n"                              \
    "  --shell STR                or run STR with /bin/sh -c (exactly one of the two)\n"           \
    "  --env K=V                  a variable of the command (repeats)\n"                           \
    "  --secret-env NAME=file:/PATH | NAME=env:VAR\n"                                              \
    "                             a variable cschedd reads when each attempt starts\n"             \
    "  --trigger-env NAME         a variable an operator's trigger may set (repeats)\n"            \
    "  --label K=V                a label (repeats)\n"                                             \
    "  --workdir DIR              the working directory\n"                                         \
    "  --run-as-user U, --run-as-group G\n"                                                        \
    "                             who the command runs as (cschedd as root)\n"                     \
    "  --max-running N            runs of the job at once (0 = no per-job limit)\n"                \
    "  --timeout S, --timeout-seconds S\n"                                                         \
    "                             an attempt's time limit in whole seconds (0 = none)\n"           \
    "  --max-attempts N           attempts per run, retries included (0 = 1)\n"                    \
    "  --retry-backoff-ms N       the pause before the first retry, doubling after\n"              \
    "  --retry-initial-ms N, --retry-max-ms N, --retry-multiplier X, --retry-jitter F,\n"          \
    "  --retry-on failure|timeout|failure,timeout\n"                                               \
    "                             an exponential retry policy\n"                                   \
    "  --run-deadline-seconds N   the whole run's time limit\n"                                    \
    "  --kill-signal SIG          TERM, INT, HUP, QUIT, USR1 or USR2, sent first\n"                \
    "  --kill-grace-seconds N     the wait before SIGKILL\n"                                       \
    "  --schedule S               cron (\"30 2 * * *\"), @daily, @every 1h, ...\n"                 \
    "  --time-zone Z              the schedule's zone (Europe/Berlin; default UTC)\n"              \
    "  --misfire skip|run_once|run_all, --overlap allow|forbid|replace|queue_one,\n"               \
    "  --jitter-seconds N, --max-catchup N, --starting-deadline-seconds N\n"                       \
    "                             the schedule's policies (docs/schedules.md)\n"                   \
    "Put the global --timeout before the command word: after it, --timeout is\n"                   \
    "the job's own.\n"

/* Each command in a line, in the order csched --help lists them. No quote
 * in a summary: fish's completion quotes them with '. */
static const struct {
    const char *name, *summary;
} summaries[] = {
    {"job", "create, update, get, list or delete jobs; the next fire times of one; its graph"},
    {"apply", "make the jobs on the server what a YAML file says (--dry-run, --prune)"},
    {"trigger", "start a run of a job; --wait for its end, --logs for its output"},
    {"runs", "list runs, newest first"},
    {"run", "show a run (by id, or the latest of a job) with its attempts"},
    {"cancel", "cancel a run"},
    {"logs", "print the output of a run (by run id, or the latest run of a job)"},
    {"watch", "print run events as they happen"},
    {"slots", "what became of each slot of the schedule of a job"},
    {"pause", "stop the schedule of a job from firing"},
    {"resume", "let the schedule of a paused job fire again"},
    {"backfill", "make runs for the past slots of a job"},
    {"stats", "the counters and limits of the server"},
    {"health", "SERVING or not"},
    {"replicas", "the replicas sharing the database, their leases"},
    {"cluster", "the limits of all replicas together; set-max-running N"},
    {"hooks", "the hook deliveries of a job: status, answer, attempts, next retry"},
    {"audit", "the audit trail of changes"},
    {"token", "make a bearer token and its --tokens-file line"},
    {"ui", "the address of the web console, and how to log in"},
    {"config", "named contexts: a server, its CA, a token file (like kubeconfig)"},
    {"version", "the versions of csched and of the server"},
    {"completion", "the completion script for bash, zsh or fish"},
    {"help", "the usage of csched or of one command"},
};

static const char examples[] =
    "  csched job list                        what is scheduled, and how it went\n"
    "  csched apply -f jobs.yaml --dry-run    what a job file would change\n"
    "  csched trigger backup --wait --logs    run a job, show its output, exit with its code\n"
    "  csched logs backup --previous          the output of the run before the latest\n"
    "  csched runs --state failed --since 1h  what failed in the last hour\n"
    "  csched --context prod stats            another cluster (csched config get-contexts)\n";

/* The flags every command takes, as csched --help lists them. */
static const char global_flags[] =
    "  --server TARGET            unix:PATH or HOST:PORT (default $CSCHED_SERVER, else\n"
    "                             unix:$CSCHED_SOCKET, else unix:/run/csched/csched.sock)\n"
    "  -o, --output FORMAT        table, wide (job list), json or yaml\n"
    "  --timeout S                the deadline of each call in seconds (in job\n"
    "                             create/update put it before the command)\n"
    "  --wait-for-ready           wait for the server to accept connections\n"
    "  --ca FILE                  TLS, trusting these CAs ($CSCHED_CA)\n"
    "  --cert FILE --key FILE     this client's certificate ($CSCHED_CERT, $CSCHED_KEY)\n"
    "  --token-file FILE          a bearer token from FILE ($CSCHED_TOKEN_FILE)\n"
    "  --token T                  the token itself ($CSCHED_TOKEN; shows in ps)\n"
    "  --context NAME             a context of the config file (csched config)\n"
    "  -h, --help                 this help, or a command's (csched help COMMAND)\n"
    "  --version                  csched's version (csched version asks the server too)\n";

static const struct {
    const char *command; /* the command word */
    const char *sub;     /* its first argument, or NULL for any */
    const char *text;
} helps[] = {
    {"job", "create",
     "usage: csched job create NAME (-- ARGV... | --shell STR) [FLAGS]\n"
     "Creates a job.\n\n" JOB_FLAGS},
    {"job", "update",
     "usage: csched job update NAME (-- ARGV... | --shell STR) [FLAGS]\n"
     "Replaces every field of a job with what the flags say.\n\n" JOB_FLAGS},
    {"job", "get", "usage: csched job get NAME\nShows a job.\n"},
    {"job", "list",
     "usage: csched job list [-l SELECTOR] [--state STATE] [-o wide] [--absolute]\n"
     "                       [--sort-by name|next|last|running] [-w]\n"
     "Lists every job: schedule, paused, next fire, last finished run, running now.\n\n"
     "  -l SEL, --selector SEL     only jobs whose labels match SEL: key=value,\n"
     "                             key!=value, key in (a,b), key notin (a,b), key,\n"
     "                             !key; commas join terms that must all hold\n"
     "  --state STATE              only jobs running now (running), paused,\n"
     "                             whose last run failed (failed) or that never\n"
     "                             ran (never-run)\n"
     "  -o wide                    also the limits and the command\n"
     "  --absolute                 times as local dates, not \"in 4m\", \"12m ago\"\n"
     "  --sort-by KEY              name (default), next, last or running\n"
     "  -w, --watch                then a job's row again each time one of its runs\n"
     "                             changes state\n"},
    {"job", "delete", "usage: csched job delete NAME\nDeletes a job; its runs stay.\n"},
    {"job", "next",
     "usage: csched job next NAME [--count N]\n"
     "The next fire times of the job's schedule.\n\n"
     "  --count N                  how many (default 5, at most 20)\n"},
    {"job", "graph",
     "usage: csched job graph NAME [--dot]\n"
     "The jobs NAME runs after and the jobs that run after it, all the way up\n"
     "and down, one edge a line: UP -> DOWN (on succeeded|failed|any)\n"
     "(docs/dependencies.md).\n\n"
     "  --dot                      as Graphviz's DOT (csched job graph X --dot | dot -Tsvg)\n"},
    {"job", "causes",
     "usage: csched job causes NAME [--limit N]\n"
     "What became of each cause of the job's runs after its upstreams, newest\n"
     "first: ran (the run), not run and why, or waiting (docs/dependencies.md).\n\n"
     "  --limit N                  how many (default 100, at most 1000)\n"},
    {"job", NULL,
     "usage: csched job create|update|get|list|delete|next|graph|causes ...\n"
     "See csched job SUBCOMMAND --help.\n"},
    {"apply", NULL,
     "usage: csched apply -f FILE [--dry-run] [--prune -l KEY=VALUE]\n"
     "Makes the server's jobs what a YAML job file says: creates new jobs,\n"
     "updates changed ones, leaves identical ones alone.\n\n"
     "  -f FILE, --file FILE       the job file (- for standard input); several\n"
     "                             documents, each a job, a list or {jobs: [...]}\n"
     "  --dry-run                  change nothing: say what would change, with a diff\n"
     "  --prune                    also delete the jobs with the label that the file\n"
     "                             no longer has\n"
     "  -l KEY=VALUE, --selector KEY=VALUE\n"
     "                             the label --prune goes by\n"},
    {"trigger", NULL,
     "usage: csched trigger JOB [--env K=V]... [--idempotency-key K]\n"
     "                      [--at TIME | --in DURATION] [--wait [-v] [--logs]]\n"
     "Starts a run of a job.\n\n"
     "  --env K=V                  a variable for this run only (repeats)\n"
     "  --idempotency-key K        the same key again returns the same run\n"
     "  --at TIME                  not before TIME (2026-12-01T10:00:00Z, @UNIX)\n"
     "  --in DURATION              not before DURATION from now (90s, 1h30m)\n"
     "  --wait                     wait for the run's end; exit with its exit code\n"
     "  -v, --verbose              with --wait, a line on stderr for every state change\n"
     "  --logs                     with --wait, the output of each attempt as it comes\n"
     "                             (the end's line then goes to stderr)\n"},
    {"runs", NULL,
     "usage: csched runs [--job J] [-l SELECTOR] [--state S] [--since T] [--limit N] [-w]\n"
     "Lists runs, newest first.\n\n"
     "  --job J                    of this job only\n"
     "  -l SEL, --selector SEL     of the jobs whose labels match SEL (see job list)\n"
     "  --state S                  in this state (queued, running, succeeded, ...)\n"
     "  --since T                  made since T: a duration ago (1h, 2d) or a time\n"
     "  --limit N                  at most N (default 50)\n"
     "  -w, --watch                then each change of a run, as it happens\n"},
    {"run", NULL,
     "usage: csched run ID|JOB [--previous]\n"
     "Shows a run with its attempts: by its ID, or the latest run of JOB.\n\n"
     "  --previous                 with JOB, the run before its latest\n"},
    {"cancel", NULL, "usage: csched cancel ID\nCancels a run (its attempt is stopped).\n"},
    {"logs", NULL,
     "usage: csched logs ID|JOB [--previous] [--attempt N] [--stdout|--stderr] [-f]\n"
     "Prints a run's output, each chunk as it arrives: the run by its ID, or the\n"
     "latest run of JOB.\n\n"
     "  --previous                 with JOB, the run before its latest\n"
     "  --attempt N                of attempt N (default the last)\n"
     "  --stdout, --stderr         one stream only, on standard output\n"
     "  -f, --follow               keep reading until the attempt ends\n"},
    {"watch", NULL,
     "usage: csched watch [--job J] [--after-seq N]\n"
     "Prints run events as they happen, until interrupted or --timeout.\n\n"
     "  --job J                    of this job only\n"
     "  --after-seq N              first replay the events after sequence N\n"},
    {"slots", NULL,
     "usage: csched slots JOB [-l SELECTOR] [--outcome started|skipped] [--limit N] [-w]\n"
     "What became of each slot of a job's schedule.\n\n"
     "  -l SEL, --selector SEL     none unless the job's labels match SEL (see job list)\n"
     "  --outcome started|skipped  only these\n"
     "  --limit N                  at most N (1-1000)\n"
     "  -w, --watch                then each new slot, as the job's runs change\n"},
    {"pause", NULL,
     "usage: csched pause JOB [--reason R]\n"
     "Stops a job's schedule from firing.\n\n"
     "  --reason R                 why, shown by job get\n"},
    {"resume", NULL, "usage: csched resume JOB\nLets a paused job's schedule fire again.\n"},
    {"backfill", NULL,
     "usage: csched backfill JOB --from WHEN --to WHEN\n"
     "Makes runs for the job's past slots in [from, to).\n\n"
     "  --from WHEN, --to WHEN     2026-12-01T10:00:00Z, @UNIX_SECONDS or UNIX_SECONDS\n"},
    {"stats", NULL, "usage: csched stats\nThe server's counters and limits.\n"},
    {"health", NULL, "usage: csched health\nSERVING or not (exit 1 when not).\n"},
    {"replicas", NULL,
     "usage: csched replicas\n"
     "The cschedd replicas sharing the database: state, epoch, address, the age\n"
     "of each one's lease (\"expired\" once it has run out, on the database's\n"
     "clock), the runs it holds and its version; \"(this)\" marks the one that\n"
     "answered.\n"},
    {"cluster", NULL,
     "usage: csched cluster\n"
     "       csched cluster set-max-running N\n"
     "The limits that hold across every replica together, stored in the database,\n"
     "and the answering replica's own (cschedd --max-running). set-max-running\n"
     "changes the cluster's runs at once (0: none but each replica's own); lowering\n"
     "it stops nothing that runs. Admins only; recorded in the audit trail.\n"},
    {"hooks", NULL,
     "usage: csched hooks JOB\n"
     "The job's hook deliveries, newest first (docs/hooks.md): when each was\n"
     "made, its hook and event, the run, pending, delivered or failed, the\n"
     "endpoint's last HTTP status, the attempts made, when a pending one is\n"
     "tried next, and the last error.\n"},
    {"audit", NULL,
     "usage: csched audit [--identity I] [--method M] [--job J] [--run ID]\n"
     "                    [--since T] [--until T] [--limit N]\n"
     "The audit trail of changes, newest first.\n\n"
     "  --identity I, --method M, --job J, --run ID\n"
     "                             only entries with this identity, method, job, run\n"
     "  --since T, --until T       a duration ago (90s, 2h, 7d) or a UTC time\n"
     "  --limit N                  at most N (default 50)\n"},
    {"token", NULL,
     "usage: csched token new NAME ROLE\n"
     "Makes a bearer token and the line of cschedd's --tokens-file for it.\n"},
    {"ui", NULL,
     "usage: csched ui [--url URL]\n"
     "Prints the address of the web console (cschedd --http-listen) and how to\n"
     "log in. Makes no call.\n\n"
     "  --url URL                  the console's address (else $CSCHED_CONSOLE_URL;\n"
     "                             for the local socket, http://127.0.0.1:8080/)\n"},
    {"config", NULL,
     "usage: csched config get-contexts | current-context | use-context NAME\n"
     "       csched config set-context NAME [--server S] [--ca F] [--cert F --key F]\n"
     "                                      [--token-file F] [-o FORMAT]\n"
     "The contexts of $CSCHED_CONFIG, else $XDG_CONFIG_HOME/csched/config.yaml, else\n"
     "~/.config/csched/config.yaml. set-context creates or changes one (paths kept\n"
     "absolute; a token file, never a token); use-context makes one current; any\n"
     "command takes --context NAME.\n\n"
     "  --server S, --ca F, --cert F, --key F, --token-file F, -o FORMAT\n"
     "                             the context's fields ('' takes one out)\n"},
    {"version", NULL,
     "usage: csched version\n"
     "csched's version, and the version of the cschedd replica that answers with\n"
     "the database schema's version it runs with (with -o json or yaml:\n"
     "{\"client\", \"server\", \"replica\", \"schema\"}).\n"},
    {"completion", NULL,
     "usage: csched completion bash|zsh|fish\n"
     "Prints the shell's completion script for csched, e.g.\n"
     "  source <(csched completion bash)                  in ~/.bashrc\n"
     "  source <(csched completion zsh)                   in ~/.zshrc\n"
     "  csched completion fish > ~/.config/fish/completions/csched.fish\n"},
    {"help", NULL,
     "usage: csched help [COMMAND [SUBCOMMAND]]\n"
     "The usage of csched, or of one command (the same as csched COMMAND --help).\n"},
};

int cs_cli_command_summary(size_t i, const char **name, const char **summary)
{
    if (i >= sizeof(summaries) / sizeof(summaries[0]))
        return -ENOENT;
    *name = summaries[i].name;
    *summary = summaries[i].summary;
    return 0;
}

void cs_cli_print_usage(FILE *f)
{
    fputs("usage: csched [GLOBAL FLAGS] COMMAND [ARGS...]\n\ncommands:\n", f);
    for (size_t i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++)
        fprintf(f, "  %-12s %s\n", summaries[i].name, summaries[i].summary);
    fprintf(f, "\nexamples:\n%s\nglobal flags (before or after the command):\n%s\n", examples,
            global_flags);
    fputs("csched help COMMAND (or csched COMMAND --help) describes a command and its flags.\n", f);
}

const char *cs_cli_help_text(const char *command, const char *sub)
{
    if (command == NULL)
        return global_flags;
    for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
        if (strcmp(helps[i].command, command) != 0)
            continue;
        if (helps[i].sub != NULL && (sub == NULL || strcmp(helps[i].sub, sub) != 0))
            continue;
        return helps[i].text;
    }
    return "";
}

int cs_cli_help(FILE *f, const char *command, const char *sub)
{
    const char *text = cs_cli_help_text(command, sub);

    if (text[0] == '\0')
        return -ENOENT;
    fputs(text, f);
    fputs("\nGlobal flags (csched --help) go before or after the command.\n", f);
    return 0;
}
