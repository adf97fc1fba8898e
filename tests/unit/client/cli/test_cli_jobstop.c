/* Unit tests of the CLI's retry, deadline and kill settings (job flags,
 * YAML keys and the job table's lines) and of the times "trigger --at/--in"
 * reads. No server. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "cli.h"
#include "cli_fixture.h"

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)))

static void test_cli_jobstop_flags(void **state)
{
    Csched__V1__Job *job;
    struct cs_cli cli;
    struct cs_cli_err err;

    init_cli(&cli);
    char *args[] = {"j",
                    "--retry-initial-ms",
                    "300",
                    "--retry-max-ms=5000",
                    "--retry-multiplier",
                    "1.5",
                    "--retry-jitter",
                    "0.25",
                    "--retry-on",
                    "timeout",
                    "--run-deadline-seconds",
                    "60",
                    "--kill-grace-seconds",
                    "2",
                    "--kill-signal",
                    "INT",
                    "--shell",
                    "true",
                    NULL};
    assert_int_equal(
        cs_cli_parse_job_args(&cli, (int)(sizeof(args) / sizeof(args[0])) - 1, args, &job, &err),
        0);
    assert_non_null(job->retry);
    assert_int_equal(job->retry->initial_backoff_ms, 300);
    assert_int_equal(job->retry->max_backoff_ms, 5000);
    assert_true(job->retry->multiplier == 1.5);
    assert_true(job->retry->jitter == 0.25);
    assert_int_equal(job->retry->retry_on, CSCHED__V1__RETRY_ON__RETRY_ON_TIMEOUT);
    assert_int_equal(job->run_deadline_seconds, 60);
    assert_int_equal(job->kill_grace_seconds, 2);
    assert_string_equal(job->kill_signal, "INT");

    struct capture c;
    capture_open(&c);
    cs_cli_print_job_stop(c.f, job);
    assert_string_equal(captured(&c),
                        "retry:            initial 300 ms, max 5000 ms, x1.5, jitter 0.25, on "
                        "timeout\n"
                        "run_deadline:     60 s\n"
                        "kill_signal:      INT\n"
                        "kill_grace:       2 s\n");
    capture_close(&c);
    csched__v1__job__free_unpacked(job, NULL);

    assert_int_equal(cs_cli_parse_job_args(&cli, ARGC("j", "--retry-on", "sometimes"),
                                           ARGV("j", "--retry-on", "sometimes"), &job, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "--retry-on takes failure, timeout or failure,timeout"));
    assert_int_equal(cs_cli_parse_job_args(&cli, ARGC("j", "--retry-multiplier", "two"),
                                           ARGV("j", "--retry-multiplier", "two"), &job, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "--retry-multiplier"));
}

static void test_cli_jobstop_durations(void **state)
{
    int64_t ms;

    assert_int_equal(cs_cli_parse_duration("90s", &ms), 0);
    assert_int_equal(ms, 90000);
    assert_int_equal(cs_cli_parse_duration("1h30m", &ms), 0);
    assert_int_equal(ms, 5400000);
    assert_int_equal(cs_cli_parse_duration("250ms", &ms), 0);
    assert_int_equal(ms, 250);
    assert_int_equal(cs_cli_parse_duration("1.5d", &ms), 0);
    assert_int_equal(ms, 129600000);
    assert_int_equal(cs_cli_parse_duration("2m5s", &ms), 0);
    assert_int_equal(ms, 125000);
    const char *bad[] = {"", "10", "5x", "-1s", "0s", "s", "1h30"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cs_cli_parse_duration(bad[i], &ms) == 0)
            fail_msg("'%s' parsed as %lld ms", bad[i], (long long)ms);
}

static void test_cli_jobstop_times(void **state)
{
    int64_t ms;

    assert_int_equal(cs_cli_parse_at("2026-12-01T13:00:00Z", &ms), 0);
    assert_int_equal(ms, INT64_C(1796130000000));
    assert_int_equal(cs_cli_parse_at("2026-12-01T14:00:00+01:00", &ms), 0);
    assert_int_equal(ms, INT64_C(1796130000000));
    assert_int_equal(cs_cli_parse_at("2026-12-01 08:30-04:30", &ms), 0);
    assert_int_equal(ms, INT64_C(1796130000000));
    assert_int_equal(cs_cli_parse_at("@1796130000", &ms), 0);
    assert_int_equal(ms, INT64_C(1796130000000));
    setenv("TZ", "UTC", 1);
    assert_int_equal(cs_cli_parse_at("2026-12-01 13:00", &ms), 0);
    assert_int_equal(ms, INT64_C(1796130000000));
    unsetenv("TZ");
    const char *bad[] = {"tomorrow", "2026-12-01", "2026-12-01T13:00:00Q",
                         "@",        "@-5",        "2026-12-01T13:00:00+25:00"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cs_cli_parse_at(bad[i], &ms) == 0)
            fail_msg("'%s' parsed as %lld ms", bad[i], (long long)ms);
}

static void test_cli_jobstop_jobfile(void **state)
{
    static const char text[] = "jobs:\n"
                               "  - name: flaky\n"
                               "    shell: ./flaky.sh\n"
                               "    max_attempts: 5\n"
                               "    retry:\n"
                               "      initial_backoff_ms: 300\n"
                               "      max_backoff_ms: 10000\n"
                               "      multiplier: 2\n"
                               "      jitter: 0.1\n"
                               "      retry_on: failure\n"
                               "    run_deadline_seconds: 120\n"
                               "    kill_grace_seconds: 5\n"
                               "    kill_signal: INT\n";
    Csched__V1__Job **jobs;
    char err[512];
    size_t n;

    assert_int_equal(
        cs_cli_jobfile_parse("jobs.yaml", text, strlen(text), &jobs, NULL, &n, err, sizeof(err)),
        0);
    assert_int_equal(n, 1);
    assert_non_null(jobs[0]->retry);
    assert_int_equal(jobs[0]->retry->initial_backoff_ms, 300);
    assert_int_equal(jobs[0]->retry->max_backoff_ms, 10000);
    assert_true(jobs[0]->retry->multiplier == 2);
    assert_true(jobs[0]->retry->jitter == 0.1);
    assert_int_equal(jobs[0]->retry->retry_on, CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE);
    assert_int_equal(jobs[0]->run_deadline_seconds, 120);
    assert_int_equal(jobs[0]->kill_grace_seconds, 5);
    assert_string_equal(jobs[0]->kill_signal, "INT");
    cs_cli_jobs_free(jobs, n);

    static const char bad[] = "jobs:\n"
                              "  - name: flaky\n"
                              "    shell: x\n"
                              "    retry:\n"
                              "      multiplier: lots\n";
    assert_int_equal(
        cs_cli_jobfile_parse("jobs.yaml", bad, strlen(bad), &jobs, NULL, &n, err, sizeof(err)),
        -EINVAL);
    assert_non_null(strstr(err, "jobs.yaml:5: retry.multiplier: must be a number"));
    static const char unknown[] = "jobs:\n"
                                  "  - name: flaky\n"
                                  "    shell: x\n"
                                  "    retry: {backoff: 3}\n";
    assert_int_equal(cs_cli_jobfile_parse("jobs.yaml", unknown, strlen(unknown), &jobs, NULL, &n,
                                          err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "retry: unknown key 'backoff'"));
}

/* history: a job's own limits on the runs the database keeps. */
static void test_cli_jobfile_history(void **state)
{
    static const char text[] = "jobs:\n"
                               "  - name: tidy\n"
                               "    shell: x\n"
                               "    history:\n"
                               "      keep_succeeded: 10\n"
                               "      keep_failed: 3\n"
                               "      ttl_seconds_after_finished: 604800\n";
    static const char unknown[] = "jobs:\n"
                                  "  - name: tidy\n"
                                  "    shell: x\n"
                                  "    history: {keep: 3}\n";
    Csched__V1__Job **jobs;
    char err[512];
    size_t n;

    assert_int_equal(
        cs_cli_jobfile_parse("jobs.yaml", text, strlen(text), &jobs, NULL, &n, err, sizeof(err)),
        0);
    assert_non_null(jobs[0]->history);
    assert_int_equal(jobs[0]->history->keep_succeeded, 10);
    assert_int_equal(jobs[0]->history->keep_failed, 3);
    assert_int_equal(jobs[0]->history->ttl_seconds_after_finished, 604800);
    cs_cli_jobs_free(jobs, n);
    assert_int_equal(cs_cli_jobfile_parse("jobs.yaml", unknown, strlen(unknown), &jobs, NULL, &n,
                                          err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "history: unknown key 'keep'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_jobstop_flags),   cmocka_unit_test(test_cli_jobstop_durations),
        cmocka_unit_test(test_cli_jobstop_times),   cmocka_unit_test(test_cli_jobstop_jobfile),
        cmocka_unit_test(test_cli_jobfile_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
