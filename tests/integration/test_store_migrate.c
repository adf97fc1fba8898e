/* The store's life against a real PostgreSQL: migrations applied once; a
 * second server on the same database refused, naming the first; the snapshot after a reopen; a
 * close that commits what is pending; a database of an older version migrated, its run updates
 * then HOT; the embedded server; a host name resolved before connecting.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "migrate.h"
#include "pg_embedded.h"
#include "store_fixture.h"
#include "testlib.h"

/* The newest migration's version: the count, unless a number is left for
 * a migration not merged yet (migrate.h). */
static int newest_version(void)
{
    return cs_store_migrations[cs_store_migrations_count - 1].version;
}

static void test_store_open_migrates_once(void **state)
{
    struct fixture *f = *state;

    store_open(f);
    assert_int_equal(f->snapshot->n_jobs, 0);
    assert_int_equal(f->snapshot->n_active_runs, 0);
    assert_int_equal(f->snapshot->max_run_id, 0);
    assert_int_equal(f->snapshot->max_event_seq, 0);
    assert_true(cs_store_is_accepting(f->store));
    store_close(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM schema_migrations"),
                     (int)cs_store_migrations_count);
    store_open(f);
    store_close(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM schema_migrations"),
                     (int)cs_store_migrations_count);
    assert_int_equal(admin_value(f->conninfo, "SELECT max(version) FROM schema_migrations"),
                     newest_version());
}

/* A replica's store on the fixture's database, logging and told of its
 * fence into who, with a heartbeat of 200 ms and an attempt lease of 1 s. */
static struct cs_store_config replica_config(const struct fixture *f, struct fixture *who,
                                             const char *id, const char *instance)
{
    return (struct cs_store_config){.database_url = f->conninfo,
                                    .log_cb = log_cb,
                                    .log_arg = who,
                                    .fenced_cb = fenced_cb,
                                    .fenced_arg = who,
                                    .replica_id = id,
                                    .replica_instance = instance,
                                    .heartbeat_ms = 200,
                                    .attempt_lease_ms = 1000};
}

/* Two replicas open the same empty database at once: one migrates and
 * opens as the active replica; the other joins as a standby and its open
 * waits. Once the active one leaves, the standby takes the role over at its
 * next heartbeat and opens. A third store given the standby's id from
 * another state directory is refused while that lease runs. */
static void test_store_second_replica_waits_as_standby(void **state)
{
    struct fixture *f = *state;
    struct fixture other = {0}, twin = {0};
    struct fixture *active, *standby;
    struct cs_store_config config = replica_config(f, f, "r1", "i1");
    struct cs_store_config other_config = replica_config(f, &other, "r2", "i2");
    struct cs_store_config twin_config = replica_config(f, &twin, "r2", "i3");

    f->store = cs_store_new(&f->loop, &config);
    other.store = cs_store_new(&f->loop, &other_config);
    assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
    assert_int_equal(cs_store_open(other.store, open_cb, &other), 0);
    while (!f->open_done && !other.open_done)
        run_for(f, 50);
    active = f->open_done ? f : &other;
    standby = active == f ? &other : f;
    assert_int_equal(active->open_status, 0);
    run_for(f, 1000);
    assert_false(standby->open_done);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM replicas WHERE state = 1"), 1);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM replicas WHERE state = 2"), 1);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM schema_migrations"),
                     (int)cs_store_migrations_count);

    /* The standby's id from another state directory. */
    twin_config.replica_id = standby == f ? "r1" : "r2";
    twin.store = cs_store_new(&f->loop, &twin_config);
    assert_int_equal(cs_store_open(twin.store, open_cb, &twin), 0);
    run_until(f, &twin.open_done, 20000);
    assert_int_equal(twin.open_status, -EBUSY);
    assert_non_null(strstr(twin.errors, "give each replica its own --replica-id"));
    cs_store_close(twin.store, closed_cb, &twin);
    run_until(f, &twin.closed, 20000);

    int64_t t0 = cs_test_now_ms();
    cs_store_replica_leave(active->store);
    cs_store_close(active->store, closed_cb, active);
    run_until(f, &active->closed, 20000);
    run_until(f, &standby->open_done, 5000);
    assert_int_equal(standby->open_status, 0);
    /* At its next heartbeat, not after a lease. */
    assert_true(cs_test_now_ms() - t0 < 1500);
    assert_true(cs_store_may_start(standby->store));
    cs_store_close(standby->store, closed_cb, standby);
    run_until(f, &standby->closed, 20000);
    cs_store_snapshot_free(active->snapshot);
    cs_store_snapshot_free(standby->snapshot);
    f->snapshot = other.snapshot = NULL;
    f->store = NULL;
}

/* An upgrade from a cschedd before replicas, still running: it holds the
 * session-level advisory lock those versions took. The new store migrates
 * (0010 only adds: the old server goes on), joins, and stands by, saying
 * why; once the old server's session ends, it takes the active role at its
 * next heartbeat and opens. */
static void test_store_waits_for_a_server_from_before_replicas(void **state)
{
    struct fixture *f = *state;
    struct cs_store_config config = replica_config(f, f, "r1", "i1");
    PGconn *old = admin_connect(f->conninfo);
    admin_must(old, "SELECT pg_advisory_lock(27992893484786788)");

    f->store = cs_store_new(&f->loop, &config);
    assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
    run_for(f, 1500);
    assert_false(f->open_done);
    assert_int_equal(admin_value(f->conninfo, "SELECT state FROM replicas WHERE id = 'r1'"), 1);
    int64_t t0 = cs_test_now_ms();
    PQfinish(old);
    run_until(f, &f->open_done, 5000);
    assert_int_equal(f->open_status, 0);
    assert_true(cs_test_now_ms() - t0 < 1500);
    assert_int_equal(admin_value(f->conninfo, "SELECT state FROM replicas WHERE id = 'r1'"), 2);
    store_close(f);
}

/* The active replica stops renewing (its process frozen: here, its store's
 * loop simply not run) for longer than its lease: the standby sees the
 * renewal stand still for a whole lease, takes the role over with a new
 * epoch for the old one, and opens; the old one, run again, finds its
 * batches refused and is fenced. */
static void test_store_standby_takes_over_a_frozen_active(void **state)
{
    struct fixture *f = *state;
    struct fixture other = {0};
    uv_loop_t frozen_loop;
    struct cs_store_config config = replica_config(f, f, "r1", "i1");
    struct cs_store_config other_config = replica_config(f, &other, "r2", "i2");

    /* r1 on a loop of its own, so that it can be frozen alone. */
    assert_int_equal(uv_loop_init(&frozen_loop), 0);
    f->store = cs_store_new(&frozen_loop, &config);
    assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
    while (!f->open_done)
        (void)uv_run(&frozen_loop, UV_RUN_ONCE);
    assert_int_equal(f->open_status, 0);
    other.store = cs_store_new(&f->loop, &other_config);
    assert_int_equal(cs_store_open(other.store, open_cb, &other), 0);
    int64_t t0 = cs_test_now_ms();
    run_until(f, &other.open_done, 10000);
    assert_int_equal(other.open_status, 0);
    /* Not before the lease (2 heartbeats) ran out and a lease more passed
     * with the renewal unchanged. */
    assert_true(cs_test_now_ms() - t0 >= 400);
    assert_int_equal(admin_value(f->conninfo, "SELECT state FROM replicas WHERE id = 'r1'"), 5);

    Csched__V1__Run run = make_run(1, "job", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    cs_store_run_put(f->store, &run, write_cb, f);
    while (!f->fenced)
        (void)uv_run(&frozen_loop, UV_RUN_ONCE);
    assert_int_equal(f->last_write_status, -ESTALE);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 0);
    cs_store_close(f->store, closed_cb, f);
    while (!f->closed)
        (void)uv_run(&frozen_loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&frozen_loop), 0);
    cs_store_close(other.store, closed_cb, &other);
    run_until(f, &other.closed, 20000);
    cs_store_snapshot_free(f->snapshot);
    cs_store_snapshot_free(other.snapshot);
    f->snapshot = NULL;
    f->store = NULL;
}

static void test_store_snapshot_after_reopen(void **state)
{
    struct fixture *f = *state;
    char *argv[] = {"echo", "hi"};
    Csched__V1__Job job = make_job("alpha", argv, 2);
    Csched__V1__Job job2 = make_job("beta", argv, 1);
    Csched__V1__Run queued = make_run(1, "alpha", CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    Csched__V1__Run done = make_run(2, "alpha", CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    Csched__V1__Run__EnvEntry env = CSCHED__V1__RUN__ENV_ENTRY__INIT;
    Csched__V1__Run__EnvEntry *envp[] = {&env};
    Csched__V1__Attempt a1 = CSCHED__V1__ATTEMPT__INIT;
    Csched__V1__Attempt a2 = CSCHED__V1__ATTEMPT__INIT;
    Csched__V1__Event e1 = make_event(7, 1, "alpha");
    Csched__V1__Run *r;

    env.key = "K";
    env.value = "V";
    queued.env = envp;
    queued.n_env = 1;
    queued.idempotency_key = "key-1";
    a1.number = 1;
    a1.state = CSCHED__V1__RUN_STATE__RUN_STATE_FAILED;
    a1.outcome_case = CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL;
    a1.term_signal = 9;
    a2.number = 2;
    a2.state = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
    a2.minder_pid = 4242;
    store_open(f);
    cs_store_job_put(f->store, &job, 1, write_cb, f);
    cs_store_job_put(f->store, &job2, 1, write_cb, f);
    cs_store_run_put(f->store, &queued, write_cb, f);
    cs_store_run_put(f->store, &done, write_cb, f);
    cs_store_attempt_put(f->store, 1, &a1, "/state/1/1", write_cb, f);
    cs_store_attempt_put(f->store, 1, &a2, "/state/1/2", write_cb, f);
    cs_store_event_put(f->store, &e1, event_cb, f);
    cs_store_job_delete(f->store, "beta", write_cb, f);
    wait_writes(f, 8);
    assert_int_equal(f->writes_ok, 8);
    store_close(f);

    store_open(f);
    assert_int_equal(f->snapshot->n_jobs, 1);
    assert_string_equal(f->snapshot->jobs[0]->name, "alpha");
    assert_int_equal(f->snapshot->jobs[0]->n_command, 2);
    assert_string_equal(f->snapshot->jobs[0]->command[1], "hi");
    assert_int_equal(f->snapshot->jobs[0]->max_running, 3);
    assert_int_equal(f->snapshot->jobs[0]->updated_unix_ms, 2000);
    assert_int_equal(f->snapshot->n_active_runs, 1);
    r = f->snapshot->active_runs[0];
    assert_int_equal(r->id, 1);
    assert_int_equal(r->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    assert_string_equal(r->idempotency_key, "key-1");
    assert_int_equal(r->n_env, 1);
    assert_string_equal(r->env[0]->key, "K");
    assert_string_equal(r->env[0]->value, "V");
    assert_int_equal(r->n_attempts, 2);
    assert_int_equal(r->attempts[0]->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL);
    assert_int_equal(r->attempts[0]->term_signal, 9);
    assert_int_equal(r->attempts[1]->minder_pid, 4242);
    assert_int_equal(r->attempts[1]->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME__NOT_SET);
    assert_string_equal(f->snapshot->active_attempt_dirs[0], "/state/1/2");
    assert_int_equal(f->snapshot->max_run_id, 2);
    /* The database numbered the one event (put as 7) in its own order. */
    assert_int_equal(f->snapshot->max_event_seq, 1);
}

/* Reads runs' HOT update count until it reaches want (the closed store's
 * backend reports its counts as it exits, a moment after the close). */
static long long wait_hot_updates(const char *conninfo, long long want)
{
    long long hot = 0;
    for (int i = 0; i < 100 && hot < want; i++) {
        hot = admin_value(conninfo, "SELECT n_tup_hot_upd FROM pg_stat_user_tables"
                                    " WHERE relname = 'runs'");
        if (hot < want)
            (void)usleep(50 * 1000);
    }
    return hot;
}

/* A database made by 0001-0005 migrates on open; its active runs are still
 * found (now through runs_unended), and a run's updates before its end are
 * HOT: state is in no index any more. */
static void test_store_old_database_migrates_to_hot_updates(void **state)
{
    struct fixture *f = *state;
    char *sql = cs_store_migrate_sql(cs_store_migrations, 5, 0, 1000);
    Csched__V1__Run run = make_run(3, "alpha", CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);

    admin_exec(f->conninfo, cs_store_migrate_list_sql);
    admin_exec(f->conninfo, sql);
    free(sql);
    admin_exec(f->conninfo, "INSERT INTO runs (id, job_name, state, created_unix_ms, ended_unix_ms)"
                            " VALUES (1, 'alpha', 1, 1, 0), (2, 'alpha', 4, 1, 5)");
    store_open(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT max(version) FROM schema_migrations"),
                     newest_version());
    assert_int_equal(f->snapshot->n_active_runs, 1);
    assert_int_equal(f->snapshot->active_runs[0]->id, 1);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM pg_indexes WHERE tablename ="
                                              " 'runs' AND indexdef ~ '\\mstate\\M'"),
                     0);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM pg_class WHERE relname IN"
                                              " ('runs', 'attempts') AND 'fillfactor=80' ="
                                              " ANY (reloptions)"),
                     2);

    /* Inserted, then updated twice while it runs. */
    cs_store_run_put(f->store, &run, write_cb, f);
    wait_writes(f, 1);
    run.message = "first";
    cs_store_run_put(f->store, &run, write_cb, f);
    wait_writes(f, 2);
    run.message = "second";
    cs_store_run_put(f->store, &run, write_cb, f);
    wait_writes(f, 3);
    assert_int_equal(f->writes_ok, 3);
    store_close(f);
    assert_int_equal(wait_hot_updates(f->conninfo, 2), 2);
}

/* A database made by 0001-0006 migrates on open: each job's first run id
 * is its first run made since the job was (an older run with its name is a
 * deleted job's), or the next id for a job with none; and the same job
 * name and key may be on two runs. */
static void test_store_old_database_migrates_to_first_run_ids(void **state)
{
    struct fixture *f = *state;
    char *sql = cs_store_migrate_sql(cs_store_migrations, 6, 0, 1000);

    admin_exec(f->conninfo, cs_store_migrate_list_sql);
    admin_exec(f->conninfo, sql);
    free(sql);
    admin_exec(f->conninfo,
               "INSERT INTO jobs (name, spec, version, created_unix_ms, updated_unix_ms)"
               " VALUES ('alpha', '', 1, 100, 100), ('beta', '', 1, 100, 100);"
               "INSERT INTO runs (id, job_name, state, created_unix_ms, ended_unix_ms,"
               " idempotency_key) VALUES (1, 'alpha', 4, 50, 60, 'k'),"
               " (2, 'alpha', 4, 150, 160, 'k2'), (3, 'gone', 4, 170, 180, '')");
    store_open(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT first_run_id FROM jobs WHERE name = 'alpha'"),
                     2);
    assert_int_equal(admin_value(f->conninfo, "SELECT first_run_id FROM jobs WHERE name = 'beta'"),
                     4);
    admin_exec(f->conninfo, "INSERT INTO runs (id, job_name, state, created_unix_ms,"
                            " idempotency_key) VALUES (4, 'alpha', 1, 200, 'k')");
    store_close(f);
}

static void test_store_close_commits_pending_writes(void **state)
{
    struct fixture *f = *state;

    store_open(f);
    for (int64_t id = 1; id <= 30; id++) {
        Csched__V1__Event e = make_event(id, id, "c");

        cs_store_event_put(f->store, &e, event_cb, f);
    }
    store_close(f);
    assert_int_equal(f->writes_ok, 30);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events"), 30);
}

static void test_store_embedded_server_started_and_stopped(void **state)
{
    struct fixture *f = *state;
    char dir[] = "/tmp/cs-store-emb-XXXXXX";
    char pid_file[128];
    char *argv[] = {"true"};
    Csched__V1__Job job = make_job("emb", argv, 1);
    struct cs_store_config config = {.max_pending_writes = 100, .replica_id = STORE_TEST_REPLICA};

    assert_non_null(mkdtemp(dir));
    config.embedded_dir = dir;
    snprintf(pid_file, sizeof(pid_file), "%s/data/postmaster.pid", dir);
    for (int round = 0; round < 2; round++) {
        f->open_done = false;
        f->store = cs_store_new(&f->loop, &config);
        assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
        run_until(f, &f->open_done, 60000);
        assert_int_equal(f->open_status, 0);
        assert_int_equal(access(pid_file, F_OK), 0);
        assert_int_equal(f->snapshot->n_jobs, (size_t)round);
        cs_store_job_put(f->store, &job, 1, write_cb, f);
        store_close(f);
        assert_int_equal(f->writes_ok, round + 1);
        assert_int_not_equal(access(pid_file, F_OK), 0);
    }
    assert_int_equal(cs_test_rmtree(dir), 0);
}

/* A TCP port nobody listens on right now. */
static int free_port(void)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t len = sizeof(sin);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    close(fd);
    return ntohs(sin.sin_port);
}

static void test_store_connects_by_host_name(void **state)
{
    struct fixture *f = *state;
    char dir[] = "/tmp/cs-store-tcp-XXXXXX";
    struct cs_pg_embedded_options opts = {.fsync_off = true, .tcp_port = free_port()};
    struct read_result r = {0};
    char conninfo[512];

    assert_non_null(mkdtemp(dir));
    /* The shared test cluster listens on no TCP port: this one does, and
     * is the embedded server's (it outlives a test killed at its TIMEOUT,
     * which is why the other tests do not use it). */
    assert_int_equal(cs_pg_embedded_start(dir, &opts, conninfo, sizeof(conninfo)), 0);
    /* "localhost" is resolved on the pool (uv_getaddrinfo); libpq then tries
     * each address, and only 127.0.0.1 answers. TCP needs the password too,
     * which the embedded server's conninfo ends with. */
    const char *pw = strstr(conninfo, " password=");
    assert_non_null(pw);
    snprintf(f->conninfo, sizeof(f->conninfo), "postgresql://postgres:%s@localhost:%d/postgres",
             pw + strlen(" password="), opts.tcp_port);
    store_open(f);
    cs_store_run_get(f->store, 1, run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, -ENOENT);
    store_close(f);
    assert_int_equal(cs_pg_embedded_stop(dir, NULL), 0);
    assert_int_equal(cs_test_rmtree(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_open_migrates_once, store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_store_standby_takes_over_a_frozen_active, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_waits_for_a_server_from_before_replicas,
                                        store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_store_second_replica_waits_as_standby, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_snapshot_after_reopen, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_old_database_migrates_to_hot_updates,
                                        store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_store_old_database_migrates_to_first_run_ids,
                                        store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_store_close_commits_pending_writes, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_embedded_server_started_and_stopped, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_connects_by_host_name, store_setup,
                                        store_teardown),
    };

    return STORE_RUN_TESTS(tests);
}
