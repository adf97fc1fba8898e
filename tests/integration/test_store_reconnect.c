/* The store when the database goes away: writes kept and sent again after
 * reconnecting (in flight or queued, coalesced again), reads failing fast
 * meanwhile, an open that goes on through a killed connection, and a store
 * fenced when another replica took its lease over meanwhile. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "store_fixture.h"
#include "store_internal.h"
#include "testlib.h"

/* Takes the test database away from the store as a stopped server would:
 * its connections end and new ones are refused (away), or lets them in
 * again. */
static void database_away(struct fixture *f, bool away)
{
    PGconn *admin = admin_connect(cluster_conninfo());
    char sql[160];

    snprintf(sql, sizeof(sql), "ALTER DATABASE %s ALLOW_CONNECTIONS %s", f->dbname,
             away ? "false" : "true");
    admin_must(admin, sql);
    if (away) {
        snprintf(sql, sizeof(sql),
                 "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s'",
                 f->dbname);
        admin_must(admin, sql);
    }
    PQfinish(admin);
}

/* Holds a lock the store's next batch waits for, so that the batch is in
 * flight, sent but not committed, when its connection is killed. */
static PGconn *lock_runs(struct fixture *f)
{
    PGconn *admin = admin_connect(f->conninfo);

    admin_must(admin, "BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE");
    return admin;
}

/* Kills the store's connection while its batch waits for the lock. The
 * store reconnects and sends the batch again, which waits for the lock
 * again: nothing more is answered (writes_ok stays what it was), and
 * nothing fails. Then lets the lock go. */
static void kill_while_locked(struct fixture *f, PGconn *admin, int writes_ok)
{
    run_for(f, 100);
    assert_int_equal(f->writes_ok, writes_ok);
    admin_kill_store_conns(admin);
    run_for(f, 300);
    assert_int_equal(f->writes_ok, writes_ok);
    assert_int_equal(f->writes_failed, 0);
    admin_must(admin, "COMMIT");
    PQfinish(admin);
}

static void test_store_writes_survive_database_outage(void **state)
{
    struct fixture *f = *state;
    struct read_result r = {0};

    store_open(f);
    for (int64_t id = 1; id <= 50; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);

        cs_store_run_put(f->store, &run, write_cb, f);
    }
    /* One turn sends the first batch; the server goes away before (or
     * while) answering. Thousands of writes queued while it is away go out
     * in bounded batches once it is back. */
    uv_run(&f->loop, UV_RUN_NOWAIT);
    database_away(f, true);
    for (int64_t id = 51; id <= 5050; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);

        cs_store_run_put(f->store, &run, write_cb, f);
    }
    assert_false(wait_accepting(f, false, 5000));
    /* Reads fail fast while the database is away. */
    cs_store_run_get(f->store, 1, run_cb, &r);
    run_until(f, &r.done, 1000);
    assert_int_equal(r.status, -ENOTCONN);
    assert_int_equal(f->writes_failed, 0);
    assert_true(f->writes_ok < 5050);

    /* Reconnects are refused for a while, as by a server that is down. */
    run_for(f, 500);
    assert_int_equal(f->writes_failed, 0);
    database_away(f, false);
    wait_writes(f, 5050);
    assert_int_equal(f->writes_ok, 5050);
    assert_int_equal(f->writes_failed, 0);
    assert_true(wait_accepting(f, true, 5000));
    store_close(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 5050);
}

static void test_store_inflight_batch_replayed_after_connection_killed(void **state)
{
    struct fixture *f = *state;
    Csched__V1__Run first = make_run(1, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    PGconn *admin;

    store_open(f);
    cs_store_run_put(f->store, &first, write_cb, f);
    wait_writes(f, 1);
    admin = lock_runs(f);
    for (int64_t id = 2; id <= 51; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);

        cs_store_run_put(f->store, &run, write_cb, f);
    }
    kill_while_locked(f, admin, 1);
    wait_writes(f, 51);
    for (int i = 0; i < 10; i++)
        uv_run(&f->loop, UV_RUN_NOWAIT);
    assert_int_equal(f->writes_ok, 51);
    assert_int_equal(f->writes_failed, 0);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 51);
}

static void test_store_open_survives_connection_killed(void **state)
{
    struct fixture *f = *state;
    struct cs_store_config config = {.database_url = f->conninfo, .replica_id = STORE_TEST_REPLICA};
    PGconn *admin;

    store_open(f);
    store_close(f);
    /* Opening (preparing statements on jobs, reading the snapshot) waits
     * for this lock; the connection is killed meanwhile, and the open goes
     * on after reconnecting, with one snapshot. */
    admin = admin_connect(f->conninfo);
    admin_must(admin, "BEGIN; LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE");
    f->open_done = false;
    f->store = cs_store_new(&f->loop, &config);
    assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
    run_for(f, 200);
    assert_false(f->open_done);
    admin_kill_store_conns(admin);
    run_for(f, 300);
    assert_false(f->open_done);
    admin_must(admin, "COMMIT");
    PQfinish(admin);
    run_until(f, &f->open_done, 20000);
    assert_int_equal(f->open_status, 0);
    assert_non_null(f->snapshot);
    assert_true(cs_store_is_accepting(f->store));
}

static void test_store_coalesced_batch_replayed_after_connection_killed(void **state)
{
    struct fixture *f = *state;
    Csched__V1__Run first = make_run(1, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    const int n_writes = 11 + 30 * 5 + 10;
    PGconn *admin;

    store_open(f);
    cs_store_run_put(f->store, &first, write_cb, f);
    for (int64_t seq = 1; seq <= 10; seq++) {
        Csched__V1__Event e = make_event(seq, 1, "r");

        e.message = "first";
        cs_store_event_put(f->store, &e, event_cb, f);
    }
    wait_writes(f, 11);
    /* As in the test above: the batch is in flight when its connection is
     * killed, and is sent again, coalesced again, after reconnecting. */
    admin = lock_runs(f);
    for (int64_t id = 2; id <= 31; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
        Csched__V1__Attempt a = make_attempt(1, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
        Csched__V1__Event e = make_event(10 + id, id, "r");
        char dir[32];

        snprintf(dir, sizeof(dir), "/r/%lld", (long long)id);
        cs_store_run_put(f->store, &run, write_cb, f);
        cs_store_attempt_put(f->store, id, &a, dir, write_cb, f);
        run.state = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
        a.state = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
        cs_store_run_put(f->store, &run, write_cb, f);
        cs_store_attempt_put(f->store, id, &a, NULL, write_cb, f);
        cs_store_event_put(f->store, &e, event_cb, f);
    }
    for (int64_t seq = 42; seq <= 51; seq++) {
        Csched__V1__Event e = make_event(seq, 1, "r");

        e.message = "later";
        cs_store_event_put(f->store, &e, event_cb, f);
    }
    kill_while_locked(f, admin, 11);
    wait_writes(f, n_writes);
    assert_int_equal(f->writes_ok, n_writes);
    assert_int_equal(f->writes_failed, 0);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 31);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs WHERE state = 3"), 30);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM attempts WHERE state = 3"
                                              " AND attempt_dir = '/r/' || run_id"),
                     30);
    /* Numbered by the database without a gap, each event once, and each
     * answered with the seq it has there, in the order put. */
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events"), 50);
    assert_int_equal(admin_value(f->conninfo, "SELECT max(seq) FROM events"), 50);
    assert_int_equal(
        admin_value(f->conninfo, "SELECT count(*) FROM events WHERE message = 'first'"), 10);
    assert_int_equal(
        admin_value(f->conninfo, "SELECT min(seq) FROM events WHERE message = 'later'"), 41);
    assert_event_seqs(f, 50, 1);
    /* The same writes once more: nothing changes. */
    for (int64_t id = 2; id <= 31; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);

        cs_store_run_put(f->store, &run, write_cb, f);
    }
    wait_writes(f, n_writes + 30);
    assert_int_equal(f->writes_failed, 0);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs WHERE state = 3"), 30);
}

/* While the store is away, another replica takes its lease over (as
 * csched_take_over does: a new epoch on its row): on reconnecting, the
 * store's next batch fails its fence, so the run queued meanwhile never
 * reaches the table; the store says so, tells its caller, and closes at
 * once. */
static void test_store_fenced_when_lease_taken_meanwhile(void **state)
{
    struct fixture *f = *state;
    struct cs_store_config config = {.database_url = f->conninfo,
                                     .log_cb = log_cb,
                                     .log_arg = f,
                                     .fenced_cb = fenced_cb,
                                     .fenced_arg = f,
                                     .replica_id = STORE_TEST_REPLICA};
    Csched__V1__Run run = make_run(1, "job", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    int64_t t0;

    f->store = cs_store_new(&f->loop, &config);
    assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
    run_until(f, &f->open_done, 20000);
    assert_int_equal(f->open_status, 0);
    PGconn *admin = admin_connect(f->conninfo);
    admin_must(admin, "UPDATE replicas SET epoch = nextval('replica_epochs'), state = 5");
    admin_kill_store_conns(admin);
    PQfinish(admin);
    cs_store_run_put(f->store, &run, write_cb, f);
    run_until(f, &f->fenced, 10000);
    assert_false(cs_store_is_accepting(f->store));
    assert_false(cs_store_may_start(f->store));
    assert_non_null(strstr(f->errors, "replica " STORE_TEST_REPLICA " is fenced"));
    assert_int_equal(f->writes_failed, 1);
    assert_int_equal(f->last_write_status, -ESTALE);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 0);
    t0 = cs_test_now_ms();
    store_close(f);
    assert_true(cs_test_now_ms() - t0 < 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_writes_survive_database_outage, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_inflight_batch_replayed_after_connection_killed,
                                        store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_store_fenced_when_lease_taken_meanwhile, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_open_survives_connection_killed, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_coalesced_batch_replayed_after_connection_killed,
                                        store_setup, store_teardown),
    };

    return STORE_RUN_TESTS(tests);
}
