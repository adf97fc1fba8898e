/* The shared fixture of the end-to-end API tests: one throwaway PostgreSQL,
 * one real cschedd and one libcsched client per test executable, plus the
 * calls every area's tests repeat (make a job, trigger it, wait for the end,
 * read its logs, check an error status). Everything runs on the test's main
 * thread. Helpers assert with cmocka, so a failure ends only the current test;
 * the group teardown still checks the loop-lag bounds and a clean exit. What
 * the concurrency tests and the benchmark need too (sleeps, temp trees, run
 * states, Watch events) is testlib's, in tests/lib. */
#ifndef CS_E2E_H
#define CS_E2E_H

#include <csched/client.h>
#include <csched/health.h>
#include <csched/scheduler.h>
#include <grpc/status.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "testlib.h"
#include "testwatch.h"

#define CS_E2E_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The global --max-running every test server gets. */
#define CS_E2E_MAX_RUNNING 16

/* Deadline of one unary call, and of waiting for a run to end. */
#define CS_E2E_CALL_TIMEOUT_MS 10000
#define CS_E2E_RUN_TIMEOUT_MS 20000

/* The fixture, owned by the cmocka group state. */
struct cs_e2e {
    struct cs_testpg *pg;
    struct cs_testd *d;
    struct cs_client *client;
};

/* cs_e2e_setup is a cmocka group setup: starts the database, the server and
 * the client and stores the fixture in *state. Returns 0 or a negative
 * errno. */
int cs_e2e_setup(void **state);

/* cs_e2e_start does what cs_e2e_setup does, with more arguments for cschedd
 * (NULL-terminated, or NULL). */
int cs_e2e_start(void **state, const char *const *extra_args);
/* ... with the daemon's options; their database_url and max_running are the
 * fixture's. */
int cs_e2e_start_options(void **state, const struct cs_testd_options *opts);

/* cs_e2e_setup_embedded is a group setup like cs_e2e_setup for a server
 * with its embedded PostgreSQL in its own state dir, no shared cluster. */
int cs_e2e_setup_embedded(void **state);

/* cs_e2e_embedded_postmaster returns the pid of the embedded PostgreSQL's
 * postmaster of a server started by cs_e2e_setup_embedded (asserts). */
pid_t cs_e2e_embedded_postmaster(struct cs_e2e *e);

/* cs_e2e_teardown is a cmocka group teardown: asserts the loop-lag bounds,
 * stops the server (which must exit 0) and the database, frees the fixture. */
int cs_e2e_teardown(void **state);

/* cs_e2e_opts returns call options with the unary deadline (static). */
const struct cs_call_opts *cs_e2e_opts(void);

/* cs_e2e_name writes "<prefix>-<n>" into buf, n unique within the process. */
void cs_e2e_name(char *buf, size_t size, const char *prefix);

/* cs_e2e_create_shell_job creates a job that runs shell with /bin/sh -c and
 * asserts OK. Returns the stored job (caller frees). */
Csched__V1__Job *cs_e2e_create_shell_job(struct cs_e2e *e, const char *name, const char *shell);

/* cs_e2e_create_serial_job creates a shell job whose runs go one at a time
 * (max_running 1), so a second run waits in the queue; asserts OK. */
Csched__V1__Job *cs_e2e_create_serial_job(struct cs_e2e *e, const char *name, const char *shell);

/* cs_e2e_create_job creates job and asserts OK. Returns the stored job. */
Csched__V1__Job *cs_e2e_create_job(struct cs_e2e *e, Csched__V1__Job *job);

/* cs_e2e_try_create_job calls CreateJob for job, for a test of what the
 * server refuses: returns 0 (the reply is freed) or the status code, with
 * the status in *st. */
int cs_e2e_try_create_job(struct cs_e2e *e, Csched__V1__Job *job, struct cs_status *st);

/* A job named name running `true` on the schedule text in zone, not yet
 * created (the caller frees it or hands it to cs_e2e_create_job). */
Csched__V1__Job *cs_e2e_scheduled_job(const char *name, const char *text, const char *zone);

/* A Watch of job's events after seq after_seq (NULL job: every job's); the
 * caller frees the stream. */
struct cs_stream *cs_e2e_watch_job(struct cs_e2e *e, const char *job, int64_t after_seq);

/* cs_e2e_trigger triggers job_name (no overrides) and returns the run id. */
int64_t cs_e2e_trigger(struct cs_e2e *e, const char *job_name);

/* cs_e2e_get_job fetches a job and asserts OK (caller frees). */
Csched__V1__Job *cs_e2e_get_job(struct cs_e2e *e, const char *name);

/* cs_e2e_get_stats calls GetStats and asserts OK (caller frees). */
Csched__V1__Stats *cs_e2e_get_stats(struct cs_e2e *e);

/* cs_e2e_step_fn is one step of a test that must not stall the loop. */
typedef void cs_e2e_step_fn(struct cs_e2e *e, void *arg);

/* cs_e2e_assert_loop_free runs step until one try of it leaves the loop-lag
 * probe without a late tick (lag_since_start.late_ticks unchanged), three
 * tries at most, and fails naming what if none did. A stall of the step's
 * own comes back at every try; one of the machine's (a VM's stolen time
 * under a loaded CI) does not, and one tick of a short step is its whole
 * p99. */
void cs_e2e_assert_loop_free(struct cs_e2e *e, const char *what, cs_e2e_step_fn *step, void *arg);

/* cs_e2e_hook_job is a shell job at max_running 1 with one hook, named
 * hook_name, on the given events, of up to 50 attempts; the caller gives
 * the hook its kind (url or command) in job->hooks[0] (caller frees). */
Csched__V1__Job *cs_e2e_hook_job(const char *name, const char *shell, const char *hook_name,
                                 const Csched__V1__HookEvent *events, size_t n_events);

/* cs_e2e_hook_deliveries calls ListHookDeliveries for job (its newest
 * first) and asserts OK (caller frees). */
Csched__V1__ListHookDeliveriesResponse *cs_e2e_hook_deliveries(struct cs_e2e *e, const char *job);

/* cs_e2e_last_seq is the seq of the last event the server has committed. */
int64_t cs_e2e_last_seq(struct cs_e2e *e);

/* cs_e2e_get_run fetches a run and asserts OK (caller frees). */
Csched__V1__Run *cs_e2e_get_run(struct cs_e2e *e, int64_t run_id);

/* cs_e2e_get_slot reads job's slot at slot_unix_ms from ListSlots (so as
 * committed), asserting OK: the slot, or NULL when there is none (caller
 * frees). */
Csched__V1__Slot *cs_e2e_get_slot(struct cs_e2e *e, const char *job, int64_t slot_unix_ms);

/* cs_e2e_count_slot_runs counts job's runs (of its newest 1000) made for
 * its slot at slot_unix_ms. */
size_t cs_e2e_count_slot_runs(struct cs_e2e *e, const char *job, int64_t slot_unix_ms);

/* cs_e2e_wait_state polls GetRun until the run reaches state or any terminal
 * state, for at most timeout_ms; fails the test on timeout. Returns the run
 * as last seen (caller frees). */
Csched__V1__Run *cs_e2e_wait_state(struct cs_e2e *e, int64_t run_id, Csched__V1__RunState state,
                                   int64_t timeout_ms);

/* cs_e2e_wait_end waits up to CS_E2E_RUN_TIMEOUT_MS for a terminal state. */
Csched__V1__Run *cs_e2e_wait_end(struct cs_e2e *e, int64_t run_id);

/* cs_e2e_read_logs reads a whole ReadLogs stream of one stream kind
 * (STDOUT or STDERR), asserting that chunk offsets are contiguous from 0.
 * Returns a NUL-terminated malloc'd buffer (caller frees), length in *len. */
char *cs_e2e_read_logs(struct cs_e2e *e, int64_t run_id, uint32_t attempt,
                       Csched__V1__LogStream stream, size_t *len);

/* cs_e2e_read_logs_status reads a ReadLogs stream to its end, dropping the
 * chunks, and returns what cs_e2e_assert_status takes: 0 for OK, else the
 * status code, with its message in *st. */
int cs_e2e_read_logs_status(struct cs_e2e *e, const Csched__V1__ReadLogsRequest *req,
                            struct cs_status *st);

/* cs_e2e_assert_status asserts that a call returned the gRPC status want,
 * that the status carries a message, and that the message mentions word
 * (case-insensitive; NULL skips that check). */
void cs_e2e_assert_status(int rc, const struct cs_status *status, int want, const char *word);

/* cs_e2e_read_pgid runs while a test command is alive: waits up to
 * timeout_ms for path to hold a process group id written by the command
 * ("cut -d' ' -f5 /proc/$$/stat > path") and returns it, or fails the test. */
pid_t cs_e2e_read_pgid(const char *path, int64_t timeout_ms);

/* cs_e2e_assert_group_gone asserts that no live process of process group
 * pgid is left (zombies aside), allowing timeout_ms for the last to die. */
void cs_e2e_assert_group_gone(pid_t pgid, int64_t timeout_ms);

/* cs_e2e_tmpdir makes a fresh directory under /tmp that any user may enter
 * and writes its path into buf (PATH_MAX bytes); cs_test_rmtree removes it. */
void cs_e2e_tmpdir(char *buf);

/* cs_e2e_count_lines returns how many lines the file at path has, 0 if
 * there is none (a command's marker file: one line per execution). */
long cs_e2e_count_lines(const char *path);

/* cs_e2e_create_counter_job creates a job named after prefix (its name
 * into name, name_size bytes) with max_attempts, whose shell command counts
 * its runs in a new temp dir (its path into dir, PATH_MAX bytes), so that $n is 1 in the first
 * attempt, 2 in the second, ..., and then runs then (e.g. "[ $n -ge 3 ]"). */
void cs_e2e_create_counter_job(struct cs_e2e *e, const char *prefix, const char *then,
                               uint32_t max_attempts, char *name, size_t name_size, char *dir);

/* cs_e2e_raw_unary sends payload (len bytes, already serialized) to method
 * ("/pkg.Service/Method") as a raw gRPC unary call, bypassing libcsched, so a
 * test can send what no typed call would. Returns the gRPC status code and
 * fills status. */
int cs_e2e_raw_unary(struct cs_e2e *e, const char *method, const void *payload, size_t len,
                     struct cs_status *status);
/* cs_e2e_raw_unary_md is cs_e2e_raw_unary with n_md request headers
 * (keys and values, in pairs). */
int cs_e2e_raw_unary_md(struct cs_e2e *e, const char *method, const void *payload, size_t len,
                        const char *const *md, size_t n_md, struct cs_status *status);
/* cs_e2e_raw_unary_reply is cs_e2e_raw_unary_md that also gives the reply's
 * bytes (malloc'd, the caller frees; none when the call failed). */
int cs_e2e_raw_unary_reply(struct cs_e2e *e, const char *method, const void *payload, size_t len,
                           const char *const *md, size_t n_md, struct cs_status *status,
                           uint8_t **reply, size_t *reply_len);

/* cs_e2e_health_check calls grpc.health.v1.Health/Check for service and
 * returns the gRPC code; *serving gets the reported status on OK. */
int cs_e2e_health_check(struct cs_e2e *e, const char *service, int *serving);

/* cs_e2e_wait_health polls the health service ("") until it reports want (a
 * ServingStatus); returns how long that took, or fails after timeout_ms. */
int64_t cs_e2e_wait_health(struct cs_e2e *e, int want, int64_t timeout_ms);

/* cs_e2e_executions counts the runs of a command that appends a line to
 * dir/$CSCHED_RUN_ID: how many times run_id's command ran (0 without the
 * file). */
int cs_e2e_executions(const char *dir, int64_t run_id);

#endif
