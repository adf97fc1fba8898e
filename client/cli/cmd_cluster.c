/* csched cluster | cluster set-max-running N: the limits that hold across
 * every replica together (SetClusterLimits), and this replica's own. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static void print_limit(FILE *f, const char *title, uint32_t n)
{
    if (n == 0)
        fprintf(f, "%-22s none\n", title);
    else
        fprintf(f, "%-22s %" PRIu32 "\n", title, n);
}

static int show(struct cs_cli *cli)
{
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    Csched__V1__Stats *s;
    struct cs_status st;
    int rc = cs_scheduler_get_stats(cli->client, NULL, &s, &opts, &st);

    if (rc != 0)
        return cs_cli_fail(cli, "cluster", rc, &st);
    if (cli->format != CS_FORMAT_TABLE) {
        Csched__V1__ClusterLimits limits = CSCHED__V1__CLUSTER_LIMITS__INIT;
        limits.max_running = s->cluster_max_running;
        cs_cli_print_message(cli, &limits.base);
    } else {
        print_limit(cli->out, "cluster max running:", s->cluster_max_running);
        print_limit(cli->out, "replica max running:", s->machine_max_running);
    }
    csched__v1__stats__free_unpacked(s, NULL);
    return 0;
}

static int set_max_running(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__SetClusterLimitsRequest req = CSCHED__V1__SET_CLUSTER_LIMITS_REQUEST__INIT;
    const char *n = NULL;
    struct cs_call_opts opts;
    Csched__V1__ClusterLimits *limits;
    struct cs_status st;
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, &n, 1, "csched cluster set-max-running N");
    if (rc != 0)
        return rc;
    if (cs_cli_parse_u32(n, &req.max_running) != 0)
        return cs_cli_usage(cli, "cluster set-max-running: '%s' is not a count (0 for none)", n);
    opts = cs_cli_call_opts(cli);
    rc = cs_scheduler_set_cluster_limits(cli->client, &req, &limits, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "cluster set-max-running", rc, &st);
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &limits->base);
    else
        print_limit(cli->out, "cluster max running:", limits->max_running);
    csched__v1__cluster_limits__free_unpacked(limits, NULL);
    return 0;
}

int cs_cmd_cluster(struct cs_cli *cli, int argc, char **argv)
{
    static const char *const verbs[] = {"set-max-running"};
    char meant[32];

    if (argc == 0)
        return show(cli);
    if (strcmp(argv[0], "set-max-running") == 0)
        return set_max_running(cli, argc - 1, argv + 1);
    if (cs_cli_suggest(argv[0], verbs, 1, meant, sizeof(meant))[0])
        return cs_cli_usage(cli, "cluster: unknown subcommand '%s'; did you mean '%s'?", argv[0],
                            meant);
    return cs_cli_usage(cli, "cluster: expected no word or set-max-running, not '%s'", argv[0]);
}
