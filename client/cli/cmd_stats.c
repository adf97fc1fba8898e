/* csched stats | health: the server's figures and its health check. */
#include <csched/health.h>
#include <inttypes.h>

#include "cli.h"

static void print_lag(FILE *f, const char *title, const Csched__V1__LoopLag *lag)
{
    if (lag == NULL) {
        fprintf(f, "%-18s -\n", title);
        return;
    }
    fprintf(f,
            "%-18s p50 %" PRId64 " us, p99 %" PRId64 " us, max %" PRId64 " us (%" PRIu64
            " ticks, %" PRIu64 " late)\n",
            title, lag->p50_us, lag->p99_us, lag->max_us, lag->ticks, lag->late_ticks);
}

int cs_cmd_stats(struct cs_cli *cli, int argc, char **argv)
{
    struct cs_call_opts opts;
    Csched__V1__Stats *s;
    struct cs_status st;
    char up[32];
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, NULL, 0, "csched stats");
    if (rc != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    rc = cs_scheduler_get_stats(cli->client, NULL, &s, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "stats", rc, &st);
    if (cli->format != CS_FORMAT_TABLE) {
        cs_cli_print_message(cli, &s->base);
    } else {
        cs_cli_format_duration(s->uptime_ms, up, sizeof(up));
        fprintf(cli->out, "%-18s %" PRIu32 " / %" PRIu32 "\n", "running:", s->running,
                s->max_running);
        fprintf(cli->out, "%-18s %" PRIu32 "\n", "starting:", s->starting);
        fprintf(cli->out, "%-18s %" PRIu32 "\n", "queued:", s->queued);
        fprintf(cli->out, "%-18s %" PRIu64 "\n", "runs started:", s->runs_started);
        fprintf(cli->out, "%-18s %" PRIu64 "\n", "runs finished:", s->runs_finished);
        fprintf(cli->out, "%-18s %" PRId64 "\n", "last event seq:", s->last_seq);
        fprintf(cli->out, "%-18s %s\n", "uptime:", up);
        fprintf(cli->out, "%-18s %s\n", "tzdata:", s->tzdata_version);
        if (s->limits_mechanism[0] != '\0')
            fprintf(cli->out, "%-18s %s (--limits-enforcement %s)\n",
                    "limits:", s->limits_mechanism, s->limits_enforcement);
        print_lag(cli->out, "loop lag (start):", s->lag_since_start);
        print_lag(cli->out, "loop lag (1 min):", s->lag_last_minute);
        /* With replicas, what each machine runs of what it takes. */
        for (size_t i = 0; s->n_machines > 1 && i < s->n_machines; i++) {
            const Csched__V1__MachineLoad *m = s->machines[i];
            char title[80];
            (void)snprintf(title, sizeof(title), "on %s:", m->replica);
            fprintf(cli->out, "%-18s %" PRIu32 " / %" PRIu32 "%s\n", title, m->running,
                    m->max_running, m->takes_attempts ? "" : " (takes none now)");
        }
    }
    csched__v1__stats__free_unpacked(s, NULL);
    return 0;
}

int cs_cmd_health(struct cs_cli *cli, int argc, char **argv)
{
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    Grpc__Health__V1__HealthCheckResponse *resp;
    const ProtobufCEnumValue *name;
    struct cs_call_opts opts;
    struct cs_status st;
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, NULL, 0, "csched health");
    if (rc != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    rc = cs_health_check(cli->client, &req, &resp, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "health", rc, &st);
    if (cli->format != CS_FORMAT_TABLE) {
        cs_cli_print_message(cli, &resp->base);
    } else {
        name = protobuf_c_enum_descriptor_get_value(
            &grpc__health__v1__health_check_response__serving_status__descriptor,
            (int)resp->status);
        fprintf(cli->out, "%s\n", name != NULL ? name->name : "UNKNOWN");
    }
    rc = resp->status == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
             ? CS_EXIT_OK
             : CS_EXIT_NOT_SERVING;
    grpc__health__v1__health_check_response__free_unpacked(resp, NULL);
    return rc;
}
