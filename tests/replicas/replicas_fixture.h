/* The replicas fixture: one throwaway PostgreSQL (testpg's, as every
 * integration test has) and N cschedd replicas on it, each a real process
 * with its own state dir, its own unix socket, its own csched-test-proxy
 * in front of the database (so that one replica's link can be cut alone),
 * --replica-id rK, the test's --heartbeat, --attempt-lease and
 * --drain-timeout, and a libcsched client; an admin libpq connection
 * straight to the database; the faults; and waits that poll a condition
 * until a deadline, never a fixed sleep.
 *
 * Each replica's struct cs_e2e (pg, d, client) lets the cs_e2e_* functions
 * (e2e.h: make a job, trigger, wait for the end, health) run against that
 * replica. Functions run on the test's main thread (the daemons and the
 * proxies get SIGTERM when the thread that started them exits) and return
 * 0 or a negative errno after a line on stderr; they do not assert, the
 * test does.
 *
 * How a test with several replicas uses it, once replicas share the
 * database (today a second cschedd on it is refused by the server lock):
 *
 *   struct cs_replicas_options o = {.n = 3, .heartbeat = "200ms",
 *       .attempt_lease = "2s", .wait = CS_REPLICAS_WAIT_UP};
 *   assert_int_equal(cs_replicas_start(&o, &rs), 0);
 *   // which one took the work: the database says
 *   assert_int_equal(cs_replicas_wait_sql(rs, "SELECT count(*) FROM replicas"
 *                    " WHERE state = 2", "1", 5000), 0);
 *   // jobs whose commands run under the oracles (oracle.h), triggered
 *   // through any replica's cs_replicas_e2e(rs, i)
 *   cs_replicas_kill9(rs, a);             // or sigstop, cut, pg_restart
 *   cs_replicas_wait_sql(rs, "SELECT id FROM replicas WHERE state = 2",
 *                        "r1", 2 * heartbeat + slack);
 *   // then: every run ended once (cs_oracle_run), no limit exceeded
 *   // (cs_oracle_excess), epochs moved on (cs_replicas_row)
 *   cs_replicas_restart(rs, a, CS_REPLICAS_WAIT_UP);
 *   assert_int_equal(cs_replicas_stop(rs), 0);
 *
 * Running as root (as CI does, from a clone in root's 0700 home): the
 * cluster runs as postgres, the replicas as root, the jobs' commands as
 * the job user (nobody), so everything those commands touch is made with
 * cs_test_mkdtemp_shared (the oracles do). Temp dirs go under
 * CSCHED_TEST_TMPDIR (default /tmp) and are kept with CSCHED_TEST_KEEP=1. */
#ifndef CS_REPLICAS_FIXTURE_H
#define CS_REPLICAS_FIXTURE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "e2e.h"
#include "testproxy.h"

#define CS_REPLICAS_MAX 5

/* What cs_replicas_start and cs_replicas_restart wait for. */
enum cs_replicas_wait {
    /* Its ready file and SERVING on health: a replica that serves. */
    CS_REPLICAS_WAIT_READY,
    /* Its process alive and its row in the replicas table: any replica,
     * a standby that may never serve included. */
    CS_REPLICAS_WAIT_UP,
    /* Nothing: spawned only. */
    CS_REPLICAS_WAIT_NONE,
};

struct cs_replicas_options {
    unsigned n; /* replicas, 1 to CS_REPLICAS_MAX */
    /* --heartbeat, --attempt-lease, --drain-timeout ("200ms", "2s"); NULL
     * leaves the server's default. */
    const char *heartbeat;
    const char *attempt_lease;
    const char *drain_timeout;
    /* --max-running, the cluster's limit; 0: CS_E2E_MAX_RUNNING. */
    unsigned max_running;
    /* More cschedd arguments for every replica, NULL-terminated, or NULL. */
    const char *const *extra_args;
    enum cs_replicas_wait wait;
    /* Where every replica's cschedd is (NULL: this build's), e.g. the
     * previous version's for an upgrade (cs_replicas_upgrade). */
    const char *bin_dir;
};

struct cs_replica {
    char id[16]; /* "r0", "r1", ... */
    struct cs_testproxy *proxy;
    /* e.pg the shared cluster, e.d this replica's daemon, e.client its
     * client (made anew by cs_replicas_restart). */
    struct cs_e2e e;
    bool killed;  /* by cs_replicas_kill9, until restarted */
    bool stopped; /* by cs_replicas_sigstop, until cs_replicas_sigcont */
    /* Its row's epoch before its last restart (0: none): up again once a
     * join gave it a greater one. */
    int64_t epoch_before;
};

/* The fixture; the test owns it, cs_replicas_stop frees it. */
struct cs_replicas {
    struct cs_testpg *pg;
    PGconn *admin; /* see cs_replicas_admin */
    unsigned n;
    struct cs_replica r[CS_REPLICAS_MAX];
};

/* cs_replicas_start starts the database, a proxy per replica and the
 * replicas (in order), and waits as opts->wait says (up to 120 s each). On
 * failure nothing is left running. */
int cs_replicas_start(const struct cs_replicas_options *opts, struct cs_replicas **out);

/* cs_replicas_stop continues stopped replicas, restores every link, stops
 * the replicas with SIGTERM, then the proxies and the database, and frees
 * rs. Returns 0, or the first non-zero exit status of a replica that was
 * running (a replica killed by cs_replicas_kill9 and not restarted does
 * not count; one that exited by itself does). NULL returns 0. */
int cs_replicas_stop(struct cs_replicas *rs);

/* cs_replicas_e2e is replica i's struct cs_e2e, for the cs_e2e_* functions. */
struct cs_e2e *cs_replicas_e2e(struct cs_replicas *rs, unsigned i);

/* Faults. kill9 sends SIGKILL to replica i and reaps it; its minders live
 * on. sigstop and sigcont freeze and thaw cschedd (its minders and their
 * commands go on). restart starts i again on its state dir, id, socket and
 * proxy (stopping it with SIGTERM first if it runs) and waits as wait
 * says; its client is made anew. cut and restore act on i's proxy:
 * testproxy.h says what each cut does. pg_restart stops the cluster with a
 * fast shutdown (every session ends) and starts it again on the same
 * socket, waiting until it accepts connections: pg_ctl restart -m fast,
 * done through testpg so that the postmaster stays the test's child and
 * dies with it. */
int cs_replicas_kill9(struct cs_replicas *rs, unsigned i);
int cs_replicas_sigstop(struct cs_replicas *rs, unsigned i);
int cs_replicas_sigcont(struct cs_replicas *rs, unsigned i);
/* cs_replicas_sigterm sends SIGTERM to replica i and returns at once: a
 * drain, which the test watches (cs_testd_reap says when it exited). */
int cs_replicas_sigterm(struct cs_replicas *rs, unsigned i);
int cs_replicas_restart(struct cs_replicas *rs, unsigned i, enum cs_replicas_wait wait);
/* cs_replicas_upgrade restarts replica i (as cs_replicas_restart) on the
 * cschedd in bin_dir (NULL: this build's): an upgrade in place, same state
 * dir, id and proxy. */
int cs_replicas_upgrade(struct cs_replicas *rs, unsigned i, const char *bin_dir,
                        enum cs_replicas_wait wait);
int cs_replicas_cut(struct cs_replicas *rs, unsigned i, enum cs_testproxy_cut mode);
int cs_replicas_restore(struct cs_replicas *rs, unsigned i);
int cs_replicas_pg_restart(struct cs_replicas *rs);

/* cs_replicas_admin returns the admin connection (straight to the
 * database, no proxy), connecting again if it broke (after pg_restart), or
 * NULL if the database does not answer. Borrowed; rs owns it. */
PGconn *cs_replicas_admin(struct cs_replicas *rs);

/* cs_replicas_sql runs sql on the admin connection and copies the first
 * column of its first row into buf (cap bytes; NULL reads as ""). 0,
 * -ENOENT for no row, -EIO for an error (said on stderr unless quiet). */
int cs_replicas_sql(struct cs_replicas *rs, const char *sql, char *buf, size_t cap, bool quiet);

/* Replica i's row in the replicas table (migration 0010). */
struct cs_replica_row {
    int64_t epoch;
    char state[16];   /* "standby", "active", "draining", "left", "fenced" */
    bool lease_valid; /* lease_until is still ahead, by the database's clock */
};

/* cs_replicas_row reads replica i's row: 0, -ENOENT without one, -EIO. */
int cs_replicas_row(struct cs_replicas *rs, unsigned i, struct cs_replica_row *row);

/* cs_replicas_active is the index of the replica whose row is active
 * (state 2), -ENOENT when none is, -EIO when the database does not say. */
int cs_replicas_active(struct cs_replicas *rs);

/* cs_replicas_reconnect makes replica i's client anew: a standby that
 * became active serves now, and a channel that failed against it would
 * wait out gRPC's reconnection backoff first. */
int cs_replicas_reconnect(struct cs_replicas *rs, unsigned i);

/* cs_replicas_log_count counts the lines of replica i's log (its stderr,
 * across restarts and execv) that contain needle: 0 or more, or a
 * negative errno. */
long cs_replicas_log_count(struct cs_replicas *rs, unsigned i, const char *needle);

/* Waits. Each polls until its condition holds or timeout_ms has passed;
 * it returns 0 (wait_health: the ms it took) or -ETIMEDOUT, and says on
 * stderr what it last saw. */

/* cs_replicas_wait_until polls cond_cb(arg) every 20 ms. */
typedef bool (*cs_replicas_cond_cb)(void *arg);
int cs_replicas_wait_until(cs_replicas_cond_cb cond_cb, void *arg, int64_t timeout_ms);

/* cs_replicas_wait_ready waits for replica i's ready file and SERVING;
 * -ECHILD if it exited. */
int cs_replicas_wait_ready(struct cs_replicas *rs, unsigned i, int64_t timeout_ms);

/* cs_replicas_wait_up waits for replica i's process to be alive and its
 * row to be in the replicas table, with an epoch past the one it had
 * before its last restart; -ECHILD if it exited. */
int cs_replicas_wait_up(struct cs_replicas *rs, unsigned i, int64_t timeout_ms);

/* cs_replicas_wait_sql waits for cs_replicas_sql(sql) to give want (an
 * error or no row is only "not yet"). */
int cs_replicas_wait_sql(struct cs_replicas *rs, const char *sql, const char *want,
                         int64_t timeout_ms);

/* cs_replicas_wait_active waits for a replica other than not_i (-1: any)
 * to be active by its row and to serve (ready file and SERVING), makes its
 * client anew (cs_replicas_reconnect) and returns its index. *row_ms (if
 * not NULL) gets the ms until its row said active, the rest of the wait
 * being the snapshot's load and the start of serving. */
int cs_replicas_wait_active(struct cs_replicas *rs, int not_i, int64_t timeout_ms, int64_t *row_ms);

/* cs_replicas_wait_health waits for replica i's health service ("") to
 * report want (a Grpc__Health__V1__HealthCheckResponse__ServingStatus); a
 * call that fails is only "not yet". Returns the ms it took. */
int64_t cs_replicas_wait_health(struct cs_replicas *rs, unsigned i, int want, int64_t timeout_ms);

#endif
