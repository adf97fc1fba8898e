/* The store's audit rows against a real PostgreSQL: a row tied to a change
 * commits in the change's transaction even where a batch would be cut
 * between them, an untied one may not; a row put twice is one row; the
 * list's filters and pages; the bounded expiry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "store_fixture.h"

/* store_batch.c's BATCH_MAX_OPS: a batch is cut after this many writes. */
#define CUT 2000

struct audit_result {
    bool done;
    int status;
    Csched__V1__AuditEntry **entries;
    size_t n;
    bool more;
    int64_t expired;
};

static void audit_cb(void *arg, int status, Csched__V1__AuditEntry **entries, size_t n, bool more)
{
    struct audit_result *r = arg;

    r->status = status;
    r->entries = entries;
    r->n = n;
    r->more = more;
    r->done = true;
}

static void expired_cb(void *arg, int status, int64_t n)
{
    struct audit_result *r = arg;

    r->status = status;
    r->expired = n;
    r->done = true;
}

static Csched__V1__AuditEntry make_entry(int64_t id, int64_t at, const char *who, const char *job)
{
    Csched__V1__AuditEntry e = CSCHED__V1__AUDIT_ENTRY__INIT;

    e.id = id;
    e.at_unix_ms = at;
    e.method = "TriggerJob";
    e.identity = (char *)who;
    e.job_name = (char *)job;
    e.run_id = id;
    return e;
}

/* Fills a batch up to its cut with events (seq from first), so that the
 * next writes would start a new batch. */
static void fill_to_cut(struct fixture *f, int64_t first, int n)
{
    for (int64_t s = first; s < first + n; s++) {
        Csched__V1__Event e = make_event(s, 1, "fill");

        cs_store_event_put(f->store, &e, event_cb, f);
    }
}

static long long xmin_count(struct fixture *f, const char *where)
{
    char sql[512];

    snprintf(sql, sizeof(sql),
             "SELECT count(DISTINCT xmin::text) FROM (SELECT xmin FROM runs WHERE id = 1"
             " UNION ALL SELECT xmin FROM audit WHERE %s) x",
             where);
    return admin_value(f->conninfo, sql);
}

static void test_store_audit_tied_row_commits_with_its_change(void **state)
{
    struct fixture *f = *state;
    Csched__V1__Run run = make_run(1, "j", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    Csched__V1__AuditEntry tied = make_entry(1, 1000, "alice", "j");
    Csched__V1__AuditEntry loose = make_entry(2, 1000, "alice", "j");

    store_open(f);
    /* The run is the batch's last write: the tied row goes with it. */
    fill_to_cut(f, 1, CUT - 1);
    struct cs_store_mark mark = cs_store_mark_take(f->store);
    cs_store_run_put(f->store, &run, write_cb, f);
    cs_store_audit_put(f->store, &tied, &mark, write_cb, f);
    wait_writes(f, CUT + 1);
    assert_int_equal(f->writes_ok, CUT + 1);
    assert_int_equal(xmin_count(f, "id = 1"), 1);

    /* Without the tie, the row after a full batch commits on its own. */
    fill_to_cut(f, CUT, CUT - 1);
    cs_store_run_put(f->store, &run, write_cb, f);
    cs_store_audit_put(f->store, &loose, NULL, write_cb, f);
    wait_writes(f, 2 * (CUT + 1));
    assert_int_equal(xmin_count(f, "id = 2"), 2);
}

static void test_store_audit_same_row_twice_is_one(void **state)
{
    struct fixture *f = *state;
    Csched__V1__AuditEntry e = make_entry(7, 1000, "alice", "j");

    store_open(f);
    cs_store_audit_put(f->store, &e, NULL, write_cb, f);
    wait_writes(f, 1);
    e.message = "a second put of the same id";
    cs_store_audit_put(f->store, &e, NULL, write_cb, f);
    wait_writes(f, 2);
    assert_int_equal(f->writes_ok, 2);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM audit"), 1);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM audit WHERE message = ''"), 1);
}

static void list(struct fixture *f, const struct cs_store_audit_filter *filter,
                 struct audit_result *r)
{
    memset(r, 0, sizeof(*r));
    cs_store_audit_list(f->store, filter, audit_cb, r);
    run_until(f, &r->done, 10000);
    assert_int_equal(r->status, 0);
}

static void test_store_audit_list_filters_and_pages(void **state)
{
    struct fixture *f = *state;
    struct audit_result r;

    store_open(f);
    for (int64_t id = 1; id <= 6; id++) {
        Csched__V1__AuditEntry e =
            make_entry(id, 1000 * id, id % 2 ? "alice" : "bob", id <= 3 ? "a" : "b");

        cs_store_audit_put(f->store, &e, NULL, write_cb, f);
    }
    wait_writes(f, 6);

    struct cs_store_audit_filter all = {.limit = 4};
    list(f, &all, &r);
    assert_int_equal(r.n, 4);
    assert_true(r.more);
    assert_int_equal(r.entries[0]->id, 6);
    assert_int_equal(r.entries[3]->id, 3);
    assert_string_equal(r.entries[0]->identity, "bob");
    assert_string_equal(r.entries[0]->job_name, "b");
    cs_store_audit_free(r.entries, r.n);
    all.before_id = 3;
    list(f, &all, &r);
    assert_int_equal(r.n, 2);
    assert_false(r.more);
    assert_int_equal(r.entries[1]->id, 1);
    cs_store_audit_free(r.entries, r.n);

    struct cs_store_audit_filter who = {.identity = "alice", .job_name = "a"};
    list(f, &who, &r);
    assert_int_equal(r.n, 2); /* 3 and 1 */
    assert_int_equal(r.entries[0]->id, 3);
    cs_store_audit_free(r.entries, r.n);
    struct cs_store_audit_filter when = {.since_unix_ms = 2000, .until_unix_ms = 4000};
    list(f, &when, &r);
    assert_int_equal(r.n, 2); /* 3 and 2 */
    assert_int_equal(r.entries[1]->id, 2);
    cs_store_audit_free(r.entries, r.n);
    struct cs_store_audit_filter one = {.run_id = 5, .method = "TriggerJob"};
    list(f, &one, &r);
    assert_int_equal(r.n, 1);
    cs_store_audit_free(r.entries, r.n);
    struct cs_store_audit_filter none = {.method = "CreateJob"};
    list(f, &none, &r);
    assert_int_equal(r.n, 0);
    cs_store_audit_free(r.entries, r.n);
}

static void test_store_audit_expiry_is_bounded(void **state)
{
    struct fixture *f = *state;
    struct audit_result r = {0};
    int n = CS_STORE_AUDIT_EXPIRE_ROWS + 5;

    store_open(f);
    for (int64_t id = 1; id <= n; id++) {
        Csched__V1__AuditEntry e = make_entry(id, id <= n - 2 ? 1000 : 99000, "alice", "j");

        cs_store_audit_put(f->store, &e, NULL, write_cb, f);
    }
    wait_writes(f, n);
    cs_store_audit_expire(f->store, 50000, expired_cb, &r);
    run_until(f, &r.done, 30000);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.expired, CS_STORE_AUDIT_EXPIRE_ROWS);
    memset(&r, 0, sizeof(r));
    cs_store_audit_expire(f->store, 50000, expired_cb, &r);
    run_until(f, &r.done, 30000);
    assert_int_equal(r.expired, 3);
    assert_int_equal(admin_value(f->conninfo, "SELECT count(*) FROM audit"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_audit_tied_row_commits_with_its_change,
                                        store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_store_audit_same_row_twice_is_one, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_audit_list_filters_and_pages, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_audit_expiry_is_bounded, store_setup,
                                        store_teardown),
    };

    return STORE_RUN_TESTS(tests);
}
