/* csched logs ID | watch: the two server-streaming methods. logs stops when
 * the stream ends (with -f, once the attempt has ended); watch runs until interrupted or its
 * --timeout passes, and resumes after the last event it showed if the server goes away. */
#include <string.h>

#include "cli.h"

static int parse_logs(struct cs_cli *cli, int argc, char **argv, Csched__V1__ReadLogsRequest *req)
{
    const char *id = NULL;

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
        if (cs_cli_flag("--attempt", argc, argv, &i, &v)) {
            if (cs_cli_parse_u32(v, &req->attempt) != 0 || req->attempt == 0)
                return cs_cli_usage(cli, "--attempt takes a number >= 1, not '%s'", v ? v : "");
            continue;
        }
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &id, "logs",
                                        "csched logs ID [--attempt N] [--stdout|--stderr] [-f]");
        if (rc != 0)
            return rc;
    }
    if (id == NULL)
        return cs_cli_usage(cli, "logs: missing run ID");
    if (cs_cli_parse_id(id, &req->run_id) != 0)
        return cs_cli_usage(cli, "a run ID is a whole number > 0, not '%s'", id);
    return 0;
}

int cs_cmd_logs(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    struct cs_call_opts opts;
    struct cs_stream *stream;
    Csched__V1__LogChunk *chunk;
    struct cs_status st;
    char what[64];
    int rc;

    rc = parse_logs(cli, argc, argv, &req);
    if (rc != 0)
        return rc;
    opts = cs_cli_call_opts(cli);
    snprintf(what, sizeof(what), "logs of run %lld", (long long)req.run_id);
    rc = cs_scheduler_read_logs(cli->client, &req, &stream, &opts, &st);
    if (rc != 0)
        return cs_cli_fail(cli, what, rc, &st);
    while ((rc = cs_scheduler_read_logs_next(stream, &chunk, &st)) == 1) {
        if (cli->format != CS_FORMAT_TABLE) {
            cs_cli_print_message(cli, &chunk->base);
        } else {
            /* Both streams: each goes to its own. One chosen stream goes to
             * stdout, so that it can be piped. */
            FILE *f = req.stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_UNSPECIFIED &&
                              chunk->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR
                          ? cli->err
                          : cli->out;

            /* A tail the database kept of an attempt that ran on another
             * replica, now lost: said before its bytes, on stderr, so that
             * a pipe still gets the bytes alone. */
            if (chunk->replica != NULL && chunk->replica[0] != '\0')
                fprintf(cli->err,
                        "csched: %s ran on replica %s, whose machine holds its whole log: here "
                        "are its last %zu bytes, from byte %lld of the %lld written\n",
                        chunk->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR ? "stderr"
                                                                                   : "stdout",
                        chunk->replica, chunk->data.len, (long long)chunk->offset,
                        (long long)chunk->written_bytes);
            /* Flushed per chunk, so a pipe sees output as it comes. The
             * chunk that says a stream was cut carries no data (NULL). */
            if (chunk->data.len > 0)
                fwrite(chunk->data.data, 1, chunk->data.len, f);
            fflush(f);
            if (chunk->truncated)
                fprintf(cli->err, "csched: %s was cut: its log kept %lld of %lld bytes written\n",
                        chunk->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR ? "stderr"
                                                                                   : "stdout",
                        (long long)chunk->offset, (long long)chunk->written_bytes);
        }
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
    }
    cs_stream_free(stream);
    if (rc < 0 || st.code != 0)
        return cs_cli_fail(cli, what, rc < 0 ? rc : st.code, &st);
    return 0;
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
