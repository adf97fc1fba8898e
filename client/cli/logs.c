/* A run's output as csched prints it: the chunks of one ReadLogs stream,
 * each stream to its own (one chosen stream to stdout), flushed as they
 * come, with the lines on stderr that say a log was cut or is the tail the
 * database kept. Used by logs and by trigger --wait --logs.
 *
 * Single-threaded.
 */
#include "cli.h"

static const char *stream_name(const Csched__V1__LogChunk *chunk)
{
    return chunk->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR ? "stderr" : "stdout";
}

static void print_chunk(struct cs_cli *cli, const Csched__V1__ReadLogsRequest *req,
                        const Csched__V1__LogChunk *chunk)
{
    /* Both streams: each goes to its own. One chosen stream goes to stdout,
     * so that it can be piped. */
    FILE *f = req->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_UNSPECIFIED &&
                      chunk->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR
                  ? cli->err
                  : cli->out;

    /* A tail the database kept of an attempt that ran on another replica,
     * now lost: said before its bytes, on stderr, so that a pipe still gets
     * the bytes alone. */
    if (chunk->replica != NULL && chunk->replica[0] != '\0')
        fprintf(cli->err,
                "csched: %s ran on replica %s, whose machine holds its whole log: here are its "
                "last %zu bytes, from byte %lld of the %lld written\n",
                stream_name(chunk), chunk->replica, chunk->data.len, (long long)chunk->offset,
                (long long)chunk->written_bytes);
    /* Flushed per chunk, so a pipe sees output as it comes. The chunk that
     * says a stream was cut carries no data (NULL). */
    if (chunk->data.len > 0)
        fwrite(chunk->data.data, 1, chunk->data.len, f);
    fflush(f);
    if (chunk->truncated)
        fprintf(cli->err, "csched: %s was cut: its log kept %lld of %lld bytes written\n",
                stream_name(chunk), (long long)chunk->offset, (long long)chunk->written_bytes);
}

int cs_cli_read_logs_status(struct cs_cli *cli, const Csched__V1__ReadLogsRequest *req,
                            struct cs_status *st)
{
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    struct cs_stream *stream;
    Csched__V1__LogChunk *chunk;
    int rc;

    rc = cs_scheduler_read_logs(cli->client, req, &stream, &opts, st);
    if (rc != 0)
        return rc;
    while ((rc = cs_scheduler_read_logs_next(stream, &chunk, st)) == 1) {
        if (cli->format != CS_FORMAT_TABLE)
            cs_cli_print_message(cli, &chunk->base);
        else
            print_chunk(cli, req, chunk);
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
    }
    cs_stream_free(stream);
    return rc < 0 ? rc : st->code;
}

int cs_cli_read_logs(struct cs_cli *cli, const Csched__V1__ReadLogsRequest *req)
{
    struct cs_status st;
    char what[64];
    int rc;

    rc = cs_cli_read_logs_status(cli, req, &st);
    if (rc == 0)
        return 0;
    snprintf(what, sizeof(what), "logs of run %lld", (long long)req->run_id);
    return cs_cli_fail(cli, what, rc, &st);
}
