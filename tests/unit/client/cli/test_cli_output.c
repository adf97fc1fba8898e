/* Unit tests of what the csched CLI writes and exits with: JSON output and
 * its escaping, the table's formatting helpers, the exit code for a call's
 * status and for a run's end, and the error lines. No server. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "cli.h"
#include "cli_fixture.h"

/* Writes s as a JSON string and compares with want. */
static void expect_json_string(const char *s, size_t len, const char *want)
{
    struct capture c;

    capture_open(&c);
    cs_json_write_string(c.f, s, len);
    assert_string_equal(captured(&c), want);
    capture_close(&c);
}

static void test_cli_json_string_escaping(void **state)
{
    expect_json_string("plain", 5, "\"plain\"");
    expect_json_string("", 0, "\"\"");
    expect_json_string("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    expect_json_string("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
    expect_json_string("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
    expect_json_string("a\0b", 3, "\"a\\u0000b\"");
    expect_json_string("/", 1, "\"/\"");
    /* Valid UTF-8 (2, 3 and 4 bytes) is kept as it is. */
    expect_json_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
                       "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    /* Invalid: a lone byte, an overlong form, a surrogate, a cut sequence,
     * a code point past U+10FFFF. */
    expect_json_string("\xff", 1, "\"\\ufffd\"");
    expect_json_string("\xc0\x80", 2, "\"\\ufffd\\ufffd\"");
    expect_json_string("\xe0\x80\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
    expect_json_string("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
    expect_json_string("x\xe2\x82", 3, "\"x\\ufffd\\ufffd\"");
    expect_json_string("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

static void test_cli_json_job(void **state)
{
    Csched__V1__Job *job = cs_cli_job_new();
    struct capture c;

    cs_cli_set_string(&job->name, "a\"b");
    cs_cli_job_add_command(job, "echo");
    cs_cli_job_add_command(job, "hi\n");
    cs_cli_map_put(&csched__v1__job__env_entry__descriptor, (void ***)&job->env, &job->n_env, "K",
                   "v\\");
    job->max_running = 4;
    job->version = UINT64_MAX;
    job->created_unix_ms = -5;
    capture_open(&c);
    cs_json_write_message(c.f, &job->base);
    /* proto3's JSON mapping: lowerCamelCase, 64-bit integers as strings,
     * unset messages (retry, schedule) left out. */
    assert_string_equal(
        captured(&c),
        "{\"name\":\"a\\\"b\",\"command\":[\"echo\",\"hi\\n\"],\"shell\":\"\",\"env\":{\"K\":"
        "\"v\\\\\"},\"workingDir\":\"\",\"maxRunning\":4,\"timeoutSeconds\":0,\"maxAttempts\":"
        "0,\"retryBackoffMs\":0,\"labels\":{},\"runAsUser\":\"\",\"runAsGroup\":\"\","
        "\"secretEnv\":{},\"runDeadlineSeconds\":0,\"killGraceSeconds\":0,"
        "\"killSignal\":\"\",\"paused\":false,"
        "\"version\":\"18446744073709551615\",\"createdUnixMs\":\"-5\","
        "\"updatedUnixMs\":\"0\",\"createdBy\":\"\",\"updatedBy\":\"\",\"pauseReason\":\"\","
        "\"pausedUnixMs\":\"0\",\"nextFires\":[],\"triggerEnv\":[],\"hooks\":[],\"after\":[]}");
    capture_close(&c);
    csched__v1__job__free_unpacked(job, NULL);
}

static void test_cli_json_oneof_enum_nested(void **state)
{
    Csched__V1__Event ev = CSCHED__V1__EVENT__INIT;
    Csched__V1__Stats stats = CSCHED__V1__STATS__INIT;
    Csched__V1__LogChunk chunk = CSCHED__V1__LOG_CHUNK__INIT;
    struct capture c;

    ev.seq = 9;
    ev.state = CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
    capture_open(&c);
    cs_json_write_message(c.f, &ev.base);
    /* An unset oneof member is left out. */
    assert_null(strstr(captured(&c), "exitCode"));
    assert_non_null(strstr(captured(&c), "\"state\":\"RUN_STATE_SUCCEEDED\""));
    capture_close(&c);

    /* A set oneof member shows even when it is 0. */
    ev.outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
    ev.exit_code = 0;
    ev.state = 99;
    capture_open(&c);
    cs_json_write_message(c.f, &ev.base);
    assert_non_null(strstr(captured(&c), "\"state\":99,\"exitCode\":0,"));
    assert_null(strstr(captured(&c), "termSignal"));
    capture_close(&c);

    capture_open(&c);
    cs_json_write_message(c.f, &stats.base);
    /* An unset message is left out, as JsonFormat does. */
    assert_null(strstr(captured(&c), "lagSinceStart"));
    assert_non_null(strstr(captured(&c), "\"uptimeMs\":\"0\""));
    capture_close(&c);

    chunk.stream = CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR;
    chunk.data.data = (uint8_t *)"ok\n\xff";
    chunk.data.len = 4;
    capture_open(&c);
    cs_json_write_message(c.f, &chunk.base);
    assert_string_equal(
        captured(&c), "{\"stream\":\"LOG_STREAM_STDERR\",\"offset\":\"0\",\"data\":"
                      "\"b2sK/w==\",\"truncated\":false,\"writtenBytes\":\"0\",\"replica\":\"\"}");
    capture_close(&c);
}

/* -o yaml: the JSON mapping's tree in block style; nested messages, lists
 * of messages and maps indent under their key. */
static void test_cli_yaml(void **state)
{
    Csched__V1__Job *job = cs_cli_job_new();
    Csched__V1__FireTime ft = CSCHED__V1__FIRE_TIME__INIT;
    Csched__V1__FireTime *fires[] = {&ft};
    struct cs_cli cli;
    struct capture c;

    init_cli(&cli);
    cli.format = CS_FORMAT_YAML;
    cs_cli_set_string(&job->name, "y");
    cs_cli_job_add_command(job, "echo");
    cs_cli_map_put(&csched__v1__job__env_entry__descriptor, (void ***)&job->env, &job->n_env, "K",
                   "v");
    cs_cli_job_retry(job)->multiplier = 2;
    ft.at_unix_ms = 5;
    ft.local_time = "t";
    job->next_fires = fires;
    job->n_next_fires = 1;
    capture_open(&c);
    cli.out = c.f;
    cs_cli_print_message(&cli, &job->base);
    assert_non_null(strstr(captured(&c), "---\nname: \"y\"\ncommand:\n  - \"echo\"\n"));
    assert_non_null(strstr(captured(&c), "\nenv:\n  \"K\": \"v\"\n"));
    assert_non_null(strstr(captured(&c), "\nretry:\n  initialBackoffMs: 0\n"));
    assert_non_null(strstr(captured(&c), "\n  multiplier: 2\n"));
    assert_non_null(
        strstr(captured(&c), "\nnextFires:\n  - atUnixMs: \"5\"\n    localTime: \"t\"\n"));
    capture_close(&c);
    job->next_fires = NULL;
    job->n_next_fires = 0;
    csched__v1__job__free_unpacked(job, NULL);
}

static void test_cli_format_helpers(void **state)
{
    char buf[64];

    assert_string_equal(cs_cli_state_name(CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT), "timed_out");
    assert_string_equal(cs_cli_state_name(0), "-");
    assert_string_equal(cs_cli_state_name(42), "?");
    cs_cli_format_duration(1234, buf, sizeof(buf));
    assert_string_equal(buf, "1.234s");
    cs_cli_format_duration(123000, buf, sizeof(buf));
    assert_string_equal(buf, "2m03s");
    cs_cli_format_duration(3720000, buf, sizeof(buf));
    assert_string_equal(buf, "1h02m");
    cs_cli_format_duration(-1, buf, sizeof(buf));
    assert_string_equal(buf, "-");
    cs_cli_format_outcome(true, 3, false, 0, buf, sizeof(buf));
    assert_string_equal(buf, "exit 3");
    cs_cli_format_outcome(false, 0, true, 9, buf, sizeof(buf));
    assert_string_equal(buf, "signal 9 (KILL)");
    cs_cli_format_outcome(false, 0, false, 0, buf, sizeof(buf));
    assert_string_equal(buf, "-");
    cs_cli_format_time(0, buf, sizeof(buf));
    assert_string_equal(buf, "-");
    cs_cli_format_time(1700000000000, buf, sizeof(buf));
    assert_int_equal(strlen(buf), 26);
    /* Times show their zone's offset. */
    setenv("TZ", "UTC", 1);
    tzset();
    cs_cli_format_time(1700000000000, buf, sizeof(buf));
    assert_string_equal(buf, "2023-11-14 22:13:20 +00:00");
    setenv("TZ", "Asia/Kolkata", 1);
    tzset();
    cs_cli_format_time(1700000000000, buf, sizeof(buf));
    assert_string_equal(buf, "2023-11-15 03:43:20 +05:30");
    cs_cli_format_time(1700000000000, buf, 20);
    assert_string_equal(buf, "-");
    unsetenv("TZ");
    tzset();
}

/* Columns are as wide as their widest cell (in characters), two spaces
 * apart, with nothing after the last. */
static void test_cli_table_aligns(void **state)
{
    struct cs_cli_table t;
    struct capture c;

    cs_cli_table_init(&t, 3, "NAME", "N", "NOTE");
    cs_cli_table_row(&t, (const char *const[]){"a-very-long-job-name", "1", "x"});
    cs_cli_table_row(&t, (const char *const[]){"caf\xc3\xa9", "12345", ""});
    capture_open(&c);
    cs_cli_table_print(&t, c.f, "  ");
    assert_string_equal(captured(&c), "  NAME                  N      NOTE\n"
                                      "  a-very-long-job-name  1      x\n"
                                      "  caf\xc3\xa9                  12345  \n");
    capture_close(&c);
}

static void test_cli_format_run_outcome(void **state)
{
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;
    char buf[64];

    cs_cli_format_run_outcome(&run, buf, sizeof(buf));
    assert_string_equal(buf, "-");
    run.outcome_case = CSCHED__V1__RUN__OUTCOME_EXIT_CODE;
    run.exit_code = 3;
    cs_cli_format_run_outcome(&run, buf, sizeof(buf));
    assert_string_equal(buf, "exit 3");
    run.outcome_case = CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL;
    run.term_signal = 9;
    cs_cli_format_run_outcome(&run, buf, sizeof(buf));
    assert_string_equal(buf, "signal 9 (KILL)");
}

/* csched run shows how many processes each attempt left behind, and the
 * wait before it. */
static void test_cli_print_run_leftovers(void **state)
{
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;
    Csched__V1__Attempt attempt = CSCHED__V1__ATTEMPT__INIT;
    Csched__V1__Attempt *attempts[] = {&attempt};
    struct capture out;

    run.id = 42;
    run.job_name = "nightly";
    run.message = "";
    run.n_attempts = 1;
    run.attempts = attempts;
    attempt.number = 1;
    attempt.state = CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
    attempt.max_rss_kb = 1776;
    attempt.leftover_processes = 2;
    attempt.message = "done";
    attempt.retry_delay_ms = 300;
    capture_open(&out);
    cs_cli_print_run(out.f, &run);
    assert_non_null(strstr(captured(&out), "  RSS_KB  LEFTOVER  DELAY   MESSAGE\n"));
    assert_non_null(strstr(captured(&out), "  1776    2         0.300s  done\n"));
    capture_close(&out);
}

/* csched run says which attempt's log of which stream was cut, and how
 * much it kept of what the command wrote; a log kept whole says nothing. */
static void test_cli_print_run_cut_logs(void **state)
{
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;
    Csched__V1__Attempt first = CSCHED__V1__ATTEMPT__INIT, second = CSCHED__V1__ATTEMPT__INIT;
    Csched__V1__Attempt *attempts[] = {&first, &second};
    struct capture out;

    run.id = 42;
    run.job_name = "nightly";
    run.message = "";
    run.n_attempts = 2;
    run.attempts = attempts;
    first.number = 1;
    first.message = "";
    first.stdout_written_bytes = first.stdout_kept_bytes = 100;
    second.number = 2;
    second.message = "";
    second.stdout_written_bytes = second.stdout_kept_bytes = 5;
    second.stderr_written_bytes = 209715200;
    second.stderr_kept_bytes = 16777216;
    capture_open(&out);
    cs_cli_print_run(out.f, &run);
    assert_non_null(strstr(captured(&out),
                           "\n  attempt 2: stderr cut: its log kept 16777216 of 209715200 "
                           "bytes written\n"));
    assert_null(strstr(captured(&out), "attempt 1:"));
    assert_null(strstr(captured(&out), "stdout cut"));
    capture_close(&out);
}

/* csched run shows what a job's limits did to each attempt, and csched job
 * get the limits the job sets. */
static void test_cli_print_limits(void **state)
{
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;
    Csched__V1__Attempt first = CSCHED__V1__ATTEMPT__INIT;
    Csched__V1__Attempt *attempts[] = {&first};
    char *unenforced[] = {"pids"};
    struct capture out;

    run.id = 42;
    run.job_name = "import";
    run.message = "";
    run.n_attempts = 1;
    run.attempts = attempts;
    first.number = 1;
    first.message = "";
    first.limit_hit = CSCHED__V1__LIMIT_HIT__LIMIT_HIT_MEMORY;
    first.peak_memory_bytes = 33554432;
    first.n_unenforced_limits = 1;
    first.unenforced_limits = unenforced;
    capture_open(&out);
    cs_cli_print_run(out.f, &run);
    assert_non_null(strstr(captured(&out), "\n  attempt 1: limit hit: OOM-killed at memory_bytes\n"
                                           "  attempt 1: peak memory: 33554432 bytes\n"
                                           "  attempt 1: not enforced on this host: pids\n"));
    capture_close(&out);

    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    job.name = "import";
    job.shell = "true";
    r.memory_bytes = 268435456;
    r.pids = 64;
    job.resources = &r;
    capture_open(&out);
    cs_cli_print_job(out.f, &job);
    assert_non_null(strstr(captured(&out), "\nresources:        memory_bytes=268435456 pids=64\n"));
    capture_close(&out);
}

/* csched watch marks an event a restart recovered, and only that one. */
static void test_cli_print_event_recovered(void **state)
{
    Csched__V1__Event ev = CSCHED__V1__EVENT__INIT;
    struct capture out;

    ev.seq = 7;
    ev.run_id = 3;
    ev.job_name = "nightly";
    ev.attempt = 2;
    ev.state = CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING;
    ev.message = "";
    capture_open(&out);
    cs_cli_print_event_row(out.f, &ev);
    ev.recovered = true;
    cs_cli_print_event_row(out.f, &ev);
    const char *text = captured(&out);
    const char *second = strchr(text, '\n') + 1;
    assert_true(strstr(text, "recovered") == strstr(second, "recovered"));
    assert_string_equal(second + strlen(second) - strlen("(recovered) \n"), "(recovered) \n");
    capture_close(&out);
}

/* csched replicas: a row per replica in the order given, the one that
 * answered marked "(this)", an expired lease's age marked "expired", an
 * empty address or version and an unknown state shown as such. */
static void test_cli_print_replicas(void **state)
{
    Csched__V1__Replica a = CSCHED__V1__REPLICA__INIT, b = CSCHED__V1__REPLICA__INIT,
                        c = CSCHED__V1__REPLICA__INIT;
    Csched__V1__Replica *replicas[] = {&a, &b, &c};
    Csched__V1__ListReplicasResponse resp = CSCHED__V1__LIST_REPLICAS_RESPONSE__INIT;
    struct capture out;

    a.id = "node-a";
    a.epoch = 12;
    a.state = CSCHED__V1__REPLICA_STATE__REPLICA_STATE_ACTIVE;
    a.address = "10.0.0.1:50051";
    a.version = "1.4.0";
    a.lease_age_ms = 1234;
    a.runs_held = 3;
    a.max_running = 16;
    a.self = true;
    b.id = "node-b";
    b.epoch = 9;
    b.state = CSCHED__V1__REPLICA_STATE__REPLICA_STATE_FENCED;
    b.address = "";
    b.version = "1.3.9";
    b.lease_age_ms = 123000;
    b.lease_expired = true;
    c.id = "node-c";
    c.epoch = 4000000000;
    c.state = 42;
    c.address = "10.0.0.3:50051";
    c.version = "";
    c.lease_age_ms = 500;
    resp.replicas = replicas;
    resp.n_replicas = 3;
    capture_open(&out);
    cs_cli_print_replicas(out.f, &resp);
    assert_string_equal(captured(&out),
                        "ID             STATE   EPOCH       ADDRESS         LEASE AGE      RUNS  "
                        "VERSION\n"
                        "node-a (this)  active  12          10.0.0.1:50051  1.234s         3/16  "
                        "1.4.0\n"
                        "node-b         fenced  9           -               2m03s expired  0     "
                        "1.3.9\n"
                        "node-c         ?       4000000000  10.0.0.3:50051  0.500s         0     "
                        "-\n");
    capture_close(&out);

    resp.n_replicas = 0;
    capture_open(&out);
    cs_cli_print_replicas(out.f, &resp);
    assert_string_equal(captured(&out), "ID  STATE  EPOCH  ADDRESS  LEASE AGE  RUNS  VERSION\n");
    capture_close(&out);
}

/* csched hooks: one row per delivery, newest first as given; a pending
 * one that was tried shows its next retry and its last error, a delivered
 * one neither, one not yet tried no code. */
static void test_cli_print_hook_deliveries(void **state)
{
    Csched__V1__HookDelivery a = CSCHED__V1__HOOK_DELIVERY__INIT,
                             b = CSCHED__V1__HOOK_DELIVERY__INIT,
                             c = CSCHED__V1__HOOK_DELIVERY__INIT;
    Csched__V1__HookDelivery *rows[] = {&a, &b, &c};
    Csched__V1__ListHookDeliveriesResponse resp = CSCHED__V1__LIST_HOOK_DELIVERIES_RESPONSE__INIT;
    struct capture out;

    setenv("TZ", "UTC", 1);
    tzset();
    a.id = 9;
    a.created_unix_ms = 1700000000000;
    a.hook_name = "pager";
    a.url = "https://pager.example/hook";
    a.event = CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED;
    a.run_id = 41;
    a.status = CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_PENDING;
    a.attempts = 2;
    a.response_code = 503;
    a.last_error = "the endpoint answered HTTP 503";
    a.next_unix_ms = 1700000004000;
    b.id = 8;
    b.created_unix_ms = 1699999990000;
    b.hook_name = "pager";
    b.url = "https://pager.example/hook";
    b.event = CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED;
    b.run_id = 40;
    b.status = CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_DELIVERED;
    b.attempts = 1;
    b.response_code = 200;
    b.last_error = "";
    c.id = 7;
    c.created_unix_ms = 1699999980000;
    c.hook_name = "chat";
    c.url = "https://chat.example/hook";
    c.event = CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SLOT_SKIPPED;
    c.run_id = 39;
    c.status = CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_PENDING;
    c.last_error = "";
    resp.deliveries = rows;
    resp.n_deliveries = 3;
    capture_open(&out);
    cs_cli_print_hook_deliveries(out.f, &resp);
    assert_string_equal(
        captured(&out),
        "ID  CREATED                     HOOK   EVENT         RUN  STATUS     CODE  ATTEMPTS  "
        "NEXT RETRY                  ERROR\n"
        "9   2023-11-14 22:13:20 +00:00  pager  failed        41   pending    503   2         "
        "2023-11-14 22:13:24 +00:00  the endpoint answered HTTP 503\n"
        "8   2023-11-14 22:13:10 +00:00  pager  succeeded     40   delivered  200   1         "
        "-                           -\n"
        "7   2023-11-14 22:13:00 +00:00  chat   slot_skipped  39   pending    -     0         "
        "-                           -\n");
    capture_close(&out);
    unsetenv("TZ");
    tzset();
}

/* csched -o json replicas prints the response whole, as the proto maps it:
 * self and leaseExpired included when false, the 64-bit fields as
 * strings, the state by name. */
static void test_cli_json_replicas(void **state)
{
    Csched__V1__Replica a = CSCHED__V1__REPLICA__INIT;
    Csched__V1__Replica *replicas[] = {&a};
    Csched__V1__ListReplicasResponse resp = CSCHED__V1__LIST_REPLICAS_RESPONSE__INIT;
    struct capture out;

    a.id = "node-a";
    a.epoch = 12;
    a.state = CSCHED__V1__REPLICA_STATE__REPLICA_STATE_STANDBY;
    a.address = "";
    a.version = "1.4.0";
    a.renewed_unix_ms = 1700000000123;
    a.lease_age_ms = 250;
    a.runs_held = 2;
    resp.replicas = replicas;
    resp.n_replicas = 1;
    capture_open(&out);
    cs_json_write_message(out.f, &resp.base);
    assert_string_equal(
        captured(&out),
        "{\"replicas\":[{\"id\":\"node-a\",\"epoch\":\"12\","
        "\"state\":\"REPLICA_STATE_STANDBY\",\"address\":\"\","
        "\"version\":\"1.4.0\",\"joinedUnixMs\":\"0\","
        "\"renewedUnixMs\":\"1700000000123\",\"leaseUntilUnixMs\":\"0\","
        "\"attemptsUntilUnixMs\":\"0\",\"leaseAgeMs\":\"250\","
        "\"leaseExpired\":false,\"runsHeld\":2,\"self\":false,\"schemaVersion\":0,\"maxRunning\":0}]}");
    capture_close(&out);
}

static int run_exit(int state, int outcome, int32_t value)
{
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;

    run.state = state;
    run.outcome_case = outcome;
    if (outcome == CSCHED__V1__RUN__OUTCOME_EXIT_CODE)
        run.exit_code = value;
    else
        run.term_signal = value;
    return cs_cli_exit_for_run(&run);
}

static void test_cli_exit_codes(void **state)
{
    const int none = CSCHED__V1__RUN__OUTCOME__NOT_SET;
    const int code = CSCHED__V1__RUN__OUTCOME_EXIT_CODE;
    const int sig = CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL;

    assert_int_equal(cs_cli_exit_for_rc(0), 0);
    assert_int_equal(cs_cli_exit_for_rc(1), 81);
    assert_int_equal(cs_cli_exit_for_rc(5), 85);
    assert_int_equal(cs_cli_exit_for_rc(14), 94);
    assert_int_equal(cs_cli_exit_for_rc(16), 96);
    assert_int_equal(cs_cli_exit_for_rc(-ENOMEM), CS_EXIT_SOFTWARE);
    assert_int_equal(cs_cli_exit_for_rc(-EINVAL), CS_EXIT_SOFTWARE);

    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, code, 0), 0);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, code, 3), 3);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, code, 255), 255);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, code, 0), 1);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, code, 256), 1);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, sig, 9), 137);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, sig, 15), 143);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, none, 0),
                     CS_EXIT_RUN_NOT_STARTED);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT, sig, 15),
                     CS_EXIT_RUN_TIMED_OUT);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED, sig, 15),
                     CS_EXIT_RUN_CANCELLED);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_LOST, none, 0), CS_EXIT_RUN_LOST);
    assert_int_equal(run_exit(CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, none, 0), CS_EXIT_SOFTWARE);
}

static void test_cli_error_lines(void **state)
{
    struct cs_status st = {.code = 5, .message = "job \"x\" not found"};
    struct capture err;
    struct cs_cli cli;

    init_cli(&cli);
    capture_err(&cli, &err);
    assert_int_equal(cs_cli_fail(&cli, "get job x", 5, &st), 85);
    assert_string_equal(captured(&err), "csched: get job x: NOT_FOUND: job \"x\" not found\n");
    capture_close(&err);

    capture_err(&cli, &err);
    st.message[0] = '\0';
    assert_int_equal(cs_cli_fail(&cli, "stats", 14, &st), 94);
    assert_string_equal(captured(&err), "csched: stats: UNAVAILABLE: (no message)\n");
    capture_close(&err);

    capture_err(&cli, &err);
    assert_int_equal(cs_cli_fail(&cli, "connect", -ENOMEM, NULL), CS_EXIT_SOFTWARE);
    assert_string_equal(captured(&err), "csched: connect: Cannot allocate memory\n");
    capture_close(&err);

    capture_err(&cli, &err);
    assert_int_equal(cs_cli_usage(&cli, "bad %s", "thing"), CS_EXIT_USAGE);
    assert_string_equal(captured(&err), "csched: bad thing (see csched --help)\n");
    capture_close(&err);
}
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_json_string_escaping),
        cmocka_unit_test(test_cli_json_job),
        cmocka_unit_test(test_cli_json_oneof_enum_nested),
        cmocka_unit_test(test_cli_format_helpers),
        cmocka_unit_test(test_cli_table_aligns),
        cmocka_unit_test(test_cli_yaml),
        cmocka_unit_test(test_cli_format_run_outcome),
        cmocka_unit_test(test_cli_print_run_leftovers),
        cmocka_unit_test(test_cli_print_event_recovered),
        cmocka_unit_test(test_cli_print_run_cut_logs),
        cmocka_unit_test(test_cli_print_limits),
        cmocka_unit_test(test_cli_print_replicas),
        cmocka_unit_test(test_cli_print_hook_deliveries),
        cmocka_unit_test(test_cli_json_replicas),
        cmocka_unit_test(test_cli_exit_codes),
        cmocka_unit_test(test_cli_error_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
