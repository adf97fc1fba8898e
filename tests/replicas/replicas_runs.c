/* The failover tests' runs (see replicas_runs.h). */
#include "replicas_runs.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#define COMMAND_BYTES 4096
#define LOST_MESSAGE "lost with replica "

void cs_rruns_job(struct cs_replicas *rs, unsigned i, const struct cs_oracle *o, const char *prefix,
                  const char *payload, unsigned max_running, uint32_t max_attempts, char *name,
                  size_t size)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char command[COMMAND_BYTES];

    cs_e2e_name(name, size, prefix);
    assert_int_equal(cs_oracle_command(o, name, max_running, payload, command, sizeof(command)), 0);
    job.name = name;
    job.shell = command;
    job.max_running = max_running;
    job.max_attempts = max_attempts;
    job.kill_grace_seconds = CS_RRUNS_KILL_GRACE_S;
    csched__v1__job__free_unpacked(cs_e2e_create_job(cs_replicas_e2e(rs, i), &job), NULL);
}

void cs_rruns_trigger(struct cs_replicas *rs, unsigned i, const char *job, size_t n, int64_t *ids)
{
    for (size_t k = 0; k < n; k++)
        ids[k] = cs_e2e_trigger(cs_replicas_e2e(rs, i), job);
}

int cs_rruns_first_start(const struct cs_oracle *o, int64_t id, pid_t *pid, int64_t *ns)
{
    char path[PATH_MAX + 64], line[256];
    int rc = -ENOENT;

    snprintf(path, sizeof(path), "%s/run-%lld.marks", o->dir, (long long)id);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return errno == ENOENT ? -ENOENT : -errno;
    while (rc != 0 && fgets(line, sizeof(line), f) != NULL) {
        long long run, when;
        unsigned attempt;
        long p;
        if (sscanf(line, "start %lld %u %ld %lld", &run, &attempt, &p, &when) == 4) {
            *pid = (pid_t)p;
            *ns = when;
            rc = 0;
        }
    }
    fclose(f);
    return rc;
}

void cs_rruns_wait_started(const struct cs_oracle *o, int64_t id, int64_t timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms, ns;
    pid_t pid;

    while (cs_rruns_first_start(o, id, &pid, &ns) != 0) {
        if (cs_test_now_ms() > deadline)
            fail_msg("run %lld's command did not start within %lld ms", (long long)id,
                     (long long)timeout_ms);
        cs_test_sleep_ms(20);
    }
}

void cs_rruns_wait_forwarding(struct cs_replicas *rs, unsigned i)
{
    int64_t deadline = cs_test_now_ms() + 10 * CS_RRUNS_HEARTBEAT_MS + 5000;
    Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    Csched__V1__ListJobsResponse *out = NULL;
    struct cs_status st = {0};
    int rc;

    while ((rc = cs_scheduler_list_jobs(cs_replicas_e2e(rs, i)->client, &req, &out, cs_e2e_opts(),
                                        &st)) == GRPC_STATUS_UNAVAILABLE &&
           cs_test_now_ms() < deadline)
        cs_test_sleep_ms(20);
    if (rc != 0)
        fail_msg("ListJobs through %s: %d %s", rs->r[i].id, rc, st.message);
    csched__v1__list_jobs_response__free_unpacked(out, NULL);
}

Csched__V1__Run *cs_rruns_wait_end(struct cs_replicas *rs, unsigned i, int64_t id,
                                   int64_t timeout_ms)
{
    /* Any end is terminal: asking for SUCCEEDED returns at whichever. */
    Csched__V1__Run *run = cs_e2e_wait_state(
        cs_replicas_e2e(rs, i), id, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, timeout_ms);
    if (!cs_test_run_state_is_terminal(run->state))
        fail_msg("run %lld still %s after %lld ms", (long long)id,
                 cs_test_run_state_name(run->state), (long long)timeout_ms);
    return run;
}

size_t cs_rruns_lost_with(const Csched__V1__Run *run, const char *replica_id)
{
    char want[64];
    size_t n = 0;

    snprintf(want, sizeof(want), LOST_MESSAGE "%s,", replica_id);
    for (size_t k = 0; k < run->n_attempts; k++) {
        const Csched__V1__Attempt *a = run->attempts[k];
        n += a->state == CSCHED__V1__RUN_STATE__RUN_STATE_LOST && a->message != NULL &&
             strstr(a->message, want) != NULL;
    }
    return n;
}

void cs_rruns_assert_once(const struct cs_oracle *o, int64_t id, uint32_t max_attempts)
{
    struct cs_oracle_run seen;

    assert_int_equal(cs_oracle_run(o, id, &seen), 0);
    if (seen.overlap)
        fail_msg("run %lld: two attempts alive at once: %s", (long long)id, seen.why);
    if (seen.executions < 1 || seen.executions > max_attempts)
        fail_msg("run %lld: %u executions, want 1 to %u", (long long)id, seen.executions,
                 max_attempts);
}

void cs_rruns_assert_no_excess(const struct cs_oracle *o)
{
    char first[256];
    long n = cs_oracle_excess(o, first, sizeof(first));

    if (n != 0)
        fail_msg("%ld limit excesses, the first: %s", n, first);
}

static int setup(void **state, unsigned n, const char *drain_timeout, const char *bin_dir,
                 const char *const *extra_args)
{
    struct cs_replicas_options o = {
        .n = n,
        .heartbeat = "200ms",
        .attempt_lease = "3s",
        .drain_timeout = drain_timeout,
        .extra_args = extra_args,
        .wait = CS_REPLICAS_WAIT_UP,
        .bin_dir = bin_dir,
    };
    struct cs_rruns_suite *f = calloc(1, sizeof(*f));
    int rc;

    if (f == NULL)
        return -1;
    /* Without a cluster limit, each replica's machine runs up to its own
     * --max-running: the cluster all of them together. */
    rc = cs_oracle_init(&f->oracle, n * CS_E2E_MAX_RUNNING);
    if (rc == 0 && (rc = cs_replicas_start(&o, &f->rs)) != 0)
        cs_oracle_close(&f->oracle);
    if (rc != 0) {
        free(f);
        return rc;
    }
    *state = f;
    return 0;
}

int cs_rruns_setup(void **state, unsigned n, const char *drain_timeout)
{
    return setup(state, n, drain_timeout, NULL, NULL);
}

int cs_rruns_setup_args(void **state, unsigned n, const char *const *extra_args)
{
    return setup(state, n, NULL, NULL, extra_args);
}

int cs_rruns_setup_from(void **state, unsigned n, const char *drain_timeout, const char *bin_dir)
{
    return setup(state, n, drain_timeout, bin_dir, NULL);
}

int cs_rruns_teardown(void **state)
{
    struct cs_rruns_suite *f = *state;
    int status = cs_replicas_stop(f->rs);

    cs_oracle_close(&f->oracle);
    free(f);
    if (status != 0)
        fail_msg("a replica's exit status %d, want 0 (clean shutdown)", status);
    return 0;
}

unsigned cs_rruns_active(struct cs_rruns_suite *f, int not_i, int64_t *row_ms)
{
    int i = cs_replicas_wait_active(f->rs, not_i, CS_RRUNS_SERVING_MS, row_ms);

    if (i < 0)
        fail_msg("no replica took the active role: %s", strerror(-i));
    return (unsigned)i;
}

int64_t cs_rruns_epoch(struct cs_rruns_suite *f, unsigned i, const char *want_state)
{
    struct cs_replica_row row;

    assert_int_equal(cs_replicas_row(f->rs, i, &row), 0);
    if (want_state != NULL && strcmp(row.state, want_state) != 0)
        fail_msg("%s is %s, want %s", f->rs->r[i].id, row.state, want_state);
    return row.epoch;
}

void cs_rruns_wait_rejoined(struct cs_rruns_suite *f, unsigned i, int64_t fenced_epoch)
{
    int64_t deadline = cs_test_now_ms() + 10000;
    struct cs_replica_row row;

    for (;;) {
        assert_int_equal(cs_replicas_row(f->rs, i, &row), 0);
        if (strcmp(row.state, "standby") == 0 && row.epoch > fenced_epoch)
            return;
        if (cs_test_now_ms() > deadline)
            fail_msg("%s after its fence: %s epoch %lld, want standby with an epoch past %lld",
                     f->rs->r[i].id, row.state, (long long)row.epoch, (long long)fenced_epoch);
        cs_test_sleep_ms(20);
    }
}

int64_t cs_rruns_wait_lost(struct cs_rruns_suite *f, unsigned i, int64_t id, const char *gone,
                           int64_t t0)
{
    int64_t deadline = cs_test_now_ms() + CS_RRUNS_LOST_MS;

    for (;;) {
        Csched__V1__Run *run = cs_e2e_get_run(cs_replicas_e2e(f->rs, i), id);
        size_t lost = cs_rruns_lost_with(run, gone);
        csched__v1__run__free_unpacked(run, NULL);
        if (lost > 0)
            return cs_test_now_ms() - t0;
        if (cs_test_now_ms() > deadline)
            fail_msg("run %lld: no attempt LOST with %s %d ms after its loss", (long long)id, gone,
                     CS_RRUNS_LOST_MS);
        cs_test_sleep_ms(20);
    }
}

void cs_rruns_assert_outcomes(struct cs_rruns_suite *f, unsigned i, const struct cs_rruns_run *runs,
                              size_t n, const char *gone)
{
    for (size_t k = 0; k < n; k++) {
        Csched__V1__Run *run = cs_rruns_wait_end(f->rs, i, runs[k].id, CS_RRUNS_END_MS);
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED)
            fail_msg("run %lld ended %s after %zu attempts, want SUCCEEDED", (long long)runs[k].id,
                     cs_test_run_state_name(run->state), run->n_attempts);
        if (runs[k].long_first && (run->n_attempts != 2 || cs_rruns_lost_with(run, gone) != 1))
            fail_msg("run %lld: %zu attempts, the first %s \"%s\", want LOST with %s, then "
                     "one more",
                     (long long)runs[k].id, run->n_attempts,
                     cs_test_run_state_name(run->attempts[0]->state), run->attempts[0]->message,
                     gone);
        csched__v1__run__free_unpacked(run, NULL);
        cs_rruns_assert_once(&f->oracle, runs[k].id, CS_RRUNS_MAX_ATTEMPTS);
    }
    cs_rruns_assert_no_excess(&f->oracle);
}

/* The replica that started run id's last attempt, as its row says. */
static void last_started_by(struct cs_rruns_suite *f, int64_t id, char *replica, size_t cap)
{
    char sql[160];

    snprintf(sql, sizeof(sql),
             "SELECT replica FROM attempts WHERE run_id = %lld ORDER BY number DESC LIMIT 1",
             (long long)id);
    assert_int_equal(cs_replicas_sql(f->rs, sql, replica, cap, false), 0);
}

void cs_rruns_ran_on(struct cs_rruns_suite *f, int64_t id, unsigned i)
{
    char replica[64];

    last_started_by(f, id, replica, sizeof(replica));
    if (strcmp(replica, f->rs->r[i].id) != 0)
        fail_msg("run %lld's last attempt was started by \"%s\", want %s", (long long)id, replica,
                 f->rs->r[i].id);
}

void cs_rruns_ran_elsewhere(struct cs_rruns_suite *f, int64_t id, unsigned i)
{
    char replica[64];

    last_started_by(f, id, replica, sizeof(replica));
    if (strcmp(replica, f->rs->r[i].id) == 0 || replica[0] == '\0')
        fail_msg("run %lld's last attempt was started by \"%s\", want another than %s",
                 (long long)id, replica, f->rs->r[i].id);
}

void cs_rruns_placed_on(struct cs_rruns_suite *f, unsigned i, int64_t id, char *out, size_t cap)
{
    Csched__V1__Run *run = cs_e2e_get_run(cs_replicas_e2e(f->rs, i), id);
    if (run->n_attempts == 0)
        fail_msg("run %lld has no attempt yet", (long long)id);
    (void)snprintf(out, cap, "%s", run->attempts[run->n_attempts - 1]->replica);
    csched__v1__run__free_unpacked(run, NULL);
}

void cs_rruns_cancel(struct cs_rruns_suite *f, unsigned i, int64_t id)
{
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    req.run_id = id;
    if (cs_scheduler_cancel_run(cs_replicas_e2e(f->rs, i)->client, &req, &run, cs_e2e_opts(),
                                &st) != 0)
        fail_msg("CancelRun %lld through %s: %s", (long long)id, f->rs->r[i].id, st.message);
    csched__v1__run__free_unpacked(run, NULL);
}

size_t cs_rruns_split(struct cs_rruns_suite *f, unsigned i, struct cs_rruns_run *runs, size_t n,
                      const char *gone)
{
    size_t kept = 0, n_others = 0;
    int64_t *others = calloc(n + 1, sizeof(*others));
    assert_non_null(others);
    for (size_t k = 0; k < n; k++) {
        char where[64];
        cs_rruns_placed_on(f, i, runs[k].id, where, sizeof(where));
        if (strcmp(where, gone) == 0)
            runs[kept++] = runs[k];
        else
            others[n_others++] = runs[k].id;
    }
    for (size_t k = 0; k < n_others; k++)
        cs_rruns_cancel(f, i, others[k]);
    for (size_t k = 0; k < n_others; k++) {
        Csched__V1__Run *run = cs_rruns_wait_end(f->rs, i, others[k], CS_RRUNS_END_MS);
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED)
            fail_msg("run %lld, cancelled on the machine it was placed on, ended %s",
                     (long long)others[k], cs_test_run_state_name(run->state));
        csched__v1__run__free_unpacked(run, NULL);
    }
    free(others);
    return kept;
}
