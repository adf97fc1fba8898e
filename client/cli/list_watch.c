/* The -w of the list commands (runs, job list, slots): after the listing,
 * rows as things change, from Watch (never by polling). Each event of a
 * run itself (not of an attempt) that the listing's filters let through
 * goes to the command's row callback, which reads what changed again and
 * prints it as a row of the same table, lined up under it. With a label
 * selector, the server says whether the run's job matches it (a ListRuns of
 * that job with the selector has a run), as it did for the listing. The
 * watch starts after the last event committed before the listing, so no
 * change between the two is missed; it resumes after the last event seen
 * if the server goes away.
 *
 * Single-threaded.
 */
#include "cli.h"

int cs_cli_last_seq(struct cs_cli *cli, const char *what, int64_t *seq)
{
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    Csched__V1__Stats *stats;
    struct cs_status st;
    int rc;

    rc = cs_scheduler_get_stats(cli->client, NULL, &stats, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, what, rc, &st);
    *seq = stats->last_seq;
    csched__v1__stats__free_unpacked(stats, NULL);
    return 0;
}

/* Sets *selected to whether ev's job matches the listing's selector (any
 * job without one). 0, or the failure of the call. */
static int job_selected(struct cs_cli *cli, const struct cs_cli_list_watch *w,
                        const Csched__V1__Event *ev, bool *selected, struct cs_status *st)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    Csched__V1__ListRunsResponse *resp;
    int rc;

    *selected = w->selector == NULL || w->selector[0] == '\0';
    if (*selected)
        return 0;
    req.job_name = ev->job_name;
    req.label_selector = (char *)w->selector;
    req.page_size = 1;
    rc = cs_scheduler_list_runs(cli->client, &req, &resp, &opts, st);
    if (rc != 0)
        return rc;
    *selected = resp->n_runs > 0;
    csched__v1__list_runs_response__free_unpacked(resp, NULL);
    return 0;
}

/* Hands the events of one Watch stream to the row callback. One that fails
 * stops the watch, st saying why (cs_cli_watch_follow prints it). */
static int follow_cb(struct cs_cli *cli, struct cs_stream *stream, Csched__V1__WatchRequest *req,
                     struct cs_status *st, void *arg)
{
    const struct cs_cli_list_watch *w = arg;
    Csched__V1__WatchResponse *batch;
    int rc, failed = 0;

    while (failed == 0 && (rc = cs_scheduler_watch_next(stream, &batch, st)) == 1) {
        for (size_t i = 0; i < batch->n_events && failed == 0; i++) {
            const Csched__V1__Event *ev = batch->events[i];
            bool selected;

            req->after_seq = ev->seq;
            if (ev->attempt != 0 || (w->state != 0 && ev->state != w->state))
                continue;
            failed = job_selected(cli, w, ev, &selected, st);
            if (failed == 0 && selected)
                failed = w->row_cb(cli, ev, st, w->arg);
        }
        csched__v1__watch_response__free_unpacked(batch, NULL);
    }
    if (failed != 0)
        return failed < 0 ? failed : CS_CLI_FOLLOW_STOP;
    return rc < 0 ? rc : CS_CLI_FOLLOW_ENDED;
}

int cs_cli_list_watch(struct cs_cli *cli, const struct cs_cli_list_watch *w, int64_t after_seq)
{
    Csched__V1__WatchRequest wreq = CSCHED__V1__WATCH_REQUEST__INIT;

    wreq.job_name = (char *)(w->job_name != NULL ? w->job_name : "");
    wreq.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    wreq.after_seq = after_seq;
    return cs_cli_watch_follow(cli, w->what, &wreq, follow_cb, (void *)w);
}
