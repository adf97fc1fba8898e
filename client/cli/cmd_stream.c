/* csched logs ID|JOB | watch: the two server-streaming methods. logs stops
 * when the stream ends (with -f, once the attempt has ended; logs.c prints
 * it); watch runs until interrupted or its --timeout passes, and resumes
 * after the last event it showed if the server goes away. */
#include <string.h>

#include "cli.h"

#define LOGS_USAGE "csched logs ID|JOB [--previous] [--attempt N] [--stdout|--stderr] [-f]"

static int parse_logs(struct cs_cli *cli, int argc, char **argv, Csched__V1__ReadLogsRequest *req)
{
    const char *word = NULL;
    bool previous = false;

    for (int i = 0; i < argc; i++) {
        const char *v;
        int rc;

        if (strcmp(argv[i], "--stderr") == 0) {
            req->stream = CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR;
            continue;
        }
        if (strcmp(argv[i], "--stdout") == 0) {
            req->stream = CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT;
            continue;
        }
        if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--follow") == 0) {
            req->follow = true;
            continue;
        }
        if (strcmp(argv[i], "--previous") == 0) {
            previous = true;
            continue;
        }
        if (cs_cli_flag("--attempt", argc, argv, &i, &v)) {
            if (cs_cli_parse_u32(v, &req->attempt) != 0 || req->attempt == 0)
                return cs_cli_usage(cli, "--attempt takes a number >= 1, not '%s'", v ? v : "");
            continue;
        }
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &word, "logs", LOGS_USAGE);
        if (rc != 0)
            return rc;
    }
    if (word == NULL)
        return cs_cli_usage(cli, "logs: missing run ID or JOB; usage: %s", LOGS_USAGE);
    return cs_cli_run_ref(cli, word, previous, &req->run_id);
}

int cs_cmd_logs(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    int rc;

    rc = parse_logs(cli, argc, argv, &req);
    if (rc != 0)
        return rc;
    return cs_cli_read_logs(cli, &req);
}

static int parse_watch(struct cs_cli *cli, int argc, char **argv, Csched__V1__WatchRequest *req)
{
    for (int i = 0; i < argc; i++) {
        const char *v;
        int rc;

        rc = cs_cli_take_flag_value(cli, "--job", "a job name", argc, argv, &i, &v);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN) {
            req->job_name = (char *)v;
            continue;
        }
        if (cs_cli_flag("--after-seq", argc, argv, &i, &v)) {
            int64_t seq;

            /* 0 is allowed here: it replays the whole history. */
            if (v != NULL && strcmp(v, "0") == 0)
                seq = 0;
            else if (cs_cli_parse_id(v, &seq) != 0)
                return cs_cli_usage(cli, "--after-seq takes a number >= 0, not '%s'", v ? v : "");
            req->start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
            req->after_seq = seq;
            continue;
        }
        rc = cs_cli_take_global_or_fail(cli, argc, argv, &i, "watch",
                                        "csched watch [--job J] [--after-seq N]");
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* What cs_cmd_watch keeps across the streams it reads. */
struct watch_state {
    int64_t last_seq;
    /* An event has been shown: a new stream can start right after it. */
    bool got;
};

/* Prints the events of one watch stream. */
static int watch_cb(struct cs_cli *cli, struct cs_stream *stream, Csched__V1__WatchRequest *req,
                    struct cs_status *st, void *arg)
{
    struct watch_state *w = arg;
    Csched__V1__WatchResponse *batch;
    int rc;

    while ((rc = cs_scheduler_watch_next(stream, &batch, st)) == 1) {
        for (size_t i = 0; i < batch->n_events; i++) {
            const Csched__V1__Event *ev = batch->events[i];
            if (cli->format != CS_FORMAT_TABLE)
                cs_cli_print_message(cli, &ev->base);
            else
                cs_cli_print_event_row(cli->out, ev);
            w->last_seq = ev->seq;
            w->got = true;
        }
        fflush(cli->out);
        csched__v1__watch_response__free_unpacked(batch, NULL);
    }
    if (rc < 0)
        return rc;
    if (!w->got)
        return CS_CLI_FOLLOW_STOP;
    /* A server that went away after the watch had begun: resume right after
     * the last event shown, so nothing is missed or repeated. */
    req->start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req->after_seq = w->last_seq;
    return CS_CLI_FOLLOW_ENDED;
}

int cs_cmd_watch(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct watch_state w = {0};
    int rc;

    rc = parse_watch(cli, argc, argv, &req);
    if (rc != 0)
        return rc;
    if (cli->format == CS_FORMAT_TABLE)
        cs_cli_print_event_header(cli->out);
    fflush(cli->out);
    return cs_cli_watch_follow(cli, "watch", &req, watch_cb, &w);
}
