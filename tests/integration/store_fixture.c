/* The store tests' fixture (see store_fixture.h): the cluster comes from
 * tests/lib (a postgres child of the test, gone with it), each test gets
 * its own database, and waiting is done on the loop, with a timer so that a
 * deadline is seen even while nothing else happens. */
#include "store_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "testlib.h"

static struct cs_testpg *cluster;
static int db_counter;

/* How often a wait wakes up to look at its deadline. */
#define WAKE_MS 10

const char *cluster_conninfo(void)
{
    return cs_testpg_url(cluster);
}

int store_group_setup(void **state)
{
    struct cs_testpg_options opts = {.fsync = getenv("CS_STORE_TEST_FSYNC") != NULL};

    return cs_testpg_start_opts(&opts, &cluster);
}

int store_group_teardown(void **state)
{
    cs_testpg_stop(cluster);
    cluster = NULL;
    return 0;
}

void store_test_filter(void)
{
    if (getenv("CS_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("CS_TEST_FILTER"));
}

int store_setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    char sql[64];

    assert_non_null(f);
    snprintf(f->dbname, sizeof(f->dbname), "t%d", ++db_counter);
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s", f->dbname);
    admin_exec(cluster_conninfo(), sql);
    snprintf(f->conninfo, sizeof(f->conninfo), "%s dbname=%s", cluster_conninfo(), f->dbname);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    *state = f;
    return 0;
}

int store_teardown(void **state)
{
    struct fixture *f = *state;

    if (f->store != NULL)
        store_close(f);
    cs_store_snapshot_free(f->snapshot);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    free(f);
    return 0;
}

static void wake_cb(uv_timer_t *timer)
{
}

/* Runs the loop one turn at a time until done(arg) or the deadline, with a
 * timer that wakes it every WAKE_MS. Returns whether done came true. */
static bool run_while(struct fixture *f, bool (*done)(void *arg), void *arg, int timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms;
    uv_timer_t wake;
    bool ok;

    assert_int_equal(uv_timer_init(&f->loop, &wake), 0);
    assert_int_equal(uv_timer_start(&wake, wake_cb, WAKE_MS, WAKE_MS), 0);
    while (!(ok = done(arg)) && cs_test_now_ms() < deadline)
        uv_run(&f->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&wake, NULL);
    /* The timer lives on this stack frame: finish closing it here. */
    uv_run(&f->loop, UV_RUN_NOWAIT);
    return ok;
}

static bool flag_set(void *arg)
{
    return *(const bool *)arg;
}

void run_until(struct fixture *f, const bool *flag, int timeout_ms)
{
    if (!run_while(f, flag_set, (void *)flag, timeout_ms))
        fail_msg("timed out after %d ms", timeout_ms);
}

static bool never(void *arg)
{
    return false;
}

void run_for(struct fixture *f, int ms)
{
    run_while(f, never, NULL, ms);
}

struct writes_wait {
    const struct fixture *f;
    int n;
};

static bool writes_answered(void *arg)
{
    const struct writes_wait *w = arg;

    return w->f->writes_ok + w->f->writes_failed >= w->n;
}

void wait_writes(struct fixture *f, int n)
{
    struct writes_wait w = {f, n};

    if (!run_while(f, writes_answered, &w, 30000))
        fail_msg("only %d of %d writes answered", f->writes_ok + f->writes_failed, n);
}

struct accepting_wait {
    const struct fixture *f;
    bool want;
};

static bool accepting_is(void *arg)
{
    const struct accepting_wait *w = arg;

    return cs_store_is_accepting(w->f->store) == w->want;
}

bool wait_accepting(struct fixture *f, bool want, int timeout_ms)
{
    struct accepting_wait w = {f, want};

    run_while(f, accepting_is, &w, timeout_ms);
    return cs_store_is_accepting(f->store);
}

void open_cb(void *arg, int status, struct cs_store_snapshot *snapshot)
{
    struct fixture *f = arg;

    f->open_status = status;
    f->snapshot = snapshot;
    f->open_done = true;
}

void log_cb(void *arg, enum cs_store_log_level level, const char *component, const char *msg)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    struct fixture *f = arg;
    size_t len = strlen(f->errors);

    fprintf(stderr, "%s %s: %s\n", names[level], component, msg);
    if (level == CS_STORE_LOG_ERROR)
        snprintf(f->errors + len, sizeof(f->errors) - len, "%s\n", msg);
}

void fenced_cb(void *arg)
{
    struct fixture *f = arg;

    f->fenced = true;
}

void closed_cb(void *arg)
{
    struct fixture *f = arg;

    f->closed = true;
}

void write_cb(void *arg, int status)
{
    struct fixture *f = arg;

    f->last_write_status = status;
    if (status == 0)
        f->writes_ok++;
    else
        f->writes_failed++;
}

void event_cb(void *arg, int status, int64_t seq)
{
    struct fixture *f = arg;

    if (status == 0 && f->n_seqs < STORE_TEST_MAX_SEQS)
        f->seqs[f->n_seqs++] = seq;
    write_cb(arg, status);
}

void assert_event_seqs(const struct fixture *f, int n, int64_t first)
{
    assert_int_equal(f->n_seqs, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(f->seqs[i], first + i);
}

void store_open(struct fixture *f)
{
    struct cs_store_config config = {
        .database_url = f->conninfo, .max_pending_writes = 50000, .replica_id = STORE_TEST_REPLICA};

    f->open_done = false;
    f->store = cs_store_new(&f->loop, &config);
    assert_int_equal(cs_store_open(f->store, open_cb, f), 0);
    run_until(f, &f->open_done, 20000);
    assert_int_equal(f->open_status, 0);
    assert_non_null(f->snapshot);
}

void store_close(struct fixture *f)
{
    f->closed = false;
    cs_store_close(f->store, closed_cb, f);
    run_until(f, &f->closed, 20000);
    f->store = NULL;
    cs_store_snapshot_free(f->snapshot);
    f->snapshot = NULL;
}

void run_cb(void *arg, int status, Csched__V1__Run *run)
{
    struct read_result *r = arg;

    r->status = status;
    r->run = run;
    r->done = true;
}

void runs_cb(void *arg, int status, Csched__V1__Run **runs, size_t n, bool more)
{
    struct read_result *r = arg;

    r->status = status;
    r->runs = runs;
    r->n = n;
    r->more = more;
    r->done = true;
}

void events_cb(void *arg, int status, Csched__V1__Event **events, size_t n)
{
    struct read_result *r = arg;

    r->status = status;
    r->events = events;
    r->n = n;
    r->done = true;
}

PGconn *admin_connect(const char *conninfo)
{
    PGconn *conn = PQconnectdb(conninfo);

    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    return conn;
}

void admin_must(PGconn *admin, const char *sql)
{
    PGresult *res = PQexec(admin, sql);

    if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(admin));
    PQclear(res);
}

void admin_exec(const char *conninfo, const char *sql)
{
    PGconn *conn = admin_connect(conninfo);

    admin_must(conn, sql);
    PQfinish(conn);
}

long long admin_value(const char *conninfo, const char *sql)
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

void admin_kill_store_conns(PGconn *admin)
{
    admin_must(admin,
               "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
               " WHERE application_name LIKE 'cschedd pid %' AND datname = current_database()");
}

Csched__V1__Job make_job(const char *name, char **argv, size_t argc)
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

Csched__V1__Run make_run(int64_t id, const char *job, Csched__V1__RunState state)
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

Csched__V1__Event make_event(int64_t seq, int64_t run_id, const char *job)
{
    Csched__V1__Event e = CSCHED__V1__EVENT__INIT;

    e.seq = seq;
    e.at_unix_ms = 100 + seq;
    e.run_id = run_id;
    e.job_name = (char *)job;
    e.state = CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED;
    return e;
}

Csched__V1__Attempt make_attempt(uint32_t number, Csched__V1__RunState state)
{
    Csched__V1__Attempt a = CSCHED__V1__ATTEMPT__INIT;

    a.number = number;
    a.state = state;
    a.minder_pid = 7;
    return a;
}

void put_ten_runs(struct fixture *f)
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
