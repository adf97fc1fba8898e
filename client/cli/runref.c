/* Which run a command means: a run ID, or a job's name for its latest run
 * (with --previous, the one before). A word of digits alone is a run ID.
 *
 * Single-threaded.
 */
#include <grpc/status.h>
#include <inttypes.h>

#include "cli.h"

int cs_cli_run_ref(struct cs_cli *cli, const char *word, bool previous, int64_t *id)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    Csched__V1__ListRunsResponse *resp;
    size_t want = previous ? 1 : 0;
    struct cs_status st;
    char what[300];
    int rc;

    if (cs_cli_parse_id(word, id) == 0) {
        if (previous)
            return cs_cli_usage(cli, "--previous goes with a JOB, not a run ID (%s)", word);
        return 0;
    }
    /* Runs come newest first. */
    req.job_name = (char *)word;
    req.page_size = (uint32_t)want + 1;
    rc = cs_scheduler_list_runs(cli->client, &req, &resp, &opts, &st);
    snprintf(what, sizeof(what), "runs of job %s", word);
    if (rc != 0)
        return cs_cli_fail(cli, what, rc, &st);
    if (resp->n_runs <= want) {
        fprintf(cli->err, "csched: %s: job %s has %s\n", what, word,
                resp->n_runs == 0 ? "no run (or no such job)" : "no run before its latest");
        csched__v1__list_runs_response__free_unpacked(resp, NULL);
        return cs_cli_exit_for_rc(GRPC_STATUS_NOT_FOUND);
    }
    *id = resp->runs[want]->id;
    csched__v1__list_runs_response__free_unpacked(resp, NULL);
    return 0;
}
