/* End-to-end tests of dependencies between jobs (Job.after;
 * docs/dependencies.md) against a real cschedd and PostgreSQL: a run made
 * by its upstream's end as on asks (succeeded, failed, any), fan-out, a
 * fan-in of three that runs once per cause and not at all, with the
 * reason recorded, when one upstream fails; cycles refused naming them;
 * a paused downstream; a window that passes; and a kill -9 of cschedd
 * right after an upstream's end, or between two upstreams' ends, which
 * must leave the downstream run made exactly once after the restart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"

#define WAIT_MS 20000

/* A job running shell after the jobs ups[i], each on ons[i]. */
static void create_after(struct cs_e2e *e, const char *name, const char *shell,
                         const char *const *ups, const Csched__V1__DependencyOn *ons, size_t n)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Dependency deps[8], *ptrs[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        csched__v1__dependency__init(&deps[i]);
        deps[i].job = (char *)ups[i];
        deps[i].on = ons[i];
        ptrs[i] = &deps[i];
    }
    job.name = (char *)name;
    job.shell = (char *)shell;
    job.after = ptrs;
    job.n_after = n;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
}

static Csched__V1__ListRunsResponse *list_runs(struct cs_e2e *e, const char *job)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *resp = NULL;
    struct cs_status st;
    req.job_name = (char *)job;
    req.page_size = 1000;
    if (cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListRuns %s: %s", job, st.message);
    return resp;
}

/* The runs of job whose cause is cause. */
static size_t count_runs(struct cs_e2e *e, const char *job, const char *cause, int64_t *last_id)
{
    Csched__V1__ListRunsResponse *resp = list_runs(e, job);
    size_t n = 0;
    for (size_t i = 0; i < resp->n_runs; i++)
        if (strcmp(resp->runs[i]->cause, cause) == 0) {
            n++;
            if (last_id != NULL)
                *last_id = resp->runs[i]->id;
        }
    csched__v1__list_runs_response__free_unpacked(resp, NULL);
    return n;
}

static Csched__V1__ListDependencyCausesResponse *list_causes(struct cs_e2e *e, const char *job)
{
    Csched__V1__ListDependencyCausesRequest req = CSCHED__V1__LIST_DEPENDENCY_CAUSES_REQUEST__INIT;
    Csched__V1__ListDependencyCausesResponse *resp = NULL;
    struct cs_status st;
    req.job_name = (char *)job;
    if (cs_scheduler_list_dependency_causes(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListDependencyCauses %s: %s", job, st.message);
    return resp;
}

/* Waits for job's cause to be decided; returns a copy of it (caller frees). */
static Csched__V1__DependencyCause *wait_decided(struct cs_e2e *e, const char *job,
                                                 const char *cause)
{
    int64_t deadline = cs_test_now_ms() + WAIT_MS;
    for (;;) {
        Csched__V1__ListDependencyCausesResponse *resp = list_causes(e, job);
        for (size_t i = 0; i < resp->n_causes; i++) {
            Csched__V1__DependencyCause *c = resp->causes[i];
            if (strcmp(c->cause, cause) == 0 &&
                c->outcome != CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_WAITING) {
                resp->causes[i] = resp->causes[--resp->n_causes];
                csched__v1__list_dependency_causes_response__free_unpacked(resp, NULL);
                return c;
            }
        }
        csched__v1__list_dependency_causes_response__free_unpacked(resp, NULL);
        if (cs_test_now_ms() > deadline)
            fail_msg("%s: cause %s not decided within %d ms", job, cause, WAIT_MS);
        cs_test_sleep_ms(20);
    }
}

/* The run job made for cause, once it has ended (caller frees). */
static Csched__V1__Run *wait_caused_run(struct cs_e2e *e, const char *job, const char *cause)
{
    Csched__V1__DependencyCause *c = wait_decided(e, job, cause);
    if (c->outcome != CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_RAN)
        fail_msg("%s: cause %s not run: %s", job, cause, c->reason);
    int64_t id = c->run_id;
    csched__v1__dependency_cause__free_unpacked(c, NULL);
    return cs_e2e_wait_end(e, id);
}

static void cause_of_run(int64_t id, char *buf, size_t len)
{
    snprintf(buf, len, "run:%lld", (long long)id);
}

/* Fan-out from one upstream to a downstream per on: succeeded and any run
 * after a success, failed does not (and says why); after a failure, the
 * other way round. */
static void test_e2e_after_on_and_fan_out(void **state)
{
    struct cs_e2e *e = *state;
    const Csched__V1__DependencyOn ons[] = {CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED,
                                            CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_FAILED,
                                            CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY};
    const char *names[] = {"on-succeeded", "on-failed", "on-any"};
    char dir[4096], shell[4200], cause[64];
    cs_e2e_tmpdir(dir);
    snprintf(shell, sizeof(shell), "[ ! -e %s/fail ]", dir);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "fan-up", shell), NULL);
    const char *up[] = {"fan-up"};
    for (size_t i = 0; i < 3; i++)
        create_after(e, names[i], "true", up, &ons[i], 1);

    int64_t ok = cs_e2e_trigger(e, "fan-up");
    cause_of_run(ok, cause, sizeof(cause));
    for (size_t i = 0; i < 3; i++) {
        Csched__V1__DependencyCause *c = wait_decided(e, names[i], cause);
        bool want_run = i != 1;
        assert_int_equal(c->outcome,
                         want_run ? CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_RAN
                                  : CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_NOT_RUN);
        assert_int_equal(c->n_upstreams, 1);
        assert_int_equal(c->upstreams[0]->run_id, ok);
        if (want_run) {
            Csched__V1__Run *run = cs_e2e_wait_end(e, c->run_id);
            assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
            assert_int_equal(run->n_caused_by_run_ids, 1);
            assert_int_equal(run->caused_by_run_ids[0], ok);
            assert_string_equal(run->cause, cause);
            csched__v1__run__free_unpacked(run, NULL);
        } else {
            assert_non_null(strstr(c->reason, "ended succeeded"));
            assert_non_null(strstr(c->reason, "runs after it failed"));
        }
        csched__v1__dependency_cause__free_unpacked(c, NULL);
        assert_int_equal(count_runs(e, names[i], cause, NULL), want_run ? 1 : 0);
    }

    char path[4200];
    snprintf(path, sizeof(path), "%s/fail", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    int64_t bad = cs_e2e_trigger(e, "fan-up");
    cause_of_run(bad, cause, sizeof(cause));
    for (size_t i = 0; i < 3; i++) {
        Csched__V1__DependencyCause *c = wait_decided(e, names[i], cause);
        bool want_run = i != 0;
        assert_int_equal(c->outcome,
                         want_run ? CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_RAN
                                  : CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_NOT_RUN);
        if (!want_run)
            assert_non_null(strstr(c->reason, "ended failed"));
        csched__v1__dependency_cause__free_unpacked(c, NULL);
    }
    cs_test_rmtree(dir);
}

/* root -> a, b, c -> sink (all on succeeded): one sink run per trigger of
 * root, caused by the three; none when b fails, with b named. */
static void test_e2e_after_fan_in(void **state)
{
    struct cs_e2e *e = *state;
    const Csched__V1__DependencyOn succ[] = {CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED,
                                             CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED,
                                             CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_UNSPECIFIED};
    char dir[4096], shell[4200], cause[64];
    cs_e2e_tmpdir(dir);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "in-root", "true"), NULL);
    const char *root[] = {"in-root"};
    const char *mids[] = {"in-a", "in-b", "in-c"};
    create_after(e, "in-a", "sleep 0.2", root, succ, 1);
    snprintf(shell, sizeof(shell), "[ ! -e %s/fail ]", dir);
    create_after(e, "in-b", shell, root, succ, 1);
    create_after(e, "in-c", "true", root, succ, 1);
    create_after(e, "in-sink", "true", mids, succ, 3);

    int64_t r1 = cs_e2e_trigger(e, "in-root");
    cause_of_run(r1, cause, sizeof(cause));
    Csched__V1__Run *sink = wait_caused_run(e, "in-sink", cause);
    assert_int_equal(sink->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(sink->n_caused_by_run_ids, 3);
    for (size_t i = 0; i < 3; i++) {
        int64_t mid = 0;
        assert_int_equal(count_runs(e, mids[i], cause, &mid), 1);
        assert_int_equal(sink->caused_by_run_ids[i], mid);
    }
    csched__v1__run__free_unpacked(sink, NULL);
    /* Nothing more comes of that cause. */
    cs_test_sleep_ms(300);
    assert_int_equal(count_runs(e, "in-sink", cause, NULL), 1);

    char path[4200];
    snprintf(path, sizeof(path), "%s/fail", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    int64_t r2 = cs_e2e_trigger(e, "in-root");
    cause_of_run(r2, cause, sizeof(cause));
    Csched__V1__DependencyCause *c = wait_decided(e, "in-sink", cause);
    assert_int_equal(c->outcome, CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_NOT_RUN);
    assert_non_null(strstr(c->reason, "upstream in-b"));
    assert_non_null(strstr(c->reason, "ended failed"));
    csched__v1__dependency_cause__free_unpacked(c, NULL);
    /* The other two end after the decision: still no run. */
    cs_test_sleep_ms(500);
    assert_int_equal(count_runs(e, "in-sink", cause, NULL), 0);
    cs_test_rmtree(dir);
}

/* A paused downstream is not run by its upstream's end, and says so. */
static void test_e2e_after_paused_downstream(void **state)
{
    struct cs_e2e *e = *state;
    const Csched__V1__DependencyOn on[] = {CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY};
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "pause-up", "true"), NULL);
    const char *up[] = {"pause-up"};
    create_after(e, "pause-down", "true", up, on, 1);
    Csched__V1__PauseJobRequest req = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL;
    struct cs_status st;
    req.name = "pause-down";
    assert_int_equal(cs_scheduler_pause_job(e->client, &req, &job, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(job, NULL);
    char cause[64];
    cause_of_run(cs_e2e_trigger(e, "pause-up"), cause, sizeof(cause));
    Csched__V1__DependencyCause *c = wait_decided(e, "pause-down", cause);
    assert_int_equal(c->outcome, CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_NOT_RUN);
    assert_non_null(strstr(c->reason, "paused"));
    csched__v1__dependency_cause__free_unpacked(c, NULL);
    assert_int_equal(count_runs(e, "pause-down", cause, NULL), 0);
}

static void expect_cycle(struct cs_e2e *e, Csched__V1__Job *job, bool update, const char *cycle)
{
    struct cs_status st;
    int rc;
    if (update) {
        Csched__V1__UpdateJobRequest req = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
        Csched__V1__Job *resp = NULL;
        req.job = job;
        rc = cs_scheduler_update_job(e->client, &req, &resp, cs_e2e_opts(), &st);
        if (resp != NULL)
            csched__v1__job__free_unpacked(resp, NULL);
        rc = rc == 0 ? 0 : st.code;
    } else {
        rc = cs_e2e_try_create_job(e, job, &st);
    }
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, cycle);
}

/* A job after itself, and an update that closes a -> b -> a, are refused
 * naming the cycle; the jobs stay as they were. */
static void test_e2e_after_cycles_refused(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Dependency d = CSCHED__V1__DEPENDENCY__INIT, *ds[] = {&d};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    job.shell = "true";
    job.after = ds;
    job.n_after = 1;

    job.name = "cyc-self";
    d.job = "cyc-self";
    expect_cycle(e, &job, false, "itself");

    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "cyc-a", "true"), NULL);
    const char *a[] = {"cyc-a"};
    const Csched__V1__DependencyOn on[] = {CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY};
    create_after(e, "cyc-b", "true", a, on, 1);
    const char *b[] = {"cyc-b"};
    create_after(e, "cyc-c", "true", b, on, 1);
    job.name = "cyc-a";
    d.job = "cyc-c";
    expect_cycle(e, &job, true, "cyc-a -> cyc-c -> cyc-b -> cyc-a");
    Csched__V1__Job *stored = cs_e2e_get_job(e, "cyc-a");
    assert_int_equal(stored->n_after, 0);
    csched__v1__job__free_unpacked(stored, NULL);
}

/* kill -9 of cschedd as soon as the upstream's end is seen, again and
 * again: after each restart the downstream run was made exactly once. */
static void test_e2e_after_exactly_once_across_kill(void **state)
{
    struct cs_e2e *e = *state;
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "crash-up", "sleep 0.3"), NULL);
    const char *up[] = {"crash-up"};
    const Csched__V1__DependencyOn on[] = {CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED};
    create_after(e, "crash-down", "true", up, on, 1);

    for (int round = 0; round < 4; round++) {
        char cause[64];
        int64_t id = cs_e2e_trigger(e, "crash-up");
        cause_of_run(id, cause, sizeof(cause));
        if (round % 2 == 0) {
            /* Killed right after the end committed. */
            Csched__V1__Run *run = cs_e2e_wait_end(e, id);
            csched__v1__run__free_unpacked(run, NULL);
        } else {
            /* Killed while it runs: it ends while cschedd is down. */
            Csched__V1__Run *run = cs_e2e_wait_state(
                e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, CS_E2E_RUN_TIMEOUT_MS);
            csched__v1__run__free_unpacked(run, NULL);
        }
        assert_int_equal(cs_testd_kill(e->d), 0);
        if (round % 2 == 1)
            cs_test_sleep_ms(500);
        assert_int_equal(cs_testd_restart(e->d), 0);
        Csched__V1__Run *down = wait_caused_run(e, "crash-down", cause);
        assert_int_equal(down->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        assert_int_equal(down->caused_by_run_ids[0], id);
        csched__v1__run__free_unpacked(down, NULL);
        cs_test_sleep_ms(200);
        if (count_runs(e, "crash-down", cause, NULL) != 1)
            fail_msg("round %d: %zu runs of crash-down for %s, want 1", round,
                     count_runs(e, "crash-down", cause, NULL), cause);
    }
}

/* A fan-in whose upstreams end on both sides of a kill -9: the end
 * recorded before it and the one after the restart (or while cschedd was
 * down) make the downstream run once. */
static void test_e2e_after_fan_in_across_kill(void **state)
{
    struct cs_e2e *e = *state;
    const Csched__V1__DependencyOn on[] = {CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED,
                                           CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED};
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "split-root", "true"), NULL);
    const char *root[] = {"split-root"}, *both[] = {"split-fast", "split-slow"};
    create_after(e, "split-fast", "true", root, on, 1);
    create_after(e, "split-slow", "sleep 1.5", root, on, 1);
    create_after(e, "split-sink", "true", both, on, 2);
    for (int round = 0; round < 2; round++) {
        char cause[64];
        cause_of_run(cs_e2e_trigger(e, "split-root"), cause, sizeof(cause));
        Csched__V1__DependencyCause *c = NULL;
        int64_t deadline = cs_test_now_ms() + WAIT_MS;
        /* The fast one's end recorded, the slow one still running. */
        for (;;) {
            Csched__V1__ListDependencyCausesResponse *resp = list_causes(e, "split-sink");
            for (size_t i = 0; c == NULL && i < resp->n_causes; i++)
                if (strcmp(resp->causes[i]->cause, cause) == 0 && resp->causes[i]->n_upstreams > 0)
                    c = resp->causes[i];
            bool seen = c != NULL;
            csched__v1__list_dependency_causes_response__free_unpacked(resp, NULL);
            if (seen)
                break;
            if (cs_test_now_ms() > deadline)
                fail_msg("split-sink: no upstream recorded for %s", cause);
            cs_test_sleep_ms(20);
        }
        assert_int_equal(cs_testd_kill(e->d), 0);
        /* Round 0: the slow one ends while cschedd is down; round 1: after. */
        if (round == 0)
            cs_test_sleep_ms(2000);
        assert_int_equal(cs_testd_restart(e->d), 0);
        Csched__V1__Run *sink = wait_caused_run(e, "split-sink", cause);
        assert_int_equal(sink->n_caused_by_run_ids, 2);
        csched__v1__run__free_unpacked(sink, NULL);
        cs_test_sleep_ms(200);
        assert_int_equal(count_runs(e, "split-sink", cause, NULL), 1);
    }
}

/* With --after-window-seconds 2, a cause whose other upstream never ends
 * is decided not run once the window has passed, naming that upstream. */
static void test_e2e_after_window_passes(void **state)
{
    struct cs_e2e *e = *state;
    const Csched__V1__DependencyOn on[] = {CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED,
                                           CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_SUCCEEDED};
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "win-up", "true"), NULL);
    const char *ups[] = {"win-up", "win-never"};
    create_after(e, "win-down", "true", ups, on, 2);
    char cause[64];
    int64_t started = cs_test_now_ms();
    cause_of_run(cs_e2e_trigger(e, "win-up"), cause, sizeof(cause));
    Csched__V1__DependencyCause *c = wait_decided(e, "win-down", cause);
    assert_true(cs_test_now_ms() - started >= 2000);
    assert_int_equal(c->outcome, CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_NOT_RUN);
    assert_non_null(strstr(c->reason, "the window passed"));
    assert_non_null(strstr(c->reason, "win-never had not ended"));
    csched__v1__dependency_cause__free_unpacked(c, NULL);
    assert_int_equal(count_runs(e, "win-down", cause, NULL), 0);
}

static int setup_short_window(void **state)
{
    static const char *const args[] = {"--after-window-seconds", "2", NULL};
    return cs_e2e_start(state, args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_after_on_and_fan_out),
        cmocka_unit_test(test_e2e_after_fan_in),
        cmocka_unit_test(test_e2e_after_paused_downstream),
        cmocka_unit_test(test_e2e_after_cycles_refused),
        cmocka_unit_test(test_e2e_after_exactly_once_across_kill),
        cmocka_unit_test(test_e2e_after_fan_in_across_kill),
    };
    const struct CMUnitTest windowed[] = {
        cmocka_unit_test(test_e2e_after_window_passes),
    };
    int failed = cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
    return failed + cmocka_run_group_tests(windowed, setup_short_window, cs_e2e_teardown);
}
