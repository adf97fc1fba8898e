/* csched runs | run ID|JOB | cancel ID: reading and cancelling runs. runs
 * filters by job, labels, state and time on the server; -w then follows the
 * changes (list_watch.c). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Runs listed when --limit is not given. */
#define RUNS_DEFAULT_LIMIT 50

#define RUNS_USAGE                                                                                 \
    "csched runs [--job J | --array ID] [-l SELECTOR] [--state S] [--since T] [--limit N] [-w]"

/* What runs shows beyond its ListRunsRequest. */
struct runs_opts {
    uint32_t limit;
    bool watch;
};

/* --since 1h (that long ago) or a time as --at takes it, into unix ms. */
static int parse_since(const char *s, int64_t *out_ms)
{
    struct timespec now;
    int64_t ago;

    if (s != NULL && cs_cli_parse_duration(s, &ago) == 0 &&
        clock_gettime(CLOCK_REALTIME, &now) == 0) {
        *out_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - ago;
        return 0;
    }
    return cs_cli_parse_at(s, out_ms);
}

static int parse_runs(struct cs_cli *cli, int argc, char **argv, Csched__V1__ListRunsRequest *req,
                      struct runs_opts *o)
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
        rc = cs_cli_take_selector(cli, argc, argv, &i, &v);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN) {
            req->label_selector = (char *)v;
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
        if (cs_cli_flag("--array", argc, argv, &i, &v)) {
            if (cs_cli_parse_id(v, &req->array_id) != 0)
                return cs_cli_usage(cli, "--array takes an array ID, a whole number > 0, not '%s'",
                                    v ? v : "");
            continue;
        }
        if (cs_cli_flag("--limit", argc, argv, &i, &v)) {
            if (cs_cli_parse_u32(v, &o->limit) != 0 || o->limit == 0)
                return cs_cli_usage(cli, "--limit takes a whole number > 0, not '%s'", v ? v : "");
            continue;
        }
        if (cs_cli_flag("--since", argc, argv, &i, &v)) {
            if (parse_since(v, &req->since_unix_ms) != 0)
                return cs_cli_usage(cli,
                                    "--since takes a duration ago (90s, 1h, 2d) or a time "
                                    "(2026-12-01T10:00:00Z), not '%s'",
                                    v ? v : "");
            continue;
        }
        if (strcmp(argv[i], "-w") == 0 || strcmp(argv[i], "--watch") == 0) {
            o->watch = true;
            continue;
        }
        rc = cs_cli_take_global_or_fail(cli, argc, argv, &i, "runs", RUNS_USAGE);
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

/* A row under the runs table for ev's run as the event left it: the run as
 * the server has it now, in the event's state (a later one may have come
 * already). arg: the table's widths. */
static int watched_run_row(struct cs_cli *cli, const Csched__V1__Event *ev, struct cs_status *st,
                           void *arg)
{
    Csched__V1__GetRunRequest req = CSCHED__V1__GET_RUN_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    Csched__V1__Run *run;
    struct cs_cli_table t;
    int rc;

    req.run_id = ev->run_id;
    rc = cs_scheduler_get_run(cli->client, &req, &run, &opts, st);
    if (rc != 0)
        return rc;
    if (run->state != ev->state && !cs_cli_state_is_final(ev->state)) {
        run->state = ev->state;
        run->outcome_case = CSCHED__V1__RUN__OUTCOME__NOT_SET;
        run->ended_unix_ms = 0;
    }
    if (cli->format != CS_FORMAT_TABLE) {
        cs_cli_print_message(cli, &run->base);
    } else {
        cs_cli_run_table_init(&t);
        cs_cli_run_table_row(&t, run);
        cs_cli_table_print_keep(&t, cli->out, arg, false);
        fflush(cli->out);
    }
    csched__v1__run__free_unpacked(run, NULL);
    return 0;
}

/* The columns' least widths under -w, so that the rows to come (whose
 * widths the listing cannot know) line up with it: a 6-digit id, the job's
 * name (or 16), the longest state, "signal 15 (TERM)", a time with its
 * offset, "59m59s". */
static void watch_widths(const Csched__V1__ListRunsRequest *req, size_t *widths)
{
    const size_t least[6] = {6, req->job_name[0] ? strlen(req->job_name) : 16, 9, 16, 26, 6};

    memcpy(widths, least, sizeof(least));
}

int cs_cmd_runs(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    struct runs_opts o = {.limit = RUNS_DEFAULT_LIMIT};
    size_t widths[6] = {0};
    struct cs_cli_table t;
    int64_t seq = 0;
    int rc;

    rc = parse_runs(cli, argc, argv, &req, &o);
    if (rc == 0 && o.watch && req.array_id != 0)
        rc = cs_cli_usage(cli, "runs: -w follows a job's or every run, not an array's");
    if (rc == 0 && o.watch)
        rc = cs_cli_last_seq(cli, "watch runs", &seq);
    if (rc != 0)
        return rc;
    if (o.watch)
        watch_widths(&req, widths);
    if (cli->format == CS_FORMAT_TABLE)
        cs_cli_run_table_init(&t);
    const struct cs_cli_pages pages = {
        .what = "list runs",
        .items = "runs",
        .req = &req,
        .limit = o.limit,
        .fetch_cb = fetch_runs,
        .row_cb = run_row,
        .widths = widths,
    };
    rc = cs_cli_list_pages(cli, &pages, &t);
    if (rc == 0 && o.watch)
        rc = cs_cli_list_watch(cli,
                               &(struct cs_cli_list_watch){.what = "watch runs",
                                                           .job_name = req.job_name,
                                                           .state = req.state,
                                                           .selector = req.label_selector,
                                                           .row_cb = watched_run_row,
                                                           .arg = widths},
                               seq);
    return rc;
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

    /* --array ID: every run of that array not yet ended. */
    bool array = argc > 0 && strcmp(argv[0], "--array") == 0;
    rc = parse_id(cli, argc - array, argv + array, "csched cancel ID | --array ID",
                  array ? &req.array_id : &req.run_id);
    if (rc != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    rc = cs_scheduler_cancel_run(cli->client, &req, &run, &opts, &st);
    if (rc != 0) {
        snprintf(what, sizeof(what), "cancel %s %lld", array ? "array" : "run",
                 (long long)(array ? req.array_id : req.run_id));
        return cs_cli_fail(cli, what, rc, &st);
    }
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &run->base);
    else if (array)
        fprintf(cli->out, "array %lld: cancelled (its first run still active, %lld: %s%s)\n",
                (long long)req.array_id, (long long)run->id, cs_cli_state_name(run->state),
                run->cancel_requested ? ", cancel requested" : "");
    else
        fprintf(cli->out, "run %lld: %s%s\n", (long long)run->id, cs_cli_state_name(run->state),
                run->cancel_requested ? " (cancel requested)" : "");
    csched__v1__run__free_unpacked(run, NULL);
    return 0;
}
