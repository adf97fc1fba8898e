/* The shared fixture of the store's integration tests: one throwaway
 * PostgreSQL per test program (tests/lib, fsync off), a database, a libuv
 * loop and a store per test, and the calls the tests repeat: open and
 * close, count write callbacks, run the loop until a condition or for a
 * while, ask the database directly, build messages. Everything runs on the
 * test's main thread, which is the store's loop thread. Helpers assert with
 * cmocka, so a failure ends only the current test. */
#ifndef CS_STORE_FIXTURE_H
#define CS_STORE_FIXTURE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "store.h"

#define STORE_TEST_MAX_SEQS 256

/* One test's database, loop and store (the cmocka test state). */
struct fixture {
    char dbname[32];
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
    char errors[2048];                 /* the store's error lines, through log_cb */
    bool fenced;                       /* fenced_cb has run */
    int64_t seqs[STORE_TEST_MAX_SEQS]; /* event_cb's */
    int n_seqs;
};

/* The cmocka group setup and teardown: the cluster of this program.
 * CS_STORE_TEST_FSYNC=1 runs it with fsync on. */
int store_group_setup(void **state);
int store_group_teardown(void **state);
/* Applies CS_TEST_FILTER (e.g. CS_TEST_FILTER=test_store_loop_lag_under_write_burst
 * runs that test alone). */
void store_test_filter(void);
/* main's whole body: runs tests (an array) on this program's cluster. */
#define STORE_RUN_TESTS(tests)                                                                     \
    (store_test_filter(), cmocka_run_group_tests(tests, store_group_setup, store_group_teardown))
/* The per-test setup and teardown: a new database and loop; teardown closes
 * the store if the test left it open. */
int store_setup(void **state);
int store_teardown(void **state);

/* The conninfo of the cluster's own database, for what a test does to the
 * test database from outside (it may refuse connections meanwhile). */
const char *cluster_conninfo(void);

/* Runs the loop until *flag is true; fails the test after timeout_ms. */
void run_until(struct fixture *f, const bool *flag, int timeout_ms);
/* Runs the loop for ms, whatever happens meanwhile. */
void run_for(struct fixture *f, int ms);
/* Runs the loop until n write callbacks have run (30 s at most). */
void wait_writes(struct fixture *f, int n);
/* Runs the loop until cs_store_is_accepting is want (timeout_ms at most)
 * and returns what it is then. */
bool wait_accepting(struct fixture *f, bool want, int timeout_ms);

void open_cb(void *arg, int status, struct cs_store_snapshot *snapshot);
/* The store's log callback for a fixture (arg): every line to stderr, and
 * the error lines also appended to f->errors. */
void log_cb(void *arg, enum cs_store_log_level level, const char *component, const char *msg);
/* The replica id of the stores the tests open. */
#define STORE_TEST_REPLICA "store-test"

/* Sets f->fenced. */
void fenced_cb(void *arg);
void closed_cb(void *arg);
/* Counts into writes_ok or writes_failed and keeps the status. */
void write_cb(void *arg, int status);
/* write_cb for an event, keeping the seq each committed one got, in the
 * order answered (the first STORE_TEST_MAX_SEQS). */
void event_cb(void *arg, int status, int64_t seq);
/* The events answered were n, with seqs first, first + 1, ... in order. */
void assert_event_seqs(const struct fixture *f, int n, int64_t first);

/* Opens a store on f->conninfo and waits for its snapshot; store_close
 * waits for the close and frees the snapshot. */
void store_open(struct fixture *f);
void store_close(struct fixture *f);

/* What a read callback got. */
struct read_result {
    bool done;
    int status;
    Csched__V1__Run *run;
    Csched__V1__Run **runs;
    Csched__V1__Event **events;
    size_t n;
    bool more; /* of a run list */
};

void run_cb(void *arg, int status, Csched__V1__Run *run);
void runs_cb(void *arg, int status, Csched__V1__Run **runs, size_t n, bool more);
void events_cb(void *arg, int status, Csched__V1__Event **events, size_t n);

/* Blocking libpq on the side, as a person with psql would. */
PGconn *admin_connect(const char *conninfo);
void admin_exec(const char *conninfo, const char *sql);
void admin_must(PGconn *admin, const char *sql);
/* The first column of the first row of sql, as a number. */
long long admin_value(const char *conninfo, const char *sql);
/* Ends every connection of the store (application_name "cschedd pid ...") to the
 * test database. */
void admin_kill_store_conns(PGconn *admin);

Csched__V1__Job make_job(const char *name, char **argv, size_t argc);
Csched__V1__Run make_run(int64_t id, const char *job, Csched__V1__RunState state);
Csched__V1__Event make_event(int64_t seq, int64_t run_id, const char *job);
Csched__V1__Attempt make_attempt(uint32_t number, Csched__V1__RunState state);
/* Runs 1..10 with one attempt each: odd ones of job "odd" (succeeded), even
 * ones of "even" (queued). */
void put_ten_runs(struct fixture *f);

#endif
