/* The store against a real PostgreSQL: a throwaway embedded cluster (fsync
 * off) in a temp dir, a database per test, a real libuv loop and the real
 * clock. Checks migrations, writes and reads, group commit, replay after the
 * database restarts, and the loop's lateness under a burst of writes. */
#include <arpa/inet.h>
#include <errno.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "pg_embedded.h"
#include "store.h"
#include "util.h"

static char cluster_dir[] = "/tmp/cs-store-test-XXXXXX";
static char cluster_conninfo[512];
static int db_counter;

/* One test's database, loop and store. */
struct fixture {
    char conninfo[640];
    uv_loop_t loop;
    struct cs_store *store;
    struct cs_store_snapshot *snapshot;
    int open_status;
    bool open_done;
    bool closed;
    int writes_ok;
    int writes_failed;
    int last_write_status;
};

static PGconn *admin_connect(const char *conninfo)
{
    PGconn *conn = PQconnectdb(conninfo);

    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    return conn;
}

static void admin_exec(const char *conninfo, const char *sql)
{
    PGconn *conn = admin_connect(conninfo);
    PGresult *res = PQexec(conn, sql);

    if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(conn));
    PQclear(res);
    PQfinish(conn);
}

static void admin_must(PGconn *admin, const char *sql)
{
    PGresult *res = PQexec(admin, sql);

    if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(admin));
    PQclear(res);
}

/* The first column of the first row of sql, as a number. */
static long long admin_value(const char *conninfo, const char *sql)
{
    PGconn *conn = admin_connect(conninfo);
    PGresult *res = PQexec(conn, sql);
    long long v;

    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
        fail_msg("%s: %s", sql, PQerrorMessage(conn));
    v = atoll(PQgetvalue(res, 0, 0));
    PQclear(res);
    PQfinish(conn);
    return v;
}

static int group_setup(void **state)
{
    /* CS_STORE_TEST_FSYNC=1 measures with a durable cluster instead. */
    struct cs_pg_embedded_options opts = {.fsync_off = getenv("CS_STORE_TEST_FSYNC") == NULL};

    if (mkdtemp(cluster_dir) == NULL)
        return -1;
    return cs_pg_embedded_start(cluster_dir, &opts, cluster_conninfo, sizeof(cluster_conninfo));
}

static int group_teardown(void **state)
{
    char cmd[256];
    int rc = cs_pg_embedded_stop(cluster_dir, NULL);

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cluster_dir);
    if (system(cmd) != 0)
        return -1;
    return rc;
}

static int setup(void **state)
{
    struct fixture *f = cs_xcalloc(1, sizeof(*f));
    char sql[64];

    snprintf(sql, sizeof(sql), "CREATE DATABASE t%d", ++db_counter);
    admin_exec(cluster_conninfo, sql);
    snprintf(f->conninfo, sizeof(f->conninfo), "%s dbname=t%d", cluster_conninfo, db_counter);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    *state = f;
    return 0;
}

static void run_until(struct fixture *f, bool *flag, int timeout_ms)
{
    int64_t deadline = cs_now_mono_ns() + (int64_t)timeout_ms * 1000000;

    while (!*flag) {
        if (cs_now_mono_ns() > deadline)
            fail_msg("timed out after %d ms", timeout_ms);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        if (!*flag)
            usleep(200);
    }
}

static void open_cb(void *arg, int status, struct cs_store_snapshot *snapshot)
{
    struct fixture *f = arg;

    f->open_status = status;
    f->snapshot = snapshot;
    f->open_done = true;
}

static void store_open(struct fixture *f)
{
    struct cs_store_config config = {.database_url = f->conninfo, .max_pending_writes = 50000};

    f->open_done = false;
    f->store = cs_store_new(&f->loop, &config);
    assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
    run_until(f, &f->open_done, 20000);
    assert_int_equal(f->open_status, 0);
    assert_non_null(f->snapshot);
}

static void closed_cb(void *arg)
{
    struct fixture *f = arg;

    f->closed = true;
}

static void store_close(struct fixture *f)
{
    f->closed = false;
    cs_store_close(f->store, closed_cb, f);
    run_until(f, &f->closed, 20000);
    f->store = NULL;
    cs_store_snapshot_free(f->snapshot);
    f->snapshot = NULL;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    struct cs_pg_embedded_options opts = {.fsync_off = true};
    char conninfo[512];

    if (f->store != NULL)
        store_close(f);
    cs_store_snapshot_free(f->snapshot);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    free(f);
    /* A test that failed while the cluster was stopped must not fail the
     * next ones too. */
    return cs_pg_embedded_start(cluster_dir, &opts, conninfo, sizeof(conninfo));
}

static void write_cb(void *arg, int status)
{
    struct fixture *f = arg;

    f->last_write_status = status;
    if (status == 0)
        f->writes_ok++;
    else
        f->writes_failed++;
}

/* Runs the loop until n write callbacks have run. */
static void wait_writes(struct fixture *f, int n)
{
    int64_t deadline = cs_now_mono_ns() + 30000000000LL;

    while (f->writes_ok + f->writes_failed < n) {
        if (cs_now_mono_ns() > deadline)
            fail_msg("only %d of %d writes answered", f->writes_ok + f->writes_failed, n);
        uv_run(&f->loop, UV_RUN_ONCE);
    }
}

static Csched__V1__Job make_job(const char *name, char **argv, size_t argc)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;

    job.name = (char *)name;
    job.command = argv;
    job.n_command = argc;
    job.max_running = 3;
    job.version = 1;
    job.created_unix_ms = 1000;
    job.updated_unix_ms = 2000;
    return job;
}

static Csched__V1__Run make_run(int64_t id, const char *job, Csched__V1__RunState state)
{
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;

    run.id = id;
    run.job_name = (char *)job;
    run.state = state;
    run.created_unix_ms = 1000 + id;
    if (state >= CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED) {
        run.outcome_case = CSCHED__V1__RUN__OUTCOME_EXIT_CODE;
        run.exit_code = (int32_t)id % 3;
        run.ended_unix_ms = 5000 + id;
    }
    return run;
}

static Csched__V1__Event make_event(int64_t seq, int64_t run_id, const char *job)
{
    Csched__V1__Event e = CSCHED__V1__EVENT__INIT;

    e.seq = seq;
    e.at_unix_ms = 100 + seq;
    e.run_id = run_id;
    e.job_name = (char *)job;
    e.state = CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED;
    return e;
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
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM schema_migrations"), 1);
    store_open(f);
    store_close(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM schema_migrations"), 1);
    assert_int_equal(admin_value(f->conninfo, "SELECT max(version) FROM schema_migrations"), 1);
}

static void test_store_two_servers_migrate_once(void **state)
{
    struct fixture *f = *state;
    struct fixture other = {0};
    struct cs_store_config config = {.database_url = f->conninfo};

    /* Two stores open the same empty database at once: the advisory lock
     * lets one migrate, and the other then finds nothing to do. */
    other.open_done = false;
    f->store = cs_store_new(&f->loop, &config);
    other.store = cs_store_new(&f->loop, &config);
    assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
    assert_int_equal(cs_store_open(other.store, open_cb, &other), 0);
    run_until(f, &f->open_done, 20000);
    run_until(f, &other.open_done, 20000);
    assert_int_equal(f->open_status, 0);
    assert_int_equal(other.open_status, 0);
    cs_store_close(other.store, closed_cb, &other);
    run_until(f, &other.closed, 20000);
    cs_store_snapshot_free(other.snapshot);
    store_close(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM schema_migrations"), 1);
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
    cs_store_job_put(f->store, &job, write_cb, f);
    cs_store_job_put(f->store, &job2, write_cb, f);
    cs_store_run_put(f->store, &queued, write_cb, f);
    cs_store_run_put(f->store, &done, write_cb, f);
    cs_store_attempt_put(f->store, 1, &a1, "/state/1/1", write_cb, f);
    cs_store_attempt_put(f->store, 1, &a2, "/state/1/2", write_cb, f);
    cs_store_event_put(f->store, &e1, write_cb, f);
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
    assert_int_equal(f->snapshot->max_event_seq, 7);
}

struct read_result {
    bool done;
    int status;
    Csched__V1__Run *run;
    Csched__V1__Run **runs;
    Csched__V1__Event **events;
    size_t n;
};

static void run_cb(void *arg, int status, Csched__V1__Run *run)
{
    struct read_result *r = arg;

    r->status = status;
    r->run = run;
    r->done = true;
}

static void runs_cb(void *arg, int status, Csched__V1__Run **runs, size_t n)
{
    struct read_result *r = arg;

    r->status = status;
    r->runs = runs;
    r->n = n;
    r->done = true;
}

static void events_cb(void *arg, int status, Csched__V1__Event **events, size_t n)
{
    struct read_result *r = arg;

    r->status = status;
    r->events = events;
    r->n = n;
    r->done = true;
}

static void list_runs(struct fixture *f, const struct cs_store_run_filter *filter,
                      struct read_result *r)
{
    memset(r, 0, sizeof(*r));
    cs_store_run_list(f->store, filter, runs_cb, r);
    run_until(f, &r->done, 10000);
    assert_int_equal(r->status, 0);
}

/* Runs 1..10: odd ones of job "odd" (succeeded), even ones of "even"
 * (queued). */
static void put_ten_runs(struct fixture *f)
{
    for (int64_t id = 1; id <= 10; id++) {
        Csched__V1__Run run = make_run(id, id % 2 ? "odd" : "even",
                                       id % 2 ? CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED
                                              : CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
        Csched__V1__Attempt a = CSCHED__V1__ATTEMPT__INIT;

        cs_store_run_put(f->store, &run, write_cb, f);
        a.number = 1;
        a.state = run.state;
        cs_store_attempt_put(f->store, id, &a, NULL, write_cb, f);
    }
}

static void test_store_run_list_filters_and_pages(void **state)
{
    struct fixture *f = *state;
    struct cs_store_run_filter all = {.limit = 100};
    struct cs_store_run_filter page = {.limit = 4, .before_id = 0};
    struct cs_store_run_filter odd = {.job_name = "odd", .limit = 100};
    struct cs_store_run_filter queued = {.state = CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED,
                                         .limit = 2};
    struct read_result r;

    store_open(f);
    put_ten_runs(f);
    list_runs(f, &all, &r);
    assert_int_equal(r.n, 10);
    assert_int_equal(r.runs[0]->id, 10);
    assert_int_equal(r.runs[9]->id, 1);
    assert_int_equal(r.runs[0]->n_attempts, 1);
    cs_store_runs_free(r.runs, r.n);

    list_runs(f, &page, &r);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.runs[3]->id, 7);
    page.before_id = r.runs[3]->id;
    cs_store_runs_free(r.runs, r.n);
    list_runs(f, &page, &r);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.runs[0]->id, 6);
    assert_int_equal(r.runs[3]->id, 3);
    cs_store_runs_free(r.runs, r.n);

    list_runs(f, &odd, &r);
    assert_int_equal(r.n, 5);
    for (size_t i = 0; i < r.n; i++) {
        assert_string_equal(r.runs[i]->job_name, "odd");
        assert_int_equal(r.runs[i]->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    }
    cs_store_runs_free(r.runs, r.n);

    list_runs(f, &queued, &r);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.runs[0]->id, 10);
    assert_int_equal(r.runs[1]->id, 8);
    assert_int_equal(r.runs[1]->state, CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    cs_store_runs_free(r.runs, r.n);
    assert_int_equal(f->writes_ok, 20);
}

static void test_store_event_list_after_seq(void **state)
{
    struct fixture *f = *state;
    struct read_result r = {0};

    store_open(f);
    for (int64_t seq = 1; seq <= 20; seq++) {
        Csched__V1__Event e = make_event(seq, seq, seq % 2 ? "odd" : "even");

        if (seq == 5) {
            e.outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
            e.exit_code = 3;
            e.message = "done";
        }
        cs_store_event_put(f->store, &e, write_cb, f);
    }
    cs_store_event_list(f->store, 4, NULL, 3, events_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(f->writes_ok, 20);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.events[0]->seq, 5);
    assert_int_equal(r.events[0]->outcome_case, CSCHED__V1__EVENT__OUTCOME_EXIT_CODE);
    assert_int_equal(r.events[0]->exit_code, 3);
    assert_string_equal(r.events[0]->message, "done");
    assert_int_equal(r.events[2]->seq, 7);
    cs_store_events_free(r.events, r.n);

    memset(&r, 0, sizeof(r));
    cs_store_event_list(f->store, 10, "even", 100, events_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.n, 5);
    assert_int_equal(r.events[0]->seq, 12);
    assert_string_equal(r.events[4]->job_name, "even");
    cs_store_events_free(r.events, r.n);

    memset(&r, 0, sizeof(r));
    cs_store_event_list(f->store, 20, NULL, 100, events_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.n, 0);
    cs_store_events_free(r.events, r.n);
}

static void test_store_find_by_key_and_get(void **state)
{
    struct fixture *f = *state;
    Csched__V1__Run run = make_run(3, "alpha", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    struct read_result r = {0};

    run.idempotency_key = "abc";
    store_open(f);
    cs_store_run_put(f->store, &run, write_cb, f);
    /* Reads queued after a write see it. */
    cs_store_run_find_by_key(f->store, "alpha", "abc", run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.run->id, 3);
    protobuf_c_message_free_unpacked(&r.run->base, NULL);

    memset(&r, 0, sizeof(r));
    cs_store_run_find_by_key(f->store, "alpha", "other", run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, -ENOENT);
    assert_null(r.run);

    memset(&r, 0, sizeof(r));
    cs_store_run_get(f->store, 3, run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.run->job_name, "alpha");
    assert_int_equal(r.run->n_attempts, 0);
    protobuf_c_message_free_unpacked(&r.run->base, NULL);

    memset(&r, 0, sizeof(r));
    cs_store_run_get(f->store, 99, run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, -ENOENT);
}

static void test_store_same_writes_twice_same_rows(void **state)
{
    struct fixture *f = *state;

    store_open(f);
    for (int round = 0; round < 2; round++) {
        put_ten_runs(f);
        for (int64_t seq = 1; seq <= 10; seq++) {
            Csched__V1__Event e = make_event(seq, seq, "odd");

            cs_store_event_put(f->store, &e, write_cb, f);
        }
        wait_writes(f, 30 * (round + 1));
    }
    assert_int_equal(f->writes_ok, 60);
    store_close(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 10);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM attempts"), 10);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events"), 10);
    /* Odd ids 1..9 succeeded with exit code id % 3. */
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs WHERE exit_code = 1"), 2);
}

static void test_store_one_turn_is_one_transaction(void **state)
{
    struct fixture *f = *state;

    store_open(f);
    for (int64_t id = 1; id <= 100; id++) {
        Csched__V1__Run run = make_run(id, "g", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
        Csched__V1__Event e = make_event(id, id, "g");

        cs_store_run_put(f->store, &run, write_cb, f);
        cs_store_event_put(f->store, &e, write_cb, f);
    }
    wait_writes(f, 200);
    assert_int_equal(f->writes_ok, 200);
    /* Rows written by one transaction share its id (xmin). */
    assert_int_equal(admin_value(f->conninfo, "SELECT count(DISTINCT xmin::text) FROM (SELECT xmin"
                                              " FROM runs UNION ALL SELECT xmin FROM events) x"),
                     1);
    for (int64_t id = 101; id <= 110; id++) {
        Csched__V1__Run run = make_run(id, "g", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);

        cs_store_run_put(f->store, &run, write_cb, f);
        wait_writes(f, 200 + (int)(id - 100));
    }
    assert_int_equal(admin_value(f->conninfo, "SELECT count(DISTINCT xmin::text) FROM runs"), 11);
}

static void test_store_sql_error_fails_only_its_batch(void **state)
{
    struct fixture *f = *state;
    Csched__V1__Attempt a = CSCHED__V1__ATTEMPT__INIT;
    Csched__V1__Run run = make_run(1, "x", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);

    store_open(f);
    a.number = 1;
    /* No run 77: the foreign key refuses the attempt, and its batch. */
    cs_store_run_put(f->store, &run, write_cb, f);
    cs_store_attempt_put(f->store, 77, &a, NULL, write_cb, f);
    wait_writes(f, 2);
    assert_int_equal(f->writes_failed, 2);
    assert_int_equal(f->last_write_status, -EIO);
    cs_store_run_put(f->store, &run, write_cb, f);
    wait_writes(f, 3);
    assert_int_equal(f->writes_ok, 1);
    assert_true(cs_store_is_accepting(f->store));
}

static void test_store_writes_survive_database_restart(void **state)
{
    struct fixture *f = *state;
    struct cs_pg_embedded_options opts = {.fsync_off = true};
    struct read_result r = {0};
    char conninfo[512];
    int64_t deadline;

    store_open(f);
    for (int64_t id = 1; id <= 50; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);

        cs_store_run_put(f->store, &run, write_cb, f);
    }
    /* One turn sends the first batch; the server goes away before (or
     * while) answering. Thousands of writes queued while it is away go out
     * in bounded batches once it is back. */
    uv_run(&f->loop, UV_RUN_NOWAIT);
    assert_int_equal(cs_pg_embedded_stop(cluster_dir, NULL), 0);
    for (int64_t id = 51; id <= 5050; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);

        cs_store_run_put(f->store, &run, write_cb, f);
    }
    deadline = cs_now_mono_ns() + 5000000000LL;
    while (cs_store_is_accepting(f->store) && cs_now_mono_ns() < deadline)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_false(cs_store_is_accepting(f->store));
    /* Reads fail fast while the database is away. */
    cs_store_run_get(f->store, 1, run_cb, &r);
    run_until(f, &r.done, 1000);
    assert_int_equal(r.status, -ENOTCONN);
    assert_int_equal(f->writes_failed, 0);
    assert_true(f->writes_ok < 5050);

    assert_int_equal(cs_pg_embedded_start(cluster_dir, &opts, conninfo, sizeof(conninfo)), 0);
    wait_writes(f, 5050);
    assert_int_equal(f->writes_ok, 5050);
    assert_int_equal(f->writes_failed, 0);
    deadline = cs_now_mono_ns() + 5000000000LL;
    while (!cs_store_is_accepting(f->store) && cs_now_mono_ns() < deadline)
        uv_run(&f->loop, UV_RUN_ONCE);
    assert_true(cs_store_is_accepting(f->store));
    store_close(f);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 5050);
}

static void test_store_open_survives_connection_killed(void **state)
{
    struct fixture *f = *state;
    struct cs_store_config config = {.database_url = f->conninfo};
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
    for (int i = 0; i < 40; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(5000);
    }
    assert_false(f->open_done);
    admin_must(admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                      " WHERE application_name = 'cschedd' AND datname = current_database()");
    for (int i = 0; i < 60; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(5000);
    }
    assert_false(f->open_done);
    admin_must(admin, "COMMIT");
    PQfinish(admin);
    run_until(f, &f->open_done, 20000);
    assert_int_equal(f->open_status, 0);
    assert_non_null(f->snapshot);
    assert_true(cs_store_is_accepting(f->store));
}

static void test_store_close_commits_pending_writes(void **state)
{
    struct fixture *f = *state;

    store_open(f);
    for (int64_t id = 1; id <= 30; id++) {
        Csched__V1__Event e = make_event(id, id, "c");

        cs_store_event_put(f->store, &e, write_cb, f);
    }
    store_close(f);
    assert_int_equal(f->writes_ok, 30);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events"), 30);
}

static void test_store_inflight_batch_replayed_after_connection_killed(void **state)
{
    struct fixture *f = *state;
    Csched__V1__Run first = make_run(1, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    PGconn *admin;

    store_open(f);
    cs_store_run_put(f->store, &first, write_cb, f);
    wait_writes(f, 1);
    /* Hold a lock the store's next batch waits for, so that the batch is in
     * flight, sent but not committed, when its connection is killed. */
    admin = admin_connect(f->conninfo);
    admin_must(admin, "BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE");
    for (int64_t id = 2; id <= 51; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);

        cs_store_run_put(f->store, &run, write_cb, f);
    }
    for (int i = 0; i < 20; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(5000);
    }
    assert_int_equal(f->writes_ok, 1);
    admin_must(admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                      " WHERE application_name = 'cschedd' AND datname = current_database()");
    /* The store reconnects and sends the batch again, which waits for the
     * lock again: nothing is answered, and nothing fails. */
    for (int i = 0; i < 60; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(5000);
    }
    assert_int_equal(f->writes_ok, 1);
    assert_int_equal(f->writes_failed, 0);
    admin_must(admin, "COMMIT");
    PQfinish(admin);
    wait_writes(f, 51);
    for (int i = 0; i < 10; i++)
        uv_run(&f->loop, UV_RUN_NOWAIT);
    assert_int_equal(f->writes_ok, 51);
    assert_int_equal(f->writes_failed, 0);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 51);
}

static Csched__V1__Attempt make_attempt(uint32_t number, Csched__V1__RunState state)
{
    Csched__V1__Attempt a = CSCHED__V1__ATTEMPT__INIT;

    a.number = number;
    a.state = state;
    a.minder_pid = 7;
    return a;
}

static void test_store_same_run_put_thrice_one_row(void **state)
{
    struct fixture *f = *state;
    Csched__V1__Run queued = make_run(1, "c", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    Csched__V1__Run running = make_run(1, "c", CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    Csched__V1__Run done = make_run(1, "c", CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    Csched__V1__Attempt starting = make_attempt(1, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    Csched__V1__Attempt a_running = make_attempt(1, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    Csched__V1__Attempt a_done = make_attempt(1, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    struct read_result r = {0};

    running.started_unix_ms = 3000;
    done.started_unix_ms = 3000;
    done.message = "done";
    a_done.outcome_case = CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE;
    a_done.exit_code = 0;
    a_done.user_cpu_ms = 12;
    store_open(f);
    cs_store_run_put(f->store, &queued, write_cb, f);
    cs_store_attempt_put(f->store, 1, &starting, "/state/1/1", write_cb, f);
    cs_store_run_put(f->store, &running, write_cb, f);
    cs_store_attempt_put(f->store, 1, &a_running, NULL, write_cb, f);
    cs_store_run_put(f->store, &done, write_cb, f);
    cs_store_attempt_put(f->store, 1, &a_done, "", write_cb, f);
    wait_writes(f, 6);
    assert_int_equal(f->writes_ok, 6);

    cs_store_run_get(f->store, 1, run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(r.run->started_unix_ms, 3000);
    assert_int_equal(r.run->ended_unix_ms, 5001);
    assert_int_equal(r.run->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_string_equal(r.run->message, "done");
    assert_int_equal(r.run->n_attempts, 1);
    assert_int_equal(r.run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(r.run->attempts[0]->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE);
    assert_int_equal(r.run->attempts[0]->user_cpu_ms, 12);
    protobuf_c_message_free_unpacked(&r.run->base, NULL);
    /* One row version each: the three puts became one insert, not an insert
     * and two updates. The attempt keeps the directory of its first put. */
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(admin_value(f->conninfo, "SELECT (ctid = '(0,1)'::tid)::int FROM runs"), 1);
    assert_int_equal(admin_value(f->conninfo, "SELECT (ctid = '(0,1)'::tid)::int FROM attempts"),
                     1);
    assert_int_equal(
        admin_value(f->conninfo, "SELECT count(*) FROM attempts WHERE attempt_dir = '/state/1/1'"),
        1);
}

static void test_store_event_text_round_trips(void **state)
{
    static const char *const texts[] = {
        "it's \"quoted\"",
        "a,b,c",
        "{braces}",
        "{\"a\",NULL}",
        "back\\slash\\",
        "two\nlines\r\n",
        "tab\there",
        "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89",
        "",
        "NULL",
        " padded ",
        "\\x00ff",
    };
    const size_t n = sizeof(texts) / sizeof(texts[0]);
    struct fixture *f = *state;
    Csched__V1__Event again = make_event(1, 1, "again");
    struct read_result r = {0};

    store_open(f);
    for (size_t i = 0; i < n; i++) {
        Csched__V1__Event e = make_event((int64_t)i + 1, 40, texts[(i + 1) % n]);

        e.message = (char *)texts[i];
        e.attempt = (uint32_t)i;
        if (i % 3 == 1) {
            e.outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
            e.exit_code = -(int32_t)i;
        } else if (i % 3 == 2) {
            e.outcome_case = CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL;
            e.term_signal = (int32_t)i;
        }
        cs_store_event_put(f->store, &e, write_cb, f);
    }
    /* The same seq again in the same batch: the first stays. */
    again.message = "second";
    cs_store_event_put(f->store, &again, write_cb, f);
    cs_store_event_list(f->store, 0, NULL, 100, events_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(f->writes_ok, (int)n + 1);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.n, n);
    for (size_t i = 0; i < n; i++) {
        const Csched__V1__Event *e = r.events[i];

        assert_int_equal(e->seq, (int64_t)i + 1);
        assert_string_equal(e->message, texts[i]);
        assert_string_equal(e->job_name, texts[(i + 1) % n]);
        assert_int_equal(e->attempt, i);
        assert_int_equal(e->run_id, 40);
        assert_int_equal(e->outcome_case, i % 3 == 0   ? CSCHED__V1__EVENT__OUTCOME__NOT_SET
                                          : i % 3 == 1 ? CSCHED__V1__EVENT__OUTCOME_EXIT_CODE
                                                       : CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL);
        if (i % 3 == 1)
            assert_int_equal(e->exit_code, -(int32_t)i);
        if (i % 3 == 2)
            assert_int_equal(e->term_signal, i);
    }
    cs_store_events_free(r.events, r.n);

    /* And through a job filter whose name needs quoting in any text form. */
    memset(&r, 0, sizeof(r));
    cs_store_event_list(f->store, 0, texts[4], 100, events_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.events[0]->message, texts[3]);
    cs_store_events_free(r.events, r.n);
}

static void put_job(struct fixture *f, const char *name, uint64_t version)
{
    char *argv[] = {"true"};
    Csched__V1__Job job = make_job(name, argv, 1);

    job.version = version;
    cs_store_job_put(f->store, &job, write_cb, f);
}

/* One batch: jobs put and deleted in every order, 40 runs each going
 * through three states with an attempt and three events, and reads in the
 * middle that see exactly what was queued before them. */
static void test_store_batch_mixes_tables_and_reads(void **state)
{
    struct fixture *f = *state;
    struct read_result mid = {0};
    struct read_result mid_events = {0};
    struct read_result jobs_gone = {0};

    store_open(f);
    put_job(f, "a", 1);
    put_job(f, "b", 1);
    cs_store_job_delete(f->store, "b", write_cb, f);
    cs_store_job_delete(f->store, "c", write_cb, f);
    put_job(f, "c", 1);
    put_job(f, "d", 1);
    cs_store_job_delete(f->store, "d", write_cb, f);
    put_job(f, "d", 2);
    for (int64_t id = 1; id <= 40; id++) {
        Csched__V1__Run run = make_run(id, "a", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
        Csched__V1__Attempt a = make_attempt(1, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
        Csched__V1__Event e = make_event(3 * id - 2, id, "a");
        char dir[32];

        snprintf(dir, sizeof(dir), "/s/%lld", (long long)id);
        cs_store_run_put(f->store, &run, write_cb, f);
        cs_store_event_put(f->store, &e, write_cb, f);
        cs_store_attempt_put(f->store, id, &a, dir, write_cb, f);
        run.state = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
        cs_store_run_put(f->store, &run, write_cb, f);
        e.seq = 3 * id - 1;
        cs_store_event_put(f->store, &e, write_cb, f);
    }
    cs_store_run_get(f->store, 20, run_cb, &mid);
    cs_store_event_list(f->store, 0, NULL, 1000, events_cb, &mid_events);
    for (int64_t id = 1; id <= 40; id++) {
        Csched__V1__Run run = make_run(id, "a", CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
        Csched__V1__Attempt a = make_attempt(1, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
        Csched__V1__Event e = make_event(3 * id, id, "a");

        cs_store_attempt_put(f->store, id, &a, NULL, write_cb, f);
        cs_store_run_put(f->store, &run, write_cb, f);
        cs_store_event_put(f->store, &e, write_cb, f);
    }
    put_job(f, "a", 3);
    cs_store_job_delete(f->store, "c", write_cb, f);
    put_job(f, "c", 4);
    wait_writes(f, 11 + 40 * 8);
    assert_int_equal(f->writes_ok, 11 + 40 * 8);
    run_until(f, &mid.done, 10000);
    run_until(f, &mid_events.done, 10000);

    assert_int_equal(mid.status, 0);
    assert_int_equal(mid.run->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    assert_int_equal(mid.run->n_attempts, 1);
    assert_int_equal(mid.run->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
    protobuf_c_message_free_unpacked(&mid.run->base, NULL);
    assert_int_equal(mid_events.n, 80);
    cs_store_events_free(mid_events.events, mid_events.n);

    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs WHERE state = 5"), 40);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM attempts WHERE state = 5"
                                              " AND attempt_dir = '/s/' || run_id"),
                     40);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events"), 120);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM jobs"), 3);
    assert_int_equal(admin_value(f->conninfo, "SELECT version FROM jobs WHERE name = 'a'"), 3);
    assert_int_equal(admin_value(f->conninfo, "SELECT version FROM jobs WHERE name = 'c'"), 4);
    assert_int_equal(admin_value(f->conninfo, "SELECT version FROM jobs WHERE name = 'd'"), 2);
    /* Still one transaction. */
    assert_int_equal(admin_value(f->conninfo,
                                 "SELECT count(DISTINCT xmin::text) FROM (SELECT xmin FROM runs"
                                 " UNION ALL SELECT xmin FROM attempts UNION ALL SELECT xmin"
                                 " FROM events UNION ALL SELECT xmin FROM jobs) x"),
                     1);

    /* A delete after a put in one batch wins too. */
    put_job(f, "a", 5);
    cs_store_job_delete(f->store, "a", write_cb, f);
    cs_store_run_get(f->store, 99, run_cb, &jobs_gone);
    wait_writes(f, 13 + 40 * 8);
    run_until(f, &jobs_gone.done, 10000);
    assert_int_equal(jobs_gone.status, -ENOENT);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM jobs WHERE name = 'a'"), 0);
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
        cs_store_event_put(f->store, &e, write_cb, f);
    }
    wait_writes(f, 11);
    /* As in the test above: the batch is in flight when its connection is
     * killed, and is sent again, coalesced again, after reconnecting. */
    admin = admin_connect(f->conninfo);
    admin_must(admin, "BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE");
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
        cs_store_event_put(f->store, &e, write_cb, f);
    }
    /* Events already stored, sent again: they stay as they were. */
    for (int64_t seq = 1; seq <= 10; seq++) {
        Csched__V1__Event e = make_event(seq, 1, "r");

        e.message = "again";
        cs_store_event_put(f->store, &e, write_cb, f);
    }
    for (int i = 0; i < 20; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(5000);
    }
    assert_int_equal(f->writes_ok, 11);
    admin_must(admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                      " WHERE application_name = 'cschedd' AND datname = current_database()");
    for (int i = 0; i < 60; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(5000);
    }
    assert_int_equal(f->writes_ok, 11);
    assert_int_equal(f->writes_failed, 0);
    admin_must(admin, "COMMIT");
    PQfinish(admin);
    wait_writes(f, n_writes);
    assert_int_equal(f->writes_ok, n_writes);
    assert_int_equal(f->writes_failed, 0);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs"), 31);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs WHERE state = 3"), 30);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM attempts WHERE state = 3"
                                              " AND attempt_dir = '/r/' || run_id"),
                     30);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events"), 40);
    assert_int_equal(
        admin_value(f->conninfo, "SELECT count(*) FROM events WHERE message = 'first'"), 10);
    /* The same writes once more: nothing changes. */
    for (int64_t id = 2; id <= 31; id++) {
        Csched__V1__Run run = make_run(id, "r", CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);

        cs_store_run_put(f->store, &run, write_cb, f);
    }
    wait_writes(f, n_writes + 30);
    assert_int_equal(f->writes_failed, 0);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM runs WHERE state = 3"), 30);
}

static void test_store_embedded_server_started_and_stopped(void **state)
{
    struct fixture *f = *state;
    char dir[] = "/tmp/cs-store-emb-XXXXXX";
    char pid_file[128];
    char cmd[128];
    char *argv[] = {"true"};
    Csched__V1__Job job = make_job("emb", argv, 1);
    struct cs_store_config config = {.max_pending_writes = 100};

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
        cs_store_job_put(f->store, &job, write_cb, f);
        store_close(f);
        assert_int_equal(f->writes_ok, round + 1);
        assert_int_not_equal(access(pid_file, F_OK), 0);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
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
    char cmd[128];

    assert_non_null(mkdtemp(dir));
    assert_int_equal(cs_pg_embedded_start(dir, &opts, conninfo, sizeof(conninfo)), 0);
    /* "localhost" is resolved on the pool (uv_getaddrinfo); libpq then tries
     * each address, and only 127.0.0.1 answers. */
    snprintf(f->conninfo, sizeof(f->conninfo), "postgresql://postgres@localhost:%d/postgres",
             opts.tcp_port);
    store_open(f);
    cs_store_run_get(f->store, 1, run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, -ENOENT);
    store_close(f);
    assert_int_equal(cs_pg_embedded_stop(dir, NULL), 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_store_large_job_keeps_loop_free(void **state)
{
    struct fixture *f = *state;
    size_t size = (size_t)7 << 19;
    char *shell = cs_xmalloc(size + 1);
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    int64_t worst_ns = 0;

    memset(shell, ':', size);
    shell[size] = '\0';
    job.name = "large";
    job.shell = shell;
    store_open(f);
    /* The CPU the loop thread spends in any one turn (the put, the send,
     * the commit) stays small; waiting for the database is not counted. */
    for (int round = 0; round < 3; round++) {
        int64_t turn = thread_cpu_ns();

        cs_store_job_put(f->store, &job, write_cb, f);
        while (f->writes_ok + f->writes_failed < round + 1) {
            uv_run(&f->loop, UV_RUN_ONCE);
            turn = thread_cpu_ns() - turn;
            if (turn > worst_ns)
                worst_ns = turn;
            turn = thread_cpu_ns();
        }
    }
    free(shell);
    assert_int_equal(f->writes_ok, 3);
    store_close(f);
    store_open(f);
    assert_int_equal(f->snapshot->n_jobs, 1);
    assert_int_equal(strlen(f->snapshot->jobs[0]->shell), size);
    printf("3.5 MiB job_put: longest loop turn %.1f ms of CPU\n", (double)worst_ns / 1e6);
    assert_true(worst_ns < 100000000);
}

/* The loop-lag probe of the spec, against a burst of writes. */
struct lag_probe {
    uv_timer_t timer;
    int64_t due_ns;
    int64_t *late_us;
    size_t n;
    size_t cap;
};

static void probe_tick(uv_timer_t *timer)
{
    struct lag_probe *p = timer->data;
    int64_t now = cs_now_mono_ns();

    if (p->n < p->cap)
        p->late_us[p->n++] = (now - p->due_ns) / 1000;
    p->due_ns = now + 10000000;
}

struct burst {
    struct fixture *f;
    uv_check_t check;
    int64_t next_id;
    int64_t total;
    int outstanding_cap;
    int per_turn; /* runs (each with an event) queued per turn */
};

static void burst_check(uv_check_t *check)
{
    struct burst *b = check->data;
    struct fixture *f = b->f;
    int answered = f->writes_ok + f->writes_failed;

    if (b->next_id > b->total) {
        uv_check_stop(check);
        return;
    }
    /* Keep a bounded backlog, as the server's own pacing would. */
    if ((b->next_id - 1) * 2 - answered >= b->outstanding_cap)
        return;
    for (int i = 0; i < b->per_turn && b->next_id <= b->total; i++, b->next_id++) {
        Csched__V1__Run run = make_run(b->next_id, "lag", CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
        Csched__V1__Event e = make_event(b->next_id, b->next_id, "lag");

        cs_store_run_put(f->store, &run, write_cb, f);
        cs_store_event_put(f->store, &e, write_cb, f);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static void test_store_loop_lag_under_write_burst(void **state)
{
    struct fixture *f = *state;
    struct lag_probe probe = {.cap = 100000};
    struct burst burst = {.f = f, .next_id = 1, .total = 10000, .outstanding_cap = 2000};
    /* CS_STORE_BURST=N queues N runs per turn instead of 100: N=1 measures
     * commits per second. */
    const char *per_turn = getenv("CS_STORE_BURST");
    long long commits;
    struct rusage ru0;
    struct rusage ru1;
    int64_t start_ns;
    double secs;
    double cpu_us;

    burst.per_turn = per_turn != NULL && atoi(per_turn) > 0 ? atoi(per_turn) : 100;
    store_open(f);
    probe.late_us = cs_xcalloc(probe.cap, sizeof(*probe.late_us));
    uv_timer_init(&f->loop, &probe.timer);
    probe.timer.data = &probe;
    probe.due_ns = cs_now_mono_ns() + 10000000;
    uv_timer_start(&probe.timer, probe_tick, 10, 10);
    uv_check_init(&f->loop, &burst.check);
    burst.check.data = &burst;
    start_ns = cs_now_mono_ns();
    getrusage(RUSAGE_THREAD, &ru0);
    /* A check handle queues the next burst after each turn's I/O; unlike
     * an idle handle it lets the loop block while it waits. */
    uv_check_start(&burst.check, burst_check);
    burst_check(&burst.check);
    wait_writes(f, 20000);
    getrusage(RUSAGE_THREAD, &ru1);
    secs = (double)(cs_now_mono_ns() - start_ns) / 1e9;
    cpu_us = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec -
                      ru0.ru_stime.tv_sec) *
                 1e6 +
             (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec -
                      ru0.ru_stime.tv_usec);
    uv_close((uv_handle_t *)&burst.check, NULL);
    uv_close((uv_handle_t *)&probe.timer, NULL);
    /* The handles live on this stack frame: finish closing them here. */
    uv_run(&f->loop, UV_RUN_NOWAIT);
    assert_int_equal(f->writes_ok, 20000);
    qsort(probe.late_us, probe.n, sizeof(*probe.late_us), cmp_i64);
    commits = admin_value(f->conninfo, "SELECT count(DISTINCT xmin::text) FROM (SELECT xmin"
                                       " FROM runs UNION ALL SELECT xmin FROM events) x");
    printf("store burst: 10000 run_put + 10000 event_put, %d runs per turn, in %.3f s = %.0f "
           "rows/s, %lld commits = %.0f commits/s; loop thread CPU %.1f us/row; probe ticks %zu "
           "p50 %lld us p99 %lld us max %lld us\n",
           burst.per_turn, secs, 20000 / secs, commits, (double)commits / secs, cpu_us / 20000,
           probe.n, (long long)probe.late_us[probe.n / 2],
           (long long)probe.late_us[probe.n * 99 / 100], (long long)probe.late_us[probe.n - 1]);
    assert_true(probe.n > 0);
    assert_true(probe.late_us[probe.n * 99 / 100] < 50000);
    free(probe.late_us);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events"), 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_open_migrates_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_two_servers_migrate_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_snapshot_after_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_run_list_filters_and_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_event_list_after_seq, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_find_by_key_and_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_same_writes_twice_same_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_one_turn_is_one_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_sql_error_fails_only_its_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_writes_survive_database_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_store_inflight_batch_replayed_after_connection_killed,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_open_survives_connection_killed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_store_close_commits_pending_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_same_run_put_thrice_one_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_event_text_round_trips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_batch_mixes_tables_and_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_coalesced_batch_replayed_after_connection_killed,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_embedded_server_started_and_stopped, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_store_connects_by_host_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_large_job_keeps_loop_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_loop_lag_under_write_burst, setup, teardown),
    };

    /* CS_TEST_FILTER=test_store_loop_lag_under_write_burst runs the
     * throughput measurement alone. */
    if (getenv("CS_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
