/* csched audit: the audit trail, newest first, with ListAudit's filters. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Entries listed when --limit is not given. */
#define AUDIT_DEFAULT_LIMIT 50

static const char audit_usage[] = "csched audit [--identity I] [--method M] [--job J] [--run ID]"
                                  " [--since T] [--until T] [--limit N]";

/* A time as --since and --until take it: a duration ago ("90s", "30m",
 * "2h", "7d") or a UTC time "YYYY-MM-DDTHH:MM:SSZ". 0 or -EINVAL. */
static int parse_when(const char *s, int64_t *unix_ms)
{
    struct tm tm;
    char *end;
    const char *rest;

    if (s == NULL || s[0] == '\0')
        return -EINVAL;
    memset(&tm, 0, sizeof(tm));
    rest = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (rest != NULL && *rest == '\0') {
        *unix_ms = (int64_t)timegm(&tm) * 1000;
        return 0;
    }
    long long n = strtoll(s, &end, 10);
    static const struct {
        char unit;
        int64_t ms;
    } units[] = {{'s', 1000}, {'m', 60000}, {'h', 3600000}, {'d', 86400000}};
    if (end == s || n < 0 || n > 36500LL * 24 * 3600 || end[0] == '\0' || end[1] != '\0')
        return -EINVAL;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (units[i].unit == end[0]) {
            *unix_ms = (int64_t)time(NULL) * 1000 - n * units[i].ms;
            return 0;
        }
    }
    return -EINVAL;
}

/* Takes one audit flag: a cs_cli_flag_result, or -EINVAL with err. */
static int audit_flag(int argc, char **argv, int *i, Csched__V1__ListAuditRequest *req,
                      uint32_t *limit, struct cs_cli_err *err)
{
    static const struct {
        const char *flag;
        size_t offset;
    } strs[] = {
        {"--identity", offsetof(Csched__V1__ListAuditRequest, identity)},
        {"--method", offsetof(Csched__V1__ListAuditRequest, method)},
        {"--job", offsetof(Csched__V1__ListAuditRequest, job_name)},
    };
    const char *v;
    int rc;

    for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++) {
        rc = cs_cli_flag_value(strs[k].flag, "a value", argc, argv, i, &v, err);
        if (rc == CS_CLI_FLAG_TAKEN)
            *(char **)((char *)req + strs[k].offset) = (char *)v;
        if (rc != CS_CLI_FLAG_NOT_MINE)
            return rc;
    }
    if (cs_cli_flag("--run", argc, argv, i, &v)) {
        if (cs_cli_parse_id(v, &req->run_id) != 0)
            return cs_cli_err_set(err, -EINVAL, "--run takes a run id, not '%s'", v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    const struct {
        const char *flag;
        int64_t *unix_ms;
    } times[] = {{"--since", &req->since_unix_ms}, {"--until", &req->until_unix_ms}};
    for (size_t k = 0; k < sizeof(times) / sizeof(times[0]); k++) {
        if (!cs_cli_flag(times[k].flag, argc, argv, i, &v))
            continue;
        if (parse_when(v, times[k].unix_ms) != 0)
            return cs_cli_err_set(err, -EINVAL,
                                  "%s takes a duration ago (90s, 30m, 2h, 7d) or a UTC time "
                                  "YYYY-MM-DDTHH:MM:SSZ, not '%s'",
                                  times[k].flag, v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--limit", argc, argv, i, &v)) {
        if (cs_cli_parse_u32(v, limit) != 0 || *limit == 0)
            return cs_cli_err_set(err, -EINVAL, "--limit takes a whole number > 0, not '%s'",
                                  v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    return CS_CLI_FLAG_NOT_MINE;
}

static void print_row(struct cs_cli_table *t, const Csched__V1__AuditEntry *e)
{
    char at[32], id[24], target[160], outcome[600];

    cs_cli_format_time(e->at_unix_ms, at, sizeof(at));
    if (e->run_id != 0)
        snprintf(target, sizeof(target), "%s run %" PRId64, e->job_name[0] ? e->job_name : "-",
                 e->run_id);
    else
        snprintf(target, sizeof(target), "%s", e->job_name[0] ? e->job_name : "-");
    snprintf(id, sizeof(id), "%" PRId64, e->id);
    snprintf(outcome, sizeof(outcome), "%s%s%s", cs_status_code_name(e->code),
             e->message[0] ? ": " : "", e->message);
    cs_cli_table_row(t, (const char *const[]){id, at, e->method, e->identity, target, outcome});
}

static int fetch_audit(struct cs_cli *cli, void *req, uint32_t page_size, const char *page_token,
                       ProtobufCMessage **resp, const struct cs_call_opts *opts,
                       struct cs_status *st)
{
    Csched__V1__ListAuditRequest *r = req;
    r->page_size = page_size;
    r->page_token = (char *)page_token;
    return cs_scheduler_list_audit(cli->client, r, (Csched__V1__ListAuditResponse **)resp, opts,
                                   st);
}

static void audit_row(struct cs_cli_table *t, const ProtobufCMessage *item)
{
    print_row(t, (const Csched__V1__AuditEntry *)item);
}

int cs_cmd_audit(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ListAuditRequest req = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    uint32_t limit = AUDIT_DEFAULT_LIMIT;
    struct cs_cli_table t;
    int rc;

    for (int i = 0; i < argc; i++) {
        struct cs_cli_err err;

        rc = audit_flag(argc, argv, &i, &req, &limit, &err);
        if (rc < 0)
            return cs_cli_usage(cli, "%s", err.msg);
        if (rc == CS_CLI_FLAG_TAKEN)
            continue;
        rc = cs_cli_take_global_or_fail(cli, argc, argv, &i, "audit", audit_usage);
        if (rc != 0)
            return rc;
    }
    if (cli->format == CS_FORMAT_TABLE)
        cs_cli_table_init(&t, 6, "ID", "AT", "METHOD", "IDENTITY", "TARGET", "OUTCOME");
    const struct cs_cli_pages pages = {.what = "list audit",
                                       .items = "entries",
                                       .req = &req,
                                       .limit = limit,
                                       .fetch_cb = fetch_audit,
                                       .row_cb = audit_row};
    return cs_cli_list_pages(cli, &pages, &t);
}
