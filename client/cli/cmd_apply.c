/* csched apply -f FILE: creates each job of a YAML job file, or replaces it
 * when it exists. Every job is tried; the exit code is the first failure's. */
#include <errno.h>
#include <grpc/status.h>
#include <string.h>

#include "cli.h"

/* Creates job, or updates it if the name is taken. Returns 0 or an exit
 * code (the error is printed). */
static int apply_one(struct cs_cli *cli, Csched__V1__Job *job)
{
    Csched__V1__CreateJobRequest creq = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__UpdateJobRequest ureq = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    const char *verb = "created";
    Csched__V1__Job *resp;
    struct cs_status st;
    char what[300];
    int rc;

    creq.job = job;
    rc = cs_scheduler_create_job(cli->client, &creq, &resp, &opts, &st);
    if (rc == GRPC_STATUS_ALREADY_EXISTS) {
        ureq.job = job;
        verb = "updated";
        rc = cs_scheduler_update_job(cli->client, &ureq, &resp, &opts, &st);
    }
    if (rc != 0) {
        snprintf(what, sizeof(what), "apply job %s", job->name);
        return cs_cli_fail(cli, what, rc, &st);
    }
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &resp->base);
    else
        fprintf(cli->out, "job %s %s (version %llu)\n", resp->name, verb,
                (unsigned long long)resp->version);
    csched__v1__job__free_unpacked(resp, NULL);
    return 0;
}

int cs_cmd_apply(struct cs_cli *cli, int argc, char **argv)
{
    const char *path = NULL;
    Csched__V1__Job **jobs;
    char err[512];
    int first = 0;
    size_t n;
    int rc;

    for (int i = 0; i < argc; i++) {
        const char *v;

        if (cs_cli_flag("-f", argc, argv, &i, &v) || cs_cli_flag("--file", argc, argv, &i, &v)) {
            if (v == NULL)
                return cs_cli_usage(cli, "apply: -f needs a file name");
            path = v;
            continue;
        }
        rc = cs_cli_take_global_or_fail(cli, argc, argv, &i, "apply", "csched apply -f jobs.yaml");
        if (rc != 0)
            return rc;
    }
    if (path == NULL)
        return cs_cli_usage(cli, "apply: missing -f FILE");
    rc = cs_cli_jobfile_load(path, &jobs, &n, err, sizeof(err));
    if (rc != 0) {
        fprintf(cli->err, "csched: %s\n", err);
        return rc == -EINVAL ? CS_EXIT_DATAERR : rc == -ENOMEM ? CS_EXIT_SOFTWARE : CS_EXIT_NOINPUT;
    }
    for (size_t i = 0; i < n; i++) {
        rc = apply_one(cli, jobs[i]);
        if (rc != 0 && first == 0)
            first = rc;
    }
    cs_cli_jobs_free(jobs, n);
    return first;
}
