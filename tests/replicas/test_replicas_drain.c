/* Two replicas, and SIGTERM to the active one while a `sleep 1` runs and
 * a second run of the job waits behind it: the replica drains (its row
 * draining, nothing started) until the running attempt ends, which
 * SUCCEEDS, then leaves (exit 0, its row left); the standby takes over
 * woken by the leave (replicas_wake), or at the latest at its next
 * heartbeat, not after a lease, and starts the waiting run. The
 * time from the leave to the takeover is printed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "replicas_runs.h"

#define HEARTBEAT_MS CS_RRUNS_HEARTBEAT_MS
/* The standby asks at the latest at its next heartbeat after the leave: one heartbeat,
 * and slack for the polls (20 ms each) on a loaded machine; a takeover by
 * the lease would take 3 heartbeats or more. */
#define AFTER_LEAVE_MS (HEARTBEAT_MS + 150)

static int group_setup(void **state)
{
    return cs_rruns_setup(state, 2, "10s");
}

/* What the poll after the SIGTERM saw, and when. */
struct drain_watch {
    struct cs_replicas *rs;
    unsigned a;
    int64_t draining_at, left_at, exited_at, other_active_at;
    int exit_status;
};

static bool drained_and_taken(void *arg)
{
    struct drain_watch *w = arg;
    struct cs_replica_row row;
    int64_t now = cs_test_now_ms();

    if (cs_replicas_row(w->rs, w->a, &row) == 0) {
        if (w->draining_at == 0 && strcmp(row.state, "draining") == 0)
            w->draining_at = now;
        if (w->left_at == 0 && strcmp(row.state, "left") == 0)
            w->left_at = now;
    }
    if (w->exited_at == 0 && (w->exit_status = cs_testd_reap(w->rs->r[w->a].e.d)) != -EBUSY)
        w->exited_at = now;
    int active = cs_replicas_active(w->rs);
    if (w->other_active_at == 0 && active >= 0 && active != (int)w->a)
        w->other_active_at = now;
    return w->exited_at != 0 && w->other_active_at != 0;
}

static void test_replicas_drain_sigterm(void **state)
{
    struct cs_rruns_suite *f = *state;
    struct cs_rruns_run runs[2] = {0};
    int64_t ids[2];
    char job[64];
    unsigned a = cs_rruns_active(f, -1, NULL);

    cs_rruns_job(f->rs, a, &f->oracle, "drain", "sleep 1", 1, 1, job, sizeof(job));
    cs_rruns_trigger(f->rs, a, job, 2, ids);
    runs[0].id = ids[0];
    runs[1].id = ids[1];
    cs_rruns_wait_started(&f->oracle, ids[0], CS_E2E_RUN_TIMEOUT_MS);
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(cs_replicas_sigterm(f->rs, a), 0);
    struct drain_watch w = {.rs = f->rs, .a = a};
    if (cs_replicas_wait_until(drained_and_taken, &w, 15000) != 0)
        fail_msg("15 s after SIGTERM: draining at %lld, left at %lld, exited at %lld, another "
                 "active at %lld (ms, 0: not seen)",
                 (long long)(w.draining_at ? w.draining_at - t0 : 0),
                 (long long)(w.left_at ? w.left_at - t0 : 0),
                 (long long)(w.exited_at ? w.exited_at - t0 : 0),
                 (long long)(w.other_active_at ? w.other_active_at - t0 : 0));
    /* The leave: its row left, or its exit if the takeover overwrote that
     * before a poll saw it. */
    int64_t leave = w.left_at != 0 ? w.left_at : w.exited_at;
    fprintf(stderr,
            "drain: draining after %lld ms, left after %lld ms, exited after %lld ms; "
            "takeover %lld ms after the leave (heartbeat %d ms)\n",
            (long long)(w.draining_at - t0), (long long)(w.left_at ? w.left_at - t0 : -1),
            (long long)(w.exited_at - t0), (long long)(w.other_active_at - leave), HEARTBEAT_MS);
    if (w.draining_at == 0)
        fail_msg("%s's row was never seen draining", f->rs->r[a].id);
    assert_int_equal(w.exit_status, 0);
    if (w.other_active_at - leave > AFTER_LEAVE_MS)
        fail_msg("the takeover came %lld ms after the leave, want at most %d (one heartbeat)",
                 (long long)(w.other_active_at - leave), AFTER_LEAVE_MS);
    unsigned b = cs_rruns_active(f, (int)a, NULL);
    /* Drained: the running one ended there, once; the waiting one started
     * here, after the leave (max_attempts 1: a LOST would fail it). */
    cs_rruns_assert_outcomes(f, b, runs, 2, f->rs->r[a].id);
    Csched__V1__Run *run = cs_e2e_get_run(cs_replicas_e2e(f->rs, b), ids[0]);
    assert_int_equal(run->n_attempts, 1);
    csched__v1__run__free_unpacked(run, NULL);
    cs_rruns_ran_on(f, ids[0], a);
    cs_rruns_ran_on(f, ids[1], b);
    struct cs_oracle_run seen;
    assert_int_equal(cs_oracle_run(&f->oracle, ids[0], &seen), 0);
    assert_int_equal(seen.executions, 1);
    assert_int_equal(seen.ended, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_drain_sigterm),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
