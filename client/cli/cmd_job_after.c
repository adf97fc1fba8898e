/* csched job graph NAME [--dot]: the jobs NAME runs after and the jobs that
 * run after it, all the way up and down (docs/dependencies.md), as text or
 * as Graphviz's DOT. Every job is read with ListJobs: the graph's edges are
 * the after lists of the jobs.
 *
 * csched job causes NAME [--limit N]: what became of each cause of NAME's
 * runs after its upstreams (ListDependencyCauses): ran, not run and why,
 * or waiting.
 *
 * Single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define GRAPH_USAGE "csched job graph NAME [--dot]"

/* One edge: down runs after up when up ends as on asks. */
struct edge {
    const char *up, *down;
    Csched__V1__DependencyOn on;
    bool shown;
};

struct graph {
    Csched__V1__ListJobsResponse **pages;
    size_t n_pages;
    struct edge *edges;
    size_t n_edges;
};

static int read_jobs(struct cs_cli *cli, struct graph *g)
{
    Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    const char *token = "";
    struct cs_status st;

    do {
        Csched__V1__ListJobsResponse *resp;
        req.page_size = 1000;
        req.page_token = (char *)token;
        int rc = cs_scheduler_list_jobs(cli->client, &req, &resp, &opts, &st);
        if (rc != 0)
            return cs_cli_fail(cli, "job graph: list jobs", rc, &st);
        g->pages = cs_cli_xrealloc(g->pages, (g->n_pages + 1) * sizeof(*g->pages));
        g->pages[g->n_pages++] = resp;
        for (size_t i = 0; i < resp->n_jobs; i++) {
            const Csched__V1__Job *job = resp->jobs[i];
            for (size_t j = 0; j < job->n_after; j++) {
                g->edges = cs_cli_xrealloc(g->edges, (g->n_edges + 1) * sizeof(*g->edges));
                g->edges[g->n_edges++] =
                    (struct edge){job->after[j]->job, job->name, job->after[j]->on, false};
            }
        }
        token = resp->next_page_token;
    } while (token[0] != '\0');
    return 0;
}

static bool job_exists(const struct graph *g, const char *name)
{
    for (size_t p = 0; p < g->n_pages; p++)
        for (size_t i = 0; i < g->pages[p]->n_jobs; i++)
            if (strcmp(g->pages[p]->jobs[i]->name, name) == 0)
                return true;
    return false;
}

/* Marks the edges reachable from name, upwards or downwards. */
static void walk(struct graph *g, const char *name, bool up)
{
    for (size_t i = 0; i < g->n_edges; i++) {
        struct edge *e = &g->edges[i];
        if (e->shown || strcmp(up ? e->down : e->up, name) != 0)
            continue;
        e->shown = true;
        walk(g, up ? e->up : e->down, up);
    }
}

static void print_text(FILE *f, const struct graph *g, const char *name)
{
    size_t n = 0;
    fprintf(f, "job %s\n", name);
    for (size_t i = 0; i < g->n_edges; i++) {
        const struct edge *e = &g->edges[i];
        if (!e->shown)
            continue;
        fprintf(f, "  %s -> %s  (on %s%s)\n", e->up, e->down, cs_cli_after_on_name(e->on),
                job_exists(g, e->up) ? "" : "; no such job yet");
        n++;
    }
    if (n == 0)
        fprintf(f, "  runs after no job, and no job runs after it\n");
}

static void print_dot(FILE *f, const struct graph *g, const char *name)
{
    fprintf(f, "digraph \"%s\" {\n  \"%s\" [style=bold];\n", name, name);
    for (size_t i = 0; i < g->n_edges; i++) {
        const struct edge *e = &g->edges[i];
        if (e->shown)
            fprintf(f, "  \"%s\" -> \"%s\" [label=\"%s\"];\n", e->up, e->down,
                    cs_cli_after_on_name(e->on));
    }
    fprintf(f, "}\n");
}

int cs_cmd_job_graph(struct cs_cli *cli, int argc, char **argv)
{
    const char *name = NULL;
    bool dot = false;
    struct graph g = {0};
    int rc;

    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--dot") == 0) {
            dot = true;
            continue;
        }
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &name, "job graph", GRAPH_USAGE);
        if (rc != 0)
            return rc;
    }
    if (name == NULL)
        return cs_cli_usage(cli, "missing job NAME; usage: %s", GRAPH_USAGE);
    rc = read_jobs(cli, &g);
    if (rc == 0 && !job_exists(&g, name))
        rc = cs_cli_usage(cli, "job graph: no job %s", name);
    if (rc == 0) {
        walk(&g, name, true);
        walk(&g, name, false);
        if (dot)
            print_dot(cli->out, &g, name);
        else
            print_text(cli->out, &g, name);
    }
    for (size_t i = 0; i < g.n_pages; i++)
        csched__v1__list_jobs_response__free_unpacked(g.pages[i], NULL);
    free(g.pages);
    free(g.edges);
    return rc;
}

#define CAUSES_USAGE "csched job causes NAME [--limit N]"

static const char *outcome_word(Csched__V1__DependencyOutcome o)
{
    switch (o) {
    case CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_WAITING:
        return "waiting";
    case CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_RAN:
        return "ran";
    case CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_NOT_RUN:
        return "not run";
    default:
        return "?";
    }
}

void cs_cli_print_dependency_causes(FILE *f, const Csched__V1__ListDependencyCausesResponse *resp)
{
    char t[32];

    if (resp->n_causes == 0) {
        fprintf(f, "no causes recorded\n");
        return;
    }
    for (size_t i = 0; i < resp->n_causes; i++) {
        const Csched__V1__DependencyCause *c = resp->causes[i];
        cs_cli_format_time(c->created_unix_ms, t, sizeof(t));
        fprintf(f, "%s  %s  %s", t, c->cause, outcome_word(c->outcome));
        if (c->outcome == CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_RAN)
            fprintf(f, ": run %lld", (long long)c->run_id);
        else if (c->reason[0] != '\0')
            fprintf(f, ": %s", c->reason);
        fputc('\n', f);
        for (size_t j = 0; j < c->n_upstreams; j++)
            fprintf(f, "    after %s run %lld\n", c->upstreams[j]->job,
                    (long long)c->upstreams[j]->run_id);
    }
}

int cs_cmd_job_causes(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ListDependencyCausesRequest req = CSCHED__V1__LIST_DEPENDENCY_CAUSES_REQUEST__INIT;
    Csched__V1__ListDependencyCausesResponse *resp;
    struct cs_call_opts opts;
    struct cs_status st;
    const char *name = NULL, *v;
    uint32_t limit = 0;
    int rc;

    for (int i = 0; i < argc; i++) {
        if (cs_cli_flag("--limit", argc, argv, &i, &v)) {
            if (cs_cli_parse_u32(v, &limit) != 0 || limit == 0)
                return cs_cli_usage(cli, "--limit takes a whole number > 0, not '%s'", v ? v : "");
            continue;
        }
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &name, "job causes", CAUSES_USAGE);
        if (rc != 0)
            return rc;
    }
    if (name == NULL)
        return cs_cli_usage(cli, "missing job NAME; usage: %s", CAUSES_USAGE);
    opts = cs_cli_call_opts(cli);
    req.job_name = (char *)name;
    req.limit = limit;
    rc = cs_scheduler_list_dependency_causes(cli->client, &req, &resp, &opts, &st);
    if (rc != 0) {
        char what[300];
        snprintf(what, sizeof(what), "list the causes of job %s", name);
        return cs_cli_fail(cli, what, rc, &st);
    }
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &resp->base);
    else
        cs_cli_print_dependency_causes(cli->out, resp);
    csched__v1__list_dependency_causes_response__free_unpacked(resp, NULL);
    return 0;
}
