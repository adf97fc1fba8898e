/* End-to-end tests of many runs of a job, through libcsched against a real
 * cschedd and real minders: an idempotency key that gives back the same run,
 * but not a run of a job deleted before its name was taken again, the job's max_running seen
 * through Watch, and ListRuns' filters, order and paging. One server serves every test of this
 * file. */
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
#include "runs_fixture.h"
#include "testlib.h"

static Csched__V1__Run *trigger_key(struct cs_e2e *e, const char *job, const char *key)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};

    req.job_name = (char *)job;
    req.idempotency_key = (char *)key;
    if (cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st) != 0)
        fail_msg("TriggerJob(%s, key %s): %s \"%s\"", job, key, cs_status_code_name(st.code),
                 st.message);
    assert_string_equal(run->idempotency_key, key);
    return run;
}

/* The same key returns the same run, also after that run ended; another key
 * makes another run. */
static void test_e2e_runs_idempotency_key(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *a, *b, *c, *end;
    char name[64];

    cs_e2e_name(name, sizeof(name), "idem");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    a = trigger_key(e, name, "key-1");
    b = trigger_key(e, name, "key-1");
    assert_int_equal(b->id, a->id);
    end = cs_e2e_wait_end(e, a->id);
    csched__v1__run__free_unpacked(end, NULL);
    csched__v1__run__free_unpacked(b, NULL);
    b = trigger_key(e, name, "key-1");
    assert_int_equal(b->id, a->id);
    assert_run_state(b, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    c = trigger_key(e, name, "key-2");
    assert_int_not_equal(c->id, a->id);
    assert_true(c->id > a->id);
    end = cs_e2e_wait_end(e, c->id);
    csched__v1__run__free_unpacked(end, NULL);
    csched__v1__run__free_unpacked(c, NULL);
    csched__v1__run__free_unpacked(b, NULL);
    csched__v1__run__free_unpacked(a, NULL);
}

static void delete_job(struct cs_e2e *e, const char *name)
{
    Csched__V1__DeleteJobRequest req = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *resp = NULL;
    struct cs_status st = {0};

    req.name = (char *)name;
    if (cs_scheduler_delete_job(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("DeleteJob(%s): %s \"%s\"", name, cs_status_code_name(st.code), st.message);
    csched__v1__delete_job_response__free_unpacked(resp, NULL);
}

/* A job deleted and created again under its name is a new job: a key its
 * old runs carry makes a run of the new one, which that key then returns. */
static void test_e2e_runs_idempotency_key_of_a_new_job(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Run *old, *fresh, *again, *end;
    char name[64];

    cs_e2e_name(name, sizeof(name), "idem-new");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    old = trigger_key(e, name, "key-1");
    end = cs_e2e_wait_end(e, old->id);
    csched__v1__run__free_unpacked(end, NULL);
    delete_job(e, name);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    fresh = trigger_key(e, name, "key-1");
    assert_true(fresh->id > old->id);
    end = cs_e2e_wait_end(e, fresh->id);
    csched__v1__run__free_unpacked(end, NULL);
    again = trigger_key(e, name, "key-1");
    assert_int_equal(again->id, fresh->id);
    csched__v1__run__free_unpacked(again, NULL);
    csched__v1__run__free_unpacked(fresh, NULL);
    csched__v1__run__free_unpacked(old, NULL);
}

/* What Watch showed of one job's runs, counted over the runs' own events
 * (attempt 0): how many are RUNNING now and at most, and where that peak
 * was; how many ended and succeeded; the first event of another job. */
struct running_tally {
    int running, peak, ended, succeeded;
    int64_t bad_seq, peak_seq;
};

/* Counts into t the events of s until n runs have ended or the stream
 * ends, st then saying why. Frees the batch it read, not the stream; it
 * asserts nothing, the test judges. */
static void tally_runs(struct cs_stream *s, const char *job, int n, struct running_tally *t,
                       struct cs_status *st)
{
    struct cs_test_events events = {.stream = s};
    const Csched__V1__Event *ev;

    while (t->ended < n && cs_test_next_event(&events, &ev, st) == 1) {
        if (strcmp(ev->job_name, job) != 0 && t->bad_seq == 0)
            t->bad_seq = ev->seq;
        if (ev->attempt == 0) {
            if (ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING)
                t->running++;
            if (cs_test_run_state_is_terminal(ev->state)) {
                t->succeeded += ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
                t->running--;
                t->ended++;
            }
            if (t->running > t->peak) {
                t->peak = t->running;
                t->peak_seq = ev->seq;
            }
        }
    }
    cs_test_events_done(&events);
}

/* A job with max_running 1 and three quick runs triggered together: Watch
 * never shows two of them RUNNING at once, and all three succeed. */
static void test_e2e_runs_job_max_running(void **state)
{
    struct cs_e2e *e = *state;
    enum { N = 3 };
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__WatchRequest wreq = CSCHED__V1__WATCH_REQUEST__INIT;
    struct running_tally t = {0};
    struct cs_status st = {0};
    struct cs_stream *s = NULL;
    int64_t t0, took_ms;
    char name[64];

    cs_e2e_name(name, sizeof(name), "jobmax");
    csched__v1__job__free_unpacked(cs_e2e_create_serial_job(e, name, "sleep 0.3"), NULL);

    /* The job is new, so a replay from 0 holds nothing before its runs. */
    wreq.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    wreq.after_seq = 0;
    wreq.job_name = name;
    assert_int_equal(cs_scheduler_watch(e->client, &wreq, &s, &opts, &st), 0);
    t0 = cs_test_now_ms();
    for (int i = 0; i < N; i++)
        (void)cs_e2e_trigger(e, name); /* Ids are followed through Watch. */

    /* Everything is judged after the stream is freed, so a failure leaks
     * nothing. */
    tally_runs(s, name, N, &t, &st);
    cs_stream_free(s);
    if (t.ended < N)
        fail_msg("Watch ended after %d of %d runs: %s \"%s\"", t.ended, N,
                 cs_status_code_name(st.code), st.message);
    if (t.bad_seq != 0)
        fail_msg("Watch filtered by job %s sent another job's event (seq %lld)", name,
                 (long long)t.bad_seq);
    if (t.peak > 1)
        fail_msg("%d runs of a max_running 1 job RUNNING at once (seq %lld)", t.peak,
                 (long long)t.peak_seq);
    assert_int_equal(t.succeeded, N);
    took_ms = cs_test_now_ms() - t0;
    /* Three 0.3 s runs one after another cannot take less than 0.9 s. */
    if (took_ms < 900)
        fail_msg("%d serialised runs of sleep 0.3 took only %lld ms", N, (long long)took_ms);
}

static Csched__V1__ListRunsResponse *list_runs(struct cs_e2e *e, const char *job,
                                               Csched__V1__RunState state, uint32_t page_size,
                                               const char *token)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *resp = NULL;
    struct cs_status st = {0};

    req.job_name = (char *)job;
    req.state = state;
    req.page_size = page_size;
    req.page_token = (char *)token;
    if (cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListRuns(job \"%s\", state %s): %s \"%s\"", job, cs_test_run_state_name(state),
                 cs_status_code_name(st.code), st.message);
    return resp;
}

/* Collects the ids of every page of a ListRuns query, checking page sizes,
 * newest-first order, the filters and that no run comes twice. Returns the
 * number of ids stored in ids (at most cap). */
static size_t list_all_runs(struct cs_e2e *e, const char *job, Csched__V1__RunState state,
                            uint32_t page_size, int64_t *ids, size_t cap)
{
    Csched__V1__ListRunsResponse *page;
    char *token = strdup("");
    size_t n = 0;

    do {
        page = list_runs(e, job, state, page_size, token);
        assert_true(page->n_runs <= page_size);
        for (size_t i = 0; i < page->n_runs; i++) {
            Csched__V1__Run *r = page->runs[i];

            if (job[0] != '\0')
                assert_string_equal(r->job_name, job);
            if (state != CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED)
                assert_int_equal(r->state, state);
            if (n > 0 && r->id >= ids[n - 1])
                fail_msg("ListRuns not newest first: %lld after %lld", (long long)r->id,
                         (long long)ids[n - 1]);
            assert_true(n < cap);
            ids[n++] = r->id;
        }
        free(token);
        token = strdup(page->next_page_token);
        if (page->n_runs == 0)
            assert_string_equal(token, "");
        csched__v1__list_runs_response__free_unpacked(page, NULL);
    } while (token[0] != '\0');
    free(token);
    return n;
}

static void test_e2e_runs_list_filters_and_paging(void **state)
{
    struct cs_e2e *e = *state;
    char ok_job[64], bad_job[64];
    int64_t ok[5], bad[2], ids[512];
    Csched__V1__Run *run;
    size_t n;

    cs_e2e_name(ok_job, sizeof(ok_job), "listok");
    cs_e2e_name(bad_job, sizeof(bad_job), "listbad");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, ok_job, "true"), NULL);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, bad_job, "false"), NULL);
    for (int i = 0; i < 5; i++)
        ok[i] = cs_e2e_trigger(e, ok_job);
    for (int i = 0; i < 2; i++)
        bad[i] = cs_e2e_trigger(e, bad_job);
    for (int i = 0; i < 5; i++) {
        run = cs_e2e_wait_end(e, ok[i]);
        csched__v1__run__free_unpacked(run, NULL);
    }
    for (int i = 0; i < 2; i++) {
        run = cs_e2e_wait_end(e, bad[i]);
        csched__v1__run__free_unpacked(run, NULL);
    }

    /* By job, two per page: 5 runs, newest first. */
    n = list_all_runs(e, ok_job, CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED, 2, ids, 512);
    assert_int_equal(n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(ids[i], ok[4 - i]);

    /* By job and state. */
    n = list_all_runs(e, bad_job, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, 1, ids, 512);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], bad[1]);
    assert_int_equal(ids[1], bad[0]);
    n = list_all_runs(e, ok_job, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, 10, ids, 512);
    assert_int_equal(n, 0);

    /* By state across every job: all of ok_job's runs, none of bad_job's. */
    n = list_all_runs(e, "", CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, 3, ids, 512);
    for (int i = 0; i < 5; i++) {
        bool found = false;

        for (size_t j = 0; j < n; j++)
            found = found || ids[j] == ok[i];
        assert_true(found);
    }
    for (size_t j = 0; j < n; j++)
        assert_true(ids[j] != bad[0] && ids[j] != bad[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_runs_idempotency_key),
        cmocka_unit_test(test_e2e_runs_idempotency_key_of_a_new_job),
        cmocka_unit_test(test_e2e_runs_job_max_running),
        cmocka_unit_test(test_e2e_runs_list_filters_and_paging),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
