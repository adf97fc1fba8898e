/* End-to-end tests of ReadLogs through libcsched against a real cschedd and
 * real minders: stdout and stderr apart and together, output far larger
 * than one chunk reassembled byte for byte, binary output, and the choice of
 * attempt. One server serves every test of this file. */
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
        fail_msg("run of \"%s\" is %s (message \"%s\")", shell, cs_e2e_state_name(run->state),
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

/* With no stream chosen, all of stdout comes first, then all of stderr. */
static void test_e2e_logs_both_streams_in_order(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    char *text[3] = {NULL, calloc(1, 1), calloc(1, 1)};
    size_t used[3] = {0, 0, 0};
    Csched__V1__Run *run = run_shell(e, "both", "echo to-err >&2; echo to-out");
    Csched__V1__LogChunk *chunk;
    struct cs_stream *s = NULL;
    struct cs_status st = {0};
    bool stderr_seen = false;
    int rc;

    req.run_id = run->id;
    assert_int_equal(cs_scheduler_read_logs(e->client, &req, &s, &opts, &st), 0);
    while ((rc = cs_scheduler_read_logs_next(s, &chunk, &st)) == 1) {
        int k = (int)chunk->stream;

        if (k != STDOUT_LOG && k != STDERR_LOG)
            fail_msg("chunk of stream %d", k);
        if (k == STDOUT_LOG && stderr_seen)
            fail_msg("stdout chunk after a stderr chunk");
        stderr_seen = stderr_seen || k == STDERR_LOG;
        assert_int_equal(chunk->offset, used[k]);
        text[k] = realloc(text[k], used[k] + chunk->data.len + 1);
        assert_non_null(text[k]);
        memcpy(text[k] + used[k], chunk->data.data, chunk->data.len);
        used[k] += chunk->data.len;
        text[k][used[k]] = '\0';
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
    }
    cs_stream_free(s);
    assert_int_equal(rc, 0);
    assert_int_equal(st.code, 0);
    assert_string_equal(text[STDOUT_LOG], "to-out\n");
    assert_string_equal(text[STDERR_LOG], "to-err\n");
    free(text[1]);
    free(text[2]);
    csched__v1__run__free_unpacked(run, NULL);
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
    char dir[PATH_MAX], shell[2 * PATH_MAX + 128], name[64];
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run;

    cs_e2e_tmpdir(dir);
    snprintf(shell, sizeof(shell),
             "n=$(cat %s/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s/count; "
             "echo attempt $n; [ $n -ge 2 ]",
             dir, dir);
    cs_e2e_name(name, sizeof(name), "perattempt");
    job.name = name;
    job.shell = shell;
    job.max_attempts = 2;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(run->n_attempts, 2);
    assert_log(e, run->id, 1, STDOUT_LOG, "attempt 1\n", 10);
    assert_log(e, run->id, 2, STDOUT_LOG, "attempt 2\n", 10);
    assert_log(e, run->id, 0, STDOUT_LOG, "attempt 2\n", 10);
    csched__v1__run__free_unpacked(run, NULL);
    cs_e2e_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_logs_stdout_and_stderr),
        cmocka_unit_test(test_e2e_logs_both_streams_in_order),
        cmocka_unit_test(test_e2e_logs_large_output),
        cmocka_unit_test(test_e2e_logs_binary),
        cmocka_unit_test(test_e2e_logs_per_attempt),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
