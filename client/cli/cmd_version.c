/* csched version: csched's own version and the version of the cschedd
 * replica that answers, with the database schema's version it runs with,
 * from its row of ListReplicas (the API has no call of its own for it). The client's line comes
 * first, so that it shows even when the server cannot be reached.
 */
#include <string.h>

#include "cli.h"

/* The row of the replica that answered, or NULL if it has written none. */
static const Csched__V1__Replica *answering(const Csched__V1__ListReplicasResponse *resp)
{
    for (size_t i = 0; i < resp->n_replicas; i++) {
        if (resp->replicas[i]->self)
            return resp->replicas[i];
    }
    return NULL;
}

static void print_json(struct cs_cli *cli, const char *server, const char *replica, int schema)
{
    const char *keys[] = {"client", "server", "replica"};
    const char *values[] = {CS_VERSION, server, replica};

    fputc('{', cli->out);
    for (size_t i = 0; i < 3; i++) {
        fprintf(cli->out, "%s\"%s\":", i ? "," : "", keys[i]);
        cs_json_write_string(cli->out, values[i], strlen(values[i]));
    }
    fprintf(cli->out, ",\"schema\":%d}\n", schema);
}

int cs_cmd_version(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ListReplicasResponse *resp;
    const Csched__V1__Replica *self;
    struct cs_call_opts opts;
    struct cs_status st;
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, NULL, 0, "csched version");
    if (rc != 0)
        return rc;
    if (cli->format == CS_FORMAT_TABLE)
        fprintf(cli->out, "client: csched %s\n", CS_VERSION);
    opts = cs_cli_call_opts(cli);
    rc = cs_scheduler_list_replicas(cli->client, NULL, &resp, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "server version", rc, &st);
    self = answering(resp);
    if (cli->format != CS_FORMAT_TABLE)
        print_json(cli, self && self->version[0] ? self->version : "", self ? self->id : "",
                   self ? self->schema_version : 0);
    else if (self != NULL && self->version[0] != '\0')
        fprintf(cli->out, "server: cschedd %s (replica %s), schema %d\n", self->version, self->id,
                self->schema_version);
    else
        fputs("server: cschedd of unknown version (it has written no replica row)\n", cli->out);
    csched__v1__list_replicas_response__free_unpacked(resp, NULL);
    return 0;
}
