/* csched job create|update|get|list|delete: the job methods of the API
 * (job list has a file of its own, cmd_job_list.c). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_job(struct cs_cli *cli, const Csched__V1__Job *job, const char *verb)
{
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &job->base);
    else if (verb != NULL)
        fprintf(cli->out, "job %s %s (version %llu)\n", job->name, verb,
                (unsigned long long)job->version);
    else
        cs_cli_print_job(cli->out, job);
}

static int job_put(struct cs_cli *cli, int argc, char **argv, bool update)
{
    Csched__V1__Job *job, *resp = NULL;
    struct cs_call_opts opts;
    struct cs_status st;
    struct cs_cli_err err;
    int rc;

    if (cs_cli_parse_job_args(cli, argc, argv, &job, &err) != 0)
        return cs_cli_usage(cli, "job %s: %s", update ? "update" : "create", err.msg);
    opts = cs_cli_call_opts(cli);
    if (update) {
        Csched__V1__UpdateJobRequest req = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;

        req.job = job;
        rc = cs_scheduler_update_job(cli->client, &req, &resp, &opts, &st);
    } else {
        Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;

        req.job = job;
        rc = cs_scheduler_create_job(cli->client, &req, &resp, &opts, &st);
    }
    if (rc != 0) {
        char what[300];

        snprintf(what, sizeof(what), "%s job %s", update ? "update" : "create", job->name);
        rc = cs_cli_fail(cli, what, rc, &st);
        goto out;
    }
    print_job(cli, resp, update ? "updated" : "created");
    csched__v1__job__free_unpacked(resp, NULL);
out:
    csched__v1__job__free_unpacked(job, NULL);
    return rc;
}

/* GetJob name, with next_fires of its fire times (0: the server's 5), into
 * *resp: 0, or the exit code once the failure is printed. */
static int get_job(struct cs_cli *cli, const char *name, uint32_t next_fires,
                   Csched__V1__Job **resp)
{
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    struct cs_status st;
    char what[300];
    int rc;

    req.name = (char *)name;
    req.next_fires = next_fires;
    rc = cs_scheduler_get_job(cli->client, &req, resp, &opts, &st);
    if (rc != 0) {
        snprintf(what, sizeof(what), "get job %s", name);
        return cs_cli_fail(cli, what, rc, &st);
    }
    return 0;
}

static int job_get(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__Job *resp;
    const char *name;
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, &name, 1, "csched job get NAME");
    if (rc == 0)
        rc = get_job(cli, name, 0, &resp);
    if (rc != 0)
        return rc;
    print_job(cli, resp, NULL);
    csched__v1__job__free_unpacked(resp, NULL);
    return 0;
}

#define NEXT_USAGE "csched job next NAME [--count N]"

/* The next fire times GetJob shows (5 unless asked for up to 20). */
static int job_next(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__Job *resp;
    const char *name = NULL, *v;
    uint32_t count = 5;
    int rc;

    for (int i = 0; i < argc; i++) {
        if (cs_cli_flag("--count", argc, argv, &i, &v)) {
            if (cs_cli_parse_u32(v, &count) != 0 || count == 0)
                return cs_cli_usage(cli, "--count takes a whole number > 0, not '%s'", v ? v : "");
            continue;
        }
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &name, "job next", NEXT_USAGE);
        if (rc != 0)
            return rc;
    }
    if (name == NULL)
        return cs_cli_usage(cli, "missing job NAME; usage: %s", NEXT_USAGE);
    rc = get_job(cli, name, count, &resp);
    if (rc != 0)
        return rc;
    if (cli->format != CS_FORMAT_TABLE) {
        struct cs_cli_list list;

        cs_cli_list_begin(&list, cli, "next_fires");
        for (size_t i = 0; i < resp->n_next_fires && i < count; i++)
            cs_cli_list_add(&list, &resp->next_fires[i]->base);
        cs_cli_list_end(&list, "");
    } else if (resp->n_next_fires == 0) {
        fprintf(cli->out, "job %s has no schedule: it runs only when triggered\n", name);
    } else {
        cs_cli_print_next_fires(cli->out, resp, count);
    }
    csched__v1__job__free_unpacked(resp, NULL);
    return 0;
}

static int job_delete(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__DeleteJobRequest req = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *resp;
    struct cs_call_opts opts;
    struct cs_status st;
    const char *name;
    char what[300];
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, &name, 1, "csched job delete NAME");
    if (rc != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    req.name = (char *)name;
    rc = cs_scheduler_delete_job(cli->client, &req, &resp, &opts, &st);
    if (rc != 0) {
        snprintf(what, sizeof(what), "delete job %s", name);
        return cs_cli_fail(cli, what, rc, &st);
    }
    csched__v1__delete_job_response__free_unpacked(resp, NULL);
    if (cli->format != CS_FORMAT_TABLE) {
        fputs("{\"name\":", cli->out);
        cs_json_write_string(cli->out, name, strlen(name));
        fputs(",\"deleted\":true}\n", cli->out);
    } else {
        fprintf(cli->out, "job %s deleted\n", name);
    }
    return 0;
}

int cs_cmd_job(struct cs_cli *cli, int argc, char **argv)
{
    static const char *const verbs[] = {"create", "update", "get",   "list",
                                        "next",   "delete", "graph", "causes"};
    const char *verb = argc > 0 ? argv[0] : "";
    char meant[16];

    if (strcmp(verb, "create") == 0)
        return job_put(cli, argc - 1, argv + 1, false);
    if (strcmp(verb, "update") == 0)
        return job_put(cli, argc - 1, argv + 1, true);
    if (strcmp(verb, "get") == 0)
        return job_get(cli, argc - 1, argv + 1);
    if (strcmp(verb, "list") == 0)
        return cs_cmd_job_list(cli, argc - 1, argv + 1);
    if (strcmp(verb, "next") == 0)
        return job_next(cli, argc - 1, argv + 1);
    if (strcmp(verb, "delete") == 0)
        return job_delete(cli, argc - 1, argv + 1);
    if (strcmp(verb, "graph") == 0)
        return cs_cmd_job_graph(cli, argc - 1, argv + 1);
    if (strcmp(verb, "causes") == 0)
        return cs_cmd_job_causes(cli, argc - 1, argv + 1);
    if (cs_cli_suggest(verb, verbs, sizeof(verbs) / sizeof(verbs[0]), meant, sizeof(meant))[0])
        return cs_cli_usage(cli, "job: unknown subcommand '%s'; did you mean '%s'?", verb, meant);
    return cs_cli_usage(
        cli, "job: expected create, update, get, next, list, delete, graph or causes, not '%s'",
        verb);
}
