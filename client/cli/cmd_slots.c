/* csched slots NAME | pause NAME | resume NAME | backfill NAME: a job's
 * schedule at work: what became of each slot (-w: then of each new one, as
 * the job's runs change), pausing it, and making the runs of past slots. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define SLOTS_USAGE "csched slots NAME [-l SELECTOR] [--outcome started|skipped] [--limit N] [-w]"
#define SLOTS_DEFAULT_LIMIT 50

static const char *reason_name(Csched__V1__SkipReason r)
{
    static const char *const names[] = {
        "-",      "missed",     "overlap_forbidden", "deadline_passed",
        "paused", "superseded", "queue_full"};
    return (size_t)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

static void print_slot_row(struct cs_cli_table *t, const Csched__V1__Slot *s)
{
    char at[32], late[32], run[24];

    cs_cli_format_time(s->slot_unix_ms, at, sizeof(at));
    if (s->lateness_ms >= 0)
        cs_cli_format_duration(s->lateness_ms, late, sizeof(late));
    else
        snprintf(late, sizeof(late), "-");
    snprintf(run, sizeof(run), "%lld", (long long)s->run_id);
    if (s->outcome == CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED)
        cs_cli_table_row(t, (const char *const[]){at, "started", "-", run, late, s->message});
    else
        cs_cli_table_row(t, (const char *const[]){at, "skipped", reason_name(s->skip_reason), "-",
                                                  "-", s->message});
}

/* What slots -w asks for and where its rows line up. */
struct slots_watch {
    Csched__V1__ListSlotsRequest *req;
    int64_t newest_ms; /* the newest slot shown */
    size_t widths[6];
};

/* Prints the slots decided after the newest one shown, oldest first: a
 * slot that starts a run comes with the run's first event; one skipped
 * comes with the next event of the job's runs. */
static int watched_slots(struct cs_cli *cli, const Csched__V1__Event *ev, struct cs_status *st,
                         void *arg)
{
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    struct slots_watch *w = arg;
    Csched__V1__ListSlotsResponse *resp;
    struct cs_cli_table t;
    int rc;

    w->req->from_unix_ms = w->newest_ms + 1;
    w->req->page_size = 1000;
    rc = cs_scheduler_list_slots(cli->client, w->req, &resp, &opts, st);
    if (rc != 0)
        return rc;
    if (cli->format == CS_FORMAT_TABLE)
        cs_cli_table_init(&t, 6, "SLOT", "OUTCOME", "REASON", "RUN", "LATE", "MESSAGE");
    for (size_t i = resp->n_slots; i-- > 0;) {
        if (cli->format != CS_FORMAT_TABLE)
            cs_cli_print_message(cli, &resp->slots[i]->base);
        else
            print_slot_row(&t, resp->slots[i]);
    }
    if (resp->n_slots > 0)
        w->newest_ms = resp->slots[0]->slot_unix_ms;
    if (cli->format == CS_FORMAT_TABLE)
        cs_cli_table_print_keep(&t, cli->out, w->widths, false);
    fflush(cli->out);
    csched__v1__list_slots_response__free_unpacked(resp, NULL);
    return 0;
}

int cs_cmd_slots(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ListSlotsRequest req = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    Csched__V1__ListSlotsResponse *resp;
    struct cs_call_opts opts;
    struct cs_cli_table t;
    struct cs_cli_list list;
    const char *name = NULL, *v;
    uint32_t limit = SLOTS_DEFAULT_LIMIT;
    /* The least widths of the rows to come: a time with its offset, the
     * longest reason, a 6-digit run id. */
    struct slots_watch w = {.req = &req, .widths = {26, 7, 17, 6, 6, 0}};
    bool watch = false;
    int64_t seq = 0;
    struct cs_status st;
    int rc;

    for (int i = 0; i < argc; i++) {
        if (cs_cli_flag("--outcome", argc, argv, &i, &v)) {
            if (v != NULL && strcmp(v, "started") == 0)
                req.outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED;
            else if (v != NULL && strcmp(v, "skipped") == 0)
                req.outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED;
            else
                return cs_cli_usage(cli, "--outcome takes started or skipped, not '%s'",
                                    v ? v : "");
            continue;
        }
        if (cs_cli_flag("--limit", argc, argv, &i, &v)) {
            if (cs_cli_parse_u32(v, &limit) != 0 || limit == 0 || limit > 1000)
                return cs_cli_usage(cli, "--limit takes a whole number 1-1000, not '%s'",
                                    v ? v : "");
            continue;
        }
        if (strcmp(argv[i], "-w") == 0 || strcmp(argv[i], "--watch") == 0) {
            watch = true;
            continue;
        }
        rc = cs_cli_take_selector(cli, argc, argv, &i, &v);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN) {
            req.label_selector = (char *)v;
            continue;
        }
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &name, "slots", SLOTS_USAGE);
        if (rc != 0)
            return rc;
    }
    if (name == NULL)
        return cs_cli_usage(cli, "missing job NAME; usage: %s", SLOTS_USAGE);
    if (watch && (rc = cs_cli_last_seq(cli, "watch slots", &seq)) != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    req.job_name = (char *)name;
    req.page_size = limit;
    rc = cs_scheduler_list_slots(cli->client, &req, &resp, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "list slots", rc, &st);
    if (cli->format == CS_FORMAT_TABLE)
        cs_cli_table_init(&t, 6, "SLOT", "OUTCOME", "REASON", "RUN", "LATE", "MESSAGE");
    cs_cli_list_begin(&list, cli, "slots");
    for (size_t i = 0; i < resp->n_slots; i++) {
        if (cli->format != CS_FORMAT_TABLE)
            cs_cli_list_add(&list, &resp->slots[i]->base);
        else
            print_slot_row(&t, resp->slots[i]);
    }
    if (cli->format == CS_FORMAT_TABLE && watch)
        cs_cli_table_print_keep(&t, cli->out, w.widths, true);
    else if (cli->format == CS_FORMAT_TABLE)
        cs_cli_table_print(&t, cli->out, "");
    cs_cli_list_end(&list, resp->next_page_token);
    fflush(cli->out);
    /* After a listing without slots, every slot the watch finds is new. */
    w.newest_ms = resp->n_slots > 0 ? resp->slots[0]->slot_unix_ms : 0;
    csched__v1__list_slots_response__free_unpacked(resp, NULL);
    if (!watch)
        return 0;
    return cs_cli_list_watch(cli,
                             &(struct cs_cli_list_watch){.what = "watch slots",
                                                         .job_name = name,
                                                         .selector = req.label_selector,
                                                         .row_cb = watched_slots,
                                                         .arg = &w},
                             seq);
}

/* pause NAME [--reason R] and resume NAME. */
static int pause_resume(struct cs_cli *cli, int argc, char **argv, bool pause)
{
    const char *usage = pause ? "csched pause NAME [--reason R]" : "csched resume NAME";
    const char *name = NULL, *reason = "";
    struct cs_call_opts opts;
    Csched__V1__Job *job;
    struct cs_status st;
    char what[300];
    int rc;

    for (int i = 0; i < argc; i++) {
        rc = pause ? cs_cli_take_flag_value(cli, "--reason", "a reason", argc, argv, &i, &reason)
                   : CS_CLI_FLAG_NOT_MINE;
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN)
            continue;
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &name, pause ? "pause" : "resume",
                                        usage);
        if (rc != 0)
            return rc;
    }
    if (name == NULL)
        return cs_cli_usage(cli, "missing job NAME; usage: %s", usage);
    opts = cs_cli_call_opts(cli);
    if (pause) {
        Csched__V1__PauseJobRequest req = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
        req.name = (char *)name;
        req.reason = (char *)reason;
        rc = cs_scheduler_pause_job(cli->client, &req, &job, &opts, &st);
    } else {
        Csched__V1__ResumeJobRequest req = CSCHED__V1__RESUME_JOB_REQUEST__INIT;
        req.name = (char *)name;
        rc = cs_scheduler_resume_job(cli->client, &req, &job, &opts, &st);
    }
    if (rc != 0) {
        snprintf(what, sizeof(what), "%s job %s", pause ? "pause" : "resume", name);
        return cs_cli_fail(cli, what, rc, &st);
    }
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &job->base);
    else
        fprintf(cli->out, "job %s %s\n", name, pause ? "paused" : "resumed");
    csched__v1__job__free_unpacked(job, NULL);
    return 0;
}

int cs_cmd_pause(struct cs_cli *cli, int argc, char **argv)
{
    return pause_resume(cli, argc, argv, true);
}

int cs_cmd_resume(struct cs_cli *cli, int argc, char **argv)
{
    return pause_resume(cli, argc, argv, false);
}

/* "2026-12-01T10:00:00Z" (UTC) or Unix seconds, as ms. 0 or -EINVAL. */
static int parse_when(const char *v, int64_t *out_ms)
{
    struct tm tm = {0};
    char *end;

    if (v == NULL)
        return -EINVAL;
    end = strptime(v, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (end != NULL && *end == '\0') {
        *out_ms = (int64_t)timegm(&tm) * 1000;
        return 0;
    }
    long long s = strtoll(v, &end, 10);
    if (*end != '\0' || s <= 0)
        return -EINVAL;
    *out_ms = (int64_t)s * 1000;
    return 0;
}

#define BACKFILL_USAGE "csched backfill NAME --from WHEN --to WHEN (WHEN: 2026-12-01T10:00:00Z)"

int cs_cmd_backfill(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__BackfillJobRequest req = CSCHED__V1__BACKFILL_JOB_REQUEST__INIT;
    Csched__V1__BackfillJobResponse *resp;
    struct cs_call_opts opts;
    const char *name = NULL, *v;
    struct cs_status st;
    int rc;

    for (int i = 0; i < argc; i++) {
        bool from = cs_cli_flag("--from", argc, argv, &i, &v);
        if (from || cs_cli_flag("--to", argc, argv, &i, &v)) {
            if (parse_when(v, from ? &req.from_unix_ms : &req.to_unix_ms) != 0)
                return cs_cli_usage(cli, "%s takes YYYY-MM-DDTHH:MM:SSZ or Unix seconds, not '%s'",
                                    from ? "--from" : "--to", v ? v : "");
            continue;
        }
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &name, "backfill", BACKFILL_USAGE);
        if (rc != 0)
            return rc;
    }
    if (name == NULL || req.from_unix_ms == 0 || req.to_unix_ms == 0)
        return cs_cli_usage(cli, "usage: %s", BACKFILL_USAGE);
    opts = cs_cli_call_opts(cli);
    req.name = (char *)name;
    rc = cs_scheduler_backfill_job(cli->client, &req, &resp, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "backfill", rc, &st);
    if (cli->format != CS_FORMAT_TABLE)
        cs_cli_print_message(cli, &resp->base);
    else
        fprintf(cli->out, "%u runs made, %u slots already started%s\n", resp->runs_created,
                resp->already_started, resp->more ? "; more remain: call again from the last" : "");
    csched__v1__backfill_job_response__free_unpacked(resp, NULL);
    return 0;
}
