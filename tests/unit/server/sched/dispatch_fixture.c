/* dispatch_fixture: the fake store and launcher, the fake minders and the
 * loop driving of test_dispatch (see dispatch_fixture.h). */
#include "dispatch_fixture.h"

#include "loop_test.h"

struct dispatch_fixture fx;

/* --- the fake store -------------------------------------------------------- */

static void record(struct write_rec w)
{
    if (fx.n_writes == MAX_WRITES) {
        violation("more than %d writes waiting to commit", MAX_WRITES);
        return;
    }
    fx.writes[fx.n_writes++] = w;
}

static void record_write(cs_store_done_cb cb, void *arg)
{
    if (cb != NULL)
        record((struct write_rec){.cb = cb, .arg = arg});
}

static void fake_run_put(struct cs_store *store, const Csched__V1__Run *run, cs_store_done_cb cb,
                         void *arg)
{
    fx.last_run_id = run->id;
    fx.last_run_state = run->state;
    fx.last_run_outcome = cs_outcome_of_run(run);
    record_write(cb, arg);
}

static void fake_attempt_put(struct cs_store *store, int64_t run_id,
                             const Csched__V1__Attempt *attempt, const char *attempt_dir,
                             cs_store_done_cb cb, void *arg)
{
    char want[4096];
    assert_int_equal(
        cs_minder_dir_format(want, sizeof(want), fx.state_dir, run_id, attempt->number), 0);
    /* One on another replica's machine is written with none: that
     * machine's state dir holds it. */
    if (attempt_dir[0] != '\0' && strcmp(want, attempt_dir) != 0)
        violation("attempt %u of run %lld written with dir %s, expected %s", attempt->number,
                  (long long)run_id, attempt_dir, want);
    record_write(cb, arg);
}

static void fake_event_put(struct cs_store *store, const Csched__V1__Event *event,
                           cs_store_event_cb cb, void *arg)
{
    if (fx.n_events < MAX_EVENTS)
        fx.events[fx.n_events++] = (struct event_rec){
            event->run_id,
            event->attempt,
            (Csched__V1__RunState)event->state,
            uv_now(&fx.loop),
            event->outcome_case,
            event->outcome_case == CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL ? event->term_signal
                                                                          : event->exit_code,
            event->at_unix_ms,
            event->recovered,
        };
    if (cb != NULL)
        record((struct write_rec){.event_cb = cb, .arg = arg, .seq = event->seq});
}

/* Ends every write made so far, in order, as the store's batches do. */
void commit_with(int status)
{
    for (size_t i = 0; i < fx.n_writes; i++) {
        struct write_rec *w = &fx.writes[i];
        if (w->event_cb != NULL)
            w->event_cb(w->arg, status, w->seq);
        else
            w->cb(w->arg, status);
    }
    fx.n_writes = 0;
}

void commit(void)
{
    commit_with(0);
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

static void fake_launch(struct cs_launcher *launcher, struct cs_launch *launch)
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

/* A process that stands for a minder, reaped by dispatch or at teardown:
 * a cat of a pipe, which exits 0 when the test closes the pipe (a minder's
 * clean exit) and can be killed outright. */
pid_t spawn_minder(void)
{
    char *argv[] = {"cat", NULL};
    int fds[2];
    pid_t pid;
    posix_spawn_file_actions_t actions;
    assert_true(fx.n_children < MAX_CHILDREN);
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    assert_int_equal(posix_spawn_file_actions_init(&actions), 0);
    assert_int_equal(posix_spawn_file_actions_adddup2(&actions, fds[0], 0), 0);
    assert_int_equal(posix_spawnp(&pid, "cat", &actions, NULL, argv, environ), 0);
    assert_int_equal(posix_spawn_file_actions_destroy(&actions), 0);
    assert_int_equal(close(fds[0]), 0);
    fx.children[fx.n_children] = pid;
    fx.child_stdin[fx.n_children++] = fds[1];
    return pid;
}

/* Takes the submitted launch of run_id off the list; fails if there is none. */
struct cs_launch *take_launch(int64_t run_id)
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
pid_t launch_ok(int64_t run_id)
{
    struct cs_launch *l = take_launch(run_id);
    assert_true(l->argv != NULL && strcmp(l->argv[0], fx.s.minder_path) == 0);
    assert_true(mkdir(l->dir, 0700) == 0 || errno == EEXIST);
    l->pid = spawn_minder();
    l->pidfd = (int)syscall(SYS_pidfd_open, l->pid, 0);
    assert_true(l->pidfd >= 0);
    l->started_unix_ms = cs_now_unix_ms();
    pid_t pid = l->pid;
    cs_dispatch_launch_done_cb(l, &fx.s);
    return pid;
}

/* Plays a launch thread whose posix_spawn failed. */
void launch_fails(int64_t run_id)
{
    struct cs_launch *l = take_launch(run_id);
    l->err = -ENOENT;
    l->pid = -1;
    l->pidfd = -1;
    (void)snprintf(l->message, sizeof(l->message), "starting %s failed: %s", fx.s.minder_path,
                   strerror(ENOENT));
    cs_dispatch_launch_done_cb(l, &fx.s);
}

static const struct cs_sched_ops fake_ops = {
    .run_put_cb = fake_run_put,
    .attempt_put_cb = fake_attempt_put,
    .event_put_cb = fake_event_put,
    .launch_cb = fake_launch,
};

/* --- the loop --------------------------------------------------------------- */

static void guard_cb(uv_timer_t *timer)
{
    fx.guard_fired = true;
}

/* One loop turn that does not wait: the pump's idle handle runs once. */
void turn(void)
{
    (void)uv_run(&fx.loop, UV_RUN_NOWAIT);
}

struct event_rec_want {
    int64_t run_id;
    uint32_t attempt;
    Csched__V1__RunState state;
};

const struct event_rec *find_event(int64_t run_id, uint32_t attempt, Csched__V1__RunState state)
{
    for (size_t i = 0; i < fx.n_events; i++)
        if (fx.events[i].run_id == run_id && fx.events[i].attempt == attempt &&
            fx.events[i].state == state)
            return &fx.events[i];
    return NULL;
}

static bool has_event(const void *arg)
{
    const struct event_rec_want *w = arg;
    return find_event(w->run_id, w->attempt, w->state) != NULL;
}

/* Runs the loop until pred(arg) holds: the exit watch, the pool's note
 * reads and timers all wake it. Fails after 10 s instead of hanging. */
void run_until(bool (*pred)(const void *), const void *arg, const char *what)
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
void wait_for(int64_t run_id, uint32_t attempt, Csched__V1__RunState state)
{
    struct event_rec_want want = {run_id, attempt, state};
    char what[128];
    (void)snprintf(what, sizeof(what), "run %lld attempt %u to reach %s", (long long)run_id,
                   attempt, cs_run_state_proto_name(state));
    run_until(has_event, &want, what);
}

bool is_queued(const void *arg)
{
    return ((const struct cs_run *)arg)->queued;
}

/* --- the minder's side ------------------------------------------------------ */

void attempt_dir(int64_t run_id, uint32_t attempt, char *buf, size_t cap)
{
    assert_int_equal(cs_minder_dir_format(buf, cap, fx.state_dir, run_id, attempt), 0);
}

/* Leaves the note the minder of run_id's attempt would write. */
void write_note(int64_t run_id, uint32_t attempt, enum cs_note_outcome outcome, int exit_code,
                int term_signal, const char *message)
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

/* The minder of pid is killed outright (its note, if any, written before). */
void minder_ends(pid_t pid)
{
    assert_int_equal(kill(pid, SIGKILL), 0);
}

/* The stand-in minder of pid exits 0. */
static void exit_clean(pid_t pid)
{
    for (size_t i = 0; i < fx.n_children; i++)
        if (fx.children[i] == pid) {
            assert_int_equal(close(fx.child_stdin[i]), 0);
            fx.child_stdin[i] = -1;
            return;
        }
    fail_msg("minder %d is not one of the test's", (int)pid);
}

/* The minder of run_id's attempt writes its note and exits 0. */
void minder_exits(int64_t run_id, uint32_t attempt, pid_t pid, int exit_code)
{
    write_note(run_id, attempt, CS_NOTE_EXITED, exit_code, 0, "");
    exit_clean(pid);
}

/* Drops the note's pages from the page cache (the note is synced, so they
 * are clean; the kernel may hold one for a moment), checked with mincore,
 * which does not read them back. */
static bool evict(const char *path)
{
    struct statfs fs;
    assert_int_equal(statfs(path, &fs), 0);
    if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC)
        return false; /* their pages are the files */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(map != MAP_FAILED);
    unsigned char resident = 1;
    for (int i = 0; i < 100 && resident; i++) {
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        assert_int_equal(mincore(map, (size_t)st.st_size, &resident), 0);
        resident &= 1;
        if (resident)
            (void)usleep(10 * 1000);
    }
    assert_int_equal(munmap(map, (size_t)st.st_size), 0);
    assert_int_equal(close(fd), 0);
    return !resident;
}

bool minder_exits_note_evicted(int64_t run_id, uint32_t attempt, pid_t pid, int exit_code)
{
    char dir[4096], path[4200];
    write_note(run_id, attempt, CS_NOTE_EXITED, exit_code, 0, "");
    attempt_dir(run_id, attempt, dir, sizeof(dir));
    (void)snprintf(path, sizeof(path), "%s/%s", dir, CS_NOTE_FILE);
    if (!evict(path))
        return false;
    exit_clean(pid);
    return true;
}

/* --- fixture ---------------------------------------------------------------- */

int setup(void **state)
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
    /* This machine's room takes as many: a test lowers max_running alone. */
    s->machine_max_running = 100;
    s->next_run_id = 1;
    s->next_seq = 1;
    s->base_env = fx.empty_env;
    assert_int_equal(cs_dispatch_init(s, &fake_ops), 0);
    cs_event_init(s, publish_cb, NULL);
    return 0;
}

int teardown(void **state)
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
    for (size_t i = 0; i < fx.n_children; i++) {
        if (kill(fx.children[i], SIGKILL) == 0)
            (void)waitpid(fx.children[i], NULL, 0);
        if (fx.child_stdin[i] >= 0)
            (void)close(fx.child_stdin[i]);
    }
    char cmd[160];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", fx.state_dir);
    assert_int_equal(system(cmd), 0);
    assert_no_violation();
    return 0;
}

struct cs_job *add_job(const char *name, uint32_t max_running, uint32_t max_attempts,
                       uint32_t retry_backoff_ms)
{
    return loop_test_add_job(&fx.s, name, max_running, max_attempts, retry_backoff_ms);
}

int64_t trigger_uncommitted(struct cs_job *job)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    req.job_name = job->spec->name;
    return cs_dispatch_trigger(&fx.s, job, &req, "test", NULL, NULL)->msg->id;
}

int64_t trigger(struct cs_job *job)
{
    int64_t id = trigger_uncommitted(job);
    commit();
    return id;
}

/* A new run of job, started and with its minder running; *pid gets it. */
int64_t start_running(struct cs_job *job, pid_t *pid)
{
    int64_t id = trigger(job);
    turn();
    *pid = launch_ok(id);
    return id;
}

struct cs_run *run_of(int64_t id)
{
    return cs_idmap_get(&fx.s.runs, id);
}

/* The events of run_id as "run:STATE" and "aN:STATE" words, in order. */
const char *history(int64_t run_id)
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
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s:%s%s", len ? " " : "", who,
                                cs_run_state_proto_name(e->state), e->recovered ? "(rec)" : "");
    }
    return buf;
}

static void cancel_done_cb(void *arg, int status)
{
    assert_int_equal(status, 0);
    fx.cancel_commits++;
}

/* Cancels run_id; returns the state of the copy dispatch hands back. */
Csched__V1__RunState cancel(int64_t run_id)
{
    Csched__V1__Run *copy = cs_dispatch_cancel(&fx.s, run_of(run_id), cancel_done_cb, NULL);
    Csched__V1__RunState state = copy->state;
    assert_true(copy->cancel_requested || state == CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    protobuf_c_message_free_unpacked(&copy->base, NULL);
    return state;
}
