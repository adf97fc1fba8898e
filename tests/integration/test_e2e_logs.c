/* End-to-end tests of ReadLogs through libcsched against a real cschedd and
 * real minders: stdout and stderr apart and together, output far larger
 * than one chunk reassembled byte for byte, binary output, the choice of
 * attempt, and following a running attempt. One server serves every test of this file. */
#include <limits.h>
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

#define STDOUT_LOG CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT
#define STDERR_LOG CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR

static Csched__V1__Run *run_shell(struct cs_e2e *e, const char *prefix, const char *shell)
{
    Csched__V1__Run *run;
    char name[64];

    cs_e2e_name(name, sizeof(name), prefix);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED)
        fail_msg("run of \"%s\" is %s (message \"%s\")", shell, cs_test_run_state_name(run->state),
                 run->message);
    return run;
}

/* What `seq FIRST LAST` prints. */
static char *seq_text(long first, long last, size_t *len)
{
    size_t cap = (size_t)(last - first + 1) * 12 + 1, used = 0;
    char *buf = malloc(cap);

    assert_non_null(buf);
    for (long i = first; i <= last; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%ld\n", i);
    *len = used;
    return buf;
}

static void assert_log(struct cs_e2e *e, int64_t run_id, uint32_t attempt,
                       Csched__V1__LogStream stream, const char *want, size_t want_len)
{
    size_t len;
    char *got = cs_e2e_read_logs(e, run_id, attempt, stream, &len);

    if (len != want_len || memcmp(got, want, len) != 0)
        fail_msg("run %lld attempt %u stream %d: %zu bytes, want %zu; got \"%.200s\"",
                 (long long)run_id, attempt, (int)stream, len, want_len, got);
    free(got);
}

static void test_e2e_logs_stdout_and_stderr(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "outerr", "echo out1; echo err1 >&2; echo out2");

    assert_log(e, run->id, 0, STDOUT_LOG, "out1\nout2\n", 10);
    assert_log(e, run->id, 1, STDOUT_LOG, "out1\nout2\n", 10);
    assert_log(e, run->id, 0, STDERR_LOG, "err1\n", 5);
    csched__v1__run__free_unpacked(run, NULL);
}

/* What a ReadLogs stream delivered, by LogStream; cut: written_bytes of
 * the chunk saying the stream's log was cut, -1 without one. */
struct collected {
    char *text[3];
    size_t used[3];
    int64_t cut[3];
    bool stdout_after_stderr;
    int rc;
    struct cs_status st;
};

/* Opens ReadLogs for req with a deadline of timeout_ms (asserting the call
 * starts) and reads it to its end into c, checking that each stream's
 * offsets follow on; on_chunk, if set, is called with arg after every chunk. */
static void collect(struct cs_e2e *e, const Csched__V1__ReadLogsRequest *req, int64_t timeout_ms,
                    struct collected *c, void (*on_chunk)(void *), void *arg)
{
    struct cs_call_opts opts = {.timeout_ms = timeout_ms};
    Csched__V1__LogChunk *chunk;
    struct cs_stream *s = NULL;
    bool stderr_seen = false;

    memset(c, 0, sizeof(*c));
    c->cut[STDOUT_LOG] = c->cut[STDERR_LOG] = -1;
    assert_int_equal(cs_scheduler_read_logs(e->client, req, &s, &opts, &c->st), 0);
    c->text[STDOUT_LOG] = calloc(1, 1);
    c->text[STDERR_LOG] = calloc(1, 1);
    while ((c->rc = cs_scheduler_read_logs_next(s, &chunk, &c->st)) == 1) {
        int k = (int)chunk->stream;

        if (k != STDOUT_LOG && k != STDERR_LOG)
            fail_msg("chunk of stream %d", k);
        c->stdout_after_stderr = c->stdout_after_stderr || (k == STDOUT_LOG && stderr_seen);
        stderr_seen = stderr_seen || k == STDERR_LOG;
        assert_int_equal(chunk->offset, c->used[k]);
        /* The chunk that says a log was cut is its stream's last, and empty. */
        assert_int_equal(c->cut[k], -1);
        if (chunk->truncated) {
            assert_int_equal(chunk->data.len, 0);
            c->cut[k] = chunk->written_bytes;
        }
        c->text[k] = realloc(c->text[k], c->used[k] + chunk->data.len + 1);
        assert_non_null(c->text[k]);
        if (chunk->data.len > 0) /* an empty chunk's data may be NULL */
            memcpy(c->text[k] + c->used[k], chunk->data.data, chunk->data.len);
        c->used[k] += chunk->data.len;
        c->text[k][c->used[k]] = '\0';
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
        if (on_chunk != NULL)
            on_chunk(arg);
    }
    cs_stream_free(s);
}

static void collected_free(struct collected *c)
{
    free(c->text[STDOUT_LOG]);
    free(c->text[STDERR_LOG]);
}

/* With no stream chosen, all of stdout comes first, then all of stderr. */
static void test_e2e_logs_both_streams_in_order(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    Csched__V1__Run *run = run_shell(e, "both", "echo to-err >&2; echo to-out");
    struct collected c;

    req.run_id = run->id;
    collect(e, &req, CS_E2E_RUN_TIMEOUT_MS, &c, NULL, NULL);
    assert_int_equal(c.rc, 0);
    assert_int_equal(c.st.code, 0);
    assert_false(c.stdout_after_stderr);
    assert_string_equal(c.text[STDOUT_LOG], "to-out\n");
    assert_string_equal(c.text[STDERR_LOG], "to-err\n");
    collected_free(&c);
    csched__v1__run__free_unpacked(run, NULL);
}

/* Starts a run of shell and waits until it is RUNNING; returns its id. */
static int64_t start_shell(struct cs_e2e *e, const char *prefix, const char *shell)
{
    char name[64];

    cs_e2e_name(name, sizeof(name), prefix);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    int64_t id = cs_e2e_trigger(e, name);
    Csched__V1__Run *run = cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);
    return id;
}

struct first_chunk {
    struct cs_e2e *e;
    int64_t run_id;
    int state; /* of the run when the first chunk came; 0 before */
};

static void note_first_chunk(void *arg)
{
    struct first_chunk *f = arg;
    if (f->state != 0)
        return;
    Csched__V1__Run *run = cs_e2e_get_run(f->e, f->run_id);
    f->state = run->state;
    csched__v1__run__free_unpacked(run, NULL);
}

/* Followed, a running attempt's output arrives while it runs, and the stream
 * ends once the attempt has ended, with every byte of both streams. */
static void test_e2e_logs_follow(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    struct collected c;

    req.run_id = start_shell(e, "follow", "echo first; sleep 2; echo second >&2; echo third");
    req.follow = true;
    struct first_chunk first = {.e = e, .run_id = req.run_id};
    collect(e, &req, CS_E2E_RUN_TIMEOUT_MS, &c, note_first_chunk, &first);
    assert_int_equal(c.rc, 0);
    assert_int_equal(c.st.code, 0);
    if (first.state != CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING)
        fail_msg("the first chunk came when the run was %s, not RUNNING",
                 cs_test_run_state_name(first.state));
    assert_string_equal(c.text[STDOUT_LOG], "first\nthird\n");
    assert_string_equal(c.text[STDERR_LOG], "second\n");
    Csched__V1__Run *run = cs_e2e_wait_end(e, req.run_id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    collected_free(&c);
    csched__v1__run__free_unpacked(run, NULL);
}

/* Followed while still queued, a run's logs wait for its attempt to start,
 * then follow it to its end. */
static void test_e2e_logs_follow_queued_run(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    struct collected c;
    char name[64];

    /* One run at a time: the second waits in the queue behind the first. */
    cs_e2e_name(name, sizeof(name), "follow-queued");
    csched__v1__job__free_unpacked(cs_e2e_create_serial_job(e, name, "sleep 1; echo ran"), NULL);
    int64_t first = cs_e2e_trigger(e, name);
    req.run_id = cs_e2e_trigger(e, name);
    Csched__V1__Run *queued = cs_e2e_get_run(e, req.run_id);
    assert_int_equal(queued->state, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    assert_int_equal(queued->n_attempts, 0);
    csched__v1__run__free_unpacked(queued, NULL);

    req.follow = true;
    collect(e, &req, CS_E2E_RUN_TIMEOUT_MS, &c, NULL, NULL);
    assert_int_equal(c.rc, 0);
    assert_int_equal(c.st.code, 0);
    assert_string_equal(c.text[STDOUT_LOG], "ran\n");
    Csched__V1__Run *run = cs_e2e_wait_end(e, req.run_id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, first), NULL);
    collected_free(&c);
}

/* A follower that goes away while the attempt runs (here its deadline
 * passes between two rounds) leaves the server as it was. */
static void test_e2e_logs_follow_client_leaves(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    struct cs_status st = {0};
    Csched__V1__Run *run = NULL;
    struct collected c;

    req.run_id = start_shell(e, "follow-leave", "echo waiting; sleep 30");
    req.stream = STDOUT_LOG;
    req.follow = true;
    collect(e, &req, 700, &c, NULL, NULL);
    assert_int_equal(c.st.code, GRPC_STATUS_DEADLINE_EXCEEDED);
    assert_string_equal(c.text[STDOUT_LOG], "waiting\n");
    collected_free(&c);

    cancel.run_id = req.run_id;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &cancel, &run, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, req.run_id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    csched__v1__run__free_unpacked(run, NULL);
}

/* ReadLogs streams the server's own limit (api_common.h). */
#define LOG_STREAMS_PER_CALLER 64

/* One caller may follow 64 logs at once (each holds a buffer and open
 * files): the next ReadLogs is RESOURCE_EXHAUSTED, and another works once
 * one has ended. */
static void test_e2e_logs_streams_per_caller(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    struct cs_call_opts opts = {.timeout_ms = 30000};
    struct cs_stream *open[LOG_STREAMS_PER_CALLER];
    Csched__V1__LogChunk *chunk = NULL;
    struct cs_status st = {0};
    Csched__V1__Run *run = NULL;
    struct collected c;

    req.run_id = start_shell(e, "follow-many", "echo waiting; sleep 30");
    req.stream = STDOUT_LOG;
    req.follow = true;
    for (int i = 0; i < LOG_STREAMS_PER_CALLER; i++) {
        assert_int_equal(cs_scheduler_read_logs(e->client, &req, &open[i], &opts, &st), 0);
        assert_int_equal(cs_scheduler_read_logs_next(open[i], &chunk, &st), 1);
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
    }
    collect(e, &req, 5000, &c, NULL, NULL);
    assert_int_equal(c.st.code, GRPC_STATUS_RESOURCE_EXHAUSTED);
    if (strstr(c.st.message, "ReadLogs streams open, the most one caller may") == NULL)
        fail_msg("ReadLogs past the limit: \"%s\"", c.st.message);
    collected_free(&c);
    cs_stream_free(open[0]);
    cs_test_sleep_ms(500);
    collect(e, &req, 700, &c, NULL, NULL);
    assert_string_equal(c.text[STDOUT_LOG], "waiting\n");
    collected_free(&c);
    for (int i = 1; i < LOG_STREAMS_PER_CALLER; i++)
        cs_stream_free(open[i]);

    cancel.run_id = req.run_id;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &cancel, &run, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, req.run_id), NULL);
}

/* Output far larger than a chunk (> 64 KiB) comes back exactly. */
static void test_e2e_logs_large_output(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "large", "seq 1 60000; seq 7 50000 >&2");
    size_t out_len, err_len;
    char *out = seq_text(1, 60000, &out_len);
    char *err = seq_text(7, 50000, &err_len);

    assert_true(out_len > 64 * 1024 * 4);
    assert_log(e, run->id, 0, STDOUT_LOG, out, out_len);
    assert_log(e, run->id, 0, STDERR_LOG, err, err_len);
    free(err);
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
}

/* The cap on each log (csched-minder's default, 16 MiB). */
#define LOG_CAP_BYTES (16 << 20)
#define PAST_CAP_BYTES 20000000

/* A command that writes more than a log keeps: GetRun says how much each
 * stream wrote and kept, and ReadLogs, read to the end or followed, sends
 * the kept bytes and then a chunk saying the log was cut and how much was
 * written; a stream kept whole has no such chunk. */
static void test_e2e_logs_cut_at_the_cap(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    char shell[128];
    struct collected c;

    (void)snprintf(shell, sizeof(shell), "sleep 0.5; head -c %d /dev/zero; echo err >&2",
                   PAST_CAP_BYTES);
    req.run_id = start_shell(e, "cut", shell);
    req.follow = true;
    collect(e, &req, CS_E2E_RUN_TIMEOUT_MS, &c, NULL, NULL);
    assert_int_equal(c.rc, 0);
    assert_int_equal(c.st.code, 0);
    assert_int_equal(c.used[STDOUT_LOG], LOG_CAP_BYTES);
    assert_int_equal(c.cut[STDOUT_LOG], PAST_CAP_BYTES);
    assert_string_equal(c.text[STDERR_LOG], "err\n");
    assert_int_equal(c.cut[STDERR_LOG], -1);
    collected_free(&c);

    Csched__V1__Run *run = cs_e2e_wait_end(e, req.run_id);
    const Csched__V1__Attempt *a = run->attempts[0];
    assert_int_equal(a->stdout_written_bytes, PAST_CAP_BYTES);
    assert_int_equal(a->stdout_kept_bytes, LOG_CAP_BYTES);
    assert_int_equal(a->stderr_written_bytes, 4);
    assert_int_equal(a->stderr_kept_bytes, 4);
    req.follow = false;
    collect(e, &req, CS_E2E_RUN_TIMEOUT_MS, &c, NULL, NULL);
    assert_int_equal(c.rc, 0);
    assert_int_equal(c.used[STDOUT_LOG], LOG_CAP_BYTES);
    assert_int_equal(c.cut[STDOUT_LOG], PAST_CAP_BYTES);
    assert_int_equal(c.cut[STDERR_LOG], -1);
    collected_free(&c);
    csched__v1__run__free_unpacked(run, NULL);
}

/* Logs are bytes: NUL and 0xff survive. */
static void test_e2e_logs_binary(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *run = run_shell(e, "binary", "printf 'a\\000b\\377c'");

    assert_log(e, run->id, 0, STDOUT_LOG, "a\0b\377c", 5);
    assert_log(e, run->id, 0, STDERR_LOG, "", 0);
    csched__v1__run__free_unpacked(run, NULL);
}

/* Each attempt has its own logs; attempt 0 means the latest. */
static void test_e2e_logs_per_attempt(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64];
    Csched__V1__Run *run;

    cs_e2e_create_counter_job(e, "perattempt", "echo attempt $n; [ $n -ge 2 ]", 2, name,
                              sizeof(name), dir);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->n_attempts, 2);
    assert_log(e, run->id, 1, STDOUT_LOG, "attempt 1\n", 10);
    assert_log(e, run->id, 2, STDOUT_LOG, "attempt 2\n", 10);
    assert_log(e, run->id, 0, STDOUT_LOG, "attempt 2\n", 10);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_logs_stdout_and_stderr),
        cmocka_unit_test(test_e2e_logs_both_streams_in_order),
        cmocka_unit_test(test_e2e_logs_large_output),
        cmocka_unit_test(test_e2e_logs_binary),
        cmocka_unit_test(test_e2e_logs_cut_at_the_cap),
        cmocka_unit_test(test_e2e_logs_per_attempt),
        cmocka_unit_test(test_e2e_logs_follow),
        cmocka_unit_test(test_e2e_logs_follow_queued_run),
        cmocka_unit_test(test_e2e_logs_follow_client_leaves),
        cmocka_unit_test(test_e2e_logs_streams_per_caller),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
