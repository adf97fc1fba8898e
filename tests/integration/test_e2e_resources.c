/* A job's resource limits against a real cschedd, real minders and real
 * commands: a command allocating past its memory limit is OOM-killed and
 * recorded as such with its peak memory, a fork bomb stops at its pids
 * limit, a CPU spinner at its cpu_seconds, a writer at its file_size, and
 * open_files reaches the command; values out of bounds are INVALID_ARGUMENT,
 * a limit this host cannot hold is FAILED_PRECONDITION under the default
 * --limits-enforcement strict, and runs with the warning recorded under
 * warn. Each cgroup mechanism is tested where GetStats says this host has
 * it, and skipped, saying why, where it does not. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define MIB (UINT64_C(1) << 20)

/* What GetStats says of this host's limits. */
struct host {
    bool memory_cgroup, pids_cgroup, cpu_cgroup;
};

static struct host host_of(struct cs_e2e *e)
{
    Csched__V1__Stats *s = cs_e2e_get_stats(e);
    const char *m = s->limits_mechanism;
    bool v2 = strncmp(m, "cgroup v2 at /", 14) == 0;
    struct host h = {.memory_cgroup = v2 || strstr(m, "memory: /") != NULL,
                     .pids_cgroup = v2 || strstr(m, "pids: /") != NULL,
                     .cpu_cgroup = v2 && strstr(m, ", cpu)") != NULL};

    csched__v1__stats__free_unpacked(s, NULL);
    return h;
}

/* Skips the test, saying why, unless have. */
#define NEEDS(have, why)                                                                           \
    do {                                                                                           \
        if (!(have)) {                                                                             \
            print_message("skipped: this host has no %s for cschedd\n", why);                      \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* Creates a shell job with limits r (and a timeout), runs it once to its
 * end and returns the run (caller frees). */
static Csched__V1__Run *run_limited(struct cs_e2e *e, const char *prefix, const char *shell,
                                    Csched__V1__ResourceLimits *r)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64];

    cs_e2e_name(name, sizeof(name), prefix);
    job.name = name;
    job.shell = (char *)shell;
    job.timeout_seconds = 15;
    job.resources = r;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    return cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
}

/* The run's only attempt, which must have ended in state want. */
static const Csched__V1__Attempt *only_attempt(const Csched__V1__Run *run,
                                               Csched__V1__RunState want)
{
    assert_int_equal(run->n_attempts, 1);
    const Csched__V1__Attempt *a = run->attempts[0];
    if (a->state != want)
        fail_msg("attempt of run %lld is %s, want %s (message \"%s\")", (long long)run->id,
                 cs_test_run_state_name(a->state), cs_test_run_state_name(want), a->message);
    return a;
}

static void test_resources_stats_say_the_mechanism(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Stats *s = cs_e2e_get_stats(e);

    print_message("this host: %s\n", s->limits_mechanism);
    assert_non_null(strstr(s->limits_mechanism, "rlimits"));
    assert_string_equal(s->limits_enforcement, "strict");
    csched__v1__stats__free_unpacked(s, NULL);
}

/* The limits go into the job as given, and come back from GetJob. */
static void test_resources_memory_oom_killed(void **state)
{
    struct cs_e2e *e = *state;
    NEEDS(host_of(e).memory_cgroup, "memory cgroup (v2 delegated, or v1 memory writable)");
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    r.memory_bytes = 32 * MIB;
    Csched__V1__Run *run =
        run_limited(e, "oom", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived", &r);
    const Csched__V1__Attempt *a = only_attempt(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);

    assert_int_equal(a->limit_hit, CSCHED__V1__LIMIT_HIT__LIMIT_HIT_MEMORY);
    assert_non_null(strstr(a->message, "OOM killer"));
    if (a->peak_memory_bytes < (int64_t)(16 * MIB) || a->peak_memory_bytes > (int64_t)(33 * MIB))
        fail_msg("peak memory %lld, want about 32 MiB", (long long)a->peak_memory_bytes);

    /* As the database keeps it, not only as the loop saw it end. */
    Csched__V1__Run *again = cs_e2e_get_run(e, run->id);
    assert_int_equal(again->attempts[0]->limit_hit, CSCHED__V1__LIMIT_HIT__LIMIT_HIT_MEMORY);
    assert_int_equal(again->attempts[0]->peak_memory_bytes, a->peak_memory_bytes);
    Csched__V1__Job *job = cs_e2e_get_job(e, run->job_name);
    assert_non_null(job->resources);
    assert_int_equal(job->resources->memory_bytes, 32 * MIB);
    csched__v1__job__free_unpacked(job, NULL);
    csched__v1__run__free_unpacked(again, NULL);
    csched__v1__run__free_unpacked(run, NULL);
}

/* A loop that forks far past the limit: the forks past it fail, the shell
 * gives up, and nothing it started outlives the attempt. */
static void test_resources_fork_bomb_stopped_at_pids(void **state)
{
    struct cs_e2e *e = *state;
    NEEDS(host_of(e).pids_cgroup, "pids cgroup (v2 delegated, or v1 pids writable)");
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    r.pids = 16;
    Csched__V1__Run *run = run_limited(
        e, "bomb", "i=0; while [ $i -lt 500 ]; do sleep 60 & i=$((i+1)); done; wait", &r);
    const Csched__V1__Attempt *a = only_attempt(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);

    assert_int_equal(a->limit_hit, CSCHED__V1__LIMIT_HIT__LIMIT_HIT_PIDS);
    assert_non_null(strstr(a->message, "pids 16"));
    /* At most 15 sleeps got to run (the shell is the 16th); the minder
     * stopped them when the shell gave up. */
    assert_true(a->leftover_processes <= 15);
    assert_true(a->ended_unix_ms - a->started_unix_ms < 10000);
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_resources_cpu_spinner_stopped(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    r.cpu_seconds = 1;
    Csched__V1__Run *run = run_limited(e, "spin", "while :; do :; done", &r);
    const Csched__V1__Attempt *a = only_attempt(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);

    assert_int_equal(a->limit_hit, CSCHED__V1__LIMIT_HIT__LIMIT_HIT_CPU_SECONDS);
    assert_int_equal(a->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL);
    assert_int_equal(a->term_signal, SIGXCPU);
    /* getrusage's split of the CPU time is sampled at ticks, under the
     * exact time RLIMIT_CPU goes by: about a second, not to the ms. */
    if (a->user_cpu_ms + a->system_cpu_ms < 500)
        fail_msg("CPU time %lld ms, want about 1000",
                 (long long)(a->user_cpu_ms + a->system_cpu_ms));
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_resources_file_size_stops_a_writer(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    r.file_size = 4096;
    Csched__V1__Run *run = run_limited(e, "fsize", "exec head -c 100000 /dev/zero > big", &r);
    const Csched__V1__Attempt *a = only_attempt(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);

    assert_int_equal(a->limit_hit, CSCHED__V1__LIMIT_HIT__LIMIT_HIT_FILE_SIZE);
    assert_int_equal(a->term_signal, SIGXFSZ);
    csched__v1__run__free_unpacked(run, NULL);
}

static void test_resources_open_files_reach_the_command(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    r.open_files = 16;
    Csched__V1__Run *run =
        run_limited(e, "nofile", "ulimit -n; (exec 20</dev/null) 2>/dev/null || echo refused", &r);
    const Csched__V1__Attempt *a = only_attempt(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    size_t len;
    char *out = cs_e2e_read_logs(e, run->id, 1, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);

    assert_string_equal(out, "16\nrefused\n");
    assert_int_equal(a->limit_hit, CSCHED__V1__LIMIT_HIT__LIMIT_HIT_UNSPECIFIED);
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
}

/* Creates a job with r; returns CreateJob's status code, with *st. */
static int try_create(struct cs_e2e *e, Csched__V1__ResourceLimits *r, struct cs_status *st)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64];

    cs_e2e_name(name, sizeof(name), "bad");
    job.name = name;
    job.shell = "true";
    job.resources = r;
    return cs_e2e_try_create_job(e, &job, st);
}

static void test_resources_values_checked(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    struct cs_status st;

    r.memory_bytes = 100;
    cs_e2e_assert_status(try_create(e, &r, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "job.resources.memory_bytes");
    r.memory_bytes = 0;
    r.open_files = 2;
    cs_e2e_assert_status(try_create(e, &r, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "job.resources.open_files");
}

static void test_resources_unenforceable_refused_when_strict(void **state)
{
    struct cs_e2e *e = *state;
    if (host_of(e).cpu_cgroup) {
        print_message("skipped: this host enforces cpu_millis (cgroup v2's cpu controller)\n");
        skip();
    }
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    struct cs_status st;

    r.cpu_millis = 500;
    cs_e2e_assert_status(try_create(e, &r, &st), &st, GRPC_STATUS_FAILED_PRECONDITION,
                         "job.resources.cpu_millis cannot be enforced");
}

static int setup_warn(void **state)
{
    static const char *const args[] = {"--limits-enforcement", "warn", NULL};

    return cs_e2e_start(state, args);
}

static void test_resources_unenforceable_recorded_when_warn(void **state)
{
    struct cs_e2e *e = *state;
    if (host_of(e).cpu_cgroup) {
        print_message("skipped: this host enforces cpu_millis (cgroup v2's cpu controller)\n");
        skip();
    }
    Csched__V1__Stats *s = cs_e2e_get_stats(e);
    assert_string_equal(s->limits_enforcement, "warn");
    csched__v1__stats__free_unpacked(s, NULL);
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    r.cpu_millis = 500;
    Csched__V1__Run *run = run_limited(e, "warned", "true", &r);
    const Csched__V1__Attempt *a = only_attempt(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);

    assert_int_equal(a->n_unenforced_limits, 1);
    assert_string_equal(a->unenforced_limits[0], "cpu_millis");
    Csched__V1__Run *again = cs_e2e_get_run(e, run->id);
    assert_int_equal(again->attempts[0]->n_unenforced_limits, 1);
    assert_string_equal(again->attempts[0]->unenforced_limits[0], "cpu_millis");
    csched__v1__run__free_unpacked(again, NULL);
    csched__v1__run__free_unpacked(run, NULL);
}

int main(void)
{
    const struct CMUnitTest strict[] = {
        cmocka_unit_test(test_resources_stats_say_the_mechanism),
        cmocka_unit_test(test_resources_memory_oom_killed),
        cmocka_unit_test(test_resources_fork_bomb_stopped_at_pids),
        cmocka_unit_test(test_resources_cpu_spinner_stopped),
        cmocka_unit_test(test_resources_file_size_stops_a_writer),
        cmocka_unit_test(test_resources_open_files_reach_the_command),
        cmocka_unit_test(test_resources_values_checked),
        cmocka_unit_test(test_resources_unenforceable_refused_when_strict),
    };
    const struct CMUnitTest warn[] = {
        cmocka_unit_test(test_resources_unenforceable_recorded_when_warn),
    };
    int failed = cmocka_run_group_tests_name("strict", strict, cs_e2e_setup, cs_e2e_teardown);
    return failed + cmocka_run_group_tests_name("warn", warn, setup_warn, cs_e2e_teardown);
}
