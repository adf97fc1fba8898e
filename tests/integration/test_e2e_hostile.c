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
    assert_alive(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_hostile_list_slots_filter),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
