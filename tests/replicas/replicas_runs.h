/* What the failover tests of tests/replicas repeat about runs: jobs whose
 * commands run under the oracles, triggered and followed through whichever
 * replica is active, and the checks of what the oracles and the runs say
 * after a fault. Helpers assert with cmocka (a failure ends the current
 * test); test's main thread. */
#ifndef CS_REPLICAS_RUNS_H
#define CS_REPLICAS_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oracle.h"
#include "replicas_fixture.h"

/* The job's kill grace in the failover tests: it is part of the wait past
 * a lost replica's deadline, so small keeps the tests short. */
#define CS_RRUNS_KILL_GRACE_S 1

/* The payload of a command that outlives any attempt lease of the tests
 * in its first attempt, so only its minder's self-fencing stops it, and
 * ends at once in the next. */
#define CS_RRUNS_LONG_FIRST "if [ \"$CSCHED_ATTEMPT\" = 1 ]; then sleep 60; fi"

/* The tests' heartbeat and attempt lease. */
#define CS_RRUNS_HEARTBEAT_MS 200
#define CS_RRUNS_ATTEMPT_LEASE_MS 3000
/* The wait past a lost replica's attempts' deadline (docs/operations.md):
 * kill grace, 2 s, 1 s, 1 % of the attempt lease, 1 s. */
#define CS_RRUNS_LOST_MARGIN_MS                                                                    \
    (CS_RRUNS_KILL_GRACE_S * 1000 + 4000 + CS_RRUNS_ATTEMPT_LEASE_MS / 100)
/* How long the tests wait: for a replica to serve after a takeover (the
 * snapshot loaded), for a lost attempt past its deadline and margin, for
 * a run to end after a fault. */
#define CS_RRUNS_SERVING_MS 15000
#define CS_RRUNS_LOST_MS (CS_RRUNS_ATTEMPT_LEASE_MS + CS_RRUNS_LOST_MARGIN_MS + 5000)
#define CS_RRUNS_END_MS 40000
#define CS_RRUNS_MAX_ATTEMPTS 2

/* A group's state: the replicas and the oracles. */
struct cs_rruns_suite {
    struct cs_replicas *rs;
    struct cs_oracle oracle;
};

/* cs_rruns_setup is a group setup's body: the oracles and n replicas with
 * the tests' heartbeat and attempt lease, drain_timeout (NULL: the
 * default), waiting for each to be up; a struct cs_rruns_suite in *state. */
int cs_rruns_setup(void **state, unsigned n, const char *drain_timeout);

/* cs_rruns_setup_args is cs_rruns_setup with more cschedd arguments for
 * every replica (NULL-terminated), as cs_replicas_options.extra_args. */
int cs_rruns_setup_args(void **state, unsigned n, const char *const *extra_args);

/* cs_rruns_setup_from is cs_rruns_setup with every replica's cschedd taken
 * from bin_dir (NULL: this build's), as cs_replicas_options.bin_dir. */
int cs_rruns_setup_from(void **state, unsigned n, const char *drain_timeout, const char *bin_dir);

/* cs_rruns_teardown is the group teardown: stops the replicas (each must
 * exit 0) and removes the oracles' dir. */
int cs_rruns_teardown(void **state);

/* cs_rruns_active waits for the active replica (other than not_i, -1 for
 * any) to serve and returns it; *row_ms as cs_replicas_wait_active. */
unsigned cs_rruns_active(struct cs_rruns_suite *f, int not_i, int64_t *row_ms);

/* cs_rruns_epoch is replica i's epoch, asserting its state is want_state
 * (NULL: any). */
int64_t cs_rruns_epoch(struct cs_rruns_suite *f, unsigned i, const char *want_state);

/* cs_rruns_wait_rejoined waits for replica i to be a standby again, with
 * an epoch past fenced_epoch. */
void cs_rruns_wait_rejoined(struct cs_rruns_suite *f, unsigned i, int64_t fenced_epoch);

/* A run a test follows; long_first: its first attempt outlives the attempt
 * lease (CS_RRUNS_LONG_FIRST), so it must end LOST and run again. */
struct cs_rruns_run {
    int64_t id;
    bool long_first;
};

/* cs_rruns_wait_lost waits until run id has an attempt LOST with replica
 * gone, asking replica i; returns the ms since t0 (cs_test_now_ms). */
int64_t cs_rruns_wait_lost(struct cs_rruns_suite *f, unsigned i, int64_t id, const char *gone,
                           int64_t t0);

/* cs_rruns_assert_outcomes waits for each run to end, asking replica i,
 * and asserts: SUCCEEDED; a long_first one after exactly one attempt LOST
 * with replica gone and one more; what cs_rruns_assert_once checks; no
 * limit exceeded. */
void cs_rruns_assert_outcomes(struct cs_rruns_suite *f, unsigned i, const struct cs_rruns_run *runs,
                              size_t n, const char *gone);

/* cs_rruns_job creates, through replica i, a job named after prefix (its
 * name into name) whose command runs payload under the oracles, with
 * max_running, max_attempts, a retry at once and CS_RRUNS_KILL_GRACE_S. */
void cs_rruns_job(struct cs_replicas *rs, unsigned i, const struct cs_oracle *o, const char *prefix,
                  const char *payload, unsigned max_running, uint32_t max_attempts, char *name,
                  size_t size);

/* cs_rruns_wait_forwarding waits for standby i to forward calls: once a
 * renewal has shown it the active replica's address, within a heartbeat or
 * two of a start or a takeover (UNAVAILABLE before). */
void cs_rruns_wait_forwarding(struct cs_replicas *rs, unsigned i);

/* cs_rruns_trigger triggers job n times through replica i; ids into ids. */
void cs_rruns_trigger(struct cs_replicas *rs, unsigned i, const char *job, size_t n, int64_t *ids);

/* cs_rruns_wait_started waits up to timeout_ms for a start mark of run id. */
void cs_rruns_wait_started(const struct cs_oracle *o, int64_t id, int64_t timeout_ms);

/* cs_rruns_wait_end waits up to timeout_ms for run id to end, asking
 * replica i, and returns it (caller frees). */
Csched__V1__Run *cs_rruns_wait_end(struct cs_replicas *rs, unsigned i, int64_t id,
                                   int64_t timeout_ms);

/* cs_rruns_lost_with counts run's attempts that ended LOST with the
 * message of replica id's lost lease. */
size_t cs_rruns_lost_with(const Csched__V1__Run *run, const char *replica_id);

/* cs_rruns_assert_once asserts what the oracles saw of run id: it ran at
 * least once and at most max_attempts times, never two attempts at once. */
void cs_rruns_assert_once(const struct cs_oracle *o, int64_t id, uint32_t max_attempts);

/* cs_rruns_assert_no_excess asserts that no limit was exceeded, and no
 * run's lock found taken, on any replica. */
void cs_rruns_assert_no_excess(const struct cs_oracle *o);

/* cs_rruns_first_start reads run id's first start mark: its command's
 * pid and the wall clock it started at, in ns. -ENOENT without one. */
int cs_rruns_first_start(const struct cs_oracle *o, int64_t id, pid_t *pid, int64_t *ns);

/* cs_rruns_ran_on asserts that the last attempt of run id was started by
 * replica i (the attempts table's replica column). */
void cs_rruns_ran_on(struct cs_rruns_suite *f, int64_t id, unsigned i);

/* cs_rruns_ran_elsewhere asserts that the last attempt of run id was not
 * started by replica i. */
void cs_rruns_ran_elsewhere(struct cs_rruns_suite *f, int64_t id, unsigned i);

/* cs_rruns_placed_on is the replica that runs run id's latest attempt
 * (Attempt.replica), asking replica i, into out. */
void cs_rruns_placed_on(struct cs_rruns_suite *f, unsigned i, int64_t id, char *out, size_t cap);

/* cs_rruns_cancel cancels run id through replica i, asserting OK. */
void cs_rruns_cancel(struct cs_rruns_suite *f, unsigned i, int64_t id);

/* cs_rruns_split keeps in runs (n of them) those whose latest attempt runs
 * on replica gone, marked long_first as long_first says, and cancels the
 * others through replica i, which must then end CANCELLED: what a test of
 * gone's loss does with the runs of a command that sleeps a minute that
 * the active replica placed elsewhere. Returns how many were kept. */
size_t cs_rruns_split(struct cs_rruns_suite *f, unsigned i, struct cs_rruns_run *runs, size_t n,
                      const char *gone);

#endif
