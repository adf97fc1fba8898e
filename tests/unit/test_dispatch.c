/* Unit tests of the run state machine (dispatch with the pump, retries,
 * attempts and events under it) on a real libuv loop. The store and the
 * launcher are fakes at dispatch's seams: the store's three writes are
 * wrapped at link time (-Wl,--wrap) and only recorded, committing when a
 * test says so; the launcher's submit is wrapped and the test plays the
 * launch thread, answering through the launcher's done callback. Minders
 * are real processes (sleep) with real pidfds in the real exit watch; the
 * test writes the status note a minder would have left, then ends the
 * process. Every event is recorded as it is written, so each test checks
 * the exact transitions of its runs. The loop is driven turn by turn (no
 * sleeps); a guard timer fails a test that would wait for ever. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "attempt.h"
#include "dispatch.h"
#include "event.h"
#include "job.h"
#include "minder_contract.h"
#include "note.h"
#include "retry.h"
#include "violations.h"

extern char **environ;

enum { MAX_EVENTS = 1024, MAX_WRITES = 2048, MAX_LAUNCHES = 64, MAX_CHILDREN = 64 };

struct event_rec {
    int64_t run_id;
    uint32_t attempt; /* 0: the run's own event */
    Csched__V1__RunState state;
};

struct write_rec {
    cs_store_done_cb cb;
    void *arg;
};

static struct {
    uv_loop_t loop;
    uv_timer_t guard;
    bool guard_fired;
    struct cs_sched s;
    char state_dir[64];
    char *empty_env[1];
    struct event_rec events[MAX_EVENTS]; /* as written */
    size_t n_events;
    int64_t published[MAX_EVENTS]; /* seqs, as published after commit */
    size_t n_published;
    struct write_rec writes[MAX_WRITES]; /* not yet committed */
    size_t n_writes;
    struct cs_launch *launches[MAX_LAUNCHES]; /* submitted, not yet answered */
    size_t n_launches;
    pid_t children[MAX_CHILDREN];
    size_t n_children;
    int cancel_commits;  /* calls of cancel_done_cb */
    int64_t last_run_id; /* the last run row written: */
    Csched__V1__RunState last_run_state;
    struct cs_outcome last_run_outcome;
} fx;

/* --- the fake store -------------------------------------------------------- */

static void record_write(cs_store_done_cb cb, void *arg)
{
    if (cb == NULL)
        return;
    if (fx.n_writes == MAX_WRITES) {
        violation("more than %d writes waiting to commit", MAX_WRITES);
        return;
    }
    fx.writes[fx.n_writes++] = (struct write_rec){cb, arg};
}

void __wrap_cs_store_run_put(struct cs_store *store, const Csched__V1__Run *run,
                             cs_store_done_cb cb, void *arg);
void __wrap_cs_store_attempt_put(struct cs_store *store, int64_t run_id,
                                 const Csched__V1__Attempt *attempt, const char *attempt_dir,
                                 cs_store_done_cb cb, void *arg);
void __wrap_cs_store_event_put(struct cs_store *store, const Csched__V1__Event *event,
                               cs_store_done_cb cb, void *arg);
void __wrap_cs_launcher_submit(struct cs_launcher *launcher, struct cs_launch *launch);

void __wrap_cs_store_run_put(struct cs_store *store, const Csched__V1__Run *run,
                             cs_store_done_cb cb, void *arg)
{
    fx.last_run_id = run->id;
    fx.last_run_state = run->state;
    fx.last_run_outcome = cs_outcome_of_run(run);
    record_write(cb, arg);
}

void __wrap_cs_store_attempt_put(struct cs_store *store, int64_t run_id,
                                 const Csched__V1__Attempt *attempt, const char *attempt_dir,
                                 cs_store_done_cb cb, void *arg)
{
    char want[4096];
    assert_int_equal(
        cs_minder_dir_format(want, sizeof(want), fx.state_dir, run_id, attempt->number), 0);
    if (strcmp(want, attempt_dir) != 0)
        violation("attempt %u of run %lld written with dir %s, expected %s", attempt->number,
                  (long long)run_id, attempt_dir, want);
    record_write(cb, arg);
}

void __wrap_cs_store_event_put(struct cs_store *store, const Csched__V1__Event *event,
                               cs_store_done_cb cb, void *arg)
{
    if (fx.n_events < MAX_EVENTS)
        fx.events[fx.n_events++] =
            (struct event_rec){event->run_id, event->attempt, (Csched__V1__RunState)event->state};
    record_write(cb, arg);
}

/* Commits every write made so far, in order, as the store's batches do. */
static void commit(void)
{
    for (size_t i = 0; i < fx.n_writes; i++)
        fx.writes[i].cb(fx.writes[i].arg, 0);
    fx.n_writes = 0;
}

static void publish_cb(void *ctx, const Csched__V1__Event *event)
{
    if (fx.n_published > 0 && event->seq <= fx.published[fx.n_published - 1])
        violation("event %lld published after %lld", (long long)event->seq,
                  (long long)fx.published[fx.n_published - 1]);
    if (fx.n_published < MAX_EVENTS)
        fx.published[fx.n_published++] = event->seq;
}

/* --- the fake launcher ---------------------------------------------------- */

void __wrap_cs_launcher_submit(struct cs_launcher *launcher, struct cs_launch *launch)
{
    struct cs_sched *s = &fx.s;
    struct cs_attempt *att = launch->owner;
    const struct cs_job *job = att->run->job;
    uint32_t limit = job->spec->max_running;
    if (cs_sched_slots_used(s) > s->max_running)
        violation("a launch with %u of %u global slots in use", cs_sched_slots_used(s),
                  s->max_running);
    if (limit != 0 && job->slots > limit)
        violation("a launch of job %s with %u of its %u slots in use", job->spec->name, job->slots,
                  limit);
    if (fx.n_launches == MAX_LAUNCHES) {
        violation("more than %d launches waiting", MAX_LAUNCHES);
        return;
    }
    fx.launches[fx.n_launches++] = launch;
}

/* A process that stands for a minder; reaped by dispatch or at teardown. */
static pid_t spawn_sleep(void)
{
    char *argv[] = {"sleep", "1000", NULL};
    pid_t pid;
    assert_int_equal(posix_spawnp(&pid, "sleep", NULL, NULL, argv, environ), 0);
    assert_true(fx.n_children < MAX_CHILDREN);
    fx.children[fx.n_children++] = pid;
    return pid;
}

/* Takes the submitted launch of run_id off the list; fails if there is none. */
static struct cs_launch *take_launch(int64_t run_id)
{
    for (size_t i = 0; i < fx.n_launches; i++) {
        struct cs_launch *l = fx.launches[i];
        if (((struct cs_attempt *)l->owner)->run->msg->id == run_id) {
            memmove(&fx.launches[i], &fx.launches[i + 1],
                    (fx.n_launches - i - 1) * sizeof(fx.launches[0]));
            fx.n_launches--;
            return l;
        }
    }
    fail_msg("no launch submitted for run %lld", (long long)run_id);
    return NULL;
}

/* Plays the launch thread: the minder (here a sleep) runs. Returns its pid. */
static pid_t launch_ok(int64_t run_id)
{
    struct cs_launch *l = take_launch(run_id);
    assert_true(l->argv != NULL && strcmp(l->argv[0], fx.s.minder_path) == 0);
    assert_true(mkdir(l->dir, 0700) == 0 || errno == EEXIST);
    l->pid = spawn_sleep();
    l->pidfd = (int)syscall(SYS_pidfd_open, l->pid, 0);
    assert_true(l->pidfd >= 0);
    l->started_unix_ms = cs_now_unix_ms();
    pid_t pid = l->pid;
    cs_dispatch_launch_done_cb(l, &fx.s);
    return pid;
}

/* Plays a launch thread whose posix_spawn failed. */
static void launch_fails(int64_t run_id)
{
    struct cs_launch *l = take_launch(run_id);
    l->err = -ENOENT;
    l->pid = -1;
    l->pidfd = -1;
    (void)snprintf(l->message, sizeof(l->message), "posix_spawn(%s) failed: %s", fx.s.minder_path,
                   strerror(ENOENT));
    cs_dispatch_launch_done_cb(l, &fx.s);
}

/* --- the loop --------------------------------------------------------------- */

static void guard_cb(uv_timer_t *timer)
{
    fx.guard_fired = true;
}

/* One loop turn that does not wait: the pump's idle handle runs once. */
static void turn(void)
{
    (void)uv_run(&fx.loop, UV_RUN_NOWAIT);
}

struct event_rec_want {
    int64_t run_id;
    uint32_t attempt;
    Csched__V1__RunState state;
};

static bool has_event(const void *arg)
{
    const struct event_rec_want *w = arg;
    for (size_t i = 0; i < fx.n_events; i++)
        if (fx.events[i].run_id == w->run_id && fx.events[i].attempt == w->attempt &&
            fx.events[i].state == w->state)
            return true;
    return false;
}

/* Runs the loop until pred(arg) holds: the exit watch, the pool's note
 * reads and timers all wake it. Fails after 10 s instead of hanging. */
static void run_until(bool (*pred)(const void *), const void *arg, const char *what)
{
    fx.guard_fired = false;
    assert_int_equal(uv_timer_start(&fx.guard, guard_cb, 10000, 0), 0);
    while (!pred(arg) && !fx.guard_fired)
        (void)uv_run(&fx.loop, UV_RUN_ONCE);
    assert_int_equal(uv_timer_stop(&fx.guard), 0);
    if (fx.guard_fired)
        fail_msg("waited 10 s for %s", what);
}

/* Until run_id (attempt, or the run itself for 0) has had an event in state. */
static void wait_for(int64_t run_id, uint32_t attempt, Csched__V1__RunState state)
{
    struct event_rec_want want = {run_id, attempt, state};
    char what[128];
    (void)snprintf(what, sizeof(what), "run %lld attempt %u to reach %s", (long long)run_id,
                   attempt, cs_run_state_name(state));
    run_until(has_event, &want, what);
}

static bool is_queued(const void *arg)
{
    return ((const struct cs_run *)arg)->queued;
}

/* --- the minder's side ------------------------------------------------------ */

static void attempt_dir(int64_t run_id, uint32_t attempt, char *buf, size_t cap)
{
    assert_int_equal(cs_minder_dir_format(buf, cap, fx.state_dir, run_id, attempt), 0);
}

/* Leaves the note the minder of run_id's attempt would write. */
static void write_note(int64_t run_id, uint32_t attempt, enum cs_note_outcome outcome,
                       int exit_code, int term_signal, const char *message)
{
    char dir[4096];
    attempt_dir(run_id, attempt, dir, sizeof(dir));
    assert_true(mkdir(dir, 0700) == 0 || errno == EEXIST);
    struct cs_note note = {.outcome = outcome, .exit_code = exit_code, .term_signal = term_signal};
    note.started_unix_ms = cs_now_unix_ms();
    note.ended_unix_ms = note.started_unix_ms + 1;
    (void)snprintf(note.message, sizeof(note.message), "%s", message);
    assert_int_equal(cs_note_write(dir, &note), 0);
}

/* The minder of pid ends (its note, if any, written before). */
static void minder_ends(pid_t pid)
{
    assert_int_equal(kill(pid, SIGKILL), 0);
}

/* The minder of run_id's attempt writes its note and ends. */
static void minder_exits(int64_t run_id, uint32_t attempt, pid_t pid, int exit_code)
{
    write_note(run_id, attempt, CS_NOTE_EXITED, exit_code, 0, "");
    minder_ends(pid);
}

/* --- fixture ---------------------------------------------------------------- */

static int setup(void **state)
{
    memset(&fx, 0, sizeof(fx));
    violations_reset();
    cs_loop_thread_mark();
    assert_int_equal(uv_loop_init(&fx.loop), 0);
    assert_int_equal(uv_timer_init(&fx.loop, &fx.guard), 0);
    (void)snprintf(fx.state_dir, sizeof(fx.state_dir), "/tmp/test_dispatch.XXXXXX");
    assert_non_null(mkdtemp(fx.state_dir));
    char attempts[128];
    (void)snprintf(attempts, sizeof(attempts), "%s/" CS_ATTEMPTS_DIR, fx.state_dir);
    assert_int_equal(mkdir(attempts, 0700), 0);
    struct cs_sched *s = &fx.s;
    s->loop = &fx.loop;
    s->state_dir = fx.state_dir;
    s->minder_path = "/usr/libexec/csched/" CS_MINDER_NAME;
    s->max_running = 100;
    s->next_run_id = 1;
    s->next_seq = 1;
    s->base_env = fx.empty_env;
    assert_int_equal(cs_dispatch_init(s), 0);
    cs_event_init(s, publish_cb, NULL);
    return 0;
}

static int teardown(void **state)
{
    commit();
    for (size_t i = 0; i < fx.n_launches; i++)
        cs_launch_free(fx.launches[i]);
    cs_dispatch_close(&fx.s);
    cs_job_free_all(&fx.s);
    uv_close((uv_handle_t *)&fx.guard, NULL);
    assert_int_equal(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&fx.loop), 0);
    /* Minders dispatch still watched at the end: end and reap them. */
    for (size_t i = 0; i < fx.n_children; i++)
        if (kill(fx.children[i], SIGKILL) == 0)
            (void)waitpid(fx.children[i], NULL, 0);
    char cmd[160];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", fx.state_dir);
    assert_int_equal(system(cmd), 0);
    assert_no_violation();
    return 0;
}

static struct cs_job *add_job(const char *name, uint32_t max_running, uint32_t max_attempts,
                              uint32_t retry_backoff_ms)
{
    Csched__V1__Job spec;
    char *argv[] = {"true"};
    csched__v1__job__init(&spec);
    spec.name = (char *)name;
    spec.command = argv;
    spec.n_command = 1;
    spec.max_running = max_running;
    spec.max_attempts = max_attempts;
    spec.retry_backoff_ms = retry_backoff_ms;
    return cs_job_insert(&fx.s, (Csched__V1__Job *)cs_message_copy(&spec.base));
}

static int64_t trigger(struct cs_job *job)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    req.job_name = job->spec->name;
    return cs_dispatch_trigger(&fx.s, job, &req, NULL, NULL)->msg->id;
}

/* A new run of job, started and with its minder running; *pid gets it. */
static int64_t start_running(struct cs_job *job, pid_t *pid)
{
    int64_t id = trigger(job);
    turn();
    *pid = launch_ok(id);
    return id;
}

static struct cs_run *run_of(int64_t id)
{
    return cs_idmap_get(&fx.s.runs, id);
}

/* The events of run_id as "run:STATE" and "aN:STATE" words, in order. */
static const char *history(int64_t run_id)
{
    static char buf[1024];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < fx.n_events && len < sizeof(buf) - 40; i++) {
        const struct event_rec *e = &fx.events[i];
        if (e->run_id != run_id)
            continue;
        char who[16] = "run";
        if (e->attempt != 0)
            (void)snprintf(who, sizeof(who), "a%u", e->attempt);
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s:%s", len ? " " : "", who,
                                cs_run_state_name(e->state));
    }
    return buf;
}

static void cancel_done_cb(void *arg, int status)
{
    assert_int_equal(status, 0);
    fx.cancel_commits++;
}

/* Cancels run_id; returns the state of the copy dispatch hands back. */
static Csched__V1__RunState cancel(int64_t run_id)
{
    Csched__V1__Run *copy = cs_dispatch_cancel(&fx.s, run_of(run_id), cancel_done_cb, NULL);
    Csched__V1__RunState state = copy->state;
    assert_true(copy->cancel_requested || state == CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    protobuf_c_message_free_unpacked(&copy->base, NULL);
    return state;
}

#define Q CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED
#define ST CSCHED__V1__RUN_STATE__RUN_STATE_STARTING
#define RU CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING
#define OK CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED
#define FA CSCHED__V1__RUN_STATE__RUN_STATE_FAILED
#define TO CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT
#define CA CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED
#define LO CSCHED__V1__RUN_STATE__RUN_STATE_LOST

#define START_TO_RUNNING "run:QUEUED run:STARTING a1:STARTING a1:RUNNING run:RUNNING"

/* --- transitions ------------------------------------------------------------ */

/* QUEUED -> STARTING -> RUNNING -> SUCCEEDED, with the counts, the slots,
 * and the events' publication after their commit. A success is never
 * retried, though the job allows more attempts. */
static void test_dispatch_run_succeeds(void **state)
{
    struct cs_sched *s = &fx.s;
    struct cs_job *job = add_job("a", 0, 3, 0);
    int64_t id = trigger(job);
    assert_int_equal(run_of(id)->msg->state, Q);
    assert_int_equal(s->queued, 1);
    assert_int_equal(fx.n_launches, 0); /* nothing starts inside the trigger */

    turn();
    assert_int_equal(run_of(id)->msg->state, ST);
    assert_int_equal(s->starting, 1);
    assert_int_equal(job->slots, 1);
    assert_int_equal(fx.n_launches, 1);

    pid_t pid = launch_ok(id);
    assert_int_equal(run_of(id)->msg->state, RU);
    assert_int_equal(run_of(id)->msg->attempts[0]->minder_pid, pid);
    assert_int_equal(s->running, 1);
    assert_int_equal(fx.n_published, 0);
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
                       cs_run_state_name(cases[i].want), cs_run_state_name(cases[i].want));
        assert_string_equal(history(id), want);
        assert_int_equal(job->slots, 0);
        /* The run's outcome is its attempt's: the signal, else the exit code. */
        assert_int_equal(fx.last_run_id, id);
        if (!cases[i].note)
            assert_int_equal(fx.last_run_outcome.kind, CS_OUTCOME_NONE);
        else if (cases[i].term_signal != 0)
            assert_int_equal(fx.last_run_outcome.value, cases[i].term_signal);
        else
            assert_int_equal(fx.last_run_outcome.value, cases[i].exit_code);
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
    l->pid = spawn_sleep();
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
 * backoff has passed (5 ms, then 10: loop time, which never runs a timer
 * early); the last allowed attempt's failure ends the run. */
static void test_dispatch_retry_with_backoff(void **state)
{
    struct cs_job *job = add_job("a", 0, 3, 5);
    int64_t id = trigger(job);
    for (uint32_t attempt = 1; attempt <= 3; attempt++) {
        turn();
        assert_int_equal(fx.n_launches, 1);
        minder_exits(id, attempt, launch_ok(id), 1);
        wait_for(id, attempt, FA);
        if (attempt == 3)
            break;
        /* In the turn that saw the failure: waiting, off the queue, no slot. */
        uint64_t failed_at = uv_now(&fx.loop);
        struct cs_run *run = run_of(id);
        assert_int_equal(run->msg->state, Q);
        assert_int_equal(job->slots, 0);
        assert_non_null(run->backoff);
        assert_false(run->queued);
        assert_int_equal(fx.n_launches, 0);
        run_until(is_queued, run, "the retry to be queued");
        assert_true(uv_now(&fx.loop) - failed_at >= cs_retry_backoff_ms(job->spec, attempt));
        assert_null(run->backoff);
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
    assert_non_null(run_of(id)->backoff);
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

/* A queued run is queued again; a running one whose minder finished while
 * the server was away ends by its note; one whose minder is gone without a
 * note is LOST. */
static void test_dispatch_resume(void **state)
{
    struct cs_sched *s = &fx.s;
    struct cs_job *job = add_job("a", 0, 1, 0);
    s->next_run_id = 10;
    char dir[4096];

    cs_dispatch_resume(s, stored_run(1, Q, 0), NULL);
    write_note(2, 1, CS_NOTE_EXITED, 0, 0, "");
    attempt_dir(2, 1, dir, sizeof(dir));
    cs_dispatch_resume(s, stored_run(2, RU, 1), dir);
    attempt_dir(3, 1, dir, sizeof(dir));
    assert_int_equal(mkdir(dir, 0700), 0);
    cs_dispatch_resume(s, stored_run(3, RU, 1), dir);
    assert_int_equal(job->active, 3);
    assert_int_equal(job->slots, 2);

    wait_for(2, 0, OK);
    wait_for(3, 0, LO);
    assert_string_equal(history(2), "a1:SUCCEEDED run:SUCCEEDED");
    assert_string_equal(history(3), "a1:LOST run:LOST");
    turn();
    assert_int_equal(run_of(1)->msg->state, ST);
    assert_int_equal(job->slots, 1);
    assert_string_equal(history(1), "run:STARTING a1:STARTING");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dispatch_run_succeeds, setup, teardown),
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
