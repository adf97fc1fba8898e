/* End-to-end test of the cap on streams all callers together may hold
 * open: --max-streams event Watch streams, and as many ReadLogs streams.
 * The server runs with a cap of MAX_STREAMS, below the 64 one caller may
 * hold, so one caller reaches it: the next stream is RESOURCE_EXHAUSTED
 * naming the flag, Watch and ReadLogs count apart, and a stream closed
 * makes room for another. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define MAX_STREAMS 6
/* Time for the server to take the streams just opened. */
#define SETTLE_MS 1000

static int setup(void **state)
{
    static const char *const args[] = {"--max-streams", "6", NULL};
    return cs_e2e_start(state, args);
}

/* A Watch from the start of history: it has events to send at once. */
static struct cs_stream *watch_open(struct cs_e2e *e)
{
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_stream *s = NULL;
    struct cs_status st = {0};

    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    if (cs_scheduler_watch(e->client, &req, &s, &opts, &st) != 0)
        fail_msg("Watch: %s \"%s\"", cs_status_code_name(st.code), st.message);
    return s;
}

/* The first answer of a Watch: -1 for an event, else its status code. */
static int watch_first(struct cs_stream *s, struct cs_status *st)
{
    Csched__V1__WatchResponse *msg = NULL;
    int rc = cs_scheduler_watch_next(s, &msg, st);
    if (msg != NULL)
        csched__v1__watch_response__free_unpacked(msg, NULL);
    return rc == 1 ? -1 : st->code;
}

/* A ReadLogs following run_id's stdout: -1 once its first chunk came, else
 * the status code the stream ended with (*out NULL then). */
static int logs_open(struct cs_e2e *e, int64_t run_id, struct cs_stream **out, struct cs_status *st)
{
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    Csched__V1__LogChunk *chunk = NULL;

    req.run_id = run_id;
    req.stream = CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT;
    req.follow = true;
    if (cs_scheduler_read_logs(e->client, &req, out, &opts, st) != 0)
        fail_msg("ReadLogs: %s \"%s\"", cs_status_code_name(st->code), st->message);
    int rc = cs_scheduler_read_logs_next(*out, &chunk, st);
    if (chunk != NULL)
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
    if (rc == 1)
        return -1;
    cs_stream_free(*out);
    *out = NULL;
    return st->code;
}

static void assert_refused(int code, const struct cs_status *st, const char *what)
{
    char want[128];

    (void)snprintf(want, sizeof(want),
                   "%d %s streams are open, the most cschedd keeps (--max-streams)", MAX_STREAMS,
                   what);
    if (code != GRPC_STATUS_RESOURCE_EXHAUSTED || strstr(st->message, want) == NULL)
        fail_msg("%s past --max-streams: %s \"%s\"", what, cs_status_code_name(code), st->message);
}

static void test_e2e_streams_cap_of_all_callers(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    struct cs_stream *watches[MAX_STREAMS], *logs[MAX_STREAMS], *s;
    struct cs_status st = {0};
    Csched__V1__Run *run = NULL;
    char name[64];

    cs_e2e_name(name, sizeof(name), "followed");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "echo waiting; sleep 60"),
                                   NULL);
    int64_t run_id = cs_e2e_trigger(e, name);

    for (int i = 0; i < MAX_STREAMS; i++) {
        watches[i] = watch_open(e);
        assert_int_equal(watch_first(watches[i], &st), -1);
    }
    s = watch_open(e);
    assert_refused(watch_first(s, &st), &st, "Watch");
    cs_stream_free(s);

    /* ReadLogs has places of its own, however many Watch streams are open. */
    for (int i = 0; i < MAX_STREAMS; i++)
        assert_int_equal(logs_open(e, run_id, &logs[i], &st), -1);
    assert_refused(logs_open(e, run_id, &s, &st), &st, "ReadLogs");

    /* A stream closed frees its place. */
    cs_stream_free(watches[0]);
    cs_stream_free(logs[0]);
    cs_test_sleep_ms(SETTLE_MS);
    watches[0] = watch_open(e);
    assert_int_equal(watch_first(watches[0], &st), -1);
    assert_int_equal(logs_open(e, run_id, &logs[0], &st), -1);
    for (int i = 0; i < MAX_STREAMS; i++) {
        cs_stream_free(watches[i]);
        cs_stream_free(logs[i]);
    }

    cancel.run_id = run_id;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &cancel, &run, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, run_id), NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_streams_cap_of_all_callers),
    };

    return cmocka_run_group_tests(tests, setup, cs_e2e_teardown);
}
