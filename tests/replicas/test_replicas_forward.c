/* Two replicas, every call made through the standby: it forwards them to
 * the active replica, so a client reaches the cluster through any replica.
 * A job created, runs triggered and read back, a run cancelled promptly,
 * and a Watch that sees the same events, in the same order, as one opened
 * on the active replica itself; the runs ran on the active replica. An
 * error comes back as the active replica gave it. Pause, resume, an
 * idempotency key used through both replicas, the lists, the stats and a
 * delete: each the active replica's doing, audited as the caller via the
 * standby. And on the
 * active replica's own socket, a call claiming to be forwarded without the
 * cluster's key is UNAUTHENTICATED, while one with it is taken as the
 * caller it names. */
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
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>

#include "replicas_runs.h"
#include "testwatch.h"

#define RUNS 3

static int group_setup(void **state)
{
    return cs_rruns_setup(state, 2, NULL);
}

/* The seqs of every event a Watch from seq 0 sends up to the end of run
 * last, into seqs (at most cap); returns how many. */
static size_t watch_until_end(struct cs_replicas *rs, unsigned i, int64_t last, int64_t *seqs,
                              size_t cap)
{
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = 0;
    struct cs_call_opts opts = {.timeout_ms = 30000};
    struct cs_status st = {0};
    struct cs_stream *stream = NULL;
    assert_int_equal(cs_scheduler_watch(cs_replicas_e2e(rs, i)->client, &req, &stream, &opts, &st),
                     0);
    struct cs_test_events events = {.stream = stream};
    const Csched__V1__Event *ev;
    size_t n = 0;
    bool ended = false;
    while (!ended) {
        int rc = cs_test_next_event(&events, &ev, &st);
        if (rc != 1)
            fail_msg("the Watch through %s ended (%d) after %zu events: %s", rs->r[i].id, rc, n,
                     st.message);
        assert_true(n < cap);
        seqs[n++] = ev->seq;
        ended = ev->run_id == last && cs_test_run_state_is_terminal(ev->state) && ev->attempt == 0;
    }
    cs_test_events_done(&events);
    cs_stream_free(stream);
    return n;
}

static void test_replicas_forward_any_call(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL), b = 1 - a;
    int64_t ids[RUNS];

    cs_rruns_wait_forwarding(f->rs, b);
    char job[64];

    cs_rruns_job(f->rs, b, &f->oracle, "forward", "true", 1, 1, job, sizeof(job));
    cs_rruns_trigger(f->rs, b, job, RUNS, ids);
    for (size_t k = 0; k < RUNS; k++) {
        Csched__V1__Run *r = cs_rruns_wait_end(f->rs, b, ids[k], CS_RRUNS_END_MS);
        assert_int_equal(r->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        csched__v1__run__free_unpacked(r, NULL);
        cs_rruns_ran_on(f, ids[k], a);
    }

    /* The same stream through either replica. */
    static int64_t via_a[4096], via_b[4096];
    size_t na = watch_until_end(f->rs, a, ids[RUNS - 1], via_a, 4096);
    size_t nb = watch_until_end(f->rs, b, ids[RUNS - 1], via_b, 4096);
    assert_int_equal(na, nb);
    assert_memory_equal(via_a, via_b, na * sizeof(via_a[0]));
    for (size_t k = 1; k < na; k++)
        assert_int_equal(via_a[k], via_a[k - 1] + 1);
}

static void test_replicas_forward_cancel(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL), b = 1 - a;
    int64_t id;
    char job[64];

    cs_rruns_job(f->rs, b, &f->oracle, "fwd-cancel", "sleep 60", 1, 1, job, sizeof(job));
    cs_rruns_trigger(f->rs, b, job, 1, &id);
    cs_rruns_wait_started(&f->oracle, id, CS_E2E_RUN_TIMEOUT_MS);
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    req.run_id = id;
    Csched__V1__Run *r = NULL;
    struct cs_status st = {0};
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(
        cs_scheduler_cancel_run(cs_replicas_e2e(f->rs, b)->client, &req, &r, cs_e2e_opts(), &st),
        0);
    csched__v1__run__free_unpacked(r, NULL);
    r = cs_rruns_wait_end(f->rs, b, id, CS_RRUNS_END_MS);
    fprintf(stderr, "forward: cancelled through the standby, ended in %lld ms\n",
            (long long)(cs_test_now_ms() - t0));
    assert_int_equal(r->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    csched__v1__run__free_unpacked(r, NULL);
    (void)a;
}

static void test_replicas_forward_field_error(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL), b = 1 - a;
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Job *out = NULL;
    struct cs_status st = {0};

    job.name = "bad name with spaces";
    job.shell = "true";
    req.job = &job;
    assert_int_equal(
        cs_scheduler_create_job(cs_replicas_e2e(f->rs, b)->client, &req, &out, cs_e2e_opts(), &st),
        GRPC_STATUS_INVALID_ARGUMENT);
    fprintf(stderr, "forward: %s\n", st.message);
    assert_non_null(strstr(st.message, "name"));
}

/* The job paused or not, as the active replica itself says. */
static bool paused_on(struct cs_replicas *rs, unsigned i, const char *job)
{
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *out = NULL;
    struct cs_status st = {0};

    req.name = (char *)job;
    assert_int_equal(
        cs_scheduler_get_job(cs_replicas_e2e(rs, i)->client, &req, &out, cs_e2e_opts(), &st), 0);
    bool paused = out->paused;
    csched__v1__job__free_unpacked(out, NULL);
    return paused;
}

/* The run an idempotency key makes, through replica i. */
static int64_t trigger_keyed(struct cs_replicas *rs, unsigned i, const char *job, const char *key)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};

    req.job_name = (char *)job;
    req.idempotency_key = (char *)key;
    assert_int_equal(
        cs_scheduler_trigger_job(cs_replicas_e2e(rs, i)->client, &req, &run, cs_e2e_opts(), &st),
        0);
    int64_t id = run->id;
    csched__v1__run__free_unpacked(run, NULL);
    return id;
}

/* Pause and resume, an idempotency key used through both replicas, the
 * lists of runs, slots and audit rows, the stats and a delete, all through
 * the standby: each the active replica's answer, and what the standby was
 * asked lands on the active replica, audited as the caller via the
 * standby. */
static void test_replicas_forward_every_call(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL), b = 1 - a;
    struct cs_client *via_b = cs_replicas_e2e(f->rs, b)->client;
    struct cs_status st = {0};
    char job[64];

    cs_rruns_wait_forwarding(f->rs, b);
    cs_rruns_job(f->rs, b, &f->oracle, "fwd-every", "true", 1, 1, job, sizeof(job));
    Csched__V1__PauseJobRequest pause = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
    Csched__V1__Job *out = NULL;
    pause.name = job;
    assert_int_equal(cs_scheduler_pause_job(via_b, &pause, &out, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(out, NULL);
    assert_true(paused_on(f->rs, a, job));
    Csched__V1__ResumeJobRequest resume = CSCHED__V1__RESUME_JOB_REQUEST__INIT;
    resume.name = job;
    assert_int_equal(cs_scheduler_resume_job(via_b, &resume, &out, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(out, NULL);
    assert_false(paused_on(f->rs, a, job));

    int64_t id = trigger_keyed(f->rs, b, job, "fwd-key-1");
    assert_int_equal(trigger_keyed(f->rs, a, job, "fwd-key-1"), id);
    csched__v1__run__free_unpacked(cs_rruns_wait_end(f->rs, b, id, CS_RRUNS_END_MS), NULL);

    Csched__V1__ListRunsRequest runs = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *listed = NULL;
    runs.job_name = job;
    assert_int_equal(cs_scheduler_list_runs(via_b, &runs, &listed, cs_e2e_opts(), &st), 0);
    assert_int_equal(listed->n_runs, 1);
    assert_int_equal(listed->runs[0]->id, id);
    csched__v1__list_runs_response__free_unpacked(listed, NULL);

    Csched__V1__ListSlotsRequest slots = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    Csched__V1__ListSlotsResponse *slots_out = NULL;
    slots.job_name = job;
    assert_int_equal(cs_scheduler_list_slots(via_b, &slots, &slots_out, cs_e2e_opts(), &st), 0);
    csched__v1__list_slots_response__free_unpacked(slots_out, NULL);

    Csched__V1__Stats *stats = NULL;
    assert_int_equal(cs_scheduler_get_stats(via_b, NULL, &stats, cs_e2e_opts(), &st), 0);
    assert_true(stats->last_seq > 0);
    csched__v1__stats__free_unpacked(stats, NULL);

    Csched__V1__DeleteJobRequest del = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *deleted = NULL;
    del.name = job;
    assert_int_equal(cs_scheduler_delete_job(via_b, &del, &deleted, cs_e2e_opts(), &st), 0);
    csched__v1__delete_job_response__free_unpacked(deleted, NULL);
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    get.name = job;
    assert_int_equal(
        cs_scheduler_get_job(cs_replicas_e2e(f->rs, a)->client, &get, &out, cs_e2e_opts(), &st),
        GRPC_STATUS_NOT_FOUND);

    /* The active replica audited the delete as the caller through b. */
    char via[64], sql[256], identity[256];
    snprintf(via, sizeof(via), "via %s", f->rs->r[b].id);
    snprintf(sql, sizeof(sql),
             "SELECT identity FROM audit WHERE method = 'DeleteJob' AND job_name = '%s'", job);
    assert_int_equal(cs_replicas_sql(f->rs, sql, identity, sizeof(identity), false), 0);
    fprintf(stderr, "forward: DeleteJob audited as \"%s\"\n", identity);
    assert_non_null(strstr(identity, via));
    Csched__V1__ListAuditRequest audit = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    Csched__V1__ListAuditResponse *rows = NULL;
    audit.method = "DeleteJob";
    assert_int_equal(cs_scheduler_list_audit(via_b, &audit, &rows, cs_e2e_opts(), &st), 0);
    assert_true(rows->n_entries >= 1);
    csched__v1__list_audit_response__free_unpacked(rows, NULL);
}

/* Streams a standby relays at once: more than one connection to the active
 * replica carries (100, rpc.h), within what one caller may hold of Watch
 * and of ReadLogs (64 each), each kind on a client connection of its own
 * (a connection to the standby takes 100 too). */
#define MANY_WATCHES 64
#define MANY_LOGS 50

/* Server streams opened raw on a connection of their own (a local
 * subchannel pool: libcsched's clients of one target share one), never
 * read. */
struct raw_streams {
    grpc_channel *channel;
    grpc_completion_queue *cq;
    grpc_call *calls[MANY_WATCHES];
    grpc_metadata_array initial[MANY_WATCHES];
    grpc_slice body;
    size_t n;
};

static void open_raw(struct raw_streams *r, const char *target, const char *method,
                     const void *request, size_t len, size_t n)
{
    grpc_arg arg = {
        .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, .value.integer = 1};
    grpc_channel_args args = {.num_args = 1, .args = &arg};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    r->channel = grpc_channel_create(target, creds, &args);
    grpc_channel_credentials_release(creds);
    r->cq = grpc_completion_queue_create_for_next(NULL);
    r->body = grpc_slice_from_copied_buffer(request, len);
    for (r->n = 0; r->n < n; r->n++) {
        grpc_call *call = grpc_channel_create_call(r->channel, NULL, GRPC_PROPAGATE_DEFAULTS, r->cq,
                                                   grpc_slice_from_static_string(method), NULL,
                                                   gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        grpc_byte_buffer *msg = grpc_raw_byte_buffer_create(&r->body, 1);
        grpc_op ops[4];
        memset(ops, 0, sizeof(ops));
        grpc_metadata_array_init(&r->initial[r->n]);
        ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
        ops[1].op = GRPC_OP_SEND_MESSAGE;
        ops[1].data.send_message.send_message = msg;
        ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
        ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
        ops[3].data.recv_initial_metadata.recv_initial_metadata = &r->initial[r->n];
        assert_int_equal(grpc_call_start_batch(call, ops, 4, call, NULL), GRPC_CALL_OK);
        grpc_event ev = grpc_completion_queue_next(r->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        assert_int_equal(ev.type, GRPC_OP_COMPLETE);
        grpc_byte_buffer_destroy(msg);
        r->calls[r->n] = call;
    }
}

static void close_raw(struct raw_streams *r)
{
    for (size_t k = 0; k < r->n; k++) {
        grpc_call_cancel(r->calls[k], NULL);
        grpc_call_unref(r->calls[k]);
        grpc_metadata_array_destroy(&r->initial[k]);
    }
    grpc_channel_destroy(r->channel);
    grpc_completion_queue_shutdown(r->cq);
    while (grpc_completion_queue_next(r->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(r->cq);
    grpc_slice_unref(r->body);
}

/* More streams through a standby than one connection to the active replica
 * takes: a unary call through the standby still answers at once (on one
 * connection it would wait for a stream to end). */
static void test_replicas_forward_many_streams(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL), b = 1 - a;
    struct cs_client *via_b = cs_replicas_e2e(f->rs, b)->client;
    const char *target = cs_testd_target(cs_replicas_e2e(f->rs, b)->d);
    static struct raw_streams watches, logs;
    struct cs_status st = {0};
    int64_t id;
    char job[64];

    cs_rruns_wait_forwarding(f->rs, b);
    cs_rruns_job(f->rs, b, &f->oracle, "fwd-many", "sleep 60", 1, 1, job, sizeof(job));
    cs_rruns_trigger(f->rs, b, job, 1, &id);
    cs_rruns_wait_started(&f->oracle, id, CS_E2E_RUN_TIMEOUT_MS);
    Csched__V1__ReadLogsRequest follow = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    follow.run_id = id;
    follow.attempt = 1;
    follow.follow = true;
    uint8_t buf[64];
    size_t len = csched__v1__read_logs_request__pack(&follow, buf);
    open_raw(&watches, target, "/csched.v1.Scheduler/Watch", "", 0, MANY_WATCHES);
    open_raw(&logs, target, "/csched.v1.Scheduler/ReadLogs", buf, len, MANY_LOGS);

    int64_t t0 = cs_test_now_ms();
    Csched__V1__ListJobsRequest list = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    Csched__V1__ListJobsResponse *jobs = NULL;
    struct cs_call_opts opts = {.timeout_ms = 10000};
    assert_int_equal(cs_scheduler_list_jobs(via_b, &list, &jobs, &opts, &st), 0);
    csched__v1__list_jobs_response__free_unpacked(jobs, NULL);
    fprintf(stderr, "forward: ListJobs beside %d streams through the standby: %lld ms\n",
            MANY_WATCHES + MANY_LOGS, (long long)(cs_test_now_ms() - t0));
    close_raw(&watches);
    close_raw(&logs);
    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    cancel.run_id = id;
    assert_int_equal(cs_scheduler_cancel_run(via_b, &cancel, &run, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
}

/* ListJobs's empty request, on the active replica's own socket. */
static int list_jobs_claiming(struct cs_replicas *rs, unsigned i, const char *key,
                              struct cs_status *st)
{
    const char *md[] = {
        "csched-cluster-key",    key,      "csched-forwarded-by",       "r9",
        "csched-forwarded-role", "viewer", "csched-forwarded-name-bin", "unix:uid=4242(mallory)"};
    return cs_e2e_raw_unary_md(cs_replicas_e2e(rs, i), "/csched.v1.Scheduler/ListJobs", "", 0, md,
                               4, st);
}

static void test_replicas_forward_needs_the_key(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL);
    char key[128];
    struct cs_status st = {0};

    assert_int_equal(list_jobs_claiming(f->rs, a, "0123456789abcdef", &st),
                     GRPC_STATUS_UNAUTHENTICATED);
    fprintf(stderr, "forward: without the key: %s\n", st.message);
    assert_int_equal(list_jobs_claiming(f->rs, a, "", &st), GRPC_STATUS_UNAUTHENTICATED);
    assert_int_equal(cs_replicas_sql(f->rs, "SELECT key FROM cluster_key", key, sizeof(key), false),
                     0);
    assert_int_equal(strlen(key), 64);
    assert_int_equal(list_jobs_claiming(f->rs, a, key, &st), GRPC_STATUS_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_forward_any_call),
        cmocka_unit_test(test_replicas_forward_cancel),
        cmocka_unit_test(test_replicas_forward_field_error),
        cmocka_unit_test(test_replicas_forward_every_call),
        cmocka_unit_test(test_replicas_forward_many_streams),
        cmocka_unit_test(test_replicas_forward_needs_the_key),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
