/* The event history of runs adopted after a crash of cschedd: each run
 * still has exactly one RUNNING event for its attempt and one for itself,
 * as a run that never saw a restart; the adoption adds none. Real minders,
 * a real kill -9 of the server, a real restart on the same state dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"
#include "testwatch.h"

enum { N_RUNS = 8 };

/* Counts the RUNNING events of each of ids (n of them), replaying the
 * history from the start up to seq until. */
static void count_running(struct cs_e2e *e, int64_t until, const int64_t *ids, size_t n,
                          size_t *running)
{
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS, .wait_for_ready = true};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    struct cs_test_events events = {0};
    struct cs_stream *s = NULL;
    struct cs_status st = {0};
    const Csched__V1__Event *ev;
    int64_t seq = 0;

    memset(running, 0, n * sizeof(*running));
    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    assert_int_equal(cs_scheduler_watch(e->client, &req, &s, &opts, &st), 0);
    events.stream = s;
    while (seq < until) {
        if (cs_test_next_event(&events, &ev, &st) != 1)
            fail_msg("history ended at seq %lld of %lld: %s \"%s\"", (long long)seq,
                     (long long)until, cs_status_code_name(st.code), st.message);
        seq = ev->seq;
        for (size_t i = 0; i < n; i++)
            if (ev->run_id == ids[i] && ev->state == CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING)
                running[i]++;
    }
    cs_test_events_done(&events);
    cs_stream_free(s);
}

static void test_e2e_adopted_no_second_running_event(void **state)
{
    struct cs_e2e *e = *state;
    int64_t ids[N_RUNS];
    size_t running[N_RUNS];
    char name[64];

    cs_e2e_name(name, sizeof(name), "adopted");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "sleep 2"), NULL);
    for (size_t i = 0; i < N_RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    for (size_t i = 0; i < N_RUNS; i++)
        csched__v1__run__free_unpacked(
            cs_e2e_wait_state(e, ids[i], CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 5000), NULL);

    assert_int_equal(cs_testd_kill(e->d), 0);
    int rc = cs_testd_restart(e->d);
    if (rc != 0)
        fail_msg("cs_testd_restart returned %d", rc);
    for (size_t i = 0; i < N_RUNS; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED || run->n_attempts != 1)
            fail_msg("run %lld ended %s after %zu attempts, want SUCCEEDED, adopted",
                     (long long)ids[i], cs_test_run_state_name(run->state), run->n_attempts);
        csched__v1__run__free_unpacked(run, NULL);
    }

    count_running(e, cs_e2e_last_seq(e), ids, N_RUNS, running);
    size_t total = 0;
    for (size_t i = 0; i < N_RUNS; i++)
        total += running[i];
    for (size_t i = 0; i < N_RUNS; i++)
        if (running[i] != 2)
            fail_msg("run %lld, adopted after a kill -9, has %zu RUNNING events, want 2 (its "
                     "attempt's and its own); %zu for the %d runs",
                     (long long)ids[i], running[i], total, N_RUNS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_adopted_no_second_running_event),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
