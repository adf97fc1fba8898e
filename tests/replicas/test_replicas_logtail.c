/* ReadLogs after the active replica's machine is lost: two replicas, the
 * active one runs a job that writes more than the tail to stdout and a line
 * to stderr, and another that is still running, then is killed with kill -9
 * (its state dir, where the log files are, stands for the lost machine).
 * Through the replica that takes over: the first attempt's output is the
 * tail the database kept, naming the lost replica, with the right bytes,
 * offsets and sizes; the attempt still running when its replica was lost is
 * refused, naming the replica, first while its end is awaited and then once
 * it has ended LOST with no tail kept. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "replicas_runs.h"

/* attempt_tail.h's CS_ATTEMPT_TAIL_BYTES, the documented bound. */
#define TAIL_BYTES (64 * 1024)
/* `seq 1 40000`: 9 x 2 + 90 x 3 + 900 x 4 + 9000 x 5 + 30001 x 6 bytes. */
#define SEQ_LAST 40000
#define SEQ_BYTES 228894
#define STDERR_TEXT "oops on stderr\n"

/* What `seq 1 SEQ_LAST` writes (caller frees). */
static char *seq_output(void)
{
    char *out = malloc(SEQ_BYTES + 16);
    size_t len = 0;
    assert_non_null(out);
    for (int k = 1; k <= SEQ_LAST; k++)
        len += (size_t)sprintf(out + len, "%d\n", k);
    assert_int_equal(len, SEQ_BYTES);
    return out;
}

/* The chunks of one ReadLogs stream, kept in order. */
struct chunks {
    Csched__V1__LogChunk *c[8];
    size_t n;
};

static void chunks_free(struct chunks *ch)
{
    for (size_t i = 0; i < ch->n; i++)
        csched__v1__log_chunk__free_unpacked(ch->c[i], NULL);
    ch->n = 0;
}

/* Reads a whole ReadLogs stream of the latest attempt of run id through e:
 * 0 and the chunks, or the status code with its message in *st. */
static int read_chunks(struct cs_e2e *e, int64_t id, Csched__V1__LogStream stream,
                       struct chunks *ch, struct cs_status *st)
{
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    Csched__V1__LogChunk *chunk;
    struct cs_stream *s = NULL;
    req.run_id = id;
    req.stream = stream;
    ch->n = 0;
    memset(st, 0, sizeof(*st));
    int rc = cs_scheduler_read_logs(e->client, &req, &s, cs_e2e_opts(), st);
    if (rc != 0)
        return rc;
    while ((rc = cs_scheduler_read_logs_next(s, &chunk, st)) == 1) {
        if (ch->n == sizeof(ch->c) / sizeof(ch->c[0]))
            fail_msg("ReadLogs(%lld) sent more than %zu chunks", (long long)id, ch->n);
        ch->c[ch->n++] = chunk;
    }
    cs_stream_free(s);
    return rc != 0 ? rc : st->code;
}

/* Asserts that chunk is the tail of a stream kept in the database: from
 * replica, the last bytes of want (want_len bytes written in all). */
static void assert_tail_chunk(const Csched__V1__LogChunk *chunk, Csched__V1__LogStream stream,
                              const char *replica, const char *want, size_t want_len)
{
    size_t tail = want_len < TAIL_BYTES ? want_len : TAIL_BYTES;
    assert_int_equal(chunk->stream, stream);
    if (chunk->replica == NULL || strcmp(chunk->replica, replica) != 0)
        fail_msg("the tail chunk names replica \"%s\", want \"%s\"",
                 chunk->replica != NULL ? chunk->replica : "(none)", replica);
    assert_int_equal(chunk->written_bytes, (int64_t)want_len);
    assert_int_equal(chunk->offset, (int64_t)(want_len - tail));
    assert_int_equal(chunk->data.len, tail);
    if (tail > 0 && memcmp(chunk->data.data, want + want_len - tail, tail) != 0)
        fail_msg("the tail's %zu bytes differ from the last %zu the command wrote", tail, tail);
    assert_false(chunk->truncated);
}

static int64_t trigger_job(struct cs_e2e *e, const char *prefix, const char *shell)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64];
    cs_e2e_name(name, sizeof(name), prefix);
    job.name = name;
    job.shell = (char *)shell;
    job.max_attempts = 1;
    job.kill_grace_seconds = CS_RRUNS_KILL_GRACE_S;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    return cs_e2e_trigger(e, name);
}

static void test_replicas_logtail_after_failover(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL);
    struct cs_e2e *ea = cs_replicas_e2e(f->rs, a);
    const char *lost = f->rs->r[a].id;
    char *out = seq_output();
    struct chunks ch;
    struct cs_status st;
    char sql[256];

    int64_t done = trigger_job(ea, "tail", "seq 1 40000; printf 'oops on stderr\\n' >&2");
    Csched__V1__Run *run = cs_e2e_wait_end(ea, done);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
    int64_t running = trigger_job(ea, "running", "echo started; sleep 60");
    csched__v1__run__free_unpacked(cs_e2e_wait_state(ea, running,
                                                     CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING,
                                                     CS_E2E_RUN_TIMEOUT_MS),
                                   NULL);
    /* The tail commits after the attempt's end: wait for it. */
    snprintf(sql, sizeof(sql),
             "SELECT octet_length(stdout_tail) || ' ' || octet_length(stderr_tail) FROM attempts"
             " WHERE run_id = %lld",
             (long long)done);
    assert_int_equal(cs_replicas_wait_sql(f->rs, sql, "65536 15", 10000), 0);

    assert_int_equal(cs_replicas_kill9(f->rs, a), 0);
    unsigned b = cs_rruns_active(f, (int)a, NULL);
    struct cs_e2e *eb = cs_replicas_e2e(f->rs, b);

    /* Each stream alone, then both: one chunk each, from the database. */
    assert_int_equal(read_chunks(eb, done, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &ch, &st), 0);
    assert_int_equal(ch.n, 1);
    assert_tail_chunk(ch.c[0], CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, lost, out, SEQ_BYTES);
    chunks_free(&ch);
    assert_int_equal(read_chunks(eb, done, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR, &ch, &st), 0);
    assert_int_equal(ch.n, 1);
    assert_tail_chunk(ch.c[0], CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR, lost, STDERR_TEXT,
                      strlen(STDERR_TEXT));
    chunks_free(&ch);
    assert_int_equal(
        read_chunks(eb, done, CSCHED__V1__LOG_STREAM__LOG_STREAM_UNSPECIFIED, &ch, &st), 0);
    assert_int_equal(ch.n, 2);
    assert_tail_chunk(ch.c[0], CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, lost, out, SEQ_BYTES);
    assert_tail_chunk(ch.c[1], CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR, lost, STDERR_TEXT,
                      strlen(STDERR_TEXT));
    chunks_free(&ch);
    /* The CLI says whose log it is, on stderr, before the tail's bytes. */
    char cmd[1024], said[4096] = "", want[128];
    snprintf(cmd, sizeof(cmd), "%s/csched --server %s logs %lld --stderr 2>&1", cs_test_bin_dir(),
             cs_testd_target(eb->d), (long long)done);
    FILE *cli = popen(cmd, "r");
    assert_non_null(cli);
    size_t got = fread(said, 1, sizeof(said) - 1, cli);
    said[got] = '\0';
    assert_int_equal(pclose(cli), 0);
    snprintf(want, sizeof(want), "stderr ran on replica %s, whose machine holds its whole log",
             lost);
    if (strstr(said, want) == NULL || strstr(said, STDERR_TEXT) == NULL)
        fail_msg("csched logs said \"%s\", want \"%s\" and the tail", said, want);

    /* Still running on the lost machine, its end awaited past the
     * deadline: refused, naming the replica. */
    int rc = read_chunks(eb, running, CSCHED__V1__LOG_STREAM__LOG_STREAM_UNSPECIFIED, &ch, &st);
    chunks_free(&ch);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_FAILED_PRECONDITION, lost);
    /* Ended LOST: no tail was kept, and the call says so, naming it. */
    run = cs_e2e_wait_state(eb, running, CSCHED__V1__RUN_STATE__RUN_STATE_LOST, CS_RRUNS_LOST_MS);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
    csched__v1__run__free_unpacked(run, NULL);
    rc = read_chunks(eb, running, CSCHED__V1__LOG_STREAM__LOG_STREAM_UNSPECIFIED, &ch, &st);
    chunks_free(&ch);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_NOT_FOUND, lost);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_NOT_FOUND, "no tail");
    free(out);
}

static int group_setup(void **state)
{
    return cs_rruns_setup(state, 2, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_logtail_after_failover),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
