/* csched runs -w: after the listing, the runs as they change, from Watch
 * (never by polling): each event of a run itself (not of an attempt) that
 * the listing's filters let through is read again with GetRun and printed
 * as a row of the same table, lined up under it. With a label selector,
 * the server says whether the run's job matches it (a ListRuns of that job
 * with the selector has a run), as it did for the listing. The watch starts after the
 * last event committed before the listing, so no change between the two is
 * missed; it resumes after the last event seen if the server goes away.
 *
 * Single-threaded.
 */
#include "cli.h"

struct runs_watch {
    const Csched__V1__ListRunsRequest *req;
    size_t *widths;
};

/* Prints the row of ev's run as the event left it: the run as the server
 * has it now, in the event's state (a later one may have come already). */
static int print_run_row(struct cs_cli *cli, const struct runs_watch *w,
                         const Csched__V1__Event *ev, struct cs_status *st)
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
        cs_cli_table_print_keep(&t, cli->out, w->widths, false);
        fflush(cli->out);
    }
    csched__v1__run__free_unpacked(run, NULL);
    return 0;
}

/* Sets *selected to whether ev's job matches the listing's selector (any
 * job without one). 0, or the failure of the call. */
static int job_selected(struct cs_cli *cli, const struct runs_watch *w, const Csched__V1__Event *ev,
                        bool *selected, struct cs_status *st)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    Csched__V1__ListRunsResponse *resp;
    int rc;

    *selected = w->req->label_selector[0] == '\0';
    if (*selected)
        return 0;
    req.job_name = ev->job_name;
    req.label_selector = w->req->label_selector;
    req.page_size = 1;
    rc = cs_scheduler_list_runs(cli->client, &req, &resp, &opts, st);
    if (rc != 0)
        return rc;
    *selected = resp->n_runs > 0;
    csched__v1__list_runs_response__free_unpacked(resp, NULL);
    return 0;
}

/* Prints the rows of one Watch stream. A GetRun that fails stops the
 * watch, st saying why (cs_cli_watch_follow prints it). */
static int follow_cb(struct cs_cli *cli, struct cs_stream *stream, Csched__V1__WatchRequest *req,
                     struct cs_status *st, void *arg)
{
    const struct runs_watch *w = arg;
    Csched__V1__WatchResponse *batch;
    int rc, failed = 0;

    while (failed == 0 && (rc = cs_scheduler_watch_next(stream, &batch, st)) == 1) {
        for (size_t i = 0; i < batch->n_events && failed == 0; i++) {
            const Csched__V1__Event *ev = batch->events[i];

            req->after_seq = ev->seq;
            if (ev->attempt != 0 || (w->req->state != 0 && ev->state != w->req->state))
                continue;
            bool selected;
            failed = job_selected(cli, w, ev, &selected, st);
            if (failed == 0 && selected)
                failed = print_run_row(cli, w, ev, st);
        }
        csched__v1__watch_response__free_unpacked(batch, NULL);
    }
    if (failed != 0)
        return failed < 0 ? failed : CS_CLI_FOLLOW_STOP;
    return rc < 0 ? rc : CS_CLI_FOLLOW_ENDED;
}

int cs_cli_runs_watch(struct cs_cli *cli, const Csched__V1__ListRunsRequest *req, int64_t after_seq,
                      size_t *widths)
{
    Csched__V1__WatchRequest wreq = CSCHED__V1__WATCH_REQUEST__INIT;
    struct runs_watch w = {req, widths};

    wreq.job_name = req->job_name;
    wreq.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    wreq.after_seq = after_seq;
    return cs_cli_watch_follow(cli, "watch runs", &wreq, follow_cb, &w);
}
