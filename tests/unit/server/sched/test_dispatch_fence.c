/* test_dispatch_fence: the server's side of self-fencing minders, through
 * the dispatcher and its fixture (fake store and launcher, real loop): the
 * lease file reaches every minder as -L when the sched state names one, and
 * no minder gets it when it does not; a note that says the minder fenced
 * its command ends the attempt LOST with the note's message, the way the
 * command ended as its outcome, or none when it never started. */
#include "dispatch_fixture.h"
#include "ended_runs.h"

#define LEASE "/var/lib/csched/" CS_LEASE_FILE

/* The value of flag in the minder's options (before "--"), or NULL. */
static const char *option(char **argv, const char *flag)
{
    for (size_t i = 1; argv[i] != NULL && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], flag) == 0)
            return argv[i + 1];
    return NULL;
}

static void test_fence_lease_reaches_every_minder(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);

    trigger(job);
    turn();
    assert_int_equal(fx.n_launches, 1);
    assert_null(option(fx.launches[0]->argv, "-L"));

    fx.s.lease_path = LEASE;
    trigger(job);
    trigger(job);
    turn();
    /* With fencing, a minder starts only once its start has committed. */
    assert_int_equal(fx.n_launches, 1);
    commit();
    turn();
    assert_int_equal(fx.n_launches, 3);
    for (size_t i = 1; i < 3; i++) {
        const char *lease = option(fx.launches[i]->argv, "-L");
        assert_non_null(lease);
        assert_string_equal(lease, LEASE);
    }
}

/* Leaves the note of a minder that fenced its command: started or not,
 * ended by sig (0: never ran), with message. */
static void write_fenced_note(int64_t run_id, bool started, int sig, const char *message)
{
    char dir[4096];
    attempt_dir(run_id, 1, dir, sizeof(dir));
    assert_true(mkdir(dir, 0700) == 0 || errno == EEXIST);
    struct cs_note note = {.outcome = CS_NOTE_FENCED, .term_signal = sig};
    note.ended_unix_ms = cs_now_unix_ms();
    note.started_unix_ms = started ? note.ended_unix_ms - 1000 : 0;
    (void)snprintf(note.message, sizeof(note.message), "%s", message);
    assert_int_equal(cs_note_write(dir, &note), 0);
}

/* The fenced attempt as the run's committed end recorded it. */
static const Csched__V1__Attempt *ended_attempt(int64_t id)
{
    wait_for(id, 0, LO);
    commit();
    const Csched__V1__Run *run = cs_ended_runs_get(&fx.s.ended_runs, id);
    assert_non_null(run);
    assert_int_equal(run->n_attempts, 1);
    return run->attempts[0];
}

static void test_fence_stopped_command_ends_lost(void **state)
{
    static const char message[] =
        "stopped: cschedd's lease on this machine ran out at 2026-12-06T10:41:52.123Z (it "
        "stopped renewing; another replica may retry the run); SIGKILL after 10000 ms";
    struct cs_job *job = add_job("a", 0, 1, 0);
    pid_t pid;
    int64_t id = start_running(job, &pid);

    write_fenced_note(id, true, SIGKILL, message);
    minder_ends(pid);
    const Csched__V1__Attempt *a = ended_attempt(id);
    assert_int_equal(a->state, LO);
    assert_string_equal(a->message, message);
    assert_int_equal(a->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL);
    assert_int_equal(a->term_signal, SIGKILL);
    assert_string_equal(history(id), START_TO_RUNNING " a1:LOST run:LOST");
}

static void test_fence_not_started_ends_lost_without_outcome(void **state)
{
    static const char message[] =
        "not started: cschedd's lease on this machine ran out at 2026-12-06T10:41:52.123Z (it "
        "stopped renewing; another replica may retry the run)";
    struct cs_job *job = add_job("a", 0, 1, 0);
    pid_t pid;
    int64_t id = start_running(job, &pid);

    write_fenced_note(id, false, 0, message);
    minder_ends(pid);
    const Csched__V1__Attempt *a = ended_attempt(id);
    assert_int_equal(a->state, LO);
    assert_string_equal(a->message, message);
    assert_int_equal(a->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME__NOT_SET);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_fence_lease_reaches_every_minder),
        TEST(test_fence_stopped_command_ends_lost),
        TEST(test_fence_not_started_ends_lost_without_outcome),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
