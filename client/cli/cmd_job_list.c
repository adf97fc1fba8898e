/* csched job list [-l SELECTOR] [--state S] [--absolute] [--sort-by KEY] [-w]:
 * every job (or those whose labels the server finds the selector matches, in
 * the state asked for), a line each,
 * with what an operator scans for (joblist.c makes the table); -w then prints
 * a job's row again each time a change of one of its runs changes the row
 * (list_watch.c).
 *
 * The API has no call that gives a job with its last run and its running
 * count, so the table costs, per page of up to 100 jobs, one ListJobs and
 * one ListRuns per job (its newest LAST_WINDOW runs, where the last finished
 * one is looked for), plus one ListRuns of the running runs of every job for
 * the whole listing (a page per 1000 running runs). -o json and yaml make
 * the ListJobs calls alone, as before.
 */
#include <errno.h>
#include <grpc/status.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define USAGE                                                                                      \
    "csched job list [-l SELECTOR] [--state running|paused|failed|never-run] [-o wide] "           \
    "[--absolute] [--sort-by name|next|last|running] [-w]"
#define JOBS_PAGE 100
/* How many of a job's newest runs are searched for its last finished one;
 * a job with more queued or running than this shows LAST "-". */
#define LAST_WINDOW 10

/* What the listing read: the pages of jobs and, per job, its latest runs;
 * every row points into them. */
struct listing {
    Csched__V1__ListJobsResponse **pages;
    size_t npages;
    Csched__V1__ListRunsResponse **latest; /* one per row */
    struct cs_cli_job_row *rows;
    size_t nrows, cap;
};

static void listing_free(struct listing *l)
{
    for (size_t i = 0; i < l->npages; i++)
        csched__v1__list_jobs_response__free_unpacked(l->pages[i], NULL);
    for (size_t i = 0; i < l->nrows; i++) {
        if (l->latest[i] != NULL)
            csched__v1__list_runs_response__free_unpacked(l->latest[i], NULL);
    }
    free(l->pages);
    free(l->latest);
    free(l->rows);
}

/* Reads the latest runs of row's job into *latest (the caller frees it) and
 * points its LAST at the newest finished one. 0, or the call's failure with
 * st saying why. */
static int read_last(struct cs_cli *cli, struct cs_cli_job_row *row,
                     Csched__V1__ListRunsResponse **latest, struct cs_status *st)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    Csched__V1__ListRunsResponse *resp;
    int rc;

    req.job_name = (char *)row->job->name;
    req.page_size = LAST_WINDOW;
    rc = cs_scheduler_list_runs(cli->client, &req, &resp, &opts, st);
    if (rc != 0)
        return rc;
    *latest = resp;
    for (size_t r = 0; r < resp->n_runs && row->last == NULL; r++) {
        if (cs_cli_state_is_final(resp->runs[r]->state))
            row->last = resp->runs[r];
    }
    return 0;
}

/* Adds a page's jobs as rows, each with its last run. */
static int add_page(struct cs_cli *cli, struct listing *l, Csched__V1__ListJobsResponse *page)
{
    l->pages = cs_cli_xrealloc(l->pages, (l->npages + 1) * sizeof(*l->pages));
    l->pages[l->npages++] = page;
    for (size_t j = 0; j < page->n_jobs; j++) {
        struct cs_status st;
        int rc;

        if (l->nrows == l->cap) {
            l->cap = l->cap ? l->cap * 2 : JOBS_PAGE;
            l->rows = cs_cli_xrealloc(l->rows, l->cap * sizeof(*l->rows));
            l->latest = cs_cli_xrealloc(l->latest, l->cap * sizeof(*l->latest));
        }
        l->rows[l->nrows] = (struct cs_cli_job_row){.job = page->jobs[j]};
        l->latest[l->nrows] = NULL;
        rc = read_last(cli, &l->rows[l->nrows], &l->latest[l->nrows], &st);
        l->nrows++;
        if (rc != 0)
            return cs_cli_fail(cli, "list runs", rc, &st);
    }
    return 0;
}

/* Counts the running runs of every row's job (of job_name's only, unless
 * NULL), from one paged ListRuns. 0, or the call's failure with st saying
 * why. */
static int count_running(struct cs_cli *cli, struct listing *l, const char *job_name,
                         struct cs_status *st)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    char *token = NULL;

    req.job_name = (char *)(job_name != NULL ? job_name : "");
    req.state = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
    req.page_size = 1000;
    do {
        Csched__V1__ListRunsResponse *resp;
        int rc;

        req.page_token = token != NULL ? token : "";
        rc = cs_scheduler_list_runs(cli->client, &req, &resp, &opts, st);
        free(token);
        token = NULL;
        if (rc != 0)
            return rc;
        for (size_t r = 0; r < resp->n_runs; r++) {
            for (size_t i = 0; i < l->nrows; i++) {
                if (strcmp(l->rows[i].job->name, resp->runs[r]->job_name) == 0)
                    l->rows[i].running++;
            }
        }
        if (resp->next_page_token[0] != '\0')
            token = cs_cli_xstrdup(resp->next_page_token);
        csched__v1__list_runs_response__free_unpacked(resp, NULL);
    } while (token != NULL);
    return 0;
}

/* Reads every page of jobs req's filters match with what the table shows of
 * each. */
static int read_listing(struct cs_cli *cli, struct listing *l, Csched__V1__ListJobsRequest *req)
{
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    const char *token = "";
    struct cs_status st;
    int rc;

    req->page_size = JOBS_PAGE;
    do {
        Csched__V1__ListJobsResponse *page;

        req->page_token = (char *)token;
        rc = cs_scheduler_list_jobs(cli->client, req, &page, &opts, &st);
        if (rc != 0)
            return cs_cli_fail(cli, "list jobs", rc, &st);
        rc = add_page(cli, l, page);
        if (rc != 0)
            return rc;
        token = page->next_page_token;
    } while (token[0] != '\0');
    rc = count_running(cli, l, NULL, &st);
    return rc != 0 ? cs_cli_fail(cli, "list running runs", rc, &st) : 0;
}

static int fetch_jobs(struct cs_cli *cli, void *req, uint32_t page_size, const char *page_token,
                      ProtobufCMessage **resp, const struct cs_call_opts *opts,
                      struct cs_status *st)
{
    Csched__V1__ListJobsRequest *r = req;
    r->page_size = page_size;
    r->page_token = (char *)page_token;
    return cs_scheduler_list_jobs(cli->client, r, (Csched__V1__ListJobsResponse **)resp, opts, st);
}

/* --state's words, in JobStateFilter's order from 1. */
static const char *const STATE_WORDS[] = {"running", "paused", "failed", "never-run"};

static int parse_state(const char *word, Csched__V1__JobStateFilter *state)
{
    for (size_t i = 0; i < sizeof(STATE_WORDS) / sizeof(STATE_WORDS[0]); i++) {
        if (strcmp(word, STATE_WORDS[i]) == 0) {
            *state = (Csched__V1__JobStateFilter)(i + 1);
            return 0;
        }
    }
    return -EINVAL;
}

/* The flags into v, req's filters and *watch. 0 or an exit code. */
static int parse(struct cs_cli *cli, int argc, char **argv, struct cs_cli_job_view *v,
                 Csched__V1__ListJobsRequest *req, bool *watch)
{
    for (int i = 0; i < argc; i++) {
        const char *s;
        int rc;

        if (strcmp(argv[i], "--absolute") == 0) {
            v->absolute = true;
            continue;
        }
        if (strcmp(argv[i], "-w") == 0 || strcmp(argv[i], "--watch") == 0) {
            *watch = true;
            continue;
        }
        rc = cs_cli_take_selector(cli, argc, argv, &i, &s);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN) {
            req->label_selector = (char *)s;
            continue;
        }
        rc = cs_cli_take_flag_value(cli, "--state", "running, paused, failed or never-run", argc,
                                    argv, &i, &s);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN) {
            if (parse_state(s, &req->state) != 0)
                return cs_cli_usage(
                    cli, "--state takes running, paused, failed or never-run, not '%s'", s);
            continue;
        }
        rc = cs_cli_take_flag_value(cli, "--sort-by", "name, next, last or running", argc, argv, &i,
                                    &s);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN) {
            if (cs_cli_parse_job_sort(s, &v->sort) != 0)
                return cs_cli_usage(cli, "--sort-by takes name, next, last or running, not '%s'",
                                    s);
            continue;
        }
        rc = cs_cli_take_global_or_fail(cli, argc, argv, &i, "job list", USAGE);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The row last printed for a job, so that a change of its runs that leaves
 * the row as it was (queued, starting, running: RUNNING 1 each time) prints
 * nothing. */
struct printed_row {
    char *job_name;
    char *text;
};

/* What a job list -w prints its rows with. */
struct jobs_watch {
    struct cs_cli_job_view *view;
    size_t widths[8];
    struct printed_row *printed;
    size_t nprinted;
};

/* Keeps text (taken) as the row last printed for job_name; false, with text
 * freed, when it is that row already. */
static bool remember_row(struct jobs_watch *w, const char *job_name, char *text)
{
    struct printed_row *r = NULL;

    for (size_t i = 0; i < w->nprinted && r == NULL; i++)
        if (strcmp(w->printed[i].job_name, job_name) == 0)
            r = &w->printed[i];
    if (r != NULL && strcmp(r->text, text) == 0) {
        free(text);
        return false;
    }
    if (r == NULL) {
        w->printed = cs_cli_xrealloc(w->printed, (w->nprinted + 1) * sizeof(*w->printed));
        r = &w->printed[w->nprinted++];
        *r = (struct printed_row){.job_name = cs_cli_xstrdup(job_name)};
    }
    free(r->text);
    r->text = text;
    return true;
}

/* t (its header when header) laid out as -w prints it, lined up under
 * what came before; frees t. */
static char *render(struct jobs_watch *w, struct cs_cli_table *t, bool header)
{
    char *text;
    size_t len;
    FILE *f = cs_cli_memstream(&text, &len);

    cs_cli_table_print_keep(t, f, w->widths, header);
    cs_cli_memstream_close(f);
    return text;
}

/* Remembers the listing's rows as -w would print each of them now. */
static void remember_listing(struct jobs_watch *w, struct cs_cli_job_row *rows, size_t n)
{
    struct cs_cli_table t;

    for (size_t i = 0; i < n; i++) {
        cs_cli_job_table(&t, &rows[i], 1, w->view);
        (void)remember_row(w, rows[i].job->name, render(w, &t, false));
    }
}

static void jobs_watch_free(struct jobs_watch *w)
{
    for (size_t i = 0; i < w->nprinted; i++) {
        free(w->printed[i].job_name);
        free(w->printed[i].text);
    }
    free(w->printed);
}

/* A row under the job table for ev's job as it is now: its last finished
 * run and its running ones. A job deleted since has no row. */
static int watched_job_row(struct cs_cli *cli, const Csched__V1__Event *ev, struct cs_status *st,
                           void *arg)
{
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    struct jobs_watch *w = arg;
    struct listing l = {0};
    struct cs_cli_table t;
    struct timespec now;
    char *text;
    int rc;

    req.name = ev->job_name;
    Csched__V1__Job *job;
    rc = cs_scheduler_get_job(cli->client, &req, &job, &opts, st);
    if (rc != 0)
        return rc == GRPC_STATUS_NOT_FOUND ? 0 : rc;
    if (cli->format != CS_FORMAT_TABLE) {
        cs_cli_print_message(cli, &job->base);
        csched__v1__job__free_unpacked(job, NULL);
        return 0;
    }
    l.rows = cs_cli_xrealloc(NULL, sizeof(*l.rows));
    l.latest = cs_cli_xrealloc(NULL, sizeof(*l.latest));
    l.rows[0] = (struct cs_cli_job_row){.job = job};
    l.latest[0] = NULL;
    l.nrows = 1;
    rc = read_last(cli, &l.rows[0], &l.latest[0], st);
    if (rc == 0)
        rc = count_running(cli, &l, job->name, st);
    if (rc == 0) {
        (void)clock_gettime(CLOCK_REALTIME, &now);
        w->view->now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
        cs_cli_job_table(&t, l.rows, 1, w->view);
        text = render(w, &t, false);
        if (remember_row(w, job->name, text)) {
            fputs(text, cli->out);
            fflush(cli->out);
        }
    }
    listing_free(&l);
    csched__v1__job__free_unpacked(job, NULL);
    return rc;
}

int cs_cmd_job_list(struct cs_cli *cli, int argc, char **argv)
{
    struct cs_cli_job_view v = {0};
    /* The least widths of the rows to come, which the listing cannot know:
     * a name of 16, "CANCELLED 59m ago", "in 59m". */
    struct jobs_watch w = {.view = &v, .widths = {16, 8, 6, 7, 17, 7, 12, 0}};
    struct listing l = {0};
    struct cs_cli_table t;
    struct timespec now;
    Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    bool watch = false;
    int64_t seq = 0;
    int rc;

    rc = parse(cli, argc, argv, &v, &req, &watch);
    if (rc == 0 && watch)
        rc = cs_cli_last_seq(cli, "watch jobs", &seq);
    if (rc != 0)
        return rc;
    if (cli->format != CS_FORMAT_TABLE) {
        const struct cs_cli_pages pages = {.what = "list jobs",
                                           .items = "jobs",
                                           .req = &req,
                                           .limit = UINT32_MAX,
                                           .fetch_cb = fetch_jobs};

        rc = cs_cli_list_pages(cli, &pages, NULL);
    } else {
        rc = read_listing(cli, &l, &req);
        if (rc == 0) {
            /* CLOCK_REALTIME cannot fail. */
            (void)clock_gettime(CLOCK_REALTIME, &now);
            v.wide = cli->wide;
            v.now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
            cs_cli_job_table(&t, l.rows, l.nrows, &v);
            if (watch) {
                char *text = render(&w, &t, true);

                fputs(text, cli->out);
                free(text);
                remember_listing(&w, l.rows, l.nrows);
            } else
                cs_cli_table_print(&t, cli->out, "");
            fflush(cli->out);
        }
        listing_free(&l);
    }
    if (rc == 0 && watch)
        rc = cs_cli_list_watch(cli,
                               &(struct cs_cli_list_watch){.what = "watch jobs",
                                                           .selector = req.label_selector,
                                                           .row_cb = watched_job_row,
                                                           .arg = &w},
                               seq);
    jobs_watch_free(&w);
    return rc;
}
