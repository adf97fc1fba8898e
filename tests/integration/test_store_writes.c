/* The store's writes against a real PostgreSQL: idempotent upserts, one
 * transaction per loop turn (group commit), a failed statement failing only
 * its batch, coalescing of a batch's writes, a large job, and the loop's
 * lateness and the throughput under a burst of writes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "store_fixture.h"

static void put_job(struct fixture *f, const char *name, uint64_t version)
{
    char *argv[] = {"true"};
    Csched__V1__Job job = make_job(name, argv, 1);

    job.version = version;
    cs_store_job_put(f->store, &job, 1, write_cb, f);
}

static void test_store_same_writes_twice_same_rows(void **state)
{
    struct fixture *f = *state;

    store_open(f);
    /* Events once: on a shared database each put is a new event, numbered
     * by the database (a batch sent again is test_store_reconnect's). */
    for (int64_t seq = 1; seq <= 10; seq++) {
        Csched__V1__Event e = make_event(seq, seq, "odd");

        cs_store_event_put(f->store, &e, event_cb, f);
    }
    for (int round = 0; round < 2; round++) {
        put_ten_runs(f);
        wait_writes(f, 10 + 20 * (round + 1));
    }
    assert_int_equal(f->writes_ok, 50);
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
        cs_store_event_put(f->store, &e, event_cb, f);
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

/* Eight writes of four jobs: a put; a put then a delete; a delete then a
 * put; a put, a delete and a put again. */
static void put_jobs_in_every_order(struct fixture *f)
{
    put_job(f, "a", 1);
    put_job(f, "b", 1);
    cs_store_job_delete(f->store, "b", write_cb, f);
    cs_store_job_delete(f->store, "c", write_cb, f);
    put_job(f, "c", 1);
    put_job(f, "d", 1);
    cs_store_job_delete(f->store, "d", write_cb, f);
    put_job(f, "d", 2);
}

/* Runs 1..40 of job "a" queued then running, each with a starting attempt
 * in /s/<id> and two events (seq 2 * id - 1 and 2 * id): 200 writes. */
static void start_forty_runs(struct fixture *f)
{
    for (int64_t id = 1; id <= 40; id++) {
        Csched__V1__Run run = make_run(id, "a", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
        Csched__V1__Attempt a = make_attempt(1, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);
        Csched__V1__Event e = make_event(2 * id - 1, id, "a");
        char dir[32];

        snprintf(dir, sizeof(dir), "/s/%lld", (long long)id);
        cs_store_run_put(f->store, &run, write_cb, f);
        cs_store_event_put(f->store, &e, event_cb, f);
        cs_store_attempt_put(f->store, id, &a, dir, write_cb, f);
        run.state = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
        cs_store_run_put(f->store, &run, write_cb, f);
        e.seq = 2 * id;
        cs_store_event_put(f->store, &e, event_cb, f);
    }
}

/* The same runs failed, with their attempts and a third event (seq 80 +
 * id): 120 writes. */
static void fail_forty_runs(struct fixture *f)
{
    for (int64_t id = 1; id <= 40; id++) {
        Csched__V1__Run run = make_run(id, "a", CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
        Csched__V1__Attempt a = make_attempt(1, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
        Csched__V1__Event e = make_event(80 + id, id, "a");

        cs_store_attempt_put(f->store, id, &a, NULL, write_cb, f);
        cs_store_run_put(f->store, &run, write_cb, f);
        cs_store_event_put(f->store, &e, event_cb, f);
    }
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
    put_jobs_in_every_order(f);
    start_forty_runs(f);
    cs_store_run_get(f->store, 20, run_cb, &mid);
    cs_store_event_list(f->store, 0, NULL, 1000, events_cb, &mid_events);
    fail_forty_runs(f);
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

static int64_t clock_ns(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t thread_cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static int64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static void test_store_large_job_keeps_loop_free(void **state)
{
    struct fixture *f = *state;
    size_t size = (size_t)7 << 19;
    char *shell = malloc(size + 1);
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    int64_t worst_ns = 0;

    assert_non_null(shell);
    memset(shell, ':', size);
    shell[size] = '\0';
    job.name = "large";
    job.shell = shell;
    store_open(f);
    /* The CPU the loop thread spends in any one turn (the put, the send,
     * the commit) stays small; waiting for the database is not counted. */
    for (int round = 0; round < 3; round++) {
        int64_t turn = thread_cpu_ns();

        cs_store_job_put(f->store, &job, 1, write_cb, f);
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
    int64_t now = now_ns();

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
        cs_store_event_put(f->store, &e, event_cb, f);
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
    probe.late_us = calloc(probe.cap, sizeof(*probe.late_us));
    assert_non_null(probe.late_us);
    uv_timer_init(&f->loop, &probe.timer);
    probe.timer.data = &probe;
    probe.due_ns = now_ns() + 10000000;
    uv_timer_start(&probe.timer, probe_tick, 10, 10);
    uv_check_init(&f->loop, &burst.check);
    burst.check.data = &burst;
    start_ns = now_ns();
    getrusage(RUSAGE_THREAD, &ru0);
    /* A check handle queues the next burst after each turn's I/O; unlike
     * an idle handle it lets the loop block while it waits. */
    uv_check_start(&burst.check, burst_check);
    burst_check(&burst.check);
    wait_writes(f, 20000);
    getrusage(RUSAGE_THREAD, &ru1);
    secs = (double)(now_ns() - start_ns) / 1e9;
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
        cmocka_unit_test_setup_teardown(test_store_same_writes_twice_same_rows, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_one_turn_is_one_transaction, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_sql_error_fails_only_its_batch, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_same_run_put_thrice_one_row, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_batch_mixes_tables_and_reads, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_large_job_keeps_loop_free, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_loop_lag_under_write_burst, store_setup,
                                        store_teardown),
    };

    return STORE_RUN_TESTS(tests);
}
