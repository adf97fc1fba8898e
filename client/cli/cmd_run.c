/* csched runs | run ID|JOB | cancel ID: reading and cancelling runs. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Runs listed when --limit is not given. */
#define RUNS_DEFAULT_LIMIT 50

static int parse_runs(struct cs_cli *cli, int argc, char **argv, Csched__V1__ListRunsRequest *req,
                      uint32_t *limit)
{
    for (int i = 0; i < argc; i++) {
        const char *v;
        int rc;

        rc = cs_cli_take_flag_value(cli, "--job", "a job name", argc, argv, &i, &v);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN) {
            req->job_name = (char *)v;
            continue;
        }
        if (cs_cli_flag("--state", argc, argv, &i, &v)) {
            if (cs_cli_parse_state(v, &req->state) != 0)
                return cs_cli_usage(cli,
                                    "--state takes queued, starting, running, succeeded, failed, "
                                    "timed_out, cancelled or lost, not '%s'",
                                    v ? v : "");
            continue;
        }
        if (cs_cli_flag("--limit", argc, argv, &i, &v)) {
            if (cs_cli_parse_u32(v, limit) != 0 || *limit == 0)
                return cs_cli_usage(cli, "--limit takes a whole number > 0, not '%s'", v ? v : "");
            continue;
        }
        rc = cs_cli_take_global_or_fail(cli, argc, argv, &i, "runs",
                                        "csched runs [--job J] [--state S] [--limit N]");
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int fetch_runs(struct cs_cli *cli, void *req, uint32_t page_size, const char *page_token,
                      ProtobufCMessage **resp, const struct cs_call_opts *opts,
                      struct cs_status *st)
{
    Csched__V1__ListRunsRequest *r = req;
    r->page_size = page_size;
    r->page_token = (char *)page_token;
    return cs_scheduler_list_runs(cli->client, r, (Csched__V1__ListRunsResponse **)resp, opts, st);
}

static void run_row(struct cs_cli_table *t, const ProtobufCMessage *item)
{
    cs_cli_run_table_row(t, (const Csched__V1__Run *)item);
}

int cs_cmd_runs(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    uint32_t limit = RUNS_DEFAULT_LIMIT;
    struct cs_cli_table t;
    int rc;

    rc = parse_runs(cli, argc, argv, &req, &limit);
    if (rc != 0)
        return rc;
    if (cli->format == CS_FORMAT_TABLE)
        cs_cli_run_table_init(&t);
    const struct cs_cli_pages pages = {"list runs", "runs", &req, limit, fetch_runs, run_row};
    return cs_cli_list_pages(cli, &pages, &t);
}

/* Parses "ID" for cancel. Returns 0 or an exit code. */
static int parse_id(struct cs_cli *cli, int argc, char **argv, const char *usage, int64_t *id)
{
    const char *arg;
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, &arg, 1, usage);
    if (rc != 0)
        return rc;
    if (cs_cli_parse_id(arg, id) != 0)
        return cs_cli_usage(cli, "a run ID is a whole number > 0, not '%s'", arg);
    return 0;
}

static void print_run(struct cs_cli *cli, const Csched__V1__Run *run)
{
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &run->base);
    else
        cs_cli_print_run(cli->out, run);
}

#define RUN_USAGE "csched run ID|JOB [--previous]"

/* Parses "ID|JOB [--previous]" for run. Returns 0 or an exit code. */
static int parse_run(struct cs_cli *cli, int argc, char **argv, int64_t *id)
{
    const char *word = NULL;
    bool previous = false;

    for (int i = 0; i < argc; i++) {
        int rc;

        if (strcmp(argv[i], "--previous") == 0) {
            previous = true;
            continue;
        }
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &word, "run", RUN_USAGE);
        if (rc != 0)
            return rc;
    }
    if (word == NULL)
        return cs_cli_usage(cli, "run: missing run ID or JOB; usage: %s", RUN_USAGE);
    return cs_cli_run_ref(cli, word, previous, id);
}

int cs_cmd_run(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__GetRunRequest req = CSCHED__V1__GET_RUN_REQUEST__INIT;
    struct cs_call_opts opts;
    Csched__V1__Run *run;
    struct cs_status st;
    char what[64];
    int rc;

    rc = parse_run(cli, argc, argv, &req.run_id);
    if (rc != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    rc = cs_scheduler_get_run(cli->client, &req, &run, &opts, &st);
    if (rc != 0) {
        snprintf(what, sizeof(what), "get run %lld", (long long)req.run_id);
        return cs_cli_fail(cli, what, rc, &st);
    }
    print_run(cli, run);
    csched__v1__run__free_unpacked(run, NULL);
    return 0;
}

int cs_cmd_cancel(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    struct cs_call_opts opts;
    Csched__V1__Run *run;
    struct cs_status st;
    char what[64];
    int rc;

    rc = parse_id(cli, argc, argv, "csched cancel ID", &req.run_id);
    if (rc != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    rc = cs_scheduler_cancel_run(cli->client, &req, &run, &opts, &st);
    if (rc != 0) {
        snprintf(what, sizeof(what), "cancel run %lld", (long long)req.run_id);
        return cs_cli_fail(cli, what, rc, &st);
    }
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &run->base);
    else
        fprintf(cli->out, "run %lld: %s%s\n", (long long)run->id, cs_cli_state_name(run->state),
                run->cancel_requested ? " (cancel requested)" : "");
    csched__v1__run__free_unpacked(run, NULL);
    return 0;
}
