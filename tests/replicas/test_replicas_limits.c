/* The limits oracle across three replicas: 600 runs of four jobs with
 * limits of their own (2, 3, 5 and 12, more than the cluster's 16 together),
 * triggered through replicas picked at random (standbys forward), and the
 * active replica killed with kill -9 halfway through the burst. Each
 * command takes a free lock of its job's limit and of the cluster's with
 * flock -n (tests/replicas/oracle.h), so a limit exceeded for an instant,
 * on whichever replica, is seen by the commands themselves. Every run must
 * end SUCCEEDED, run at most max_attempts times and never two attempts at
 * once, and no lock may have been found taken.
 *
 * Then the cluster's limit (SetClusterLimits): seeded by
 * --cluster-max-running where never set, changed to 3 through a standby,
 * held by the active replica's commands (an oracle of 3 cluster locks)
 * and by the replica that takes over after a kill -9, whose restart with
 * the flag leaves the value set at run time as it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "replicas_runs.h"

#define N_REPLICAS 3
#define N_JOBS 4
#define N_RUNS 600
#define JOB_NAME 64
/* The flag every replica starts with, and the value set at run time. */
#define SEEDED_LIMIT "12"
#define CLUSTER_LIMIT 3
#define N_WIDE 30

/* Short commands of different lengths, so that the limits are met often:
 * dash has no $RANDOM, the shell's pid spreads the lengths instead. */
static const struct {
    const char *prefix;
    unsigned max_running;
    const char *payload;
} jobs[N_JOBS] = {
    {"two", 2, "sleep 0.0$(($$ % 10))"},
    {"three", 3, "sleep 0.0$(($$ % 10))"},
    {"five", 5, "sleep 0.1$(($$ % 10))"},
    {"twelve", 12, "sleep 0.2$(($$ % 10))"},
};

/* trigger_burst triggers runs from..to-1 of the burst, run k of job k %
 * N_JOBS, each through one of the replicas in via (n_via of them) picked at
 * random. */
static void trigger_burst(struct cs_rruns_suite *f, char names[N_JOBS][JOB_NAME],
                          const unsigned *via, unsigned n_via, struct cs_rruns_run *runs,
                          size_t from, size_t to)
{
    for (size_t k = from; k < to; k++) {
        unsigned i = via[(unsigned)rand() % n_via];
        runs[k].id = cs_e2e_trigger(cs_replicas_e2e(f->rs, i), names[k % N_JOBS]);
        runs[k].long_first = false;
    }
}

static void test_replicas_limits_oracle(void **state)
{
    struct cs_rruns_suite *f = *state;
    static struct cs_rruns_run runs[N_RUNS];
    char names[N_JOBS][JOB_NAME];
    unsigned all[N_REPLICAS], left[N_REPLICAS - 1], n_left = 0;
    unsigned a = cs_rruns_active(f, -1, NULL);

    srand(31);
    for (unsigned i = 0; i < N_REPLICAS; i++) {
        all[i] = i;
        if (i != a)
            cs_rruns_wait_forwarding(f->rs, i);
    }
    for (unsigned j = 0; j < N_JOBS; j++)
        cs_rruns_job(f->rs, a, &f->oracle, jobs[j].prefix, jobs[j].payload, jobs[j].max_running,
                     CS_RRUNS_MAX_ATTEMPTS, names[j], sizeof(names[j]));

    int64_t t0 = cs_test_now_ms();
    trigger_burst(f, names, all, N_REPLICAS, runs, 0, N_RUNS / 2);
    /* Halfway: the active replica lost with runs running and queued. */
    assert_int_equal(cs_replicas_kill9(f->rs, a), 0);
    unsigned b = cs_rruns_active(f, (int)a, NULL);
    for (unsigned i = 0; i < N_REPLICAS; i++)
        if (i != a)
            left[n_left++] = i;
    for (unsigned k = 0; k < n_left; k++)
        if (left[k] != b)
            cs_rruns_wait_forwarding(f->rs, left[k]);
    trigger_burst(f, names, left, n_left, runs, N_RUNS / 2, N_RUNS);
    assert_int_equal(cs_replicas_restart(f->rs, a, CS_REPLICAS_WAIT_UP), 0);

    cs_rruns_assert_outcomes(f, b, runs, N_RUNS, f->rs->r[a].id);
    size_t lost = 0;
    for (size_t k = 0; k < N_RUNS; k++) {
        Csched__V1__Run *run = cs_e2e_get_run(cs_replicas_e2e(f->rs, b), runs[k].id);
        lost += cs_rruns_lost_with(run, f->rs->r[a].id);
        csched__v1__run__free_unpacked(run, NULL);
    }
    fprintf(stderr,
            "limits: %d runs of %d jobs through %d replicas, %s killed halfway: all SUCCEEDED "
            "after %lld ms, %zu attempts lost with it and retried, no limit exceeded\n",
            N_RUNS, N_JOBS, N_REPLICAS, f->rs->r[a].id, (long long)(cs_test_now_ms() - t0), lost);
}

static Csched__V1__Stats *stats(struct cs_rruns_suite *f, unsigned i)
{
    Csched__V1__Stats *s = NULL;
    struct cs_status st = {0};
    int rc =
        cs_scheduler_get_stats(cs_replicas_e2e(f->rs, i)->client, NULL, &s, cs_e2e_opts(), &st);

    if (rc != 0)
        fail_msg("GetStats through %s: %d %s", f->rs->r[i].id, rc, st.message);
    return s;
}

static int set_cluster_limit(struct cs_rruns_suite *f, unsigned i, uint32_t max_running,
                             struct cs_status *st)
{
    Csched__V1__SetClusterLimitsRequest req = CSCHED__V1__SET_CLUSTER_LIMITS_REQUEST__INIT;
    Csched__V1__ClusterLimits *limits = NULL;

    req.max_running = max_running;
    int rc = cs_scheduler_set_cluster_limits(cs_replicas_e2e(f->rs, i)->client, &req, &limits,
                                             cs_e2e_opts(), st);
    if (rc == 0) {
        assert_int_equal(limits->max_running, max_running);
        csched__v1__cluster_limits__free_unpacked(limits, NULL);
    }
    return rc;
}

/* Asserts what replica i, active, says of the limits it runs under. */
static void assert_limits(struct cs_rruns_suite *f, unsigned i, uint32_t cluster)
{
    Csched__V1__Stats *s = stats(f, i);

    if (s->cluster_max_running != cluster || s->machine_max_running != CS_E2E_MAX_RUNNING ||
        s->max_running != cluster)
        fail_msg("%s: max_running %u, cluster %u, machine %u; want %u, %u, %d", f->rs->r[i].id,
                 s->max_running, s->cluster_max_running, s->machine_max_running, cluster, cluster,
                 CS_E2E_MAX_RUNNING);
    csched__v1__stats__free_unpacked(s, NULL);
}

static void test_replicas_limits_cluster(void **state)
{
    struct cs_rruns_suite *f = *state;
    static struct cs_rruns_run runs[N_WIDE];
    struct cs_oracle narrow;
    struct cs_status st = {0};
    char job[JOB_NAME];
    unsigned a = cs_rruns_active(f, -1, NULL), standby = (a + 1) % N_REPLICAS;

    assert_limits(f, a, (uint32_t)atoi(SEEDED_LIMIT));
    cs_rruns_wait_forwarding(f->rs, standby);
    /* Out of range: refused, naming the field; nothing changed. */
    cs_e2e_assert_status(set_cluster_limit(f, standby, 100001, &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "max_running");
    assert_limits(f, a, (uint32_t)atoi(SEEDED_LIMIT));
    assert_int_equal(set_cluster_limit(f, standby, CLUSTER_LIMIT, &st), 0);
    assert_limits(f, a, CLUSTER_LIMIT);

    /* A job whose own limit is past the cluster's: the cluster's holds. */
    assert_int_equal(cs_oracle_init(&narrow, CLUSTER_LIMIT), 0);
    cs_rruns_job(f->rs, a, &narrow, "wide", "sleep 0.2", 10, CS_RRUNS_MAX_ATTEMPTS, job,
                 sizeof(job));
    for (size_t k = 0; k < N_WIDE; k++) {
        if (k == N_WIDE / 2) {
            /* The replica that takes over reads the limit from the database;
             * the flag of the restarted one leaves it as it was set. */
            assert_int_equal(cs_replicas_kill9(f->rs, a), 0);
            unsigned b = cs_rruns_active(f, (int)a, NULL);
            assert_limits(f, b, CLUSTER_LIMIT);
            assert_int_equal(cs_replicas_restart(f->rs, a, CS_REPLICAS_WAIT_UP), 0);
            a = b;
        }
        runs[k] = (struct cs_rruns_run){cs_e2e_trigger(cs_replicas_e2e(f->rs, a), job), false};
    }
    for (size_t k = 0; k < N_WIDE; k++) {
        Csched__V1__Run *run = cs_rruns_wait_end(f->rs, a, runs[k].id, CS_RRUNS_END_MS);
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED)
            fail_msg("run %lld ended %s", (long long)runs[k].id,
                     cs_test_run_state_name(run->state));
        csched__v1__run__free_unpacked(run, NULL);
        cs_rruns_assert_once(&narrow, runs[k].id, CS_RRUNS_MAX_ATTEMPTS);
    }
    cs_rruns_assert_no_excess(&narrow);
    assert_limits(f, a, CLUSTER_LIMIT);
    cs_oracle_close(&narrow);
}

static int group_setup(void **state)
{
    static const char *const args[] = {"--cluster-max-running", SEEDED_LIMIT, NULL};
    return cs_rruns_setup_args(state, N_REPLICAS, args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_limits_oracle),
        cmocka_unit_test(test_replicas_limits_cluster),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
