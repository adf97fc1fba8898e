/* The shared fixture and helpers of the end-to-end API tests (see e2e.h).
 * Runs on the test's main thread only. Every helper frees what it got from
 * the client before it returns, so a passing run leaves LeakSanitizer silent. */
#include "e2e.h"

#include <errno.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "probe.h"
#include "testlib.h"

#define POLL_INTERVAL_MS 20

/* Prints the probe's figures as the tests begin, so that lateness found at
 * teardown can be told apart from what the server's own start-up caused. */
static void print_startup_lag(struct cs_e2e *e)
{
    Csched__V1__GetStatsRequest req = CSCHED__V1__GET_STATS_REQUEST__INIT;
    Csched__V1__Stats *stats = NULL;
    struct cs_status st = {0};

    if (cs_scheduler_get_stats(e->client, &req, &stats, cs_e2e_opts(), &st) != 0) {
        fprintf(stderr, "e2e: GetStats after start-up: %s \"%s\"\n", cs_status_code_name(st.code),
                st.message);
        return;
    }
    if (stats->lag_since_start != NULL)
        fprintf(stderr,
                "e2e: probe after start-up: uptime=%lld ms ticks=%llu p99=%lld us max=%lld us\n",
                (long long)stats->uptime_ms, (unsigned long long)stats->lag_since_start->ticks,
                (long long)stats->lag_since_start->p99_us,
                (long long)stats->lag_since_start->max_us);
    csched__v1__stats__free_unpacked(stats, NULL);
}

int cs_e2e_setup(void **state)
{
    return cs_e2e_start(state, NULL);
}

int cs_e2e_start(void **state, const char *const *extra_args)
{
    struct cs_testd_options opts = {.extra_args = extra_args};
    return cs_e2e_start_options(state, &opts);
}

int cs_e2e_start_options(void **state, const struct cs_testd_options *opts)
{
    struct cs_e2e *e = calloc(1, sizeof(*e));
    int rc;

    if (e == NULL)
        return -ENOMEM;
    rc = cs_testpg_start(&e->pg);
    if (rc != 0) {
        fprintf(stderr, "cs_testpg_start failed: %s\n", strerror(-rc));
        goto err_free;
    }
    struct cs_testd_options o = *opts;
    o.database_url = cs_testpg_url(e->pg);
    o.max_running = CS_E2E_MAX_RUNNING;
    rc = cs_testd_start(&o, &e->d);
    if (rc != 0) {
        fprintf(stderr, "cs_testd_start failed: %s\n", strerror(-rc));
        goto err_stop_pg;
    }
    rc = cs_client_new(cs_testd_target(e->d), &e->client);
    if (rc != 0) {
        fprintf(stderr, "cs_client_new failed: %s\n", strerror(-rc));
        goto err_stop_d;
    }
    print_startup_lag(e);
    *state = e;
    return 0;

err_stop_d:
    (void)cs_testd_stop(e->d); /* Already failing; its status adds nothing. */
err_stop_pg:
    cs_testpg_stop(e->pg);
err_free:
    free(e);
    return rc;
}

int cs_e2e_setup_embedded(void **state)
{
    struct cs_e2e *e = calloc(1, sizeof(*e));
    int rc;

    if (e == NULL)
        return -ENOMEM;
    rc = cs_testd_start(NULL, &e->d);
    if (rc == 0)
        rc = cs_client_new(cs_testd_target(e->d), &e->client);
    if (rc != 0) {
        (void)cs_testd_stop(e->d); /* Already failing; its status adds nothing. */
        free(e);
        return rc;
    }
    *state = e;
    return 0;
}

int cs_e2e_teardown(void **state)
{
    struct cs_e2e *e = *state;
    int status;

    cs_testd_assert_lag_ok(e->d);
    cs_client_free(e->client);
    status = cs_testd_stop(e->d);
    cs_testpg_stop(e->pg);
    free(e);
    *state = NULL;
    if (status != 0)
        fail_msg("cschedd exit status %d, want 0 (clean shutdown)", status);
    return 0;
}

const struct cs_call_opts *cs_e2e_opts(void)
{
    /* Waiting for ready rides over the moment a restarted server's port is
     * reconnected; a dead server still fails at the deadline. */
    static const struct cs_call_opts opts = {.timeout_ms = CS_E2E_CALL_TIMEOUT_MS,
                                             .wait_for_ready = true};

    return &opts;
}

void cs_e2e_name(char *buf, size_t size, const char *prefix)
{
    static unsigned counter;

    snprintf(buf, size, "%s-%u", prefix, ++counter);
}

/* CreateJob of job: what the call returned, the reply in *out. */
static int create_job(struct cs_e2e *e, Csched__V1__Job *job, Csched__V1__Job **out,
                      struct cs_status *st)
{
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;

    req.job = job;
    return cs_scheduler_create_job(e->client, &req, out, cs_e2e_opts(), st);
}

int cs_e2e_try_create_job(struct cs_e2e *e, Csched__V1__Job *job, struct cs_status *st)
{
    Csched__V1__Job *out = NULL;
    int rc = create_job(e, job, &out, st);

    if (rc == 0)
        csched__v1__job__free_unpacked(out, NULL);
    return rc;
}

Csched__V1__Job *cs_e2e_scheduled_job(const char *name, const char *text, const char *zone)
{
    Csched__V1__Job *job = malloc(sizeof(*job));
    Csched__V1__Schedule *sc = malloc(sizeof(*sc));

    assert_non_null(job);
    assert_non_null(sc);
    csched__v1__job__init(job);
    csched__v1__schedule__init(sc);
    job->name = strdup(name);
    job->shell = strdup("true");
    sc->text = strdup(text);
    sc->time_zone = strdup(zone);
    job->schedule = sc;
    return job;
}

struct cs_stream *cs_e2e_watch_job(struct cs_e2e *e, const char *job, int64_t after_seq)
{
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_stream *stream = NULL;
    struct cs_status st = {0};
    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = after_seq;
    req.job_name = (char *)job;
    if (cs_scheduler_watch(e->client, &req, &stream, &opts, &st) != 0)
        fail_msg("Watch: %s \"%s\"", cs_status_code_name(st.code), st.message);
    return stream;
}

Csched__V1__Job *cs_e2e_create_job(struct cs_e2e *e, Csched__V1__Job *job)
{
    Csched__V1__Job *out = NULL;
    struct cs_status st = {0};
    int rc = create_job(e, job, &out, &st);

    if (rc != 0)
        fail_msg("CreateJob(%s): %s (%d) \"%s\"", job->name, cs_status_code_name(rc), rc,
                 st.message);
    assert_non_null(out);
    return out;
}

Csched__V1__Job *cs_e2e_create_shell_job(struct cs_e2e *e, const char *name, const char *shell)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;

    job.name = (char *)name;
    job.shell = (char *)shell;
    return cs_e2e_create_job(e, &job);
}

Csched__V1__Job *cs_e2e_create_serial_job(struct cs_e2e *e, const char *name, const char *shell)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;

    job.name = (char *)name;
    job.shell = (char *)shell;
    job.max_running = 1;
    return cs_e2e_create_job(e, &job);
}

int64_t cs_e2e_trigger(struct cs_e2e *e, const char *job_name)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    int64_t id;
    int rc;

    req.job_name = (char *)job_name;
    rc = cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st);
    if (rc != 0)
        fail_msg("TriggerJob(%s): %s (%d) \"%s\"", job_name, cs_status_code_name(rc), rc,
                 st.message);
    assert_non_null(run);
    assert_string_equal(run->job_name, job_name);
    assert_true(run->id > 0);
    assert_true(run->created_unix_ms > 0);
    /* Answered after its commit: the run exists, QUEUED or already further. */
    assert_int_not_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED);
    id = run->id;
    csched__v1__run__free_unpacked(run, NULL);
    return id;
}

Csched__V1__Job *cs_e2e_get_job(struct cs_e2e *e, const char *name)
{
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL;
    struct cs_status st = {0};

    req.name = (char *)name;
    if (cs_scheduler_get_job(e->client, &req, &job, cs_e2e_opts(), &st) != 0)
        fail_msg("GetJob(%s): %s", name, st.message);
    return job;
}

Csched__V1__Stats *cs_e2e_get_stats(struct cs_e2e *e)
{
    Csched__V1__GetStatsRequest req = CSCHED__V1__GET_STATS_REQUEST__INIT;
    Csched__V1__Stats *stats = NULL;
    struct cs_status st = {0};

    if (cs_scheduler_get_stats(e->client, &req, &stats, cs_e2e_opts(), &st) != 0)
        fail_msg("GetStats: %s \"%s\"", cs_status_code_name(st.code), st.message);
    return stats;
}

static uint64_t late_ticks(struct cs_e2e *e)
{
    Csched__V1__Stats *stats = cs_e2e_get_stats(e);
    uint64_t late = stats->lag_since_start->late_ticks;

    csched__v1__stats__free_unpacked(stats, NULL);
    return late;
}

void cs_e2e_assert_loop_free(struct cs_e2e *e, const char *what, cs_e2e_step_fn *step, void *arg)
{
    enum { TRIES = 3 };

    for (int try = 1;; try++) {
        uint64_t before = late_ticks(e);
        step(e, arg);
        uint64_t late = late_ticks(e) - before;
        if (late == 0)
            return;
        if (try == TRIES)
            fail_msg("%s made the loop %d ms late or later at each of %d tries (%llu ticks at "
                     "the last)",
                     what, CS_PROBE_LATE_US / 1000, TRIES, (unsigned long long)late);
        print_message("%s: %llu ticks %d ms late or later; trying again\n", what,
                      (unsigned long long)late, CS_PROBE_LATE_US / 1000);
    }
}

Csched__V1__Job *cs_e2e_hook_job(const char *name, const char *shell, const char *hook_name,
                                 const Csched__V1__HookEvent *events, size_t n_events)
{
    Csched__V1__Job *job = calloc(1, sizeof(*job));
    Csched__V1__Hook *hook = calloc(1, sizeof(*hook));

    csched__v1__job__init(job);
    csched__v1__hook__init(hook);
    job->name = strdup(name);
    job->shell = strdup(shell);
    job->max_running = 1;
    hook->name = strdup(hook_name);
    hook->events = calloc(n_events, sizeof(*hook->events));
    memcpy(hook->events, events, n_events * sizeof(*events));
    hook->n_events = n_events;
    hook->max_attempts = 50;
    job->hooks = calloc(1, sizeof(*job->hooks));
    job->hooks[0] = hook;
    job->n_hooks = 1;
    return job;
}

Csched__V1__ListHookDeliveriesResponse *cs_e2e_hook_deliveries(struct cs_e2e *e, const char *job)
{
    Csched__V1__ListHookDeliveriesRequest req = CSCHED__V1__LIST_HOOK_DELIVERIES_REQUEST__INIT;
    Csched__V1__ListHookDeliveriesResponse *resp = NULL;
    struct cs_status st = {0};

    req.job_name = (char *)job;
    if (cs_scheduler_list_hook_deliveries(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListHookDeliveries: %s \"%s\"", cs_status_code_name(st.code), st.message);
    return resp;
}

int64_t cs_e2e_last_seq(struct cs_e2e *e)
{
    Csched__V1__Stats *stats = cs_e2e_get_stats(e);
    int64_t seq = stats->last_seq;

    csched__v1__stats__free_unpacked(stats, NULL);
    return seq;
}

Csched__V1__Run *cs_e2e_get_run(struct cs_e2e *e, int64_t run_id)
{
    Csched__V1__GetRunRequest req = CSCHED__V1__GET_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    int rc;

    req.run_id = run_id;
    rc = cs_scheduler_get_run(e->client, &req, &run, cs_e2e_opts(), &st);
    if (rc != 0)
        fail_msg("GetRun(%lld): %s (%d) \"%s\"", (long long)run_id, cs_status_code_name(rc), rc,
                 st.message);
    assert_non_null(run);
    assert_int_equal(run->id, run_id);
    return run;
}

Csched__V1__Slot *cs_e2e_get_slot(struct cs_e2e *e, const char *job, int64_t slot_unix_ms)
{
    Csched__V1__ListSlotsRequest req = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    Csched__V1__ListSlotsResponse *resp = NULL;
    Csched__V1__Slot *slot = NULL;
    struct cs_status st = {0};

    req.job_name = (char *)job;
    req.from_unix_ms = req.to_unix_ms = slot_unix_ms;
    if (cs_scheduler_list_slots(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListSlots(%s): %s", job, st.message);
    assert_true(resp->n_slots <= 1);
    if (resp->n_slots == 1) {
        /* Taken out of the response, which then frees the rest. */
        slot = resp->slots[0];
        resp->n_slots = 0;
    }
    csched__v1__list_slots_response__free_unpacked(resp, NULL);
    return slot;
}

size_t cs_e2e_count_slot_runs(struct cs_e2e *e, const char *job, int64_t slot_unix_ms)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *resp = NULL;
    struct cs_status st = {0};
    size_t n = 0;

    req.job_name = (char *)job;
    req.page_size = 1000;
    if (cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListRuns(%s): %s", job, st.message);
    for (size_t i = 0; i < resp->n_runs; i++)
        n += resp->runs[i]->slot_unix_ms == slot_unix_ms;
    csched__v1__list_runs_response__free_unpacked(resp, NULL);
    return n;
}

Csched__V1__Run *cs_e2e_wait_state(struct cs_e2e *e, int64_t run_id, Csched__V1__RunState state,
                                   int64_t timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms;
    Csched__V1__Run *run;

    for (;;) {
        run = cs_e2e_get_run(e, run_id);
        if (run->state == state || cs_test_run_state_is_terminal(run->state))
            return run;
        if (cs_test_now_ms() > deadline) {
            const char *seen = cs_test_run_state_name(run->state);

            csched__v1__run__free_unpacked(run, NULL);
            fail_msg("run %lld still %s after %lld ms, waiting for %s", (long long)run_id, seen,
                     (long long)timeout_ms, cs_test_run_state_name(state));
        }
        csched__v1__run__free_unpacked(run, NULL);
        cs_test_sleep_ms(POLL_INTERVAL_MS);
    }
}

Csched__V1__Run *cs_e2e_wait_end(struct cs_e2e *e, int64_t run_id)
{
    /* UNSPECIFIED is never reached, so only a terminal state ends the wait. */
    return cs_e2e_wait_state(e, run_id, CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED,
                             CS_E2E_RUN_TIMEOUT_MS);
}

int cs_e2e_read_logs_status(struct cs_e2e *e, const Csched__V1__ReadLogsRequest *req,
                            struct cs_status *st)
{
    Csched__V1__LogChunk *chunk;
    struct cs_stream *s = NULL;
    int rc = cs_scheduler_read_logs(e->client, req, &s, cs_e2e_opts(), st);
    if (rc != 0)
        return rc;
    /* A stream reports its status at its end. */
    while ((rc = cs_scheduler_read_logs_next(s, &chunk, st)) == 1)
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
    cs_stream_free(s);
    return rc != 0 ? rc : st->code;
}

char *cs_e2e_read_logs(struct cs_e2e *e, int64_t run_id, uint32_t attempt,
                       Csched__V1__LogStream stream, size_t *len)
{
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__LogChunk *chunk;
    struct cs_stream *s = NULL;
    struct cs_status st = {0};
    size_t used = 0;
    char *buf;
    int rc;

    req.run_id = run_id;
    req.attempt = attempt;
    req.stream = stream;
    rc = cs_scheduler_read_logs(e->client, &req, &s, &opts, &st);
    if (rc != 0)
        fail_msg("ReadLogs(%lld): %s \"%s\"", (long long)run_id, cs_status_code_name(rc),
                 st.message);
    buf = calloc(1, 1);
    assert_non_null(buf);
    while ((rc = cs_scheduler_read_logs_next(s, &chunk, &st)) == 1) {
        assert_int_equal(chunk->stream, stream);
        if (chunk->offset != (int64_t)used)
            fail_msg("ReadLogs(%lld): chunk at offset %lld, want %zu", (long long)run_id,
                     (long long)chunk->offset, used);
        buf = realloc(buf, used + chunk->data.len + 1);
        assert_non_null(buf);
        if (chunk->data.len > 0) /* an empty chunk's data may be NULL */
            memcpy(buf + used, chunk->data.data, chunk->data.len);
        used += chunk->data.len;
        buf[used] = '\0';
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
    }
    cs_stream_free(s);
    if (rc != 0 || st.code != 0)
        fail_msg("ReadLogs(%lld) ended with rc %d, %s \"%s\"", (long long)run_id, rc,
                 cs_status_code_name(st.code), st.message);
    *len = used;
    return buf;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);

    for (; *hay != '\0'; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return false;
}

void cs_e2e_assert_status(int rc, const struct cs_status *status, int want, const char *word)
{
    if (rc != want)
        fail_msg("status %s (%d), want %s (%d); message \"%s\"", cs_status_code_name(rc), rc,
                 cs_status_code_name(want), want, status->message);
    if (status->code != want)
        fail_msg("status record code %s, want %s", cs_status_code_name(status->code),
                 cs_status_code_name(want));
    if (status->message[0] == '\0')
        fail_msg("%s without a message", cs_status_code_name(want));
    if (word != NULL && !contains_nocase(status->message, word))
        fail_msg("%s message \"%s\" does not name \"%s\"", cs_status_code_name(want),
                 status->message, word);
}

pid_t cs_e2e_read_pgid(const char *path, int64_t timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms;
    long pgid = 0;
    FILE *f;

    for (;;) {
        f = fopen(path, "r");
        if (f != NULL) {
            int n = fscanf(f, "%ld", &pgid);

            fclose(f);
            if (n == 1 && pgid > 1)
                return (pid_t)pgid;
        }
        if (cs_test_now_ms() > deadline)
            fail_msg("no process group id in %s after %lld ms", path, (long long)timeout_ms);
        cs_test_sleep_ms(5);
    }
}

void cs_e2e_assert_group_gone(pid_t pgid, int64_t timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms;

    /* A zombie is gone as far as the group goes: its parent, init once the
     * minder died, reaps it when it gets to it. */
    while (cs_test_group_live(pgid) != 0) {
        if (cs_test_now_ms() > deadline)
            fail_msg("process group %d still has processes %lld ms after the run ended", (int)pgid,
                     (long long)timeout_ms);
        cs_test_sleep_ms(POLL_INTERVAL_MS);
    }
}

void cs_e2e_tmpdir(char *buf)
{
    snprintf(buf, PATH_MAX, "/tmp/csched-e2e-XXXXXX");
    assert_non_null(mkdtemp(buf));
    /* The commands run as whatever user the server runs them as. */
    assert_int_equal(chmod(buf, 0777), 0);
}

long cs_e2e_count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    long n = 0;
    int c;

    if (f == NULL)
        return 0;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

void cs_e2e_create_counter_job(struct cs_e2e *e, const char *prefix, const char *then,
                               uint32_t max_attempts, char *name, size_t name_size, char *dir)
{
    char shell[2 * PATH_MAX + 128];
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;

    cs_e2e_tmpdir(dir);
    int n = snprintf(shell, sizeof(shell),
                     "n=$(cat %s/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s/count; %s",
                     dir, dir, then);
    assert_true(n > 0 && (size_t)n < sizeof(shell));
    cs_e2e_name(name, name_size, prefix);
    job.name = name;
    job.shell = shell;
    job.max_attempts = max_attempts;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
}

static void status_from_details(struct cs_status *status, grpc_status_code code, grpc_slice details)
{
    size_t n = GRPC_SLICE_LENGTH(details);

    if (n >= sizeof(status->message))
        n = sizeof(status->message) - 1;
    status->code = (int)code;
    memcpy(status->message, GRPC_SLICE_START_PTR(details), n);
    status->message[n] = '\0';
}

int cs_e2e_raw_unary(struct cs_e2e *e, const char *method, const void *payload, size_t len,
                     struct cs_status *status)
{
    return cs_e2e_raw_unary_md(e, method, payload, len, NULL, 0, status);
}

int cs_e2e_raw_unary_md(struct cs_e2e *e, const char *method, const void *payload, size_t len,
                        const char *const *md, size_t n_md, struct cs_status *status)
{
    return cs_e2e_raw_unary_reply(e, method, payload, len, md, n_md, status, NULL, NULL);
}

int cs_e2e_raw_unary_reply(struct cs_e2e *e, const char *method, const void *payload, size_t len,
                           const char *const *md, size_t n_md, struct cs_status *status,
                           uint8_t **reply, size_t *reply_len)
{
    grpc_metadata headers[8];
    gpr_timespec deadline = gpr_time_add(
        gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(CS_E2E_CALL_TIMEOUT_MS, GPR_TIMESPAN));
    grpc_metadata_array initial_md, trailing_md;
    grpc_status_code code = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();
    grpc_channel_credentials *creds;
    grpc_byte_buffer *recv = NULL;
    grpc_completion_queue *cq;
    grpc_slice method_slice;
    grpc_byte_buffer *send;
    grpc_channel *channel;
    grpc_op ops[6];
    grpc_event ev;
    grpc_call *call;
    grpc_slice body;

    grpc_init();
    creds = grpc_insecure_credentials_create();
    channel = grpc_channel_create(cs_testd_target(e->d), creds, NULL);
    grpc_channel_credentials_release(creds);
    cq = grpc_completion_queue_create_for_next(NULL);
    method_slice = grpc_slice_from_copied_string(method);
    call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method_slice, NULL,
                                    deadline, NULL);
    assert_non_null(call);
    body = grpc_slice_from_copied_buffer(payload, len);
    send = grpc_raw_byte_buffer_create(&body, 1);
    grpc_metadata_array_init(&initial_md);
    grpc_metadata_array_init(&trailing_md);

    assert_true(n_md <= sizeof(headers) / sizeof(headers[0]));
    for (size_t i = 0; i < n_md; i++) {
        headers[i].key = grpc_slice_from_static_string(md[2 * i]);
        headers[i].value = grpc_slice_from_static_string(md[2 * i + 1]);
    }
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
    ops[0].data.send_initial_metadata.count = n_md;
    ops[0].data.send_initial_metadata.metadata = headers;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trailing_md;
    ops[5].data.recv_status_on_client.status = &code;
    ops[5].data.recv_status_on_client.status_details = &details;
    assert_int_equal(grpc_call_start_batch(call, ops, 6, call, NULL), GRPC_CALL_OK);
    ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    assert_int_equal(ev.type, GRPC_OP_COMPLETE);
    status_from_details(status, code, details);
    if (reply != NULL) {
        grpc_slice whole = grpc_empty_slice();
        grpc_byte_buffer_reader reader;
        if (recv != NULL && grpc_byte_buffer_reader_init(&reader, recv)) {
            whole = grpc_byte_buffer_reader_readall(&reader);
            grpc_byte_buffer_reader_destroy(&reader);
        }
        *reply_len = GRPC_SLICE_LENGTH(whole);
        *reply = malloc(*reply_len + 1);
        assert_non_null(*reply);
        if (*reply_len > 0)
            memcpy(*reply, GRPC_SLICE_START_PTR(whole), *reply_len);
        grpc_slice_unref(whole);
    }

    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&initial_md);
    grpc_metadata_array_destroy(&trailing_md);
    if (recv != NULL)
        grpc_byte_buffer_destroy(recv);
    grpc_byte_buffer_destroy(send);
    grpc_slice_unref(body);
    grpc_call_unref(call);
    grpc_slice_unref(method_slice);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    grpc_channel_destroy(channel);
    grpc_shutdown();
    return (int)code;
}

int cs_e2e_health_check(struct cs_e2e *e, const char *service, int *serving)
{
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    Grpc__Health__V1__HealthCheckResponse *resp = NULL;
    struct cs_status st = {0};
    int rc;

    req.service = (char *)service;
    rc = cs_health_check(e->client, &req, &resp, cs_e2e_opts(), &st);
    if (rc == 0) {
        *serving = (int)resp->status;
        grpc__health__v1__health_check_response__free_unpacked(resp, NULL);
    }
    return rc;
}

int64_t cs_e2e_wait_health(struct cs_e2e *e, int want, int64_t timeout_ms)
{
    int64_t t0 = cs_test_now_ms();
    int serving = -1;

    for (;;) {
        assert_int_equal(cs_e2e_health_check(e, "", &serving), 0);
        if (serving == want)
            return cs_test_now_ms() - t0;
        if (cs_test_now_ms() - t0 > timeout_ms)
            fail_msg("health %d, not %d, after %lld ms", serving, want, (long long)timeout_ms);
        cs_test_sleep_ms(100);
    }
}

int cs_e2e_executions(const char *dir, int64_t run_id)
{
    char path[PATH_MAX + 32], line[64];
    FILE *f;
    int n = 0;

    (void)snprintf(path, sizeof(path), "%s/%lld", dir, (long long)run_id);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        n++;
    (void)fclose(f);
    return n;
}

pid_t cs_e2e_embedded_postmaster(struct cs_e2e *e)
{
    char path[PATH_MAX];
    long pid = 0;

    snprintf(path, sizeof(path), "%s/pg/data/postmaster.pid", cs_testd_state_dir(e->d));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld", &pid), 1);
    fclose(f);
    assert_true(pid > 1);
    return (pid_t)pid;
}
