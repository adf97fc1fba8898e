/* The replicas fixture on today's cschedd, with one replica (a second on
 * the same database is refused by the server lock until membership
 * lands): it runs a job through its proxy under the oracles; a link cut
 * with reset, then with blackhole, turns its health NOT_SERVING within
 * seconds and SERVING again after restore, and it commits again; a frozen
 * replica answers nothing until thawed; it rides over a restart of the
 * database; after kill -9 its database session ends (the server lock is
 * free) and the restarted replica adopts the attempt still running, which
 * ran once; and the wait for a replica's row sees one. Each wait is
 * bounded and its time printed. */
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

#include "oracle.h"
#include "replicas_fixture.h"

#define HEARTBEAT "200ms"
#define ATTEMPT_LEASE "2s"
/* A reset is seen as soon as the socket says so, and a reconnection after
 * restore comes within the store's backoff (at most 5 s). */
#define RESET_SEEN_MS 5000
#define RESTORED_MS 15000
/* A blackhole is seen by the store's watchdog only: an idle ping, then
 * its answer timeout (2 s + 5 s), with slack for a loaded machine. */
#define BLACKHOLE_SEEN_MS 15000
#define COMMAND_BYTES 4096

#define SERVING GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
#define NOT_SERVING GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING

struct smoke {
    struct cs_replicas *rs;
    struct cs_oracle oracle;
};

static int group_setup(void **state)
{
    struct cs_replicas_options o = {
        .n = 1,
        .heartbeat = HEARTBEAT,
        .attempt_lease = ATTEMPT_LEASE,
        .wait = CS_REPLICAS_WAIT_READY,
    };
    struct smoke *s = calloc(1, sizeof(*s));
    int rc;

    if (s == NULL)
        return -1;
    rc = cs_oracle_init(&s->oracle, CS_E2E_MAX_RUNNING);
    if (rc == 0 && (rc = cs_replicas_start(&o, &s->rs)) != 0)
        cs_oracle_close(&s->oracle);
    if (rc != 0) {
        free(s);
        return rc;
    }
    *state = s;
    return 0;
}

static int group_teardown(void **state)
{
    struct smoke *s = *state;
    int status;

    cs_testd_assert_lag_ok(s->rs->r[0].e.d);
    status = cs_replicas_stop(s->rs);
    cs_oracle_close(&s->oracle);
    free(s);
    if (status != 0)
        fail_msg("the replica's exit status %d, want 0 (clean shutdown)", status);
    return 0;
}

/* create_job makes a job of max_running 1 whose command runs payload
 * under the oracles; its name into name. */
static void create_job(struct smoke *s, const char *payload, char *name, size_t size)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char command[COMMAND_BYTES];

    cs_e2e_name(name, size, "smoke");
    assert_int_equal(cs_oracle_command(&s->oracle, name, 1, payload, command, sizeof(command)), 0);
    job.name = name;
    job.shell = command;
    job.max_running = 1;
    csched__v1__job__free_unpacked(cs_e2e_create_job(cs_replicas_e2e(s->rs, 0), &job), NULL);
}

/* run_once triggers job, waits for its end and asserts that it succeeded
 * in one attempt that the oracles saw run once. */
static void run_once(struct smoke *s, const char *job)
{
    struct cs_e2e *e = cs_replicas_e2e(s->rs, 0);
    int64_t id = cs_e2e_trigger(e, job);
    Csched__V1__Run *run = cs_e2e_wait_end(e, id);
    struct cs_oracle_run seen;
    char first[256];

    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED || run->n_attempts != 1)
        fail_msg("run %lld ended %s after %zu attempts, want SUCCEEDED in 1", (long long)id,
                 cs_test_run_state_name(run->state), run->n_attempts);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_oracle_run(&s->oracle, id, &seen), 0);
    assert_int_equal(seen.executions, 1);
    assert_int_equal(seen.ended, 1);
    assert_false(seen.overlap);
    if (cs_oracle_excess(&s->oracle, first, sizeof(first)) != 0)
        fail_msg("a limit was exceeded: %s", first);
}

static void test_replicas_smoke_runs_a_job(void **state)
{
    struct smoke *s = *state;
    char name[64];

    create_job(s, "true", name, sizeof(name));
    run_once(s, name);
}

/* cut_and_restore cuts the link, waits for NOT_SERVING within seen_ms,
 * restores it, waits for SERVING and runs a job again. */
static void cut_and_restore(struct smoke *s, enum cs_testproxy_cut mode, int64_t seen_ms)
{
    const char *what = mode == CS_TESTPROXY_RESET ? "reset" : "blackhole";
    struct cs_replicas *rs = s->rs;
    char name[64];
    int64_t ms;

    create_job(s, "true", name, sizeof(name));
    assert_int_equal(cs_replicas_cut(rs, 0, mode), 0);
    ms = cs_replicas_wait_health(rs, 0, NOT_SERVING, seen_ms);
    if (ms < 0)
        fail_msg("still SERVING %lld ms after cut %s", (long long)seen_ms, what);
    fprintf(stderr, "smoke: NOT_SERVING %lld ms after cut %s\n", (long long)ms, what);
    assert_int_equal(cs_replicas_restore(rs, 0), 0);
    ms = cs_replicas_wait_health(rs, 0, SERVING, RESTORED_MS);
    if (ms < 0)
        fail_msg("not SERVING %d ms after restore from cut %s", RESTORED_MS, what);
    fprintf(stderr, "smoke: SERVING %lld ms after restore from cut %s\n", (long long)ms, what);
    run_once(s, name);
}

static void test_replicas_smoke_cut_reset(void **state)
{
    cut_and_restore(*state, CS_TESTPROXY_RESET, RESET_SEEN_MS);
}

static void test_replicas_smoke_cut_blackhole(void **state)
{
    cut_and_restore(*state, CS_TESTPROXY_BLACKHOLE, BLACKHOLE_SEEN_MS);
}

static void test_replicas_smoke_sigstop(void **state)
{
    struct smoke *s = *state;

    assert_int_equal(cs_replicas_sigstop(s->rs, 0), 0);
    /* Frozen, it answers nothing, not even NOT_SERVING. */
    assert_int_equal(cs_replicas_wait_health(s->rs, 0, SERVING, 1500), -ETIMEDOUT);
    assert_int_equal(cs_replicas_sigcont(s->rs, 0), 0);
    assert_true(cs_replicas_wait_health(s->rs, 0, SERVING, 5000) >= 0);
}

static void test_replicas_smoke_pg_restart(void **state)
{
    struct smoke *s = *state;
    char name[64], value[32];

    create_job(s, "true", name, sizeof(name));
    assert_int_equal(cs_replicas_pg_restart(s->rs), 0);
    assert_int_equal(cs_replicas_sql(s->rs, "SELECT 1", value, sizeof(value), false), 0);
    assert_string_equal(value, "1");
    /* Every session ended with the old server: one now is a reconnection. */
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(cs_replicas_wait_sql(s->rs,
                                          "SELECT count(*) > 0 FROM pg_stat_activity"
                                          " WHERE application_name LIKE 'cschedd pid %'",
                                          "t", RESTORED_MS),
                     0);
    fprintf(stderr, "smoke: reconnected %lld ms after the database's restart\n",
            (long long)(cs_test_now_ms() - t0));
    assert_true(cs_replicas_wait_health(s->rs, 0, SERVING, RESTORED_MS) >= 0);
    run_once(s, name);
}

/* wait_started waits for the first start mark of run id. */
static void wait_started(struct smoke *s, int64_t id)
{
    struct cs_oracle_run seen = {0};
    int64_t deadline = cs_test_now_ms() + CS_E2E_RUN_TIMEOUT_MS;

    while (seen.executions == 0) {
        if (cs_test_now_ms() > deadline)
            fail_msg("run %lld's command never started", (long long)id);
        cs_test_sleep_ms(20);
        assert_int_equal(cs_oracle_run(&s->oracle, id, &seen), 0);
    }
}

static void test_replicas_smoke_kill9_adopts(void **state)
{
    struct smoke *s = *state;
    struct cs_e2e *e = cs_replicas_e2e(s->rs, 0);
    struct cs_oracle_run seen;
    char name[64];

    create_job(s, "sleep 5", name, sizeof(name));
    int64_t id = cs_e2e_trigger(e, name);
    csched__v1__run__free_unpacked(
        cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, CS_E2E_RUN_TIMEOUT_MS),
        NULL);
    wait_started(s, id);
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(cs_replicas_kill9(s->rs, 0), 0);
    /* Its session ends through the proxy, and the server lock with it. */
    assert_int_equal(cs_replicas_wait_sql(s->rs,
                                          "SELECT count(*) FROM pg_locks"
                                          " WHERE locktype = 'advisory'",
                                          "0", 10000),
                     0);
    assert_int_equal(cs_replicas_restart(s->rs, 0, CS_REPLICAS_WAIT_READY), 0);
    fprintf(stderr, "smoke: serving again %lld ms after kill -9\n",
            (long long)(cs_test_now_ms() - t0));
    /* Adopted while its command still ran. */
    assert_int_equal(cs_oracle_run(&s->oracle, id, &seen), 0);
    assert_int_equal(seen.ended, 0);
    e = cs_replicas_e2e(s->rs, 0);
    Csched__V1__Run *run = cs_e2e_wait_end(e, id);
    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED || run->n_attempts != 1)
        fail_msg("run %lld ended %s after %zu attempts, want SUCCEEDED, adopted", (long long)id,
                 cs_test_run_state_name(run->state), run->n_attempts);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_oracle_run(&s->oracle, id, &seen), 0);
    assert_int_equal(seen.executions, 1);
    assert_int_equal(seen.ended, 1);
    assert_false(seen.overlap);
}

/* The wait for a replica that may never serve: its process and the row it
 * wrote when it joined, here the active replica's, with a live lease. */
static void test_replicas_smoke_wait_up(void **state)
{
    struct smoke *s = *state;
    struct cs_replica_row row;

    assert_int_equal(cs_replicas_wait_up(s->rs, 0, 5000), 0);
    assert_int_equal(cs_replicas_row(s->rs, 0, &row), 0);
    assert_true(row.epoch > 0);
    assert_string_equal(row.state, "active");
    assert_true(row.lease_valid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_smoke_runs_a_job),
        cmocka_unit_test(test_replicas_smoke_cut_reset),
        cmocka_unit_test(test_replicas_smoke_cut_blackhole),
        cmocka_unit_test(test_replicas_smoke_sigstop),
        cmocka_unit_test(test_replicas_smoke_pg_restart),
        /* After the freeze: the restart starts the loop-lag probe anew. */
        cmocka_unit_test(test_replicas_smoke_kill9_adopts),
        cmocka_unit_test(test_replicas_smoke_wait_up),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
