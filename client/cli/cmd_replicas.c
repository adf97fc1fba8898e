/* csched replicas: the cschedd replicas sharing the database, as their rows
 * there say (ListReplicas), the one that answered marked "(this)", a lease
 * that has run out "expired", and the attempts each machine runs of what it
 * takes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *state_name(Csched__V1__ReplicaState state)
{
    static const char *const names[] = {"-", "standby", "active", "draining", "left", "fenced"};
    return (size_t)state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

static void replica_row(struct cs_cli_table *t, const Csched__V1__Replica *r)
{
    char id[160], epoch[24], age[48], runs[32];
    size_t n;

    snprintf(id, sizeof(id), "%s%s", r->id, r->self ? " (this)" : "");
    snprintf(epoch, sizeof(epoch), "%" PRId64, r->epoch);
    cs_cli_format_duration(r->lease_age_ms, age, sizeof(age));
    n = strlen(age);
    if (r->lease_expired)
        snprintf(age + n, sizeof(age) - n, " expired");
    /* Held of what its machine takes, when its row says (a newer replica's). */
    if (r->max_running > 0)
        snprintf(runs, sizeof(runs), "%" PRId32 "/%" PRIu32, r->runs_held, r->max_running);
    else
        snprintf(runs, sizeof(runs), "%" PRId32, r->runs_held);
    cs_cli_table_row(t, (const char *const[]){id, state_name(r->state), epoch,
                                              r->address[0] ? r->address : "-", age, runs,
                                              r->version[0] ? r->version : "-"});
}

void cs_cli_print_replicas(FILE *f, const Csched__V1__ListReplicasResponse *resp)
{
    struct cs_cli_table t;

    cs_cli_table_init(&t, 7, "ID", "STATE", "EPOCH", "ADDRESS", "LEASE AGE", "RUNS", "VERSION");
    for (size_t i = 0; i < resp->n_replicas; i++)
        replica_row(&t, resp->replicas[i]);
    cs_cli_table_print(&t, f, "");
}

int cs_cmd_replicas(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ListReplicasResponse *resp;
    struct cs_call_opts opts;
    struct cs_status st;
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, NULL, 0, "csched replicas");
    if (rc != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    rc = cs_scheduler_list_replicas(cli->client, NULL, &resp, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "list replicas", rc, &st);
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &resp->base);
    else
        cs_cli_print_replicas(cli->out, resp);
    csched__v1__list_replicas_response__free_unpacked(resp, NULL);
    return 0;
}
