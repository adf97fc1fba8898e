/* The store's reads against a real PostgreSQL: run lists filtered and
 * paged, events after a sequence number, a run by id and by idempotency
 * key, texts that need quoting in any text form, the slots of one batch
 * written as their upserts, one after another, would have left them, and
 * the replicas' rows with their leases measured on the database's clock. */
#include <errno.h>
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

static void list_runs(struct fixture *f, const struct cs_store_run_filter *filter,
                      struct read_result *r)
{
    memset(r, 0, sizeof(*r));
    cs_store_run_list(f->store, filter, runs_cb, r);
    run_until(f, &r->done, 10000);
    assert_int_equal(r->status, 0);
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
    assert_false(r.more);
    assert_int_equal(r.runs[0]->id, 10);
    assert_int_equal(r.runs[9]->id, 1);
    assert_int_equal(r.runs[0]->n_attempts, 1);
    cs_store_runs_free(r.runs, r.n);

    list_runs(f, &page, &r);
    assert_int_equal(r.n, 4);
    assert_true(r.more);
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

/* Runs of the jobs named, or of all but those, paged as any list; and only
 * those after the newest made before since (run i was made at 1000 + i). */
static void test_store_run_list_by_job_names_and_since(void **state)
{
    struct fixture *f = *state;
    const char *const odd[] = {"odd", "NULL"};
    struct cs_store_run_filter in = {.job_names = odd, .n_job_names = 2, .limit = 3};
    struct cs_store_run_filter not_in = {
        .job_names = odd, .n_job_names = 1, .job_names_exclude = true, .limit = 100};
    struct cs_store_run_filter none = {.job_names_exclude = true, .limit = 100};
    struct cs_store_run_filter since = {.since_unix_ms = 1007, .limit = 100};
    struct read_result r;

    store_open(f);
    put_ten_runs(f);
    list_runs(f, &in, &r);
    assert_int_equal(r.n, 3);
    assert_true(r.more);
    assert_int_equal(r.runs[0]->id, 9);
    assert_int_equal(r.runs[2]->id, 5);
    in.before_id = 5;
    cs_store_runs_free(r.runs, r.n);
    list_runs(f, &in, &r);
    assert_int_equal(r.n, 2);
    assert_false(r.more);
    assert_int_equal(r.runs[1]->id, 1);
    cs_store_runs_free(r.runs, r.n);

    list_runs(f, &not_in, &r);
    assert_int_equal(r.n, 5);
    for (size_t i = 0; i < r.n; i++)
        assert_string_equal(r.runs[i]->job_name, "even");
    cs_store_runs_free(r.runs, r.n);
    list_runs(f, &none, &r);
    assert_int_equal(r.n, 10);
    cs_store_runs_free(r.runs, r.n);

    list_runs(f, &since, &r);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.runs[3]->id, 7);
    cs_store_runs_free(r.runs, r.n);
    since.since_unix_ms = 2000;
    list_runs(f, &since, &r);
    assert_int_equal(r.n, 0);
    cs_store_runs_free(r.runs, r.n);
}

/* Runs of 100 KB of env each: a list of up to 100 stops after the run that
 * reaches CS_STORE_RUN_LIST_BYTES and says more are left; the next page,
 * from the last id, has the rest. */
static void test_store_run_list_bounded_in_bytes(void **state)
{
    enum { N = 40, VALUE = 100 * 1000 };
    struct fixture *f = *state;
    struct cs_store_run_filter filter = {.limit = 100};
    Csched__V1__Run__EnvEntry entry = CSCHED__V1__RUN__ENV_ENTRY__INIT;
    Csched__V1__Run__EnvEntry *entries[] = {&entry};
    char *value = malloc(VALUE + 1);
    struct read_result r;
    size_t first;

    assert_non_null(value);
    memset(value, 'v', VALUE);
    value[VALUE] = '\0';
    entry.key = "BIG";
    entry.value = value;
    store_open(f);
    for (int64_t id = 1; id <= N; id++) {
        Csched__V1__Run run = make_run(id, "big", CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        run.env = entries;
        run.n_env = 1;
        cs_store_run_put(f->store, &run, write_cb, f);
    }
    wait_writes(f, N);
    free(value);

    list_runs(f, &filter, &r);
    first = r.n;
    /* Each run is 100 KB and a little: the page ends after the 21st, the
     * first to start under 2 MiB and end over it. */
    assert_in_range(first, 20, 22);
    assert_true((first - 1) * VALUE < CS_STORE_RUN_LIST_BYTES);
    assert_true(r.more);
    filter.before_id = r.runs[first - 1]->id;
    assert_string_equal(r.runs[0]->env[0]->key, "BIG");
    cs_store_runs_free(r.runs, r.n);
    list_runs(f, &filter, &r);
    assert_int_equal(r.n, N - first);
    assert_false(r.more);
    assert_int_equal(r.runs[r.n - 1]->id, 1);
    cs_store_runs_free(r.runs, r.n);
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
        cs_store_event_put(f->store, &e, event_cb, f);
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

static void find_by_key(struct fixture *f, const char *job, const char *key, struct read_result *r)
{
    memset(r, 0, sizeof(*r));
    cs_store_run_find_by_key(f->store, job, key, run_cb, r);
    run_until(f, &r->done, 10000);
}

static void test_store_find_by_key_and_get(void **state)
{
    struct fixture *f = *state;
    char *argv[] = {"true"};
    Csched__V1__Job job = make_job("alpha", argv, 1);
    Csched__V1__Run run = make_run(3, "alpha", CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED);
    struct read_result r = {0};

    run.idempotency_key = "abc";
    store_open(f);
    cs_store_job_put(f->store, &job, 1, write_cb, f);
    cs_store_run_put(f->store, &run, write_cb, f);
    /* Reads queued after a write see it. */
    find_by_key(f, "alpha", "abc", &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.run->id, 3);
    protobuf_c_message_free_unpacked(&r.run->base, NULL);

    find_by_key(f, "alpha", "other", &r);
    assert_int_equal(r.status, -ENOENT);
    assert_null(r.run);

    memset(&r, 0, sizeof(r));
    cs_store_run_get(f->store, 3, run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.run->job_name, "alpha");
    assert_int_equal(r.run->n_attempts, 0);
    protobuf_c_message_free_unpacked(&r.run->base, NULL);

    /* Without its job, or with a job of that name made after it, the run
     * is no longer the key's; the new job's run with that key is. */
    cs_store_job_delete(f->store, "alpha", write_cb, f);
    find_by_key(f, "alpha", "abc", &r);
    assert_int_equal(r.status, -ENOENT);
    cs_store_job_put(f->store, &job, 4, write_cb, f);
    find_by_key(f, "alpha", "abc", &r);
    assert_int_equal(r.status, -ENOENT);
    run.id = 4;
    cs_store_run_put(f->store, &run, write_cb, f);
    job.version = 2;
    cs_store_job_put(f->store, &job, 9, write_cb, f); /* an update keeps first_run_id */
    find_by_key(f, "alpha", "abc", &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.run->id, 4);
    protobuf_c_message_free_unpacked(&r.run->base, NULL);

    memset(&r, 0, sizeof(r));
    cs_store_run_get(f->store, 99, run_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, -ENOENT);
}

/* Texts that need quoting or escaping in some text form. */
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

static void test_store_event_text_round_trips(void **state)
{
    const size_t n = sizeof(texts) / sizeof(texts[0]);
    struct fixture *f = *state;
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
        cs_store_event_put(f->store, &e, event_cb, f);
    }
    cs_store_event_list(f->store, 0, NULL, 100, events_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(f->writes_ok, (int)n);
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

struct slots_result {
    bool done;
    int status;
    Csched__V1__Slot **slots;
    size_t n;
};

static void slots_cb(void *arg, int status, Csched__V1__Slot **slots, size_t n)
{
    struct slots_result *r = arg;
    *r = (struct slots_result){true, status, slots, n};
}

static void put_slot(struct fixture *f, int64_t at_ms, Csched__V1__SlotOutcome outcome,
                     int64_t run_id)
{
    Csched__V1__Slot slot = CSCHED__V1__SLOT__INIT;
    slot.job_name = "j";
    slot.slot_unix_ms = at_ms;
    slot.outcome = outcome;
    slot.run_id = run_id;
    slot.message = outcome == CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED ? "s" : "k";
    cs_store_slot_put(f->store, &slot, write_cb, f);
}

/* In one turn (one batch): 100 slots, and three slots put twice. Skipped then
 * started: started. Started then skipped without its run: still started.
 * Started then skipped naming its run (its deadline passed): skipped. */
static void test_store_slots_of_one_batch(void **state)
{
    struct fixture *f = *state;
    const Csched__V1__SlotOutcome started = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED;
    const Csched__V1__SlotOutcome skipped = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED;
    struct cs_store_slot_filter filter = {.job_name = "j", .from_unix_ms = 1, .limit = 1000};
    struct slots_result r = {0};

    store_open(f);
    for (int64_t i = 1; i <= 100; i++)
        put_slot(f, i * 1000, started, i);
    put_slot(f, 101000, skipped, 0);
    put_slot(f, 101000, started, 101);
    put_slot(f, 102000, started, 102);
    put_slot(f, 102000, skipped, 0);
    put_slot(f, 103000, started, 103);
    put_slot(f, 103000, skipped, 103);
    wait_writes(f, 106);
    assert_int_equal(f->writes_ok, 106);

    cs_store_slot_list(f->store, &filter, slots_cb, &r);
    run_until(f, &r.done, 10000);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.n, 103);
    /* Newest first. */
    assert_int_equal(r.slots[0]->outcome, skipped);
    assert_int_equal(r.slots[0]->run_id, 103);
    assert_int_equal(r.slots[1]->outcome, started);
    assert_int_equal(r.slots[1]->run_id, 102);
    assert_int_equal(r.slots[2]->outcome, started);
    assert_int_equal(r.slots[2]->run_id, 101);
    for (size_t i = 3; i < r.n; i++) {
        assert_int_equal(r.slots[i]->slot_unix_ms, (int64_t)(103 - i) * 1000);
        assert_int_equal(r.slots[i]->run_id, (int64_t)(103 - i));
        assert_string_equal(r.slots[i]->message, "s");
    }
    cs_store_slots_free(r.slots, r.n);
}

struct replicas_result {
    bool done;
    int status;
    Csched__V1__Replica **replicas;
    size_t n;
};

static void replicas_cb(void *arg, int status, Csched__V1__Replica **replicas, size_t n)
{
    struct replicas_result *r = arg;
    *r = (struct replicas_result){true, status, replicas, n};
}

static void list_replicas(struct fixture *f, struct replicas_result *r)
{
    memset(r, 0, sizeof(*r));
    cs_store_replica_list(f->store, replicas_cb, r);
    run_until(f, &r->done, 10000);
    assert_int_equal(r->status, 0);
}

/* The database's clock now, in unix ms, as the read measures it. */
static int64_t db_now_ms(struct fixture *f)
{
    return admin_value(f->conninfo, "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)");
}

/* Two replicas' rows, written as a replica writes them, on the database's
 * clock: replica-a renewed 90 s ago, its lease run out 30 s ago; replica-b
 * renewed 5 s ago, its lease good for an hour. They come back by id, with
 * their fields, their times to the millisecond (truncated), their lease's
 * age measured between the two reads of the clock around the list, and
 * their expiry; self is for the server to set. */
static void test_store_replica_list_on_the_database_clock(void **state)
{
    struct fixture *f = *state;
    struct replicas_result r;

    /* The store's own row, written when it joined, is the only one. */
    store_open(f);
    list_replicas(f, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.replicas[0]->id, STORE_TEST_REPLICA);
    assert_int_equal(r.replicas[0]->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_ACTIVE);
    cs_store_replicas_free(r.replicas, r.n);

    int64_t before = db_now_ms(f);
    admin_exec(f->conninfo,
               "INSERT INTO replicas (id, epoch, instance, state, address, version, joined_at,"
               " renewed_at, lease_until, attempts_until, runs_held) VALUES"
               " ('replica-b', 101, 'i-b', 1, '', '', "
               "'2023-11-14 22:13:20.1239+00', clock_timestamp() - interval '5 s',"
               " clock_timestamp() + interval '1 h', clock_timestamp() + interval '1 h', 0),"
               " ('replica-a', 102, 'i-a', 5, 'host-a:50051', '0.9.0',"
               " '2023-11-14 22:13:20.1239+00', clock_timestamp() - interval '90 s',"
               " clock_timestamp() - interval '30 s', clock_timestamp() + interval '30 s', 3)");
    list_replicas(f, &r);
    int64_t after = db_now_ms(f);
    assert_int_equal(r.n, 3);

    const Csched__V1__Replica *a = r.replicas[0], *b = r.replicas[1];
    assert_string_equal(a->id, "replica-a");
    assert_int_equal(a->epoch, 102);
    assert_int_equal(a->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_FENCED);
    assert_string_equal(a->address, "host-a:50051");
    assert_string_equal(a->version, "0.9.0");
    assert_int_equal(a->joined_unix_ms, 1700000000123);
    assert_in_range(a->renewed_unix_ms, before - 90000, after - 90000);
    assert_in_range(a->lease_until_unix_ms, before - 30000, after - 30000);
    assert_in_range(a->attempts_until_unix_ms, before + 30000, after + 30000);
    assert_in_range(a->lease_age_ms, 90000, 90000 + after - before + 1);
    assert_true(a->lease_expired);
    assert_int_equal(a->runs_held, 3);
    assert_false(a->self);

    assert_string_equal(b->id, "replica-b");
    assert_int_equal(b->epoch, 101);
    assert_int_equal(b->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_STANDBY);
    assert_string_equal(b->address, "");
    assert_string_equal(b->version, "");
    assert_in_range(b->lease_until_unix_ms, before + 3600000, after + 3600000);
    assert_in_range(b->lease_age_ms, 5000, 5000 + after - before + 1);
    assert_false(b->lease_expired);
    assert_int_equal(b->runs_held, 0);
    printf("replicas: lease ages %lld and %lld ms, read within %lld ms of the insert\n",
           (long long)a->lease_age_ms, (long long)b->lease_age_ms, (long long)(after - before));
    cs_store_replicas_free(r.replicas, r.n);
}

/* Ids come back in byte order whatever the collation: here the column's is
 * ICU's English one (where PostgreSQL has ICU), which would put "b-one"
 * before "B-two", and "a.1" after "a-2". */
static void test_store_replica_list_by_bytes(void **state)
{
    static const char *const want[] = {"B-two", "a-2", "a.1", "b-one", STORE_TEST_REPLICA};
    struct fixture *f = *state;
    struct replicas_result r;

    store_open(f);
    if (admin_value(f->conninfo, "SELECT count(*) FROM pg_collation WHERE collname = 'en-x-icu'")) {
        PGconn *admin = admin_connect(f->conninfo);
        admin_must(admin, "ALTER TABLE replicas ALTER COLUMN id TYPE text COLLATE \"en-x-icu\"");
        /* The statement was prepared for the column as it was: a new
         * connection prepares it again. */
        admin_kill_store_conns(admin);
        PQfinish(admin);
        assert_false(wait_accepting(f, false, 10000));
        assert_true(wait_accepting(f, true, 30000));
    }
    admin_exec(f->conninfo,
               "INSERT INTO replicas (id, epoch, instance, state, joined_at, renewed_at,"
               " lease_until, attempts_until) SELECT id, 1, id, 4, now(), now(), now(), now()"
               " FROM unnest(ARRAY['b-one', 'a.1', 'B-two', 'a-2']) AS id");
    list_replicas(f, &r);
    assert_int_equal(r.n, 5);
    for (size_t i = 0; i < r.n; i++)
        assert_string_equal(r.replicas[i]->id, want[i]);
    cs_store_replicas_free(r.replicas, r.n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_run_list_filters_and_pages, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_run_list_by_job_names_and_since, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_run_list_bounded_in_bytes, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_event_list_after_seq, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_find_by_key_and_get, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_event_text_round_trips, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_slots_of_one_batch, store_setup, store_teardown),
        cmocka_unit_test_setup_teardown(test_store_replica_list_on_the_database_clock, store_setup,
                                        store_teardown),
        cmocka_unit_test_setup_teardown(test_store_replica_list_by_bytes, store_setup,
                                        store_teardown),
    };

    return STORE_RUN_TESTS(tests);
}
