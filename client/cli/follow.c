/* Following a Watch stream through the server's restarts, for the commands
 * that watch (watch, trigger --wait): the stream is opened again after the
 * server went away, from where the last one stopped, so that nothing is
 * missed. Single-threaded; it sleeps between tries, as a CLI may.
 */
#include <grpc/status.h>
#include <unistd.h>

#include "cli.h"

/* Opens of the watch again while the server is unreachable, 1 s apart. */
#define WATCH_RECONNECTS 30

int cs_cli_watch_follow(struct cs_cli *cli, const char *what, Csched__V1__WatchRequest *req,
                        cs_cli_follow_cb follow_cb, void *arg)
{
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    struct cs_stream *stream;
    struct cs_status st;
    int rc;

    for (int tries = 0;; tries++) {
        rc = cs_scheduler_watch(cli->client, req, &stream, &opts, &st);
        if (rc != 0)
            return cs_cli_fail(cli, what, rc, &st);
        rc = follow_cb(cli, stream, req, &st, arg);
        cs_stream_free(stream);
        if (rc < 0)
            return cs_cli_fail(cli, what, rc, &st);
        if (rc == CS_CLI_FOLLOW_DONE)
            return 0;
        if (rc == CS_CLI_FOLLOW_STOP || st.code != GRPC_STATUS_UNAVAILABLE ||
            tries == WATCH_RECONNECTS)
            break;
        fprintf(cli->err, "csched: %s: %s, reconnecting\n", what, st.message);
        sleep(1);
        opts.wait_for_ready = true;
    }
    if (st.code != GRPC_STATUS_OK)
        return cs_cli_fail(cli, what, st.code, &st);
    return 0;
}
