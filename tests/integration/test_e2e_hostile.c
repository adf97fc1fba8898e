/* End-to-end tests of requests a client outside the project sends and the
 * server once answered wrongly: each gets the status its field deserves (not
 * INTERNAL, not a silent empty answer) with a message naming the field, and
 * leaves the server healthy. One server serves every test. */
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

/* The server is still there and answering. */
static void assert_alive(struct cs_e2e *e)
{
    int serving = -1;

    assert_int_equal(cs_e2e_health_check(e, "", &serving), 0);
    assert_int_equal(serving, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
}

/* ListSlots of job with the given filter; asserts it fails with want, naming word. */
static void list_slots_fails(struct cs_e2e *e, Csched__V1__ListSlotsRequest *req, int want,
                             const char *word)
{
    Csched__V1__ListSlotsResponse *resp = NULL;
    struct cs_status st = {0};

    cs_e2e_assert_status(cs_scheduler_list_slots(e->client, req, &resp, cs_e2e_opts(), &st), &st,
                         want, word);
    assert_null(resp);
}

/* An outcome outside the enum was sent to the database, which refused it as
 * a smallint (INTERNAL, "the database failed") or matched nothing (OK and
 * empty); a range that ends before it starts matched nothing too. */
static void test_e2e_hostile_list_slots_filter(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListSlotsRequest req = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    const int outcomes[] = {-5, 3, 99, INT32_MAX};

    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "slotted", "true"), NULL);
    req.job_name = "slotted";
    for (size_t i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
        req.outcome = (Csched__V1__SlotOutcome)outcomes[i];
        list_slots_fails(e, &req, GRPC_STATUS_INVALID_ARGUMENT, "SlotOutcome");
    }
    req.outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED;
    req.from_unix_ms = 2000;
    req.to_unix_ms = 1000;
    list_slots_fails(e, &req, GRPC_STATUS_INVALID_ARGUMENT, "to_unix_ms");
    /* Negative times, refused as ListAudit refuses them. */
    req.from_unix_ms = -1;
    req.to_unix_ms = 0;
    list_slots_fails(e, &req, GRPC_STATUS_INVALID_ARGUMENT, "may not be negative");
    req.from_unix_ms = 0;
    req.to_unix_ms = INT64_MIN;
    list_slots_fails(e, &req, GRPC_STATUS_INVALID_ARGUMENT, "may not be negative");
    assert_alive(e);
}

/* ListSlots' page token is "before:" and the digits of a slot's time, as
 * its replies write it: one past int64's range was read as its maximum, and
 * a sign or a blank was taken, so a token no reply gave out listed a page. */
static void test_e2e_hostile_list_slots_token(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListSlotsRequest req = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    static const char *const tokens[] = {"before:99999999999999999999999",
                                         "before:+5",
                                         "before: 5",
                                         "before:0",
                                         "before:-1",
                                         "before:5x"};

    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "slot-token", "true"), NULL);
    req.job_name = "slot-token";
    for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
        req.page_token = (char *)tokens[i];
        list_slots_fails(e, &req, GRPC_STATUS_INVALID_ARGUMENT, "page_token");
    }
    assert_alive(e);
}

/* Opens a Watch after after_seq and reads it for at most timeout_ms:
 * returns the status it ended with (DEADLINE_EXCEEDED while it waits on). */
static int watch_after(struct cs_e2e *e, int64_t after_seq, int64_t timeout_ms,
                       struct cs_status *st)
{
    struct cs_call_opts opts = {.timeout_ms = timeout_ms};
    Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
    Csched__V1__WatchResponse *batch = NULL;
    struct cs_stream *s = NULL;
    int rc;

    req.start_case = CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    req.after_seq = after_seq;
    rc = cs_scheduler_watch(e->client, &req, &s, &opts, st);
    if (rc != 0)
        return rc;
    while ((rc = cs_scheduler_watch_next(s, &batch, st)) == 1)
        csched__v1__watch_response__free_unpacked(batch, NULL);
    cs_stream_free(s);
    assert_int_equal(rc, 0);
    return (int)st->code;
}

/* A seq past the last event (a client resuming against a replaced database)
 * waited in silence, dropping every event up to it; the last seq itself is a
 * live watch. */
static void test_e2e_hostile_watch_after_future_seq(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};
    int64_t last;

    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "watched", "true"), NULL);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, "watched")), NULL);
    last = cs_e2e_last_seq(e);
    assert_true(last > 0);
    cs_e2e_assert_status(watch_after(e, last + 1000, 5000, &st), &st, GRPC_STATUS_OUT_OF_RANGE,
                         "after_seq");
    cs_e2e_assert_status(watch_after(e, INT64_MAX, 5000, &st), &st, GRPC_STATUS_OUT_OF_RANGE,
                         "past the last event");
    assert_int_equal(watch_after(e, last, 500, &st), GRPC_STATUS_DEADLINE_EXCEEDED);
    assert_alive(e);
}

/* A map's key sent twice (a client that does not fold its entries): the
 * job was stored and shown with the name twice. Now the last wins, once, as
 * protobuf has it, and the command sees that value. */
static void test_e2e_hostile_env_key_twice(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Job__EnvEntry env[3] = {CSCHED__V1__JOB__ENV_ENTRY__INIT,
                                        CSCHED__V1__JOB__ENV_ENTRY__INIT,
                                        CSCHED__V1__JOB__ENV_ENTRY__INIT};
    Csched__V1__Job__EnvEntry *envp[3] = {&env[0], &env[1], &env[2]};
    size_t len = 0;

    env[0].key = "A", env[0].value = "first";
    env[1].key = "B", env[1].value = "b";
    env[2].key = "A", env[2].value = "last";
    job.name = "envtwice";
    job.shell = "echo \"$A\"";
    job.n_env = 3;
    job.env = envp;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    Csched__V1__Job *got = cs_e2e_get_job(e, "envtwice");
    assert_int_equal(got->n_env, 2);
    for (size_t i = 0; i < got->n_env; i++)
        if (strcmp(got->env[i]->key, "A") == 0)
            assert_string_equal(got->env[i]->value, "last");
    csched__v1__job__free_unpacked(got, NULL);
    int64_t id = cs_e2e_trigger(e, "envtwice");
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, id), NULL);
    char *out = cs_e2e_read_logs(e, id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_string_equal(out, "last\n");
    free(out);
    assert_alive(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_hostile_list_slots_filter),
        cmocka_unit_test(test_e2e_hostile_list_slots_token),
        cmocka_unit_test(test_e2e_hostile_watch_after_future_seq),
        cmocka_unit_test(test_e2e_hostile_env_key_twice),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
