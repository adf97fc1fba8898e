/* The test harness: a throwaway PostgreSQL, a real cschedd on a free port,
 * process counting from /proc, the loop-lag check, and assertion macros that
 * print the expected and the actual value.
 *
 * Everything here is for test programs. Failures of the harness itself are
 * reported as a negative errno with a line on stderr; the CS_TEST_* macros
 * abort the test after printing the values and cleaning up every cluster and
 * daemon the harness started (so a failed test leaves no process behind).
 * Functions may be called from any thread unless noted. */
#ifndef CS_TESTLIB_H
#define CS_TESTLIB_H

#include <csched/client.h>
#include <csched/scheduler.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* A throwaway PostgreSQL: initdb in a mkdtemp dir under /tmp (as the postgres
 * user when run as root), unix socket only (listen_addresses=''). */
struct cs_testpg;

struct cs_testpg_options {
    /* Keep PostgreSQL's fsync on (the honest setting for benchmarks). The
     * default, false, runs with fsync=off as PostgreSQL's own test clusters
     * do. */
    bool fsync;
};

/* cs_testpg_start creates and starts a cluster with the default options
 * (fsync=off) and stores it in *out. Returns 0 or a negative errno. */
int cs_testpg_start(struct cs_testpg **out);

/* cs_testpg_start_opts is cs_testpg_start with options (NULL = defaults). */
int cs_testpg_start_opts(const struct cs_testpg_options *opts, struct cs_testpg **out);

/* cs_testpg_url returns the libpq conninfo for cschedd's --database-url. The
 * string lives as long as pg. */
const char *cs_testpg_url(const struct cs_testpg *pg);

/* cs_testpg_stop stops the cluster, removes its directory and frees pg.
 * NULL is allowed. */
void cs_testpg_stop(struct cs_testpg *pg);

/* A real cschedd listening on a unix socket in its own temp dir, with its
 * own temp state dir. Its stderr goes to a log file beside the state dir; the log's tail is
 * printed when the daemon exits uncleanly or a CS_TEST_* assertion fails.
 * The daemon gets SIGTERM if the thread that started it exits, so start
 * daemons from the test's main thread. */
struct cs_testd_options {
    /* --database-url; NULL lets cschedd run its embedded PostgreSQL. */
    const char *database_url;
    /* --max-running; 0 leaves the server's default. */
    unsigned max_running;
    /* More arguments for cschedd; NULL-terminated, or NULL. */
    const char *const *extra_args;
    /* --state-dir: another daemon's (cs_testd_state_dir), which this one
     * only uses and never removes; NULL for a fresh temp dir of its own. */
    const char *state_dir;
    /* How the start-up health check connects (NULL: plaintext), for a
     * daemon serving TLS; borrowed for the daemon's life. */
    const struct cs_client_opts *client;
    /* stderr a FIFO (at cs_testd_log_path) that the harness holds open and
     * never reads: a log reader that stalled. */
    bool stalled_stderr;
    /* cs_testd_start and cs_testd_restart return once cschedd is spawned,
     * without waiting for it to serve: for a replica that waits as a
     * standby and writes no ready file until it takes over.
     * cs_testd_wait_ready waits for it. */
    bool no_wait;
    /* Where cschedd and its csched-minder are: another build's bin dir
     * (e.g. the previous version, for an upgrade); NULL for
     * cs_test_bin_dir(). */
    const char *bin_dir;
};

struct cs_testd;

/* cs_test_bin_dir is where cschedd and csched-minder are: CSCHED_BIN_DIR
 * from the environment, else the build's bin dir. */
const char *cs_test_bin_dir(void);

/* cs_testd_start starts cschedd with --socket DIR/csched.sock and --ready-file,
 * waits (up to 120 s) for the ready file and then for the health service to
 * answer SERVING, and stores the handle in *out. opts is copied (NULL: the
 * embedded PostgreSQL and the default limit). Returns 0, or a negative errno
 * (-ECHILD if cschedd exited during start-up, -ETIMEDOUT) after printing the
 * daemon's log. */
int cs_testd_start(const struct cs_testd_options *opts, struct cs_testd **out);

/* cs_testd_start_refused starts cschedd as cs_testd_start does, for a test
 * of a start that must be refused: waits (up to 120 s) for it to exit and
 * copies the end of its log (its stderr) into log, cap bytes with the NUL.
 * Returns its exit status (non-zero), 0 if it started serving instead (it
 * is then stopped), or a negative errno. Nothing of it is left behind. */
int cs_testd_start_refused(const struct cs_testd_options *opts, char *log, size_t cap);

/* cs_testd_wait_ready waits up to timeout_ms for a daemon started with
 * no_wait to write its ready file and answer SERVING, as cs_testd_start
 * does. Returns 0; -ECHILD if it exited (reaped, its log printed), or
 * -ETIMEDOUT (it is left running). */
int cs_testd_wait_ready(struct cs_testd *d, int64_t timeout_ms);

/* cs_testd_reap reaps cschedd if it has exited, without waiting: -EBUSY
 * while it runs, else how it ended as cs_testd_stop returns it (0 for a
 * clean exit, the exit code, 128 + signal); cs_testd_pid is 0 then. */
int cs_testd_reap(struct cs_testd *d);

/* cs_testd_target returns "unix:DIR/csched.sock" (or "HOST:PORT" when the
 * extra arguments ask for TCP, once the daemon has written its ready
 * file). It stays the same across cs_testd_restart. */
const char *cs_testd_target(const struct cs_testd *d);

/* cs_testd_pid returns the pid of the running cschedd, or 0 after
 * cs_testd_kill. */
pid_t cs_testd_pid(const struct cs_testd *d);

/* cs_testd_state_dir returns the daemon's --state-dir. */
const char *cs_testd_state_dir(const struct cs_testd *d);

/* cs_testd_log_path returns the file the daemon's stderr goes to. */
const char *cs_testd_log_path(const struct cs_testd *d);

/* cs_testd_stop sends SIGTERM, waits up to 30 s (then SIGKILL), removes the
 * state dir and frees d. Returns the exit status: 0 for a clean exit, the
 * exit code if it exited otherwise, 128 + signal if it died of a signal, or
 * -ETIMEDOUT if it had to be killed. After cs_testd_kill it only removes and
 * frees, and returns 128 + SIGKILL; after it exited by itself (seen by
 * cs_testd_reap or a wait), how it ended. NULL returns 0. */
int cs_testd_stop(struct cs_testd *d);

/* cs_testd_kill sends SIGKILL to cschedd and reaps it, as a crash would.
 * Unlike the other stop functions it does NOT free d: the state dir, the
 * target and the options are kept, so that cs_testd_restart can start a new
 * cschedd on the same state dir (adopting the minders the dead one left), and
 * cs_testd_stop must still be called to remove the dir and free d. Minders
 * of the killed daemon keep running, reparented to init. Returns 0 or a
 * negative errno. */
int cs_testd_kill(struct cs_testd *d);

/* cs_testd_restart stops the daemon cleanly (if it is running) and starts a
 * new one on the same state dir, database and port, waiting for it as
 * cs_testd_start does. Returns 0, the non-zero exit status of the stopped
 * daemon (it is still restarted), or a negative errno if the new one did not
 * start. */
int cs_testd_restart(struct cs_testd *d);

/* cs_testd_set_bin_dir makes the next cs_testd_restart start the cschedd
 * in bin_dir (NULL: cs_test_bin_dir()): an upgrade, or a downgrade, in
 * place. 0 or -ENOMEM. */
int cs_testd_set_bin_dir(struct cs_testd *d, const char *bin_dir);

/* cs_test_count_minders counts the live (not zombie) csched-minder processes
 * whose parent is server_pid, from /proc. Returns the count or a negative
 * errno. To sample often, use a cs_test_minder_counter. */
int cs_test_count_minders(pid_t server_pid);

/* A minder counter: cs_test_count_minders that keeps its /proc files open
 * between calls, for sampling every few milliseconds without taking much
 * CPU from the server it watches. Used by one thread at a time. */
struct cs_test_minder_counter;

/* cs_test_minder_counter_new makes a counter for server_pid's minders.
 * Returns 0 or -ENOMEM. */
int cs_test_minder_counter_new(pid_t server_pid, struct cs_test_minder_counter **out);

/* cs_test_minder_counter_count returns the number of live minders now. */
int cs_test_minder_counter_count(struct cs_test_minder_counter *c);

/* cs_test_minder_counter_free closes the counter's files. NULL is allowed. */
void cs_test_minder_counter_free(struct cs_test_minder_counter *c);

/* cs_test_proc_cpu_ms stores the CPU time (user + system, in ms) that pid
 * has used, plus, when with_reaped, that of its descendants it has waited
 * for (minders and their commands, for cschedd). Returns 0 or a negative
 * errno. */
int cs_test_proc_cpu_ms(pid_t pid, bool with_reaped, double *out);

/* cs_test_tree_cpu_ms is cs_test_proc_cpu_ms of pid (without reaped
 * descendants) plus that of its live children: PostgreSQL's postmaster and
 * its backends. */
int cs_test_tree_cpu_ms(pid_t pid, double *out);

/* cs_test_group_live counts the live processes of process group pgid
 * (zombies are dead: whoever their parent is reaps them in its own time),
 * or returns a negative errno. */
int cs_test_group_live(pid_t pgid);

/* cs_test_session_nice returns the nice value of pid's session, from
 * /proc/PID/autogroup ("/autogroup-N nice V"), or CS_TEST_NO_AUTOGROUP
 * when there is none (no autogroup scheduling, or no such process). */
#define CS_TEST_NO_AUTOGROUP 99
int cs_test_session_nice(pid_t pid);

/* cs_test_signal_tree sends sig to pid and to each of its children (a
 * postmaster and its backends: SIGSTOP freezes the database, SIGCONT thaws
 * it). 0 or a negative errno from the kill of pid itself. */
int cs_test_signal_tree(pid_t pid, int sig);

/* cs_testpg_halt stops the cluster (a fast shutdown: its clients are cut off)
 * and keeps its data; cs_testpg_resume starts it again on the same socket
 * and waits until it answers (0 or a negative errno). A database that goes
 * away under a live cschedd and comes back. */
void cs_testpg_halt(struct cs_testpg *pg);
int cs_testpg_resume(struct cs_testpg *pg);
/* cs_testpg_pid returns the postmaster's pid. */
pid_t cs_testpg_pid(const struct cs_testpg *pg);

/* A burst: n_runs runs of n_jobs jobs (created if missing, each running
 * command) triggered together from several client threads, followed on Watch
 * from the server's last event on, until every run has ended.
 *
 * Counting: an attempt holds a slot from its STARTING or RUNNING event to its
 * terminal event; a run is active while its own (attempt 0) state is STARTING
 * or RUNNING. After EVERY event of the burst's jobs both counts are checked
 * against limit. Beside that, GetStats is polled every 20 ms (running +
 * starting against limit) and the live csched-minder children of server_pid
 * are counted from /proc every 2 ms. */
struct cs_test_burst_options {
    const char *target;
    pid_t server_pid;
    /* Jobs are "<job_prefix>-0000", ...; events of other jobs are ignored. */
    const char *job_prefix;
    /* argv of every job, NULL-terminated. */
    const char *const *command;
    unsigned n_jobs;
    /* Run i triggers job i % n_jobs. */
    unsigned n_runs;
    /* Client threads triggering at once (1-64), each with its own channel. */
    unsigned trigger_threads;
    /* Checked on every event; 0 = not checked. */
    unsigned limit;
    /* Deadline of the Watch stream, from before the first trigger. */
    int64_t timeout_ms;
    /* The jobs exist already (cs_test_burst_create_jobs): make none. */
    bool jobs_exist;
    /* Each TriggerJob makes an array of this many runs (TriggerJobRequest.
     * array_size; n_runs a multiple of it); 0: one run each. */
    unsigned array_size;
};

struct cs_test_burst_result {
    unsigned runs_seen;
    unsigned runs_terminal;
    unsigned runs_succeeded;
    unsigned trigger_errors;
    /* Watch ended before every run had ended. */
    bool timed_out;
    /* From the moment the trigger threads were released to the last run's
     * terminal event seen on Watch, and to the last trigger's answer. */
    double wall_ms;
    double trigger_ms;
    unsigned events;
    /* The WatchResponse messages that carried them. */
    unsigned watch_messages;
    /* Events whose seq was not above the previous one's. */
    unsigned seq_errors;
    unsigned holding_peak;
    /* Attempts in RUNNING: the server's view of live minders. */
    unsigned running_peak;
    unsigned active_runs_peak;
    /* Runs queued or holding a slot at once: more than the limit means some
     * waited for one. */
    unsigned demand_peak;
    unsigned limit_violations;
    unsigned stats_peak;
    unsigned stats_polls;
    unsigned stats_violations;
    unsigned server_max_running;
    unsigned proc_peak;
    unsigned proc_samples;
    int64_t proc_max_gap_us;
    /* CPU the /proc sampler itself used: it shares the cores. */
    double proc_sampler_cpu_ms;
    char first_failure[512];
    char first_trigger_error[512];
    char first_violation[512];
};

/* cs_test_burst_create_jobs makes the burst's jobs; existing ones are kept. */
void cs_test_burst_create_jobs(const struct cs_test_burst_options *opts);

/* cs_test_burst_run runs the burst and fills *res; it does not judge it.
 * Returns 0, or -EINVAL for bad options; failures of the set-up (connect,
 * CreateJob, Watch) go through cs_test_fail. */
int cs_test_burst_run(const struct cs_test_burst_options *opts, struct cs_test_burst_result *res);

/* cs_test_burst_print writes every figure of res to stderr. */
void cs_test_burst_print(const char *name, const struct cs_test_burst_result *res);

/* cs_test_rmtree removes path and everything below it, going on past what
 * it cannot remove (each is named on stderr). Returns 0 or the negative
 * errno of the first failure. */
int cs_test_rmtree(const char *path);

/* cs_test_tmp_base is where the temp dirs go: CSCHED_TEST_TMPDIR when set,
 * else /tmp. */
const char *cs_test_tmp_base(void);

/* cs_test_mkdtemp makes a new private dir named like "BASE/prefix-XXXXXX"
 * into buf: BASE is cs_test_tmp_base(). 0, or a
 * negative errno (-ENAMETOOLONG when it does not fit in cap). */
int cs_test_mkdtemp(char *buf, size_t cap, const char *prefix);

/* cs_test_mkdtemp_shared is cs_test_mkdtemp for what a test hands to another
 * user: the dir is mode 0755, and every dir above it must let others in, or
 * it is removed again and -EACCES returned after a line on stderr naming the
 * dir that keeps them out. The build tree may be such a dir (a clone under
 * /root): a program another user runs is copied here first. */
int cs_test_mkdtemp_shared(char *buf, size_t cap, const char *prefix);

/* cs_test_copy_program copies the program src into dir under its own name,
 * mode 0755. 0, or a negative errno after a line on stderr. */
int cs_test_copy_program(const char *src, const char *dir);

/* cs_test_keep_dirs is true when CSCHED_TEST_KEEP is set (and not "0"): temp
 * dirs of clusters and daemons are then left in place to be looked at. */
bool cs_test_keep_dirs(void);

/* cs_test_discard_dir disposes of a temp dir the harness is done with:
 * kept (and named on stderr) under CSCHED_TEST_KEEP, removed later if
 * cs_test_defer_discards is on, else removed now. what names it ("cschedd",
 * "PostgreSQL", ...). */
void cs_test_discard_dir(const char *what, const char *path);

/* cs_test_defer_discards(true) holds discarded dirs until
 * cs_test_defer_discards(false), which removes them all. For benchmarks:
 * on ext4 without a journal, every file deleted in the last seconds is
 * skipped one by one by the next file creations, so removing one run's
 * thousands of files slows the run after it. */
void cs_test_defer_discards(bool defer);

/* The spec's loop-lag probe bounds for every test. */
#define CS_TEST_LAG_P99_MAX_US 50000
#define CS_TEST_LAG_MAX_MAX_US 250000

/* cs_test_client_new connects a libcsched client to target (cs_testd_target)
 * or fails the test. Free it with cs_client_free. */
struct cs_client *cs_test_client_new(const char *target);

/* cs_test_get_stats calls GetStats, waiting up to 10 s for the server to be
 * ready, or fails the test. Free the result with
 * csched__v1__stats__free_unpacked. */
Csched__V1__Stats *cs_test_get_stats(struct cs_client *client);

/* cs_testd_assert_lag_ok calls GetStats and asserts p99 < 50 ms and
 * max < 250 ms for both lag_since_start and lag_last_minute, printing all
 * figures on failure. */
void cs_testd_assert_lag_ok(struct cs_testd *d);

/* cs_test_fail prints "file:line: message", the tails of the logs of every
 * live daemon, stops every cluster and daemon the harness started, and aborts.
 * The CS_TEST_* macros call it. */
_Noreturn void cs_test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Assertions that print both sides, as libuv's ASSERT_EQ family. Operands
 * are compared as long long (CS_TEST_*) or as strings (CS_TEST_STREQ). */
#define CS_TEST_CMP(a, op, b)                                                                      \
    do {                                                                                           \
        long long cs_test_a_ = (long long)(a);                                                     \
        long long cs_test_b_ = (long long)(b);                                                     \
        if (!(cs_test_a_ op cs_test_b_))                                                           \
            cs_test_fail(__FILE__, __LINE__, "%s %s %s failed: %lld %s %lld", #a, #op, #b,         \
                         cs_test_a_, #op, cs_test_b_);                                             \
    } while (0)

#define CS_TEST_EQ(a, b) CS_TEST_CMP(a, ==, b)
#define CS_TEST_NE(a, b) CS_TEST_CMP(a, !=, b)
#define CS_TEST_LT(a, b) CS_TEST_CMP(a, <, b)
#define CS_TEST_LE(a, b) CS_TEST_CMP(a, <=, b)
#define CS_TEST_GT(a, b) CS_TEST_CMP(a, >, b)
#define CS_TEST_GE(a, b) CS_TEST_CMP(a, >=, b)

#define CS_TEST_TRUE(cond)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            cs_test_fail(__FILE__, __LINE__, "%s is false", #cond);                                \
    } while (0)

#define CS_TEST_STREQ(a, b)                                                                        \
    do {                                                                                           \
        const char *cs_test_sa_ = (a);                                                             \
        const char *cs_test_sb_ = (b);                                                             \
        if (cs_test_sa_ == NULL || cs_test_sb_ == NULL || strcmp(cs_test_sa_, cs_test_sb_) != 0)   \
            cs_test_fail(__FILE__, __LINE__, "%s == %s failed: \"%s\" != \"%s\"", #a, #b,          \
                         cs_test_sa_ ? cs_test_sa_ : "(null)",                                     \
                         cs_test_sb_ ? cs_test_sb_ : "(null)");                                    \
    } while (0)

/* CS_TEST_OK asserts that an int-returning call returned 0. */
#define CS_TEST_OK(expr) CS_TEST_EQ(expr, 0)

/* cs_test_now_ms returns the monotonic clock in milliseconds. */
int64_t cs_test_now_ms(void);

/* cs_test_sleep_ms sleeps for ms milliseconds, through signals. */
void cs_test_sleep_ms(int64_t ms);

#endif
