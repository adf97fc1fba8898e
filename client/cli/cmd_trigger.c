/* csched trigger JOB [--array SPEC] [--wait [-v] [--logs]]: starts a run
 * (or an array of runs, docs/running.md "Arrays") and, with --wait,
 * follows it through Watch to its end, so that the exit code of csched is
 * the run's. It says the run's id at the start and its outcome at the end;
 * -v adds a line for every state change between, --logs the output of each
 * attempt as it is written (ReadLogs with follow, attempt after attempt).
 *
 * No event can be missed: the watch starts after the last event committed
 * before the trigger (Stats.last_seq), and the run is read once more after
 * the watch is open in case it ended already.
 */
#include <errno.h>
#include <grpc/status.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static int get_run(struct cs_cli *cli, int64_t id, Csched__V1__Run **out, struct cs_status *st)
{
    Csched__V1__GetRunRequest req = CSCHED__V1__GET_RUN_REQUEST__INIT;
    struct cs_call_opts opts = cs_cli_call_opts(cli);

    req.run_id = id;
    return cs_scheduler_get_run(cli->client, &req, out, &opts, st);
}

/* What wait_run follows: the run, whether each transition is said, and
 * whether its output is streamed. */
struct wait {
    int64_t id;
    bool verbose, logs;
};

/* Reads the watch until the run's own final event. Returns
 * CS_CLI_FOLLOW_DONE when it came, CS_CLI_FOLLOW_ENDED when the stream ended
 * without it (st says why), < 0 on a local error. */
static int follow(struct cs_cli *cli, struct cs_stream *stream, const struct wait *w,
                  int64_t *last_seq, struct cs_status *st)
{
    const int64_t id = w->id;
    Csched__V1__WatchResponse *batch;
    bool done = false;
    int rc = 0;

    while (!done && (rc = cs_scheduler_watch_next(stream, &batch, st)) == 1) {
        for (size_t i = 0; i < batch->n_events && !done; i++) {
            const Csched__V1__Event *ev = batch->events[i];
            done = ev->run_id == id && ev->attempt == 0 && cs_cli_state_is_final(ev->state);
            *last_seq = ev->seq;
            if (ev->run_id == id && w->verbose && cli->format == CS_FORMAT_TABLE) {
                if (ev->attempt == 0)
                    fprintf(cli->err, "run %" PRId64 ": %s\n", id, cs_cli_state_name(ev->state));
                else
                    fprintf(cli->err, "run %" PRId64 ": attempt %" PRIu32 " %s\n", id, ev->attempt,
                            cs_cli_state_name(ev->state));
            }
        }
        csched__v1__watch_response__free_unpacked(batch, NULL);
    }
    if (done)
        return CS_CLI_FOLLOW_DONE;
    return rc == 0 ? CS_CLI_FOLLOW_ENDED : rc;
}

/* Follows one Watch stream for wait_run: the run is read once the watch is
 * open, in case it ended before. */
static int wait_cb(struct cs_cli *cli, struct cs_stream *stream, Csched__V1__WatchRequest *req,
                   struct cs_status *st, void *arg)
{
    const struct wait *w = arg;
    Csched__V1__Run *run;
    int rc;

    rc = get_run(cli, w->id, &run, st);
    if (rc == 0) {
        bool ended = cs_cli_state_is_final(run->state);

        csched__v1__run__free_unpacked(run, NULL);
        if (ended)
            return CS_CLI_FOLLOW_DONE;
    }
    rc = follow(cli, stream, w, &req->after_seq, st);
    /* A stream that ended well but without the run's end still fails. */
    if (rc == CS_CLI_FOLLOW_ENDED && st->code == GRPC_STATUS_OK)
        st->code = GRPC_STATUS_UNKNOWN;
    return rc;
}

/* Waits for w's run to end; after_seq is where the watch starts. Returns 0
 * or an exit code (error printed). */
static int wait_run(struct cs_cli *cli, const char *job, struct wait *w, int64_t after_seq)
{
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;

    req.job_name = (char *)job;
    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = after_seq;
    return cs_cli_watch_follow(cli, "watch run", &req, wait_cb, w);
}

/* Streams the output of w's run, attempt after attempt, until the last
 * one has ended: 0, or the exit code of the printed failure. Following an
 * attempt that has not started, the server waits for it, and ends the
 * stream NOT_FOUND if the run ends without it: then there is no more. */
static int stream_logs(struct cs_cli *cli, const struct wait *w)
{
    for (uint32_t k = 1;; k++) {
        Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
        Csched__V1__Run *run;
        struct cs_status st;
        bool ended;
        int rc;

        req.run_id = w->id;
        req.attempt = k;
        req.follow = true;
        rc = cs_cli_read_logs_status(cli, &req, &st);
        if (rc == GRPC_STATUS_NOT_FOUND && k > 1)
            return 0;
        if (rc != 0)
            return cs_cli_fail(cli, "logs of the run", rc, &st);
        rc = get_run(cli, w->id, &run, &st);
        if (rc != 0)
            return cs_cli_fail(cli, "get run", rc, &st);
        ended = cs_cli_state_is_final(run->state) && run->n_attempts <= k;
        csched__v1__run__free_unpacked(run, NULL);
        if (ended)
            return 0;
    }
}

/* Prints the run's end, on f in a table, and returns its exit code. */
static int finish(struct cs_cli *cli, int64_t id, FILE *f)
{
    Csched__V1__Run *run;
    struct cs_status st;
    char out[48];
    int rc;

    rc = get_run(cli, id, &run, &st);
    if (rc != 0)
        return cs_cli_fail(cli, "get run", rc, &st);
    if (cli->format != CS_FORMAT_TABLE) {
        cs_cli_print_message(cli, &run->base);
    } else {
        cs_cli_format_run_outcome(run, out, sizeof(out));
        fprintf(f, "run %" PRId64 " %s: %s%s%s\n", run->id, cs_cli_state_name(run->state), out,
                run->message[0] ? ": " : "", run->message);
    }
    rc = cs_cli_exit_for_run(run);
    csched__v1__run__free_unpacked(run, NULL);
    return rc;
}

/* --at TIME or --in DURATION: when the run may start. A
 * cs_cli_flag_result, or -EINVAL with err. */
static int later_flag(int argc, char **argv, int *i, Csched__V1__TriggerJobRequest *req,
                      struct cs_cli_err *err)
{
    const char *v;
    int64_t ms;

    if (cs_cli_flag("--at", argc, argv, i, &v)) {
        if (cs_cli_parse_at(v, &ms) != 0)
            return cs_cli_err_set(err, -EINVAL,
                                  "--at takes a time, e.g. 2026-12-01T13:00:00Z, 2026-12-01 13:00 "
                                  "(local) or @UNIX_SECONDS, not '%s'",
                                  v ? v : "");
        req->not_before_unix_ms = ms;
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--in", argc, argv, i, &v)) {
        struct timespec now;
        if (cs_cli_parse_duration(v, &ms) != 0 || clock_gettime(CLOCK_REALTIME, &now) != 0)
            return cs_cli_err_set(err, -EINVAL,
                                  "--in takes a duration, e.g. 90s, 15m or 1h30m, not '%s'",
                                  v ? v : "");
        req->not_before_unix_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 + ms;
        return CS_CLI_FLAG_TAKEN;
    }
    return CS_CLI_FLAG_NOT_MINE;
}

/* --array SPEC: N (indices 0 to N-1) or FIRST-LAST, either with %MAX for
 * array_max_running, as Slurm's --array takes them. 0 or -EINVAL. */
static int parse_array(const char *v, Csched__V1__TriggerJobRequest *req)
{
    char spec[64], *cap, *dash;
    uint32_t first = 0, last;

    if (v == NULL || strlen(v) >= sizeof(spec))
        return -EINVAL;
    strcpy(spec, v);
    cap = strchr(spec, '%');
    if (cap != NULL) {
        *cap++ = '\0';
        if (cs_cli_parse_u32(cap, &req->array_max_running) != 0 || req->array_max_running == 0)
            return -EINVAL;
    }
    dash = strchr(spec, '-');
    if (dash == NULL) {
        if (cs_cli_parse_u32(spec, &req->array_size) != 0 || req->array_size == 0)
            return -EINVAL;
        return 0;
    }
    *dash++ = '\0';
    if (cs_cli_parse_u32(spec, &first) != 0 || cs_cli_parse_u32(dash, &last) != 0 || last < first ||
        last - first == UINT32_MAX)
        return -EINVAL;
    req->array_first_index = first;
    req->array_size = last - first + 1;
    return 0;
}

/* --array and --array-max-running. A cs_cli_flag_result, or -EINVAL with
 * err. */
static int array_flag(int argc, char **argv, int *i, Csched__V1__TriggerJobRequest *req,
                      struct cs_cli_err *err)
{
    const char *v;

    if (cs_cli_flag("--array", argc, argv, i, &v)) {
        if (parse_array(v, req) != 0)
            return cs_cli_err_set(err, -EINVAL,
                                  "--array takes N, FIRST-LAST, N%%MAX or FIRST-LAST%%MAX (e.g. "
                                  "0-1999%%64), not '%s'",
                                  v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    if (cs_cli_flag("--array-max-running", argc, argv, i, &v)) {
        if (cs_cli_parse_u32(v, &req->array_max_running) != 0 || req->array_max_running == 0)
            return cs_cli_err_set(
                err, -EINVAL, "--array-max-running takes a whole number > 0, not '%s'", v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    return CS_CLI_FLAG_NOT_MINE;
}

/* Parses the flags into req. Returns 0 or an exit code. */
static int parse(struct cs_cli *cli, int argc, char **argv, Csched__V1__TriggerJobRequest *req,
                 bool *wait, struct wait *w)
{
    const char *job = NULL;

    for (int i = 0; i < argc; i++) {
        struct cs_cli_err err;
        const char *v;
        int rc;

        if (strcmp(argv[i], "--wait") == 0) {
            *wait = true;
            continue;
        }
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            w->verbose = true;
            continue;
        }
        if (strcmp(argv[i], "--logs") == 0) {
            w->logs = true;
            continue;
        }
        if (cs_cli_flag("--env", argc, argv, &i, &v)) {
            if (cs_cli_map_put_kv(&csched__v1__trigger_job_request__env_entry__descriptor,
                                  (void ***)&req->env, &req->n_env, v) != 0)
                return cs_cli_usage(cli, "--env takes KEY=VALUE, not '%s'", v ? v : "");
            continue;
        }
        rc = cs_cli_take_flag_value(cli, "--idempotency-key", "a value", argc, argv, &i, &v);
        if (rc < 0)
            return CS_EXIT_USAGE;
        if (rc == CS_CLI_FLAG_TAKEN) {
            req->idempotency_key = (char *)v;
            continue;
        }
        rc = later_flag(argc, argv, &i, req, &err);
        if (rc < 0)
            return cs_cli_usage(cli, "%s", err.msg);
        if (rc == CS_CLI_FLAG_TAKEN)
            continue;
        rc = array_flag(argc, argv, &i, req, &err);
        if (rc < 0)
            return cs_cli_usage(cli, "%s", err.msg);
        if (rc == CS_CLI_FLAG_TAKEN)
            continue;
        rc = cs_cli_take_global_or_word(cli, argc, argv, &i, &job, "trigger",
                                        "csched trigger JOB [--env K=V]... [--idempotency-key K] "
                                        "[--at TIME | --in DURATION] [--array SPEC "
                                        "[--array-max-running M]] [--wait [-v] [--logs]]");
        if (rc != 0)
            return rc;
    }
    if (job == NULL || job[0] == '\0')
        return cs_cli_usage(cli, "trigger: missing JOB");
    if ((w->verbose || w->logs) && !*wait)
        return cs_cli_usage(cli, "trigger: -v and --logs go with --wait");
    if (req->array_max_running > 0 && req->array_size == 0)
        return cs_cli_usage(cli, "trigger: --array-max-running goes with --array");
    if (req->array_size > 0 && *wait)
        return cs_cli_usage(cli, "trigger: --wait follows one run, not an array; follow one "
                                 "with csched runs --array ID");
    req->job_name = (char *)job;
    return 0;
}

static void free_env(Csched__V1__TriggerJobRequest *req)
{
    for (size_t i = 0; i < req->n_env; i++)
        protobuf_c_message_free_unpacked(&req->env[i]->base, NULL);
    free(req->env);
}

/* "run 7 of nightly: QUEUED", and when it may start if that is later. */
static void print_triggered(FILE *f, const Csched__V1__Run *run)
{
    char t[32];

    if (run->array_id != 0)
        fprintf(f, "array %" PRId64 " (runs from %" PRId64 ", index %" PRIu32 " on) of %s: %s",
                run->array_id, run->id, run->array_index, run->job_name,
                cs_cli_state_name(run->state));
    else
        fprintf(f, "run %" PRId64 " of %s: %s", run->id, run->job_name,
                cs_cli_state_name(run->state));
    if (run->not_before_unix_ms > 0) {
        cs_cli_format_time(run->not_before_unix_ms, t, sizeof(t));
        fprintf(f, " (starts at %s)", t);
    }
    fputc('\n', f);
}

int cs_cmd_trigger(struct cs_cli *cli, int argc, char **argv)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    struct cs_call_opts opts;
    Csched__V1__Stats *stats;
    Csched__V1__Run *run;
    int64_t after_seq = 0;
    struct cs_status st;
    struct wait w = {0};
    bool wait = false;
    char what[300];
    int rc;

    rc = parse(cli, argc, argv, &req, &wait, &w);
    if (rc != 0)
        goto out;
    opts = cs_cli_call_opts(cli);
    snprintf(what, sizeof(what), "trigger %s", req.job_name);
    if (wait) {
        rc = cs_scheduler_get_stats(cli->client, NULL, &stats, &opts, &st);
        if (rc != 0) {
            rc = cs_cli_fail(cli, what, rc, &st);
            goto out;
        }
        after_seq = stats->last_seq;
        csched__v1__stats__free_unpacked(stats, NULL);
    }
    rc = cs_scheduler_trigger_job(cli->client, &req, &run, &opts, &st);
    if (rc != 0) {
        rc = cs_cli_fail(cli, what, rc, &st);
        goto out;
    }
    w.id = run->id;
    if (cli->format != CS_FORMAT_TABLE && !wait)
        cs_cli_print_message(cli, &run->base);
    else if (cli->format == CS_FORMAT_TABLE)
        print_triggered(wait ? cli->err : cli->out, run);
    csched__v1__run__free_unpacked(run, NULL);
    if (wait) {
        rc = w.logs ? stream_logs(cli, &w) : 0;
        if (rc == 0)
            rc = wait_run(cli, req.job_name, &w, after_seq);
        /* With --logs, stdout is the command's output alone. */
        if (rc == 0)
            rc = finish(cli, w.id, w.logs ? cli->err : cli->out);
    }
out:
    free_env(&req);
    return rc;
}
