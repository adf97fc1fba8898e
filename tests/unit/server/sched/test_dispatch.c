/* Unit tests of the run state machine (dispatch with the pump, retries,
 * attempts and events under it) on a real libuv loop, with the store and
 * the launcher faked through the ops dispatch takes at init
 * (dispatch_fixture.h). Each test checks the exact transitions of its runs
 * from the events written; the limits are checked at every launch. The
 * loop is driven turn by turn, no sleeps. */
#include "dispatch_fixture.h"

/* --- transitions ------------------------------------------------------------ */

/* QUEUED -> STARTING -> RUNNING -> SUCCEEDED, with the counts, the slots,
 * and the events' publication after their commit. A success is never
 * retried, though the job allows more attempts. */
static void test_dispatch_run_succeeds(void **state)
{
    struct cs_sched *s = &fx.s;
    struct cs_job *job = add_job("a", 0, 3, 0);
    int64_t id = trigger_uncommitted(job);
    assert_int_equal(run_of(id)->msg->state, Q);
    assert_int_equal(s->queued, 1);
    turn();
    assert_int_equal(fx.n_launches, 0); /* nothing starts before its creation commits */
    assert_int_equal(fx.n_published, 0);
    commit();
    assert_int_equal(fx.n_published, 1);

    turn();
    assert_int_equal(run_of(id)->msg->state, ST);
    assert_int_equal(s->starting, 1);
    assert_int_equal(job->slots, 1);
    assert_int_equal(fx.n_launches, 1);

    pid_t pid = launch_ok(id);
    assert_int_equal(run_of(id)->msg->state, RU);
    assert_int_equal(run_of(id)->msg->attempts[0]->minder_pid, pid);
    assert_int_equal(s->running, 1);
    assert_int_equal(fx.n_published, 1);
    commit();
    assert_int_equal(fx.n_published, fx.n_events);

    minder_exits(id, 1, pid, 0);
    wait_for(id, 0, OK);
    assert_string_equal(history(id), START_TO_RUNNING " a1:SUCCEEDED run:SUCCEEDED");
    assert_null(run_of(id));
    assert_int_equal(s->running + s->starting + s->queued, 0);
    assert_int_equal(job->slots, 0);
    assert_int_equal(job->active, 0);
    assert_int_equal(s->runs_started, 1);
    assert_int_equal(s->runs_finished, 1);
    commit();
    assert_int_equal(fx.n_published, fx.n_events);
}

/* RUNNING -> FAILED (exit code, then a signal), TIMED_OUT, and LOST (the
 * minder died without a note). */
/* A run whose creation fails to commit is unknown to the store and to its
 * client (who got the error): it is forgotten and never starts. */
static void test_dispatch_creation_fails(void **state)
{
    struct cs_sched *s = &fx.s;
    struct cs_job *job = add_job("a", 0, 1, 0);
    int64_t id = trigger_uncommitted(job);
    commit_with(-EIO);
    assert_null(run_of(id));
    assert_int_equal(s->queued, 0);
    assert_int_equal(job->active, 0);
    turn();
    assert_int_equal(fx.n_launches, 0);
    assert_int_equal(s->runs_started + s->runs_finished, 0);

    /* A cancel before the commit ends the run; the commit then starts nothing. */
    id = trigger_uncommitted(job);
    assert_int_equal(cancel(id), CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    commit();
    turn();
    assert_null(run_of(id));
    assert_int_equal(fx.n_launches, 0);
}

static void test_dispatch_run_ends_each_way(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    struct {
        enum cs_note_outcome outcome;
        int exit_code, term_signal;
        bool note;
        Csched__V1__RunState want;
    } cases[] = {
        {CS_NOTE_EXITED, 3, 0, true, FA},
        {CS_NOTE_SIGNALED, 0, SIGSEGV, true, FA},
        {CS_NOTE_TIMED_OUT, 0, SIGTERM, true, TO},
        {CS_NOTE_EXITED, 0, 0, false, LO},
    };
    for (size_t i = 0; i < CS_ARRAY_LEN(cases); i++) {
        pid_t pid;
        int64_t id = start_running(job, &pid);
        if (cases[i].note)
            write_note(id, 1, cases[i].outcome, cases[i].exit_code, cases[i].term_signal, "why");
        minder_ends(pid);
        wait_for(id, 0, cases[i].want);
        char want[256];
        (void)snprintf(want, sizeof(want), START_TO_RUNNING " a1:%s run:%s",
                       cs_run_state_proto_name(cases[i].want),
                       cs_run_state_proto_name(cases[i].want));
        assert_string_equal(history(id), want);
        assert_int_equal(job->slots, 0);
        /* The run's outcome is its attempt's, the signal else the exit
         * code, in its row and in both events. */
        assert_int_equal(fx.last_run_id, id);
        const struct event_rec *a_end = find_event(id, 1, cases[i].want);
        const struct event_rec *r_end = find_event(id, 0, cases[i].want);
        if (!cases[i].note) {
            assert_int_equal(fx.last_run_outcome.kind, CS_OUTCOME_NONE);
            assert_int_equal(a_end->outcome_case, CSCHED__V1__EVENT__OUTCOME__NOT_SET);
            assert_int_equal(r_end->outcome_case, CSCHED__V1__EVENT__OUTCOME__NOT_SET);
            continue;
        }
        bool by_signal = cases[i].term_signal != 0;
        int32_t value = by_signal ? cases[i].term_signal : cases[i].exit_code;
        int event_case = by_signal ? CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL
                                   : CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
        assert_int_equal(fx.last_run_outcome.kind,
                         by_signal ? CS_OUTCOME_TERM_SIGNAL : CS_OUTCOME_EXIT_CODE);
        assert_int_equal(fx.last_run_outcome.value, value);
        assert_int_equal(a_end->outcome_case, event_case);
        assert_int_equal(a_end->outcome, value);
        assert_int_equal(r_end->outcome_case, event_case);
        assert_int_equal(r_end->outcome, value);
    }
}

/* STARTING -> FAILED when the minder cannot be started, and STARTING ->
 * LOST when it started but cannot be watched. */
static void test_dispatch_start_fails(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    int64_t id = trigger(job);
    turn();
    launch_fails(id);
    assert_string_equal(history(id), "run:QUEUED run:STARTING a1:STARTING a1:FAILED run:FAILED");
    assert_int_equal(job->slots, 0);
    assert_int_equal(fx.s.starting, 0);

    /* A pidfd the exit watch refuses: the end could never be seen. */
    id = trigger(job);
    turn();
    struct cs_launch *l = take_launch(id);
    l->pid = spawn_minder();
    l->pidfd = -1;
    cs_dispatch_launch_done_cb(l, &fx.s);
    assert_string_equal(history(id), START_TO_RUNNING " a1:LOST run:LOST");
    assert_int_equal(job->slots, 0);
}

/* --- limits ------------------------------------------------------------------ */

/* The global limit and each job's own hold at every launch (checked by the
 * fake launcher), and a freed slot starts the oldest run that may go. */
static void test_dispatch_limits(void **state)
{
    struct cs_sched *s = &fx.s;
    s->max_running = 3;
    struct cs_job *a = add_job("a", 1, 1, 0), *b = add_job("b", 0, 1, 0);
    int64_t ids[6];
    for (int i = 0; i < 6; i++)
        ids[i] = trigger(i < 3 ? a : b); /* a: 1 2 3, b: 4 5 6 */
    turn();
    turn();
    /* a may have one, the global limit leaves two for b. */
    assert_int_equal(cs_sched_slots_used(s), 3);
    assert_int_equal(a->slots, 1);
    assert_int_equal(b->slots, 2);
    assert_int_equal(run_of(ids[0])->msg->state, ST);
    assert_int_equal(run_of(ids[3])->msg->state, ST);
    assert_int_equal(run_of(ids[4])->msg->state, ST);
    assert_int_equal(run_of(ids[1])->msg->state, Q);

    /* b's first run ends: the global slot goes to b's next run, as a is at
     * its own limit. */
    pid_t pid = launch_ok(ids[3]);
    minder_ends(pid);
    wait_for(ids[3], 0, LO);
    turn();
    assert_int_equal(run_of(ids[5])->msg->state, ST);
    assert_int_equal(run_of(ids[1])->msg->state, Q);

    /* a's run ends: a's next run goes. */
    launch_fails(ids[0]);
    turn();
    assert_int_equal(run_of(ids[1])->msg->state, ST);
    assert_int_equal(cs_sched_slots_used(s), 3);
    assert_int_equal(fx.n_launches, 3);
}

/* --- retries ----------------------------------------------------------------- */

static void test_dispatch_backoff_doubles_to_its_cap(void **state)
{
    Csched__V1__Job spec = CSCHED__V1__JOB__INIT;
    assert_int_equal(cs_retry_max_attempts(&spec), 1);
    spec.max_attempts = 5;
    assert_int_equal(cs_retry_max_attempts(&spec), 5);
    assert_int_equal(cs_retry_backoff_ms(&spec, 1), 0);
    spec.retry_backoff_ms = 1000;
    assert_int_equal(cs_retry_backoff_ms(&spec, 1), 1000);
    assert_int_equal(cs_retry_backoff_ms(&spec, 2), 2000);
    assert_int_equal(cs_retry_backoff_ms(&spec, 3), 4000);
    assert_int_equal(cs_retry_backoff_ms(&spec, 30), CS_RETRY_BACKOFF_MAX_MS);
    spec.retry_backoff_ms = CS_RETRY_BACKOFF_MAX_MS;
    assert_int_equal(cs_retry_backoff_ms(&spec, 2), CS_RETRY_BACKOFF_MAX_MS);
}

/* RUNNING -> QUEUED after a failed attempt, back on the queue only once its
 * backoff has passed but for the lead (200 ms, then 400), waiting with the
 * runs for later, its launch then held for the end of the backoff; the last
 * allowed attempt's failure ends the run. */
static void test_dispatch_retry_with_backoff(void **state)
{
    struct cs_job *job = add_job("a", 0, 3, 2 * CS_LATER_LEAD_MS);
    int64_t id = trigger(job);
    int64_t due = 0;
    for (uint32_t attempt = 1; attempt <= 3; attempt++) {
        turn();
        assert_int_equal(fx.n_launches, 1);
        /* Held for the backoff's end, unless that has passed already. */
        assert_true(fx.launches[0]->due_unix_ms == due ||
                    (fx.launches[0]->due_unix_ms == 0 && cs_now_unix_ms() >= due));
        minder_exits(id, attempt, launch_ok(id), 1);
        wait_for(id, attempt, FA);
        if (attempt == 3)
            break;
        /* In the turn that saw the failure: waiting, off the queue, no slot. */
        /* The timer started with the failure, at that loop time. */
        uint64_t failed_at = find_event(id, attempt, FA)->at_loop_ms;
        struct cs_run *run = run_of(id);
        assert_int_equal(run->msg->state, Q);
        assert_int_equal(job->slots, 0);
        assert_true(cs_later_is_waiting(run));
        assert_false(run->queued);
        assert_int_equal(fx.n_launches, 0);
        due = run->msg->not_before_unix_ms;
        run_until(is_queued, run, "the retry to be queued");
        /* The wait is on the wall clock, whose milliseconds round apart from
         * the loop's by up to one. */
        assert_true(uv_now(&fx.loop) - failed_at + 1 + CS_LATER_LEAD_MS >=
                    cs_retry_backoff_ms(job->spec, attempt));
        assert_true(cs_now_unix_ms() >= due - CS_LATER_LEAD_MS);
        assert_false(cs_later_is_waiting(run));
    }
    assert_string_equal(history(id), START_TO_RUNNING " a1:FAILED run:QUEUED run:STARTING "
                                                      "a2:STARTING a2:RUNNING run:RUNNING "
                                                      "a2:FAILED run:QUEUED run:STARTING "
                                                      "a3:STARTING a3:RUNNING run:RUNNING "
                                                      "a3:FAILED run:FAILED");
    assert_null(run_of(id));
}

/* --- cancel in each state ------------------------------------------------------ */

static void test_dispatch_cancel_queued(void **state)
{
    fx.s.max_running = 0; /* nothing may start */
    struct cs_job *job = add_job("a", 0, 1, 0);
    int64_t id = trigger(job);
    turn();
    assert_int_equal(cancel(id), CA);
    assert_null(run_of(id));
    assert_string_equal(history(id), "run:QUEUED run:CANCELLED");
    assert_int_equal(fx.s.queued, 0);
    assert_int_equal(job->active, 0);
    assert_int_equal(fx.cancel_commits, 0);
    commit();
    assert_int_equal(fx.cancel_commits, 1);
}

static void test_dispatch_cancel_waiting_to_retry(void **state)
{
    struct cs_job *job = add_job("a", 0, 2, 60000);
    int64_t id = trigger(job);
    turn();
    launch_fails(id);
    assert_true(cs_later_is_waiting(run_of(id)));
    assert_int_equal(cancel(id), CA);
    assert_null(run_of(id));
    assert_string_equal(history(id),
                        "run:QUEUED run:STARTING a1:STARTING a1:FAILED run:QUEUED run:CANCELLED");
    commit();
    assert_int_equal(fx.cancel_commits, 1);
}

/* Cancelled while its minder is being launched: the minder is told as soon
 * as the (late) launch report says it runs. */
static void test_dispatch_cancel_starting(void **state)
{
    struct cs_job *job = add_job("a", 0, 3, 0);
    int64_t id = trigger(job);
    turn();
    assert_int_equal(cancel(id), ST);
    assert_true(run_of(id)->msg->cancel_requested);
    commit();
    assert_int_equal(fx.cancel_commits, 1);
    /* What the minder writes on SIGTERM; its process dies of the signal. */
    write_note(id, 1, CS_NOTE_CANCELLED, 0, SIGTERM, "cancelled");
    (void)launch_ok(id);
    wait_for(id, 0, CA);
    assert_string_equal(history(id), START_TO_RUNNING " a1:CANCELLED run:CANCELLED");
    assert_int_equal(job->slots, 0);
}

static void test_dispatch_cancel_running(void **state)
{
    struct cs_job *job = add_job("a", 0, 3, 0);
    pid_t pid;
    int64_t id = start_running(job, &pid);
    write_note(id, 1, CS_NOTE_CANCELLED, 0, SIGTERM, "cancelled");
    assert_int_equal(cancel(id), RU);
    wait_for(id, 0, CA);
    assert_string_equal(history(id), START_TO_RUNNING " a1:CANCELLED run:CANCELLED");
    assert_null(run_of(id));
}

/* --- late and duplicate reports ---------------------------------------------- */

/* An end that races a cancel: the command exited 0 and the note says so,
 * but the run was asked to stop; it ends CANCELLED with the exit code. */
static void test_dispatch_exit_races_cancel(void **state)
{
    struct cs_job *job = add_job("a", 0, 3, 0);
    pid_t pid;
    int64_t id = start_running(job, &pid);
    minder_exits(id, 1, pid, 0);
    /* The minder is gone, but the loop has not seen it yet when the cancel comes. */
    assert_int_equal(cancel(id), RU);
    wait_for(id, 0, CA);
    assert_string_equal(history(id), START_TO_RUNNING " a1:SUCCEEDED run:CANCELLED");
    assert_int_equal(fx.last_run_id, id);
    assert_int_equal(fx.last_run_state, CA);
    assert_int_equal(fx.last_run_outcome.kind, CS_OUTCOME_EXIT_CODE);
    assert_int_equal(fx.last_run_outcome.value, 0);
    assert_int_equal(job->slots, 0);
}

/* A minder's end is reported once: later turns with its process gone and
 * its pidfd closed change nothing, and the slot is given back once. */
static void test_dispatch_exit_reported_once(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    pid_t pid;
    int64_t id = start_running(job, &pid);
    minder_exits(id, 1, pid, 0);
    wait_for(id, 0, OK);
    size_t n = fx.n_events;
    for (int i = 0; i < 5; i++)
        turn();
    assert_int_equal(fx.n_events, n);
    assert_int_equal(job->slots, 0);
    assert_int_equal(fx.s.runs_finished, 1);
}

/* --- after a restart ------------------------------------------------------------ */

static Csched__V1__Run *stored_run(int64_t id, Csched__V1__RunState state, uint32_t attempts)
{
    Csched__V1__Run *msg = malloc(sizeof(*msg));
    assert_non_null(msg);
    csched__v1__run__init(msg);
    msg->id = id;
    msg->job_name = strdup("a");
    msg->state = state;
    msg->message = strdup("");
    msg->idempotency_key = strdup("");
    msg->n_attempts = attempts;
    msg->attempts = attempts ? calloc(attempts, sizeof(*msg->attempts)) : NULL;
    for (uint32_t i = 0; i < attempts; i++) {
        msg->attempts[i] = malloc(sizeof(*msg->attempts[i]));
        csched__v1__attempt__init(msg->attempts[i]);
        msg->attempts[i]->number = i + 1;
        msg->attempts[i]->state = state;
        msg->attempts[i]->message = strdup("");
    }
    return msg;
}

/* The pid of a process that has ended and been reaped. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    return pid;
}

/* A queued run is queued again; a running one whose minder finished while
 * the server was away ends by its note; one whose minder is gone without a
 * note is LOST. */
static void test_dispatch_resume(void **state)
{
    struct cs_sched *s = &fx.s;
    struct cs_job *job = add_job("a", 0, 1, 0);
    s->next_run_id = 10;
    char dir[4096];

    cs_dispatch_resume(s, stored_run(1, Q, 0), NULL, NULL);
    write_note(2, 1, CS_NOTE_EXITED, 0, 0, "");
    attempt_dir(2, 1, dir, sizeof(dir));
    cs_dispatch_resume(s, stored_run(2, RU, 1), dir, NULL);
    attempt_dir(3, 1, dir, sizeof(dir));
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(cs_attempt_pid_publish(dir, (int32_t)dead_pid()), 0);
    cs_dispatch_resume(s, stored_run(3, RU, 1), dir, NULL);
    assert_int_equal(job->active, 3);
    assert_int_equal(job->slots, 2);

    wait_for(2, 0, OK);
    wait_for(3, 0, LO);
    assert_string_equal(history(2), "a1:SUCCEEDED(rec) run:SUCCEEDED");
    assert_string_equal(history(3), "a1:LOST(rec) run:LOST");
    turn();
    assert_int_equal(run_of(1)->msg->state, ST);
    assert_int_equal(job->slots, 1);
    assert_string_equal(history(1), "run:STARTING a1:STARTING");
}

/* An attempt another replica's machine ran, whose lease ran out: nothing of
 * it is adopted here (not even a note this state dir happens to hold for
 * the same run and number), it holds its slot until its deadline and the
 * margin past it (kill grace, leftovers, drain, a second), then ends LOST
 * naming the replica, and the run's retry starts here. */
static void test_dispatch_resume_remote(void **state)
{
    struct cs_sched *s = &fx.s;
    struct cs_job *job = add_job("a", 0, 2, 0);
    job->spec->kill_grace_seconds = 1;
    s->next_run_id = 10;
    write_note(4, 1, CS_NOTE_EXITED, 0, 0, "");
    struct cs_store_remote_attempt remote = {
        .run_id = 4, .number = 1, .replica = "r9", .wait_ms = 200};
    /* The timer counts from the loop's time, brought up to now. */
    uv_update_time(&fx.loop);
    int64_t t0 = cs_now_mono_ns();

    cs_dispatch_resume(s, stored_run(4, RU, 1), NULL, &remote);
    assert_int_equal(job->slots, 1);
    turn();
    assert_string_equal(history(4), "");
    wait_for(4, 1, LO);
    int64_t waited_ms = (cs_now_mono_ns() - t0) / 1000000;
    assert_true(waited_ms >=
                200 + 1000 + CS_MINDER_LEFTOVER_GRACE_MS + CS_MINDER_DRAIN_MS + 1000 - 1);
    assert_non_null(strstr(run_of(4)->msg->attempts[0]->message, "lost with replica r9"));
    wait_for(4, 2, ST);
    assert_string_equal(history(4), "a1:LOST run:QUEUED run:STARTING a2:STARTING");
}

/* Attempts a restart finds never started, with no directory or with one
 * whose pid file it could claim, end LOST as never started, do not count
 * against max_attempts 1, and their runs start their next attempt; a
 * queued run's next attempt number is never one whose directory exists. */
static void test_dispatch_resume_never_started(void **state)
{
    struct cs_sched *s = &fx.s;
    (void)add_job("a", 0, 1, 0);
    s->next_run_id = 10;
    char dir[4096];

    cs_dispatch_resume(s, stored_run(1, ST, 1), NULL, NULL);
    attempt_dir(2, 1, dir, sizeof(dir));
    assert_int_equal(mkdir(dir, 0700), 0);
    cs_dispatch_resume(s, stored_run(2, ST, 1), dir, NULL);
    write_note(3, 1, CS_NOTE_EXITED, 0, 0, "");
    cs_dispatch_resume(s, stored_run(3, Q, 0), NULL, NULL);

    wait_for(1, 2, ST);
    wait_for(2, 2, ST);
    wait_for(3, 0, OK);
    for (int64_t id = 1; id <= 2; id++) {
        assert_string_equal(history(id), "a1:LOST(rec) run:QUEUED run:STARTING a2:STARTING");
        assert_string_equal(run_of(id)->msg->attempts[0]->message,
                            CS_ATTEMPT_NEVER_STARTED_MESSAGE);
    }
    attempt_dir(2, 1, dir, sizeof(dir));
    assert_int_equal(access(dir, F_OK), 0);
    assert_string_equal(history(3), "run:STARTING(rec) a1:STARTING(rec) a1:RUNNING(rec) "
                                    "a1:SUCCEEDED(rec) run:SUCCEEDED");
}

/* An EXITED note of run_id's attempt whose command ran from started_ms for
 * 300 ms, as its minder leaves it. */
static void write_note_at(int64_t run_id, uint32_t attempt, int exit_code, int64_t started_ms)
{
    char dir[4096];
    attempt_dir(run_id, attempt, dir, sizeof(dir));
    assert_true(mkdir(dir, 0700) == 0 || errno == EEXIST);
    struct cs_note note = {.outcome = CS_NOTE_EXITED, .exit_code = exit_code};
    note.started_unix_ms = started_ms;
    note.ended_unix_ms = started_ms + 300;
    assert_int_equal(cs_note_write(dir, &note), 0);
}

/* What the store never heard of is recovered from the attempts'
 * directories, so that every attempt's events are a path through the state
 * machine, at the times the notes give: run 1, stored RUNNING in attempt 1,
 * had attempt 1 end and attempts 2 and 3 start, run and fail; run 2, stored
 * QUEUED for its retry after attempt 1, started attempt 2, which succeeded. */
static void test_dispatch_resume_recovers_passed_states(void **state)
{
    struct cs_sched *s = &fx.s;
    (void)add_job("a", 0, 3, 0);
    s->next_run_id = 10;
    const int64_t t0 = 1700000000000;
    char dir[4096];

    for (uint32_t n = 1; n <= 3; n++)
        write_note_at(1, n, 1, t0 + n * 1000);
    attempt_dir(1, 1, dir, sizeof(dir));
    cs_dispatch_resume(s, stored_run(1, RU, 1), dir, NULL);
    Csched__V1__Run *queued = stored_run(2, Q, 1);
    queued->attempts[0]->state = FA;
    queued->attempts[0]->ended_unix_ms = t0;
    write_note_at(2, 2, 0, t0 + 5000);
    cs_dispatch_resume(s, queued, NULL, NULL);

    wait_for(1, 0, FA);
    wait_for(2, 0, OK);
    assert_string_equal(history(1), "a1:FAILED(rec) a2:STARTING(rec) a2:RUNNING(rec) "
                                    "a2:FAILED(rec) a3:STARTING(rec) a3:RUNNING(rec) "
                                    "a3:FAILED(rec) run:FAILED");
    assert_string_equal(history(2), "run:STARTING(rec) a2:STARTING(rec) a2:RUNNING(rec) "
                                    "a2:SUCCEEDED(rec) run:SUCCEEDED");
    for (size_t i = 0; i < fx.n_events; i++) {
        const struct event_rec *e = &fx.events[i];
        int64_t started = e->run_id == 1 ? t0 + e->attempt * 1000 : t0 + 5000;
        if (e->attempt == 0 && e->state == ST)
            assert_int_equal(e->at_unix_ms, started);
        else if (e->attempt != 0 && (e->state == ST || e->state == RU))
            assert_int_equal(e->at_unix_ms, started);
        else if (e->attempt != 0)
            assert_int_equal(e->at_unix_ms, started + 300);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dispatch_run_succeeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_creation_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_run_ends_each_way, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_start_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_limits, setup, teardown),
        cmocka_unit_test(test_dispatch_backoff_doubles_to_its_cap),
        cmocka_unit_test_setup_teardown(test_dispatch_retry_with_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_cancel_queued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_cancel_waiting_to_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_cancel_starting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_cancel_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_exit_races_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_exit_reported_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_resume_remote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_resume_never_started, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_resume_recovers_passed_states, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
