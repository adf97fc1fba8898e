/* trigger_and_wait: triggers a csched job and waits for the run to end,
 * using only the installed libcsched. Exits with the run's exit code.
 *
 *   cc trigger_and_wait.c $(pkg-config --cflags --libs csched) \
 *      -Wl,-rpath,$(pkg-config --variable=libdir csched)
 *   ./a.out [TARGET] JOB      (default: the local unix socket)
 */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <stdio.h>
#include <stdlib.h>

/* Follows the watch until run id has ended. Returns 0 or a gRPC code. */
static int wait_end(struct cs_client *client, const char *job, int64_t id, int64_t after_seq,
                    struct cs_status *st)
{
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_stream *stream;
    Csched__V1__WatchResponse *batch;
    int rc, done = 0;

    req.job_name = (char *)job;
    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = after_seq;
    rc = cs_scheduler_watch(client, &req, &stream, NULL, st);
    if (rc != 0)
        return rc;
    /* Events come in batches: one WatchResponse holds one or more. */
    while (!done && cs_scheduler_watch_next(stream, &batch, st) == 1) {
        for (size_t i = 0; i < batch->n_events; i++) {
            const Csched__V1__Event *ev = batch->events[i];
            if (ev->run_id == id && ev->attempt == 0) {
                printf("run %lld: %s\n", (long long)id, cs_run_state_name(ev->state));
                done = done || ev->state >= CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
            }
        }
        csched__v1__watch_response__free_unpacked(batch, NULL);
    }
    cs_stream_free(stream);
    return done ? 0 : (st->code != 0 ? st->code : 2);
}

int main(int argc, char **argv)
{
    Csched__V1__TriggerJobRequest treq = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__GetRunRequest greq = CSCHED__V1__GET_RUN_REQUEST__INIT;
    char local[128];
    const char *target = argc > 2 ? argv[1] : local;
    struct cs_client *client;
    Csched__V1__Stats *stats;
    Csched__V1__Run *run;
    struct cs_status st;
    int rc, code = 1;

    if (argc < 2) {
        fprintf(stderr, "usage: %s [TARGET] JOB\n", argv[0]);
        return 2;
    }
    /* Without a target: the local cschedd's unix socket. */
    if (cs_client_default_target(local, sizeof(local)) != 0)
        local[0] = '\0';
    treq.job_name = argv[argc - 1];
    if (cs_client_new(target, &client) != 0) {
        fprintf(stderr, "cannot make a client for %s\n", target);
        return 1;
    }
    /* Events after this seq include every change of the run made below. */
    rc = cs_scheduler_get_stats(client, NULL, &stats, NULL, &st);
    if (rc != 0)
        goto fail;
    greq.run_id = stats->last_seq;
    csched__v1__stats__free_unpacked(stats, NULL);
    rc = cs_scheduler_trigger_job(client, &treq, &run, NULL, &st);
    if (rc != 0)
        goto fail;
    rc = wait_end(client, treq.job_name, run->id, greq.run_id, &st);
    greq.run_id = run->id;
    csched__v1__run__free_unpacked(run, NULL);
    if (rc != 0)
        goto fail;
    rc = cs_scheduler_get_run(client, &greq, &run, NULL, &st);
    if (rc != 0)
        goto fail;
    code = run->outcome_case == CSCHED__V1__RUN__OUTCOME_EXIT_CODE ? run->exit_code : 1;
    printf("run %lld %s: exit %d\n", (long long)run->id, cs_run_state_name(run->state), code);
    csched__v1__run__free_unpacked(run, NULL);
    cs_client_free(client);
    return code;

fail:
    fprintf(stderr, "csched: %s: %s\n", cs_status_code_name(rc), st.message);
    cs_client_free(client);
    return 1;
}
