/* csched hooks JOB: a job's hook deliveries, newest first
 * (ListHookDeliveries): when each was made, what it told which hook, where
 * it stands, the endpoint's last answer (a command's exit), its attempts
 * and its next retry. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *status_name(Csched__V1__HookDeliveryStatus status)
{
    static const char *const names[] = {"-", "pending", "delivered", "failed"};
    return (size_t)status < sizeof(names) / sizeof(names[0]) ? names[status] : "?";
}

static void delivery_row(struct cs_cli_table *t, const Csched__V1__HookDelivery *d)
{
    char id[24], when[48], run[24], code[16], attempts[16], next[48];

    snprintf(id, sizeof(id), "%" PRId64, d->id);
    cs_cli_format_time(d->created_unix_ms, when, sizeof(when));
    snprintf(run, sizeof(run), "%" PRId64, d->run_id);
    /* A command hook (no url) has an exit code or a signal where a
     * webhook has the endpoint's HTTP status. */
    if (d->url[0] == '\0' && d->attempts > 0 && d->term_signal != 0)
        snprintf(code, sizeof(code), "signal %" PRId32, d->term_signal);
    else if (d->url[0] == '\0' && d->attempts > 0)
        snprintf(code, sizeof(code), "exit %" PRId32, d->exit_code);
    else if (d->response_code != 0)
        snprintf(code, sizeof(code), "%" PRId32, d->response_code);
    else
        snprintf(code, sizeof(code), "-");
    snprintf(attempts, sizeof(attempts), "%" PRIu32, d->attempts);
    if (d->status == CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_PENDING &&
        d->attempts > 0)
        cs_cli_format_time(d->next_unix_ms, next, sizeof(next));
    else
        snprintf(next, sizeof(next), "-");
    const char *error =
        d->status == CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_DELIVERED ||
                d->last_error[0] == '\0'
            ? "-"
            : d->last_error;
    cs_cli_table_row(t, (const char *const[]){id, when, d->hook_name,
                                              cs_cli_hook_event_name(d->event), run,
                                              status_name(d->status), code, attempts, next, error});
}

void cs_cli_print_hook_deliveries(FILE *f, const Csched__V1__ListHookDeliveriesResponse *resp)
{
    struct cs_cli_table t;

    cs_cli_table_init(&t, 10, "ID", "CREATED", "HOOK", "EVENT", "RUN", "STATUS", "CODE", "ATTEMPTS",
                      "NEXT RETRY", "ERROR");
    for (size_t i = 0; i < resp->n_deliveries; i++)
        delivery_row(&t, resp->deliveries[i]);
    cs_cli_table_print(&t, f, "");
}

int cs_cmd_hooks(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ListHookDeliveriesRequest req = CSCHED__V1__LIST_HOOK_DELIVERIES_REQUEST__INIT;
    Csched__V1__ListHookDeliveriesResponse *resp;
    const char *job;
    struct cs_call_opts opts;
    struct cs_status st;
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, &job, 1, "csched hooks JOB");
    if (rc != 0)
        return rc;
    req.job_name = (char *)job;
    opts = cs_cli_call_opts(cli);
    rc = cs_scheduler_list_hook_deliveries(cli->client, &req, &resp, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "list hook deliveries", rc, &st);
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &resp->base);
    else
        cs_cli_print_hook_deliveries(cli->out, resp);
    csched__v1__list_hook_deliveries_response__free_unpacked(resp, NULL);
    return 0;
}
