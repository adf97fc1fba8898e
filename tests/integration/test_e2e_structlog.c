/* End-to-end tests of cschedd's structured logs: with --log-format json
 * every line of a real server's stderr is one JSON object (python3's json
 * module reads them all), and a run that fails has its run and attempt
 * lines with the run id, the job, the attempt, the state, the exit code and
 * the duration (--log-runs all); by default only the run's end has a
 * line; with --log-runs false there are none. With a stderr nobody
 * reads (a stalled log reader), runs go on to their ends, the loop-lag
 * bounds hold, and the server still stops cleanly. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

/* Reads the log (argv[1]) as JSON lines and prints, for run argv[2], each
 * of its lines as "message|state|exit_code|has duration". */
static const char check_py[] =
    "import json, sys\n"
    "for n, line in enumerate(open(sys.argv[1], encoding='utf-8'), 1):\n"
    "    try:\n"
    "        r = json.loads(line)\n"
    "    except ValueError as e:\n"
    "        sys.exit('line %d is not JSON: %s: %r' % (n, e, line))\n"
    "    for k in ('time', 'level', 'component', 'message'):\n"
    "        if not isinstance(r.get(k), str):\n"
    "            sys.exit('line %d has no %s: %r' % (n, k, line))\n"
    "    if r.get('run_id') == int(sys.argv[2]):\n"
    "        assert r['job'] == sys.argv[3] and r['level'] == 'info', r\n"
    "        print('%s|%s|%s|%s' % (r['message'], r['state'], r.get('exit_code'),\n"
    "                               'duration_ms' in r))\n";

/* Runs check_py on the server's log for run_id of job; returns what it
 * printed (static), or fails the test if a line was not JSON. */
static const char *run_lines(struct cs_e2e *e, int64_t run_id, const char *job)
{
    static char out[4096];
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "python3 -c \"$CS_CHECK_PY\" '%s' %lld '%s'",
             cs_testd_log_path(e->d), (long long)run_id, job);
    setenv("CS_CHECK_PY", check_py, 1);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the log is not JSON lines (status %d):\n%s", status, out);
    return out;
}

/* Asserts that run_id's lines are want: the run's last line may reach the
 * log a moment after its end is served. */
static void assert_run_lines(struct cs_e2e *e, int64_t run_id, const char *job, const char *want)
{
    const char *got = run_lines(e, run_id, job);
    for (int tries = 0; tries < 20 && strcmp(got, want) != 0; tries++) {
        cs_test_sleep_ms(100);
        got = run_lines(e, run_id, job);
    }
    assert_string_equal(got, want);
}

/* Makes a job named prefix-N of shell into name, runs it to its end, and
 * returns the run's id. */
static int64_t run_to_end(struct cs_e2e *e, char *name, size_t size, const char *prefix,
                          const char *shell)
{
    cs_e2e_name(name, size, prefix);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    int64_t id = cs_e2e_trigger(e, name);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, id), NULL);
    return id;
}

static void test_json_run_lines(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    int64_t id = run_to_end(e, name, sizeof(name), "fails", "exit 3");

    char want[1024];
    snprintf(want, sizeof(want),
             "run %lld: QUEUED|QUEUED|None|False\n"
             "run %lld: STARTING|STARTING|None|False\n"
             "attempt 1 of run %lld: RUNNING|RUNNING|None|False\n"
             "run %lld: RUNNING|RUNNING|None|False\n"
             "attempt 1 of run %lld: FAILED|FAILED|3|True\n"
             "run %lld: FAILED|FAILED|3|True\n",
             (long long)id, (long long)id, (long long)id, (long long)id, (long long)id,
             (long long)id);
    assert_run_lines(e, id, name, want);
}

static int setup_json(void **state)
{
    static const char *const args[] = {"--log-format", "json", "--log-runs", "all", NULL};
    return cs_e2e_start(state, args);
}

/* By default, one line a run: its end, with its attempts and duration. */
static void test_default_one_line_a_run(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], want[128];
    int64_t id = run_to_end(e, name, sizeof(name), "ends", "exit 3");

    snprintf(want, sizeof(want), "run %lld: FAILED|FAILED|3|True\n", (long long)id);
    assert_run_lines(e, id, name, want);
}

static int setup_default(void **state)
{
    static const char *const args[] = {"--log-format", "json", NULL};
    return cs_e2e_start(state, args);
}

static void test_no_run_lines(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    int64_t id = run_to_end(e, name, sizeof(name), "quiet", "exit 0");
    assert_string_equal(run_lines(e, id, name), "");
}

static int setup_quiet(void **state)
{
    static const char *const args[] = {"--log-format", "json", "--log-runs", "false", NULL};
    return cs_e2e_start(state, args);
}

/* Six run lines a run, some 200 bytes each, and the debug lines: far more
 * than the pipe (64 KiB) and the log writer's buffer (512 KiB) hold. When
 * the loop wrote its own lines, it stopped at the first full pipe, some 100
 * runs in, and nothing was served from then on. */
enum { STALLED_RUNS = 800 };

static void test_a_stalled_log_reader_stalls_nothing(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    static int64_t ids[STALLED_RUNS];
    cs_e2e_name(name, sizeof(name), "stalled");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    for (int i = 0; i < STALLED_RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    for (int i = 0; i < STALLED_RUNS; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);
        assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        csched__v1__run__free_unpacked(run, NULL);
    }
    /* And stderr did stall: its pipe is full (64 KiB, less what whole-line
     * writes cannot fit into its pages), so the writer waits on it. */
    int fifo = open(cs_testd_log_path(e->d), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    int unread = 0;
    struct stat st;
    assert_true(fifo >= 0 && fstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    assert_int_equal(ioctl(fifo, FIONREAD, &unread), 0);
    (void)close(fifo);
    if (unread < 32 * 1024)
        fail_msg("stderr's pipe holds %d unread bytes; a stalled one is full (64 KiB)", unread);
}

static int setup_stalled(void **state)
{
    static const char *const args[] = {"--log-level", "debug", "--log-runs", "all", NULL};
    const struct cs_testd_options opts = {.extra_args = args, .stalled_stderr = true};
    return cs_e2e_start_options(state, &opts);
}

int main(void)
{
    const struct CMUnitTest json[] = {cmocka_unit_test(test_json_run_lines)};
    const struct CMUnitTest quiet[] = {cmocka_unit_test(test_no_run_lines)};
    const struct CMUnitTest by_default[] = {cmocka_unit_test(test_default_one_line_a_run)};
    const struct CMUnitTest stalled[] = {
        cmocka_unit_test(test_a_stalled_log_reader_stalls_nothing)};
    int failed = cmocka_run_group_tests_name("json", json, setup_json, cs_e2e_teardown);
    failed += cmocka_run_group_tests_name("quiet", quiet, setup_quiet, cs_e2e_teardown);
    failed += cmocka_run_group_tests_name("default", by_default, setup_default, cs_e2e_teardown);
    return failed + cmocka_run_group_tests_name("stalled", stalled, setup_stalled, cs_e2e_teardown);
}
