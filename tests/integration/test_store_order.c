/* The events of replicas on a shared database, numbered by the database in
 * the order their transactions commit (migration 0022): a second writer's
 * events, committed first, come first, and the store's batch waits for
 * them; a batch that committed but whose answer was lost is sent again and
 * adds nothing, and each event is answered with the seq it has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "store_fixture.h"
#include "store_internal.h"
#include "testlib.h"

/* Joins replica id as a standby would, on admin's connection: its epoch. */
static long long join(PGconn *admin, const char *id)
{
    const char *values[] = {id, id};
    PGresult *res =
        PQexecParams(admin, "SELECT epoch FROM csched_join($1, $2, 'test', 60000, 60000, false)", 2,
                     NULL, values, NULL, NULL, 0);
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    long long epoch = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return epoch;
}

/* An array literal of n elements: each is `each`, or, when NULL, base + i
 * for the i-th (from 1). */
static void array_text(char *buf, size_t cap, int n, const char *each, int base)
{
    size_t len = (size_t)snprintf(buf, cap, "{");
    for (int i = 1; i <= n && len < cap; i++) {
        const char *sep = i < n ? "," : "}";
        len += each != NULL ? (size_t)snprintf(buf + len, cap - len, "%s%s", each, sep)
                            : (size_t)snprintf(buf + len, cap - len, "%d%s", base + i, sep);
    }
    assert_true(len < cap);
}

/* In admin's open transaction, as replica id of epoch would in a batch:
 * the fence that takes the events' order, then n events (locals 1..n) of
 * job "other". */
static void write_events_as(PGconn *admin, const char *id, long long epoch, int n)
{
    char fence[160], epoch_text[24], locals[256], ats[256], runs[256], jobs[256], zeros[256],
        empty[256], falses[256];
    array_text(locals, sizeof(locals), n, NULL, 0);
    array_text(ats, sizeof(ats), n, "1000", 0);
    array_text(runs, sizeof(runs), n, NULL, 900);
    array_text(jobs, sizeof(jobs), n, "other", 0);
    array_text(zeros, sizeof(zeros), n, "0", 0);
    array_text(empty, sizeof(empty), n, "\"\"", 0);
    array_text(falses, sizeof(falses), n, "f", 0);
    snprintf(fence, sizeof(fence), "SELECT csched_fence_ordered('%s', %lld)", id, epoch);
    admin_must(admin, fence);
    snprintf(epoch_text, sizeof(epoch_text), "%lld", epoch);
    /* seq, at, run id, job, attempt, state, exit code, signal, message, recovered */
    const char *values[] = {locals, ats,   runs,  jobs,   zeros, zeros,
                            zeros,  zeros, empty, falses, id,    epoch_text};
    PGresult *res =
        PQexecParams(admin, cs_store_sql_event_put_ordered, 12, NULL, values, NULL, NULL, 0);
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    PQclear(res);
}

static void put_events(struct fixture *f, int64_t first, int64_t last)
{
    for (int64_t seq = first; seq <= last; seq++) {
        Csched__V1__Event e = make_event(seq, seq, "mine");

        cs_store_event_put(f->store, &e, event_cb, f);
    }
}

/* Another replica's transaction holds the order when the store's batch
 * comes: the batch waits for its commit and numbers its events after. */
static void test_store_events_numbered_in_commit_order(void **state)
{
    struct fixture *f = *state;
    PGconn *other = admin_connect(f->conninfo);

    store_open(f);
    long long epoch = join(other, "other");
    admin_must(other, "BEGIN");
    write_events_as(other, "other", epoch, 3);
    put_events(f, 1, 5);
    run_for(f, 300);
    assert_int_equal(f->writes_ok, 0); /* waiting for the other's commit */
    admin_must(other, "COMMIT");
    wait_writes(f, 5);
    PQfinish(other);
    assert_int_equal(
        admin_value(f->conninfo, "SELECT max(seq) FROM events WHERE job_name = 'other'"), 3);
    assert_int_equal(
        admin_value(f->conninfo, "SELECT min(seq) FROM events WHERE job_name = 'mine'"), 4);
    assert_event_seqs(f, 5, 4);
    /* Their run ids, from the store's own count, say which is which. */
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events WHERE job_name = 'mine'"
                                              " AND seq = run_id + 3"),
                     5);
}

static void set_standby_names(PGconn *admin, const char *names)
{
    char sql[160];

    snprintf(sql, sizeof(sql), "ALTER SYSTEM SET synchronous_standby_names = '%s'", names);
    admin_must(admin, sql);
    admin_must(admin, "SELECT pg_reload_conf()");
}

/* A commit whose answer never came: with a synchronous standby named that
 * does not exist, the store's batch commits on the server and then waits
 * for the standby; its connection is ended there, so the store takes the
 * batch for lost and sends it again. The events are there once, and each
 * is answered with the seq the first sending gave it. */
static void test_store_committed_batch_sent_again_adds_nothing(void **state)
{
    struct fixture *f = *state;
    PGconn *admin = admin_connect(f->conninfo);
    char sql[256];

    /* The test cluster commits without waiting (fsync off); the store's
     * sessions wait here, the admin's never. */
    snprintf(sql, sizeof(sql), "ALTER DATABASE %s SET synchronous_commit = on", f->dbname);
    admin_must(admin, sql);
    admin_must(admin, "SET synchronous_commit = local");
    store_open(f);
    put_events(f, 1, 4);
    wait_writes(f, 4);
    set_standby_names(admin, "nobody");
    put_events(f, 5, 9);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM pg_stat_activity WHERE datname = '%s'"
             " AND wait_event = 'SyncRep'",
             f->dbname);
    for (int i = 0; i < 200 && admin_value(f->conninfo, sql) == 0; i++)
        run_for(f, 50);
    assert_int_equal(admin_value(f->conninfo, sql), 1);
    /* Committed, visible once the wait is cut short, and not answered. */
    admin_kill_store_conns(admin);
    set_standby_names(admin, "");
    PQfinish(admin);
    wait_writes(f, 9);
    assert_int_equal(f->writes_failed, 0);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events"), 9);
    assert_int_equal(admin_value(f->conninfo, "SELECT max(seq) FROM events"), 9);
    assert_event_seqs(f, 9, 1);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM events WHERE seq = run_id"), 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_events_numbered_in_commit_order, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_committed_batch_sent_again_adds_nothing,
                                        store_setup, store_teardown),
    };

    return STORE_RUN_TESTS(tests);
}
