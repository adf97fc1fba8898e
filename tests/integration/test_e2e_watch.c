/* End-to-end tests of Watch through libcsched against a real cschedd: the
 * full event sequence of a run, live-only watching, resuming with after_seq
 * without a gap or a duplicate, and the job filter. One server serves every
 * test of this file. */
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
#include "testwatch.h"

#define MAX_EVENTS 1024

/* The fields of an Event that a replay must reproduce exactly. */
struct ev_rec {
    int64_t seq;
    int64_t run_id;
    uint32_t attempt;
    Csched__V1__RunState state;
    Csched__V1__Event__OutcomeCase outcome_case;
    int32_t outcome;
    char job_name[64];
};

/* What a collecting read stops at: the first event with seq >= until_seq
 * (if non-zero), the run-level terminal event of until_run (if non-zero),
 * or max events. */
struct watch_until {
    int64_t seq;
    int64_t run;
    size_t max;
};

static struct cs_stream *watch_open(struct cs_e2e *e, bool from, int64_t after_seq, const char *job)
{
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_stream *s = NULL;
    struct cs_status st = {0};

    if (from) {
        req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
        req.after_seq = after_seq;
    }
    req.job_name = (char *)job;
    if (cs_scheduler_watch(e->client, &req, &s, &opts, &st) != 0)
        fail_msg("Watch: %s \"%s\"", cs_status_code_name(st.code), st.message);
    return s;
}

/* Reads events into out until one of until's limits; asserts strictly
 * increasing seqs. Returns the number read. */
static size_t watch_read(struct cs_stream *s, const struct watch_until *until, struct ev_rec *out)
{
    struct cs_status st = {0};
    struct cs_test_events events = {.stream = s};
    const Csched__V1__Event *ev;
    bool done = false;
    size_t n = 0;
    int rc;

    while (!done && n < until->max) {
        rc = cs_test_next_event(&events, &ev, &st);
        if (rc != 1)
            fail_msg("Watch ended after %zu events (rc %d): %s \"%s\"", n, rc,
                     cs_status_code_name(st.code), st.message);
        if (n > 0 && ev->seq <= out[n - 1].seq)
            fail_msg("event seq %lld after seq %lld", (long long)ev->seq,
                     (long long)out[n - 1].seq);
        assert_true(ev->at_unix_ms > 0);
        out[n] = (struct ev_rec){
            .seq = ev->seq,
            .run_id = ev->run_id,
            .attempt = ev->attempt,
            .state = ev->state,
            .outcome_case = ev->outcome_case,
            .outcome = ev->outcome_case == CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL ? ev->term_signal
                                                                                  : ev->exit_code,
        };
        snprintf(out[n].job_name, sizeof(out[n].job_name), "%s", ev->job_name);
        done = (until->seq != 0 && ev->seq >= until->seq) ||
               (until->run != 0 && ev->run_id == until->run && ev->attempt == 0 &&
                cs_test_run_state_is_terminal(ev->state));
        n++;
    }
    cs_test_events_done(&events);
    return n;
}

/* Opens a Watch, reads it to until, and closes it. */
static size_t watch_collect(struct cs_e2e *e, bool from, int64_t after_seq, const char *job,
                            const struct watch_until *until, struct ev_rec *out)
{
    struct cs_stream *s = watch_open(e, from, after_seq, job);
    size_t n = watch_read(s, until, out);

    cs_stream_free(s);
    return n;
}

static void assert_same_event(const struct ev_rec *a, const struct ev_rec *b, size_t i)
{
    if (a->seq != b->seq || a->run_id != b->run_id || a->attempt != b->attempt ||
        a->state != b->state || a->outcome_case != b->outcome_case || a->outcome != b->outcome ||
        strcmp(a->job_name, b->job_name) != 0)
        fail_msg("event %zu differs: seq %lld run %lld attempt %u %s vs seq %lld run %lld "
                 "attempt %u %s",
                 i, (long long)a->seq, (long long)a->run_id, a->attempt,
                 cs_test_run_state_name(a->state), (long long)b->seq, (long long)b->run_id,
                 b->attempt, cs_test_run_state_name(b->state));
}

static void test_e2e_watch_full_sequence(void **state)
{
    static const Csched__V1__RunState want_run[] = {
        CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING,
        CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED};
    static const Csched__V1__RunState want_attempt[] = {CSCHED__V1__RUN_STATE__RUN_STATE_STARTING,
                                                        CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING,
                                                        CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED};
    struct cs_e2e *e = *state;
    struct ev_rec *evs = calloc(MAX_EVENTS, sizeof(*evs));
    size_t n, n_run = 0, n_attempt = 0;
    struct watch_until until = {.max = MAX_EVENTS};
    char name[64];

    assert_non_null(evs);
    cs_e2e_name(name, sizeof(name), "seq");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    until.run = cs_e2e_trigger(e, name);
    n = watch_collect(e, true, 0, name, &until, evs);

    for (size_t i = 0; i < n; i++) {
        const struct ev_rec *ev = &evs[i];

        assert_string_equal(ev->job_name, name);
        assert_int_equal(ev->run_id, until.run);
        if (ev->attempt == 0) {
            assert_true(n_run < CS_E2E_ARRAY_LEN(want_run));
            if (ev->state != want_run[n_run])
                fail_msg("run event %zu is %s, want %s", n_run, cs_test_run_state_name(ev->state),
                         cs_test_run_state_name(want_run[n_run]));
            n_run++;
        } else {
            assert_int_equal(ev->attempt, 1);
            assert_true(n_attempt < CS_E2E_ARRAY_LEN(want_attempt));
            if (ev->state != want_attempt[n_attempt])
                fail_msg("attempt event %zu is %s, want %s", n_attempt,
                         cs_test_run_state_name(ev->state),
                         cs_test_run_state_name(want_attempt[n_attempt]));
            n_attempt++;
        }
        if (cs_test_run_state_is_terminal(ev->state)) {
            assert_int_equal(ev->outcome_case, CSCHED__V1__EVENT__OUTCOME_EXIT_CODE);
            assert_int_equal(ev->outcome, 0);
        }
    }
    assert_int_equal(n_run, CS_E2E_ARRAY_LEN(want_run));
    assert_int_equal(n_attempt, CS_E2E_ARRAY_LEN(want_attempt));
    /* The run's QUEUED comes first; its end comes after its attempt's. */
    assert_int_equal(evs[0].attempt, 0);
    assert_int_equal(evs[0].state, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    assert_int_equal(evs[n - 1].attempt, 0);
    free(evs);
}

/* A run retried once: each attempt reports STARTING, RUNNING and its end
 * under its own number, the first FAILED with its exit code, and the run
 * ends SUCCEEDED after the second. */
static void test_e2e_watch_attempts_of_a_retry(void **state)
{
    struct cs_e2e *e = *state;
    struct ev_rec *evs = calloc(MAX_EVENTS, sizeof(*evs));
    struct watch_until until = {.max = MAX_EVENTS};
    char dir[PATH_MAX], name[64];
    Csched__V1__RunState seen[3][3];
    size_t n_seen[3] = {0, 0, 0}, n;

    assert_non_null(evs);
    cs_e2e_create_counter_job(e, "retrywatch", "[ $n -ge 2 ] || exit 4", 2, name, sizeof(name),
                              dir);
    until.run = cs_e2e_trigger(e, name);
    n = watch_collect(e, true, 0, name, &until, evs);

    for (size_t i = 0; i < n; i++) {
        const struct ev_rec *ev = &evs[i];

        if (ev->attempt == 0)
            continue;
        assert_true(ev->attempt <= 2);
        assert_true(n_seen[ev->attempt] < 3);
        seen[ev->attempt][n_seen[ev->attempt]++] = ev->state;
        if (ev->attempt == 1 && ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_FAILED) {
            assert_int_equal(ev->outcome_case, CSCHED__V1__EVENT__OUTCOME_EXIT_CODE);
            assert_int_equal(ev->outcome, 4);
        }
        /* Attempt 2 starts only after attempt 1 has ended. */
        if (ev->attempt == 2)
            assert_int_equal(n_seen[1], 3);
    }
    for (int a = 1; a <= 2; a++) {
        assert_int_equal(n_seen[a], 3);
        assert_int_equal(seen[a][0], CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
        assert_int_equal(seen[a][1], CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    }
    assert_int_equal(seen[1][2], CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(seen[2][2], CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(evs[n - 1].attempt, 0);
    assert_int_equal(evs[n - 1].state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    free(evs);
    assert_int_equal(cs_test_rmtree(dir), 0);
}

/* Without after_seq a Watch sees only what happens after it opened. */
static void test_e2e_watch_live_only(void **state)
{
    struct cs_e2e *e = *state;
    struct ev_rec *evs = calloc(MAX_EVENTS, sizeof(*evs));
    struct watch_until until = {.max = MAX_EVENTS};
    struct cs_stream *s;
    int64_t before;
    char name[64];
    size_t n;

    assert_non_null(evs);
    cs_e2e_name(name, sizeof(name), "live");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "sleep 0.5"), NULL);
    /* History the live Watch must not replay. */
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, name)), NULL);
    before = cs_e2e_last_seq(e);

    s = watch_open(e, false, 0, name);
    until.run = cs_e2e_trigger(e, name);
    n = watch_read(s, &until, evs);
    cs_stream_free(s);

    for (size_t i = 0; i < n; i++) {
        if (evs[i].seq <= before)
            fail_msg("live Watch replayed seq %lld (last before it opened: %lld)",
                     (long long)evs[i].seq, (long long)before);
        assert_int_equal(evs[i].run_id, until.run);
    }
    assert_int_equal(evs[n - 1].state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    free(evs);
}

/* A client reads part of the history, disconnects, misses a whole run, and
 * reconnects with after_seq = the last seq it saw: together its two reads
 * equal one full replay, event for event. */
static void test_e2e_watch_resume(void **state)
{
    struct cs_e2e *e = *state;
    struct ev_rec *full = calloc(MAX_EVENTS, sizeof(*full));
    struct ev_rec *part = calloc(MAX_EVENTS, sizeof(*part));
    struct watch_until until = {.max = MAX_EVENTS};
    size_t n_full, n_first, n_rest;
    char name[64];

    assert_non_null(full);
    assert_non_null(part);
    cs_e2e_name(name, sizeof(name), "resume");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    for (int i = 0; i < 2; i++)
        csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, name)), NULL);

    until.seq = cs_e2e_last_seq(e);
    n_full = watch_collect(e, true, 0, "", &until, full);
    assert_true(n_full >= 12);
    assert_int_equal(full[n_full - 1].seq, until.seq);

    /* First connection: half of the history. */
    until = (struct watch_until){.max = n_full / 2};
    n_first = watch_collect(e, true, 0, "", &until, part);
    assert_int_equal(n_first, n_full / 2);

    /* While disconnected, a whole run happens. */
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, name)), NULL);

    /* Second connection resumes after the last event seen. */
    until = (struct watch_until){.seq = cs_e2e_last_seq(e), .max = MAX_EVENTS - n_first};
    n_rest = watch_collect(e, true, part[n_first - 1].seq, "", &until, part + n_first);
    assert_true(part[n_first].seq > part[n_first - 1].seq);

    /* A fresh full replay to compare with. */
    until.max = MAX_EVENTS;
    n_full = watch_collect(e, true, 0, "", &until, full);
    assert_int_equal(n_first + n_rest, n_full);
    for (size_t i = 0; i < n_full; i++)
        assert_same_event(&part[i], &full[i], i);
    /* The missed run's events are there: 7 events per single-attempt run. */
    assert_true(n_rest >= 7);
    free(part);
    free(full);
}

/* A Watch filtered by job sees only that job's events, live and replayed. */
static void test_e2e_watch_job_filter(void **state)
{
    struct cs_e2e *e = *state;
    struct ev_rec *evs = calloc(MAX_EVENTS, sizeof(*evs));
    struct watch_until until = {.max = MAX_EVENTS};
    char a[64], b[64];
    int64_t run_a, run_b;
    bool saw_a = false;
    size_t n;

    assert_non_null(evs);
    cs_e2e_name(a, sizeof(a), "filter-a");
    cs_e2e_name(b, sizeof(b), "filter-b");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, a, "true"), NULL);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, b, "true"), NULL);
    run_b = cs_e2e_trigger(e, b);
    run_a = cs_e2e_trigger(e, a);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, run_b), NULL);

    until.run = run_a;
    n = watch_collect(e, true, 0, a, &until, evs);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(evs[i].job_name, a);
        assert_int_not_equal(evs[i].run_id, run_b);
        saw_a = saw_a || evs[i].run_id == run_a;
    }
    assert_true(saw_a);

    until.run = run_b;
    n = watch_collect(e, true, 0, b, &until, evs);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(evs[i].job_name, b);
        assert_int_equal(evs[i].run_id, run_b);
    }
    assert_int_equal(evs[n - 1].state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    free(evs);
}

/* Events come in batches: a replay of a few dozen events arrives in fewer
 * messages than events, no batch is empty, and seqs rise strictly across
 * batches. */
static void test_e2e_watch_replay_is_batched(void **state)
{
    enum { RUNS = 5 };
    struct cs_e2e *e = *state;
    Csched__V1__WatchResponse *batch;
    struct cs_status st = {0};
    size_t messages = 0, events = 0;
    int64_t seq = 0;
    char prefix[112], name[160];

    /* A long name makes each event over 127 bytes: two-byte length prefixes. */
    memset(prefix, 'b', sizeof(prefix) - 1);
    prefix[sizeof(prefix) - 1] = '\0';
    cs_e2e_name(name, sizeof(name), prefix);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    for (int i = 0; i < RUNS; i++)
        csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, name)), NULL);
    int64_t until = cs_e2e_last_seq(e);

    struct cs_stream *s = watch_open(e, true, 0, "");
    while (seq < until && cs_scheduler_watch_next(s, &batch, &st) == 1) {
        for (size_t i = 0; i < batch->n_events; i++)
            if (strcmp(batch->events[i]->job_name, name) == 0)
                assert_true(protobuf_c_message_get_packed_size(&batch->events[i]->base) > 127);
        messages++;
        events += batch->n_events;
        bool empty = batch->n_events == 0;
        for (size_t i = 0; i < batch->n_events; i++) {
            if (batch->events[i]->seq <= seq)
                fail_msg("seq %lld after %lld", (long long)batch->events[i]->seq, (long long)seq);
            seq = batch->events[i]->seq;
        }
        csched__v1__watch_response__free_unpacked(batch, NULL);
        assert_false(empty);
    }
    cs_stream_free(s);
    if (seq < until)
        fail_msg("the replay ended at seq %lld of %lld: %s \"%s\"", (long long)seq,
                 (long long)until, cs_status_code_name(st.code), st.message);
    /* Every run makes at least seven events. */
    assert_true(events >= 7 * RUNS);
    if (messages * 4 > events)
        fail_msg("%zu events came in %zu messages: not batched", events, messages);
}

/* Watch streams the server's own limits (api_watch.c). */
#define WATCHES_PER_CALLER 64

/* Ends s and returns its final status code, or -1 when it sent events. */
static int watch_end_code(struct cs_stream *s, struct cs_status *st)
{
    Csched__V1__WatchResponse *msg = NULL;
    int rc = cs_scheduler_watch_next(s, &msg, st);
    if (msg != NULL)
        csched__v1__watch_response__free_unpacked(msg, NULL);
    return rc == 1 ? -1 : st->code;
}

/* One caller may hold 64 Watch streams: the next is RESOURCE_EXHAUSTED,
 * saying how to do with fewer, and one more is served once one has ended. */
static void test_e2e_watch_streams_per_caller(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_stream *open[WATCHES_PER_CALLER], *s;
    struct cs_status st = {0};
    char name[64];

    cs_e2e_name(name, sizeof(name), "many");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    for (int i = 0; i < WATCHES_PER_CALLER; i++)
        open[i] = watch_open(e, false, 0, "");
    /* Time for the server to take each of them. */
    cs_test_sleep_ms(1000);
    s = watch_open(e, false, 0, "");
    assert_int_equal(watch_end_code(s, &st), GRPC_STATUS_RESOURCE_EXHAUSTED);
    if (strstr(st.message, "the most one caller may") == NULL)
        fail_msg("Watch past the limit: \"%s\"", st.message);
    cs_stream_free(s);

    cs_stream_free(open[0]);
    cs_test_sleep_ms(1000);
    s = watch_open(e, true, 0, name);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, name)), NULL);
    assert_int_equal(watch_end_code(s, &st), -1);
    cs_stream_free(s);
    for (int i = 1; i < WATCHES_PER_CALLER; i++)
        cs_stream_free(open[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_watch_full_sequence),
        cmocka_unit_test(test_e2e_watch_streams_per_caller),
        cmocka_unit_test(test_e2e_watch_attempts_of_a_retry),
        cmocka_unit_test(test_e2e_watch_live_only),
        cmocka_unit_test(test_e2e_watch_resume),
        cmocka_unit_test(test_e2e_watch_job_filter),
        cmocka_unit_test(test_e2e_watch_replay_is_batched),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
