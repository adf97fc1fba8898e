/* The replicas' wake-ups (docs/architecture.md, "Wake-ups"). With a
 * heartbeat of a minute, a drained active replica is taken over within
 * seconds, twice in a row: its leave is told on the channel the standby
 * LISTENs on, and the standby renews at once instead of at its next
 * heartbeat (which would come, on average, half a minute later). With
 * --poll-only and a short heartbeat, the same drain is taken over by the
 * poll alone. The times are printed. */
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

/* A poll would take over up to a heartbeat after the leave: a twelfth of
 * one, twice in a row, is a wake-up and not a lucky poll. */
#define LONG_HEARTBEAT "60s"
#define WOKEN_MS 5000
#define SHORT_HEARTBEAT_MS 300
#define POLLED_MS (3 * SHORT_HEARTBEAT_MS + 5000)

static int start(void **state, const char *heartbeat, const char *attempt_lease,
                 const char *const *extra_args)
{
    struct cs_replicas_options o = {
        .n = 2,
        .heartbeat = heartbeat,
        .attempt_lease = attempt_lease,
        .drain_timeout = "5s",
        .extra_args = extra_args,
        .wait = CS_REPLICAS_WAIT_UP,
    };
    struct cs_replicas *rs;
    int rc = cs_replicas_start(&o, &rs);

    if (rc == 0)
        *state = rs;
    return rc;
}

static int setup_listening(void **state)
{
    return start(state, LONG_HEARTBEAT, "180s", NULL);
}

static int setup_polling(void **state)
{
    static const char *const poll_only[] = {"--poll-only", NULL};

    return start(state, "300ms", "1s", poll_only);
}

static int teardown(void **state)
{
    return cs_replicas_stop(*state);
}

static bool exited(void *arg)
{
    return cs_testd_reap(arg) != -EBUSY;
}

/* SIGTERM to the active replica; returns the ms from its exit (it left
 * before) to another replica's row saying active, and restarts it. */
static int64_t drain_and_time(struct cs_replicas *rs, int64_t timeout_ms)
{
    int a = cs_replicas_wait_active(rs, -1, CS_RRUNS_SERVING_MS, NULL);

    assert_true(a >= 0);
    assert_int_equal(cs_replicas_sigterm(rs, (unsigned)a), 0);
    assert_int_equal(cs_replicas_wait_until(exited, rs->r[a].e.d, CS_RRUNS_SERVING_MS), 0);
    int64_t left_at = cs_test_now_ms();
    int b = cs_replicas_wait_active(rs, a, timeout_ms, NULL);
    int64_t took = cs_test_now_ms() - left_at;
    if (b < 0)
        fail_msg("%s drained; no replica was active %lld ms later", rs->r[a].id,
                 (long long)timeout_ms);
    fprintf(stderr, "%s drained and exited; %s active and serving %lld ms later\n", rs->r[a].id,
            rs->r[b].id, (long long)took);
    assert_int_equal(cs_replicas_restart(rs, (unsigned)a, CS_REPLICAS_WAIT_UP), 0);
    return took;
}

static void test_replicas_wake_drain_told(void **state)
{
    for (int turn = 0; turn < 2; turn++)
        assert_in_range(drain_and_time(*state, WOKEN_MS), 0, WOKEN_MS);
}

static void test_replicas_wake_poll_only(void **state)
{
    assert_in_range(drain_and_time(*state, POLLED_MS), 0, POLLED_MS);
}

int main(void)
{
    const struct CMUnitTest listening[] = {
        cmocka_unit_test(test_replicas_wake_drain_told),
    };
    const struct CMUnitTest polling[] = {
        cmocka_unit_test(test_replicas_wake_poll_only),
    };
    int failed = cmocka_run_group_tests_name("listening", listening, setup_listening, teardown);

    return failed + cmocka_run_group_tests_name("poll-only", polling, setup_polling, teardown);
}
