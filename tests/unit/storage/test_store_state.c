/* Unit tests of store_state.c: every cell of the store's two transition
 * tables, against the transitions listed here (each one allowed, every
 * other one refused); the writers on a store's whole life; a refused event
 * aborts. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "store_internal.h"

#define S(name) CS_STORE_STATE_##name
#define E(name) CS_STORE_EV_##name

/* Every transition the life allows; the test refuses all the others. */
static const struct {
    enum cs_store_state from;
    enum cs_store_event event;
    enum cs_store_state to;
} life_allowed[] = {
    {S(NEW), E(OPEN), S(OPENING)},
    {S(NEW), E(CLOSE), S(CANCELLING)},
    {S(OPENING), E(READY), S(LOADING)},
    {S(OPENING), E(WAIT), S(STANDBY)},
    {S(OPENING), E(OPEN_FAILED), S(FAILED)},
    {S(OPENING), E(CLOSE), S(CANCELLING)},
    {S(STANDBY), E(READY), S(STANDBY)},
    {S(STANDBY), E(PROMOTE), S(LOADING)},
    {S(STANDBY), E(FENCE), S(FENCED)},
    {S(STANDBY), E(CLOSE), S(DRAINING)},
    {S(LOADING), E(READY), S(LOADING)},
    {S(LOADING), E(FENCE), S(FENCED)},
    {S(LOADING), E(LOADED), S(LIVE)},
    {S(LOADING), E(OPEN_FAILED), S(FAILED)},
    {S(LOADING), E(CLOSE), S(CLOSING)},
    {S(LIVE), E(READY), S(LIVE)},
    {S(LIVE), E(FENCE), S(FENCED)},
    {S(LIVE), E(CLOSE), S(DRAINING)},
    {S(FAILED), E(CLOSE), S(CLOSING)},
    {S(FENCED), E(CLOSE), S(CLOSING)},
    {S(CANCELLING), E(READY), S(CLOSING)},
    {S(CANCELLING), E(OPEN_FAILED), S(CLOSING)},
    {S(CANCELLING), E(DEADLINE), S(CANCELLING)},
    {S(CANCELLING), E(FINISH), S(FINISHING)},
    {S(DRAINING), E(READY), S(DRAINING)},
    {S(DRAINING), E(FENCE), S(CLOSING)},
    {S(DRAINING), E(DEADLINE), S(CLOSING)},
    {S(DRAINING), E(FINISH), S(FINISHING)},
    {S(CLOSING), E(READY), S(CLOSING)},
    {S(CLOSING), E(LOADED), S(DRAINING)},
    {S(CLOSING), E(OPEN_FAILED), S(CLOSING)},
    {S(CLOSING), E(DEADLINE), S(CLOSING)},
    {S(CLOSING), E(FINISH), S(FINISHING)},
    {S(FINISHING), E(OPEN_FAILED), S(FINISHING)},
};

#undef S
#undef E
#define S(name) CS_STORE_CONN_##name
#define E(name) CS_STORE_CONN_EV_##name

static const struct {
    enum cs_store_conn_state from;
    enum cs_store_conn_event event;
    enum cs_store_conn_state to;
} conn_allowed[] = {
    {S(IDLE), E(START), S(STARTING)},          {S(IDLE), E(RESOLVE), S(RESOLVING)},
    {S(IDLE), E(CONNECT), S(CONNECTING)},      {S(IDLE), E(DROP), S(IDLE)},
    {S(STARTING), E(STARTED), S(IDLE)},        {S(RESOLVING), E(RESOLVED), S(IDLE)},
    {S(CONNECTING), E(MIGRATE), S(MIGRATING)}, {S(CONNECTING), E(JOIN), S(JOINING)},
    {S(CONNECTING), E(PREPARE), S(PREPARING)}, {S(CONNECTING), E(DROP), S(IDLE)},
    {S(MIGRATING), E(JOIN), S(JOINING)},       {S(MIGRATING), E(PREPARE), S(PREPARING)},
    {S(JOINING), E(PREPARE), S(PREPARING)},    {S(JOINING), E(DROP), S(IDLE)},
    {S(MIGRATING), E(DROP), S(IDLE)},          {S(PREPARING), E(PREPARED), S(READY)},
    {S(PREPARING), E(DROP), S(IDLE)},          {S(READY), E(DROP), S(IDLE)},
};

#undef S
#undef E

#define N_LIFE_ALLOWED (sizeof(life_allowed) / sizeof(life_allowed[0]))
#define N_CONN_ALLOWED (sizeof(conn_allowed) / sizeof(conn_allowed[0]))

static void test_store_state_life_table(void **state)
{
    size_t allowed = 0;

    for (int from = 0; from < CS_STORE_STATE_COUNT; from++) {
        for (int event = 0; event < CS_STORE_EV_COUNT; event++) {
            enum cs_store_state next = CS_STORE_STATE_COUNT;
            int rc = cs_store_state_next(from, event, &next);
            int want = -1;

            for (size_t i = 0; i < N_LIFE_ALLOWED; i++) {
                if (life_allowed[i].from == (enum cs_store_state)from &&
                    life_allowed[i].event == (enum cs_store_event)event)
                    want = (int)life_allowed[i].to;
            }
            if (want < 0 && rc != -EPERM)
                fail_msg("%s in %s: want refused, got %s (rc %d)", cs_store_event_name(event),
                         cs_store_state_name(from), cs_store_state_name(next), rc);
            if (want >= 0 && (rc != 0 || next != (enum cs_store_state)want))
                fail_msg("%s in %s: want %s, got %s (rc %d)", cs_store_event_name(event),
                         cs_store_state_name(from), cs_store_state_name(want),
                         cs_store_state_name(next), rc);
            allowed += want >= 0;
        }
    }
    assert_int_equal(allowed, N_LIFE_ALLOWED);
}

static void test_store_state_conn_table(void **state)
{
    size_t allowed = 0;

    for (int from = 0; from < CS_STORE_CONN_STATE_COUNT; from++) {
        for (int event = 0; event < CS_STORE_CONN_EV_COUNT; event++) {
            enum cs_store_conn_state next = CS_STORE_CONN_STATE_COUNT;
            int rc = cs_store_conn_state_next(from, event, &next);
            int want = -1;

            for (size_t i = 0; i < N_CONN_ALLOWED; i++) {
                if (conn_allowed[i].from == (enum cs_store_conn_state)from &&
                    conn_allowed[i].event == (enum cs_store_conn_event)event)
                    want = (int)conn_allowed[i].to;
            }
            if (want < 0 && rc != -EPERM)
                fail_msg("%s in %s: want refused, got %s (rc %d)", cs_store_conn_event_name(event),
                         cs_store_conn_state_name(from), cs_store_conn_state_name(next), rc);
            if (want >= 0 && (rc != 0 || next != (enum cs_store_conn_state)want))
                fail_msg("%s in %s: want %s, got %s (rc %d)", cs_store_conn_event_name(event),
                         cs_store_conn_state_name(from), cs_store_conn_state_name(want),
                         cs_store_conn_state_name(next), rc);
            allowed += want >= 0;
        }
    }
    assert_int_equal(allowed, N_CONN_ALLOWED);
}

/* Out of range is refused too, not read past the table. */
static void test_store_state_out_of_range_refused(void **state)
{
    enum cs_store_state next;
    enum cs_store_conn_state conn_next;

    assert_int_equal(cs_store_state_next(CS_STORE_STATE_COUNT, CS_STORE_EV_OPEN, &next), -EPERM);
    assert_int_equal(cs_store_state_next(CS_STORE_STATE_NEW, CS_STORE_EV_COUNT, &next), -EPERM);
    assert_int_equal(
        cs_store_conn_state_next(CS_STORE_CONN_STATE_COUNT, CS_STORE_CONN_EV_DROP, &conn_next),
        -EPERM);
    assert_int_equal(
        cs_store_conn_state_next(CS_STORE_CONN_IDLE, CS_STORE_CONN_EV_COUNT, &conn_next), -EPERM);
    assert_string_equal(cs_store_state_name(CS_STORE_STATE_COUNT), "?");
    assert_string_equal(cs_store_conn_event_name(CS_STORE_CONN_EV_COUNT), "?");
}

/* Every state and event has a name of its own, for the refusal's log line. */
static void test_store_state_names_distinct(void **state)
{
    for (int i = 0; i < CS_STORE_STATE_COUNT; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(cs_store_state_name(i), cs_store_state_name(j));
    for (int i = 0; i < CS_STORE_EV_COUNT; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(cs_store_event_name(i), cs_store_event_name(j));
    for (int i = 0; i < CS_STORE_CONN_STATE_COUNT; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(cs_store_conn_state_name(i), cs_store_conn_state_name(j));
    for (int i = 0; i < CS_STORE_CONN_EV_COUNT; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(cs_store_conn_event_name(i), cs_store_conn_event_name(j));
}

/* What each state means to the rest of the store. */
static void test_store_state_predicates(void **state)
{
    struct cs_store *store = calloc(1, sizeof(*store));

    assert_non_null(store);
    for (int s = 0; s < CS_STORE_STATE_COUNT; s++) {
        store->state = s;
        assert_int_equal(cs_store_is_live(store), s == CS_STORE_STATE_STANDBY ||
                                                      s == CS_STORE_STATE_LIVE ||
                                                      s == CS_STORE_STATE_DRAINING);
        assert_int_equal(cs_store_is_closing(store),
                         s == CS_STORE_STATE_CANCELLING || s == CS_STORE_STATE_DRAINING ||
                             s == CS_STORE_STATE_CLOSING || s == CS_STORE_STATE_FINISHING);
    }
    for (int s = 0; s < CS_STORE_CONN_STATE_COUNT; s++) {
        store->conn_state = s;
        assert_int_equal(cs_store_conn_on_pool(store),
                         s == CS_STORE_CONN_STARTING || s == CS_STORE_CONN_RESOLVING);
    }
    free(store);
}

/* A store's life through the writers: the embedded server started, a first
 * connection migrated, the snapshot loaded, the connection lost and made
 * again, a close that drains, then finishes. Each writer returns the state
 * it left. */
static void test_store_state_writers_walk_a_life(void **state)
{
    static const enum cs_store_conn_event first[] = {
        CS_STORE_CONN_EV_START,    CS_STORE_CONN_EV_STARTED, CS_STORE_CONN_EV_CONNECT,
        CS_STORE_CONN_EV_MIGRATE,  CS_STORE_CONN_EV_JOIN,    CS_STORE_CONN_EV_PREPARE,
        CS_STORE_CONN_EV_PREPARED,
    };
    static const enum cs_store_conn_event again[] = {
        CS_STORE_CONN_EV_DROP,    CS_STORE_CONN_EV_RESOLVE, CS_STORE_CONN_EV_RESOLVED,
        CS_STORE_CONN_EV_CONNECT, CS_STORE_CONN_EV_PREPARE, CS_STORE_CONN_EV_PREPARED,
    };
    struct cs_store *store = calloc(1, sizeof(*store));

    assert_non_null(store);
    assert_int_equal(store->state, CS_STORE_STATE_NEW);
    assert_int_equal(store->conn_state, CS_STORE_CONN_IDLE);
    assert_int_equal(cs_store_step(store, CS_STORE_EV_OPEN), CS_STORE_STATE_NEW);
    for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
        cs_store_conn_step(store, first[i]);
    assert_int_equal(store->conn_state, CS_STORE_CONN_READY);
    assert_int_equal(cs_store_step(store, CS_STORE_EV_READY), CS_STORE_STATE_OPENING);
    assert_int_equal(store->state, CS_STORE_STATE_LOADING);
    assert_int_equal(cs_store_step(store, CS_STORE_EV_LOADED), CS_STORE_STATE_LOADING);
    assert_int_equal(store->state, CS_STORE_STATE_LIVE);
    for (size_t i = 0; i < sizeof(again) / sizeof(again[0]); i++)
        cs_store_conn_step(store, again[i]);
    assert_int_equal(cs_store_step(store, CS_STORE_EV_READY), CS_STORE_STATE_LIVE);
    assert_int_equal(cs_store_step(store, CS_STORE_EV_CLOSE), CS_STORE_STATE_LIVE);
    assert_int_equal(store->state, CS_STORE_STATE_DRAINING);
    assert_true(cs_store_is_live(store) && cs_store_is_closing(store));
    assert_int_equal(cs_store_conn_step(store, CS_STORE_CONN_EV_DROP), CS_STORE_CONN_READY);
    assert_int_equal(cs_store_step(store, CS_STORE_EV_FINISH), CS_STORE_STATE_DRAINING);
    assert_int_equal(store->state, CS_STORE_STATE_FINISHING);
    assert_int_equal(store->conn_state, CS_STORE_CONN_IDLE);
    free(store);
}

/* A refused event is a bug: the writer aborts, naming the event and the
 * state, and leaves no way to go on in a state the table does not know. */
static void test_store_state_refused_event_aborts(void **state)
{
    int status;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        struct cs_store store = {0};

        /* FENCE before the open: the lock is only ever found taken after. */
        (void)cs_store_step(&store, CS_STORE_EV_FENCE);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);

    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct cs_store store = {.conn_state = CS_STORE_CONN_STARTING};

        /* A connection cannot be dropped while the pool holds its start. */
        (void)cs_store_conn_step(&store, CS_STORE_CONN_EV_DROP);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_state_life_table),
        cmocka_unit_test(test_store_state_conn_table),
        cmocka_unit_test(test_store_state_out_of_range_refused),
        cmocka_unit_test(test_store_state_names_distinct),
        cmocka_unit_test(test_store_state_predicates),
        cmocka_unit_test(test_store_state_writers_walk_a_life),
        cmocka_unit_test(test_store_state_refused_event_aborts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
