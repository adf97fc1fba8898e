/* csched apply -f FILE [--dry-run] [--prune -l KEY=VALUE]: makes the
 * server's jobs what a YAML job file says. Each job is compared with the
 * stored one by its settable fields: a new job is created, a changed one
 * updated, an identical one left alone (its version stays). --dry-run only
 * says what would change, with a diff; --prune also deletes the jobs with
 * the label KEY=VALUE that the file no longer has. Every job is tried; the
 * exit code is the first failure's, and a failure names the job's file and
 * line.
 */
#include <errno.h>
#include <grpc/status.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define APPLY_USAGE "csched apply -f FILE [--dry-run] [--prune -l KEY=VALUE]"

struct apply {
    struct cs_cli *cli;
    const char *path;
    bool dry_run;
    const char *label; /* --prune's "KEY=VALUE", or NULL */
    size_t shown;      /* results written (JSON: for the commas) */
};

/* What apply does to one job, and the diff of its settable fields. */
struct change {
    const char *name;
    const char *action; /* created, updated, unchanged, deleted */
    unsigned line;      /* in the file; 0 for a pruned job */
    const Csched__V1__Job *job;
    char **diff; /* "- PATH: VALUE" (stored) and "+ PATH: VALUE" (file) */
    size_t n_diff;
};

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The job's settable fields as sorted "PATH: VALUE" lines (heap strings in a
 * heap array); the count. NULL job: none. */
static size_t flat_lines(const Csched__V1__Job *job, char ***out)
{
    char *text = NULL, *save = NULL, **lines;
    size_t len = 0, n = 0;
    FILE *f;

    *out = NULL;
    if (job == NULL)
        return 0;
    f = open_memstream(&text, &len);
    if (f == NULL)
        abort();
    cs_cli_flatten(f, "", &job->base);
    fclose(f);
    lines = cs_cli_xcalloc(len + 1, sizeof(*lines));
    for (char *l = strtok_r(text, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    qsort(lines, n, sizeof(*lines), cmp_lines);
    for (size_t i = 0; i < n; i++)
        lines[i] = cs_cli_xstrdup(lines[i]);
    free(text);
    *out = lines;
    return n;
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

static void diff_add(struct change *c, char sign, const char *line)
{
    size_t len = strlen(line) + 3;

    c->diff[c->n_diff] = cs_cli_xmalloc(len);
    snprintf(c->diff[c->n_diff++], len, "%c %s", sign, line);
}

/* c->diff from the stored job's settable fields (NULL: none) to want's. */
static void job_diff(struct change *c, const Csched__V1__Job *stored, const Csched__V1__Job *want)
{
    Csched__V1__Job have;
    char **a = NULL, **b;
    size_t na = 0, nb, i = 0, j = 0;

    if (stored != NULL) {
        /* Only what a job file sets is compared: not what the server keeps. */
        have = *stored;
        have.version = 0;
        have.created_unix_ms = have.updated_unix_ms = have.paused_unix_ms = 0;
        have.created_by = have.updated_by = have.pause_reason = (char *)"";
        have.paused = false;
        have.n_next_fires = 0;
        na = flat_lines(&have, &a);
    }
    nb = flat_lines(want, &b);
    c->diff = cs_cli_xcalloc(na + nb + 1, sizeof(*c->diff));
    c->n_diff = 0;
    while (i < na || j < nb) {
        int order = i == na ? 1 : j == nb ? -1 : strcmp(a[i], b[j]);

        if (order < 0)
            diff_add(c, '-', a[i++]);
        else if (order > 0)
            diff_add(c, '+', b[j++]);
        else
            i++, j++;
    }
    free_lines(a, na);
    free_lines(b, nb);
}

/* One result: a line (and, with --dry-run, the diff) for people, or one
 * object of the JSON document's results. */
static void show(struct apply *ap, const struct change *c)
{
    bool would = ap->dry_run && strcmp(c->action, "unchanged") != 0;
    FILE *f = ap->cli->out;

    if (ap->cli->format == CS_FORMAT_TABLE) {
        fprintf(f, "job %s %s%s", c->name, would ? "would be " : "", c->action);
        if (!ap->dry_run && c->job != NULL)
            fprintf(f, " (version %llu)", (unsigned long long)c->job->version);
        fputc('\n', f);
        for (size_t i = 0; ap->dry_run && i < c->n_diff; i++)
            fprintf(f, "    %s\n", c->diff[i]);
        return;
    }
    fputs(ap->shown++ > 0 ? ",{\"name\":" : "{\"name\":", f);
    cs_json_write_string(f, c->name, strlen(c->name));
    fprintf(f, ",\"action\":\"%s\",\"line\":%u,\"diff\":[", c->action, c->line);
    for (size_t i = 0; i < c->n_diff; i++) {
        if (i > 0)
            fputc(',', f);
        cs_json_write_string(f, c->diff[i], strlen(c->diff[i]));
    }
    fputc(']', f);
    if (c->job != NULL) {
        fputs(",\"job\":", f);
        cs_json_write_message(f, &c->job->base);
    }
    fputc('}', f);
}

static int put_job(struct cs_cli *cli, Csched__V1__Job *job, bool update, Csched__V1__Job **resp,
                   struct cs_status *st)
{
    Csched__V1__CreateJobRequest creq = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__UpdateJobRequest ureq = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);

    if (update) {
        ureq.job = job;
        return cs_scheduler_update_job(cli->client, &ureq, resp, &opts, st);
    }
    creq.job = job;
    return cs_scheduler_create_job(cli->client, &creq, resp, &opts, st);
}

/* Applies one job of the file. Returns 0 or an exit code (printed). */
static int apply_job(struct apply *ap, Csched__V1__Job *job, unsigned line)
{
    Csched__V1__GetJobRequest greq = CSCHED__V1__GET_JOB_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(ap->cli);
    Csched__V1__Job *stored = NULL, *resp = NULL;
    struct change c = {.name = job->name, .line = line};
    struct cs_status st;
    char what[600];
    int rc;

    snprintf(what, sizeof(what), "%s:%u: apply job %s", ap->path, line, job->name);
    greq.name = job->name;
    rc = cs_scheduler_get_job(ap->cli->client, &greq, &stored, &opts, &st);
    if (rc == GRPC_STATUS_NOT_FOUND)
        stored = NULL;
    else if (rc != 0)
        return cs_cli_fail(ap->cli, what, rc, &st);
    job_diff(&c, stored, job);
    c.action = stored == NULL ? "created" : c.n_diff == 0 ? "unchanged" : "updated";
    c.job = stored;
    rc = 0;
    if (!ap->dry_run && c.n_diff > 0) {
        rc = put_job(ap->cli, job, stored != NULL, &resp, &st);
        if (rc != 0) {
            rc = cs_cli_fail(ap->cli, what, rc, &st);
            goto out;
        }
        c.job = resp;
    }
    show(ap, &c);
out:
    free_lines(c.diff, c.n_diff);
    if (resp != NULL)
        csched__v1__job__free_unpacked(resp, NULL);
    if (stored != NULL)
        csched__v1__job__free_unpacked(stored, NULL);
    return rc;
}

/* Whether job has the label "KEY=VALUE" and is none of the file's. */
static bool prunable(const Csched__V1__Job *job, const char *label, Csched__V1__Job **jobs,
                     size_t n)
{
    size_t klen = (size_t)(strchr(label, '=') - label);
    bool labelled = false;

    for (size_t i = 0; i < job->n_labels; i++)
        labelled |= strlen(job->labels[i]->key) == klen &&
                    strncmp(job->labels[i]->key, label, klen) == 0 &&
                    strcmp(job->labels[i]->value, label + klen + 1) == 0;
    for (size_t i = 0; labelled && i < n; i++)
        labelled = strcmp(jobs[i]->name, job->name) != 0;
    return labelled;
}

static int prune_job(struct apply *ap, const Csched__V1__Job *job)
{
    Csched__V1__DeleteJobRequest req = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(ap->cli);
    struct change c = {.name = job->name, .action = "deleted"};
    Csched__V1__DeleteJobResponse *resp;
    struct cs_status st;
    char what[300];
    int rc;

    job_diff(&c, job, NULL);
    if (!ap->dry_run) {
        req.name = job->name;
        rc = cs_scheduler_delete_job(ap->cli->client, &req, &resp, &opts, &st);
        if (rc != 0) {
            free_lines(c.diff, c.n_diff);
            snprintf(what, sizeof(what), "prune job %s", job->name);
            return cs_cli_fail(ap->cli, what, rc, &st);
        }
        csched__v1__delete_job_response__free_unpacked(resp, NULL);
    }
    show(ap, &c);
    free_lines(c.diff, c.n_diff);
    return 0;
}

/* Deletes the labelled jobs the file does not name. 0 or the first failure. */
static int prune(struct apply *ap, Csched__V1__Job **jobs, size_t n)
{
    Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(ap->cli);
    char *token = NULL;
    struct cs_status st;
    int first = 0, rc;

    do {
        Csched__V1__ListJobsResponse *resp;

        req.page_size = 1000;
        req.page_token = token != NULL ? token : (char *)"";
        rc = cs_scheduler_list_jobs(ap->cli->client, &req, &resp, &opts, &st);
        free(token);
        token = NULL;
        if (rc != 0)
            return cs_cli_fail(ap->cli, "prune: list jobs", rc, &st);
        for (size_t i = 0; i < resp->n_jobs; i++) {
            if (prunable(resp->jobs[i], ap->label, jobs, n)) {
                rc = prune_job(ap, resp->jobs[i]);
                first = first ? first : rc;
            }
        }
        if (resp->next_page_token[0] != '\0')
            token = cs_cli_xstrdup(resp->next_page_token);
        csched__v1__list_jobs_response__free_unpacked(resp, NULL);
    } while (token != NULL);
    return first;
}

static int parse_apply(struct apply *ap, int argc, char **argv)
{
    bool prune = false;

    for (int i = 0; i < argc; i++) {
        const char *v;
        int rc;

        if (strcmp(argv[i], "--dry-run") == 0) {
            ap->dry_run = true;
            continue;
        }
        if (strcmp(argv[i], "--prune") == 0) {
            prune = true;
            continue;
        }
        rc = cs_cli_take_flag_value(ap->cli, "-f", "a file name", argc, argv, &i, &v);
        if (rc == CS_CLI_FLAG_NOT_MINE)
            rc = cs_cli_take_flag_value(ap->cli, "--file", "a file name", argc, argv, &i, &v);
        if (rc == CS_CLI_FLAG_TAKEN) {
            ap->path = v;
            continue;
        }
        if (rc == CS_CLI_FLAG_NOT_MINE)
            rc = cs_cli_take_flag_value(ap->cli, "-l", "KEY=VALUE", argc, argv, &i, &v);
        if (rc == CS_CLI_FLAG_NOT_MINE)
            rc = cs_cli_take_flag_value(ap->cli, "--selector", "KEY=VALUE", argc, argv, &i, &v);
        if (rc == CS_CLI_FLAG_TAKEN) {
            ap->label = v;
            continue;
        }
        if (rc < 0)
            return CS_EXIT_USAGE;
        rc = cs_cli_take_global_or_fail(ap->cli, argc, argv, &i, "apply", APPLY_USAGE);
        if (rc != 0)
            return rc;
    }
    if (ap->path == NULL)
        return cs_cli_usage(ap->cli, "apply: missing -f FILE; usage: %s", APPLY_USAGE);
    if (prune != (ap->label != NULL))
        return cs_cli_usage(ap->cli, "apply: --prune and -l KEY=VALUE go together");
    if (ap->label != NULL && (strchr(ap->label, '=') == NULL || ap->label[0] == '='))
        return cs_cli_usage(ap->cli, "apply: -l takes KEY=VALUE, not '%s'", ap->label);
    return 0;
}

int cs_cmd_apply(struct cs_cli *cli, int argc, char **argv)
{
    struct apply ap = {.cli = cli};
    Csched__V1__Job **jobs;
    unsigned *lines;
    char err[512];
    int first = 0;
    size_t n;
    int rc;

    rc = parse_apply(&ap, argc, argv);
    if (rc != 0)
        return rc;
    rc = cs_cli_jobfile_load(ap.path, &jobs, &lines, &n, err, sizeof(err));
    if (rc != 0) {
        fprintf(cli->err, "csched: %s\n", err);
        return rc == -EINVAL ? CS_EXIT_DATAERR : rc == -ENOMEM ? CS_EXIT_SOFTWARE : CS_EXIT_NOINPUT;
    }
    if (cli->format != CS_FORMAT_TABLE)
        fprintf(cli->out, "{\"dryRun\":%s,\"results\":[", ap.dry_run ? "true" : "false");
    for (size_t i = 0; i < n; i++) {
        rc = apply_job(&ap, jobs[i], lines[i]);
        first = first ? first : rc;
    }
    if (ap.label != NULL) {
        rc = prune(&ap, jobs, n);
        first = first ? first : rc;
    }
    if (cli->format != CS_FORMAT_TABLE)
        fputs("]}\n", cli->out);
    cs_cli_jobs_free(jobs, n);
    free(lines);
    return first;
}
