/* The server's own figures for the tests: a client and GetStats through
 * libcsched, failing the test when the server does not answer, and the
 * loop-lag check every test runs (the spec's bounds on the probe's p99 and
 * worst lateness). */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <stdio.h>

#include "testlib_int.h"

/* GetStats waits this long for a server that is starting or restarting. */
#define STATS_TIMEOUT_MS 10000

/* check_window asserts the bounds on one window, naming it on failure. */
static void check_window(const char *name, const Csched__V1__LoopLag *lag)
{
    if (lag == NULL)
        cs_test_fail(__FILE__, __LINE__, "GetStats returned no %s", name);
    fprintf(stderr, "testlib: probe %s: ticks=%llu p50=%lld us p99=%lld us max=%lld us\n", name,
            (unsigned long long)lag->ticks, (long long)lag->p50_us, (long long)lag->p99_us,
            (long long)lag->max_us);
    if (lag->p99_us >= CS_TEST_LAG_P99_MAX_US || lag->max_us >= CS_TEST_LAG_MAX_MAX_US)
        cs_test_fail(__FILE__, __LINE__,
                     "loop-lag probe %s out of bounds: p99 %lld us (limit < %d), max %lld us "
                     "(limit < %d)",
                     name, (long long)lag->p99_us, CS_TEST_LAG_P99_MAX_US, (long long)lag->max_us,
                     CS_TEST_LAG_MAX_MAX_US);
}

struct cs_client *cs_test_client_new(const char *target)
{
    struct cs_client *client = NULL;
    int rc = cs_client_new(target, &client);

    if (rc != 0)
        cs_test_fail(__FILE__, __LINE__, "cs_client_new(%s) = %d", target, rc);
    return client;
}

Csched__V1__Stats *cs_test_get_stats(struct cs_client *client)
{
    Csched__V1__GetStatsRequest req = CSCHED__V1__GET_STATS_REQUEST__INIT;
    Csched__V1__Stats *stats = NULL;
    struct cs_call_opts opts = {.timeout_ms = STATS_TIMEOUT_MS, .wait_for_ready = true};
    struct cs_status status = {0};
    int rc = cs_scheduler_get_stats(client, &req, &stats, &opts, &status);

    if (rc != 0)
        cs_test_fail(__FILE__, __LINE__, "GetStats failed: %d %s: %s", rc,
                     rc > 0 ? cs_status_code_name(rc) : "local error", status.message);
    return stats;
}

void cs_testd_assert_lag_ok(struct cs_testd *d)
{
    struct cs_client *client = cs_test_client_new(cs_testd_target(d));
    Csched__V1__Stats *stats = cs_test_get_stats(client);

    cs_client_free(client);
    check_window("lag_since_start", stats->lag_since_start);
    check_window("lag_last_minute", stats->lag_last_minute);
    csched__v1__stats__free_unpacked(stats, NULL);
}
