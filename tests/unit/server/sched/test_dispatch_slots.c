/* Unit tests of when a run holds its slot (dispatch on the fixture of
 * dispatch_fixture.h): from STARTING until its minder's pidfd fires, not
 * until its end has committed. The fake launcher checks
 * both limits at every launch; the loop is driven turn by turn. */
#include <semaphore.h>
#include <stdlib.h>

#include "dispatch_fixture.h"

static bool job_has_no_slot(const void *arg)
{
    return ((const struct cs_job *)arg)->slots == 0;
}

/* The minder's end gives the slot back in the loop turn its pidfd fires,
 * before its end has committed (its note, just written, is read from the
 * caches in that turn too, or else on the pool a turn or two later). */
static void test_dispatch_slot_free_at_exit(void **state)
{
    struct cs_sched *s = &fx.s;
    struct cs_job *job = add_job("a", 1, 1, 0);
    pid_t pid;
    int64_t id = start_running(job, &pid);
    assert_int_equal(cs_sched_slots_used(s), 1);
    size_t published = fx.n_published;
    minder_exits(id, 1, pid, 0);
    run_until(job_has_no_slot, job, "the minder's end to give its slot back");
    assert_int_equal(cs_sched_slots_used(s), 0);
    assert_int_equal(fx.n_published, published); /* nothing committed meanwhile */
    wait_for(id, 0, OK);
    assert_int_equal(fx.n_published, published);
    commit();
    assert_int_equal(s->running, 0);
    assert_string_equal(history(id), START_TO_RUNNING " a1:SUCCEEDED run:SUCCEEDED");
}

static bool attempt_has_exited(const void *arg)
{
    const struct cs_run *run = run_of(*(const int64_t *)arg);
    return run != NULL && run->attempt != NULL && run->attempt->exited;
}

/* A minder killed outright may leave its command running: its slot is kept
 * until the note read has stopped what the command left, and the run ends
 * LOST. */
static void test_dispatch_killed_minder_keeps_slot(void **state)
{
    struct cs_job *job = add_job("a", 1, 1, 0);
    pid_t pid;
    int64_t id = start_running(job, &pid);
    int64_t second = trigger(job);
    minder_ends(pid);
    run_until(attempt_has_exited, &id, "the killed minder's pidfd to fire");
    assert_int_equal(job->slots, 1);
    turn();
    assert_int_equal(run_of(second)->msg->state, Q);
    wait_for(id, 0, LO);
    assert_int_equal(run_of(second)->msg->state, Q);
    wait_for(second, 0, ST);
    assert_true(find_event(id, 0, LO) < find_event(second, 0, ST));
}

/* At max_running 1 the next run starts before the end of the one before
 * it has committed (no commit is made until the next run is STARTING), and
 * each run's own events stay in order. */
static void test_dispatch_next_run_starts_before_end_commits(void **state)
{
    struct cs_job *job = add_job("a", 1, 1, 0);
    pid_t pid;
    int64_t first = start_running(job, &pid);
    int64_t second = trigger(job);
    turn();
    assert_int_equal(run_of(second)->msg->state, Q); /* the job is at its limit */
    size_t published = fx.n_published;
    minder_exits(first, 1, pid, 0);
    wait_for(second, 0, ST);
    assert_int_equal(job->slots, 1);
    wait_for(first, 0, OK);
    assert_int_equal(fx.n_published, published);
    commit();
    pid = launch_ok(second);
    assert_string_equal(history(first), START_TO_RUNNING " a1:SUCCEEDED run:SUCCEEDED");
    minder_exits(second, 1, pid, 3);
    wait_for(second, 0, FA);
    assert_string_equal(history(second), START_TO_RUNNING " a1:FAILED run:FAILED");
    assert_int_equal(job->slots, 0);
}

/* A retry gives its slot back at the minder's end and takes one again
 * through the queue; a launch that fails gives its slot back at once. */
static void test_dispatch_slot_retry_and_launch_failure(void **state)
{
    struct cs_sched *s = &fx.s;
    struct cs_job *job = add_job("a", 1, 2, 0);
    pid_t pid;
    int64_t id = start_running(job, &pid);
    minder_exits(id, 1, pid, 1);
    run_until(job_has_no_slot, job, "the minder's end to give its slot back");
    wait_for(id, 2, ST);
    assert_int_equal(job->slots, 1);
    launch_fails(id);
    assert_int_equal(job->slots, 0);
    assert_int_equal(cs_sched_slots_used(s), 0);
    wait_for(id, 0, FA);
    assert_string_equal(history(id), START_TO_RUNNING " a1:FAILED run:QUEUED run:STARTING "
                                                      "a2:STARTING a2:FAILED run:FAILED");
}

/* libuv's pool, held: POOL_THREADS works that wait for pool_gate, so that
 * nothing else queued there runs until the test lets them go. */
#define POOL_THREADS 4
static sem_t pool_gate; /* made once, in main: a waiter may outlive a hold */
static bool pool_held;
static int pool_busy; /* held works not yet done */

static void pool_hold_work(uv_work_t *w)
{
    (void)w;
    while (sem_wait(&pool_gate) != 0)
        ;
}

static void pool_held_done(uv_work_t *w, int status)
{
    (void)status;
    free(w);
    pool_busy--;
}

static bool pool_idle(const void *arg)
{
    (void)arg;
    return pool_busy == 0;
}

/* The works of an earlier hold have all ended first: else the pool would
 * have fewer threads left than works held. */
static void pool_hold(uv_loop_t *loop)
{
    run_until(pool_idle, NULL, "the pool's earlier holds to end");
    pool_held = true;
    pool_busy = POOL_THREADS;
    for (int i = 0; i < POOL_THREADS; i++)
        assert_int_equal(
            uv_queue_work(loop, calloc(1, sizeof(uv_work_t)), pool_hold_work, pool_held_done), 0);
}

static void pool_release(void)
{
    if (!pool_held)
        return;
    pool_held = false;
    for (int i = 0; i < POOL_THREADS; i++)
        assert_int_equal(sem_post(&pool_gate), 0);
}

/* The fixture's teardown, after letting the pool go, as a failed assertion
 * may have left it held. */
static int teardown_pool(void **state)
{
    pool_release();
    return teardown(state);
}

/* A cancel that comes after the minder's end, while its note is read on
 * the pool (it was not in the page cache), signals nothing (its pid may be
 * another process's by then) and the run ends CANCELLED. The pool is held
 * until the cancel is made, so that the note's read cannot end the run
 * first. An evicted note may still be read at once (ext4 keeps a small
 * file's data in its inode), ending the run at the exit: then another run
 * tries again. */
#define CANCEL_TRIES 10
static void test_dispatch_cancel_after_exit(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    pid_t pid;

    for (int i = 0; i < CANCEL_TRIES; i++) {
        int64_t id = start_running(job, &pid);
        pool_hold(&fx.loop);
        if (!minder_exits_note_evicted(id, 1, pid, 0)) {
            pool_release();
            print_message("skipped: the state dir is in memory, its note always in the caches\n");
            minder_exits(id, 1, pid, 0);
            wait_for(id, 0, OK);
            skip();
        }
        run_until(job_has_no_slot, job, "the minder's end to give its slot back");
        struct cs_run *run = run_of(id);
        if (run != NULL && run->attempt != NULL) {
            assert_true(run->attempt->exited);
            assert_int_equal(cs_attempt_cancel(run->attempt), 0);
            assert_int_equal(cancel(id), RU);
            pool_release();
            wait_for(id, 0, CA);
            return;
        }
        pool_release();
        wait_for(id, 0, OK);
    }
    print_message("skipped: %d evicted notes were all read at once\n", CANCEL_TRIES);
    skip();
}

int main(void)
{
    /* The pool's size, for pool_hold: set before the pool first starts. */
    setenv("UV_THREADPOOL_SIZE", "4", 1); /* POOL_THREADS */
    if (sem_init(&pool_gate, 0, 0) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dispatch_slot_free_at_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_killed_minder_keeps_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_next_run_starts_before_end_commits, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_slot_retry_and_launch_failure, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_cancel_after_exit, setup, teardown_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
