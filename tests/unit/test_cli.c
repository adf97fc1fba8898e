/* Unit tests of the csched CLI's own logic: flag parsing, JSON output and
 * its escaping, table formatting helpers, and exit-code mapping. No server. */
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
#include "test_cli_map.h"

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)))
#define PARSE_JOB(cli, job, err, ...)                                                              \
    cs_cli_parse_job_args(cli, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), job, err, sizeof(err))

/* A stream that collects what is written, read back with captured(). */
struct capture {
    char *buf;
    size_t len;
    FILE *f;
};

static void capture_open(struct capture *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    assert_non_null(c->f);
}

/* Points cli's error output at a fresh capture. */
static void capture_err(struct cs_cli *cli, struct capture *err)
{
    capture_open(err);
    cli->err = err->f;
}

static const char *captured(struct capture *c)
{
    fflush(c->f);
    return c->buf;
}

static void capture_close(struct capture *c)
{
    fclose(c->f);
    free(c->buf);
}

static void init_cli(struct cs_cli *cli)
{
    unsetenv("CSCHED_SERVER");
    cs_cli_init(cli);
}

static void test_cli_defaults_and_env_server(void **state)
{
    struct cs_cli cli;

    init_cli(&cli);
    assert_string_equal(cli.server, "127.0.0.1:50051");
    assert_int_equal(cli.format, CS_FORMAT_TABLE);
    setenv("CSCHED_SERVER", "10.1.2.3:7000", 1);
    cs_cli_init(&cli);
    assert_string_equal(cli.server, "10.1.2.3:7000");
    unsetenv("CSCHED_SERVER");
}

static void test_cli_global_flags(void **state)
{
    char *argv[] = {"--server",       "h:1",   "-o", "json", "--timeout=1.5", "--wait-for-ready",
                    "--output=table", "-ojson"};
    struct cs_cli cli;
    char err[256];
    int i = 0;

    init_cli(&cli);
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, err, sizeof(err)), 1);
    assert_string_equal(cli.server, "h:1");
    assert_int_equal(i, 1);
    i = 2;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, err, sizeof(err)), 1);
    assert_int_equal(cli.format, CS_FORMAT_JSON);
    i = 4;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, err, sizeof(err)), 1);
    assert_int_equal(cli.timeout_ms, 1500);
    i = 5;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, err, sizeof(err)), 1);
    assert_true(cli.wait_for_ready);
    i = 6;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, err, sizeof(err)), 1);
    assert_int_equal(cli.format, CS_FORMAT_TABLE);
    /* "-ojson" is not a spelling we take. */
    i = 7;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, err, sizeof(err)), 0);
}

static void test_cli_global_flag_errors(void **state)
{
    struct cs_cli cli;
    char err[256];
    int i;

    init_cli(&cli);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("-o", "yaml"), &i, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "table or json"));
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 1, ARGV("--server"), &i, err, sizeof(err)), -EINVAL);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 1, ARGV("--server="), &i, err, sizeof(err)), -EINVAL);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("--timeout", "0"), &i, err, sizeof(err)),
                     -EINVAL);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("--timeout", "-1"), &i, err, sizeof(err)),
                     -EINVAL);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("--timeout", "5s"), &i, err, sizeof(err)),
                     -EINVAL);
}

static void test_cli_parse_numbers(void **state)
{
    uint32_t u;
    int64_t v;
    Csched__V1__RunState s;

    assert_int_equal(cs_cli_parse_u32("0", &u), 0);
    assert_int_equal(u, 0);
    assert_int_equal(cs_cli_parse_u32("4294967295", &u), 0);
    assert_int_equal(u, UINT32_MAX);
    assert_int_equal(cs_cli_parse_u32("4294967296", &u), -EINVAL);
    assert_int_equal(cs_cli_parse_u32("-1", &u), -EINVAL);
    assert_int_equal(cs_cli_parse_u32("", &u), -EINVAL);
    assert_int_equal(cs_cli_parse_u32(" 1", &u), -EINVAL);
    assert_int_equal(cs_cli_parse_u32(NULL, &u), -EINVAL);
    assert_int_equal(cs_cli_parse_id("42", &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(cs_cli_parse_id("0", &v), -EINVAL);
    assert_int_equal(cs_cli_parse_id("9223372036854775807", &v), 0);
    assert_int_equal(cs_cli_parse_id("9223372036854775808", &v), -EINVAL);
    /* Far past the limit: the parse must not wrap around into range. */
    assert_int_equal(cs_cli_parse_id("20000000000000000000", &v), -EINVAL);
    assert_int_equal(cs_cli_parse_id("99999999999999999999999", &v), -EINVAL);
    assert_int_equal(cs_cli_parse_id("12x", &v), -EINVAL);
    assert_int_equal(cs_cli_parse_seconds("30", &v), 0);
    assert_int_equal(v, 30000);
    assert_int_equal(cs_cli_parse_seconds("0.001", &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(cs_cli_parse_seconds("nan", &v), -EINVAL);
    assert_int_equal(cs_cli_parse_seconds("0", &v), -EINVAL);
    assert_int_equal(cs_cli_parse_state("running", &s), 0);
    assert_int_equal(s, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    assert_int_equal(cs_cli_parse_state("RUN_STATE_TIMED_OUT", &s), 0);
    assert_int_equal(s, CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT);
    assert_int_equal(cs_cli_parse_state("Lost", &s), 0);
    assert_int_equal(s, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
    assert_int_equal(cs_cli_parse_state("unspecified", &s), -EINVAL);
    assert_int_equal(cs_cli_parse_state("done", &s), -EINVAL);
}

static void test_cli_job_args_full(void **state)
{
    Csched__V1__Job *job;
    struct cs_cli cli;
    char err[256];

    init_cli(&cli);
    assert_int_equal(PARSE_JOB(&cli, &job, err, "build", "--env", "A=1", "--env=B=x=y", "--label",
                               "team=core", "--workdir", "/tmp", "--max-running", "3", "--timeout",
                               "10", "--max-attempts", "2", "--retry-backoff-ms=250", "-o", "json",
                               "--env", "A=2", "--", "make", "-j2", "--", "all"),
                     0);
    assert_string_equal(job->name, "build");
    assert_int_equal(job->n_command, 4);
    assert_string_equal(job->command[0], "make");
    assert_string_equal(job->command[1], "-j2");
    assert_string_equal(job->command[2], "--");
    assert_string_equal(job->command[3], "all");
    assert_string_equal(job->shell, "");
    assert_int_equal(job->n_env, 2);
    assert_string_equal(cs_test_map_get((void **)job->env, job->n_env, "A"), "2");
    assert_string_equal(cs_test_map_get((void **)job->env, job->n_env, "B"), "x=y");
    assert_string_equal(cs_test_map_get((void **)job->labels, job->n_labels, "team"), "core");
    assert_string_equal(job->working_dir, "/tmp");
    assert_int_equal(job->max_running, 3);
    assert_int_equal(job->timeout_seconds, 10);
    assert_int_equal(job->max_attempts, 2);
    assert_int_equal(job->retry_backoff_ms, 250);
    /* The global -o among the job flags still counts; --timeout is the job's. */
    assert_int_equal(cli.format, CS_FORMAT_JSON);
    assert_int_equal(cli.timeout_ms, 0);
    csched__v1__job__free_unpacked(job, NULL);
}

static void test_cli_job_args_shell(void **state)
{
    Csched__V1__Job *job;
    struct cs_cli cli;
    char err[256];

    init_cli(&cli);
    assert_int_equal(PARSE_JOB(&cli, &job, err, "--shell", "echo $HOME | wc -c", "nightly"), 0);
    assert_string_equal(job->name, "nightly");
    assert_string_equal(job->shell, "echo $HOME | wc -c");
    assert_int_equal(job->n_command, 0);
    csched__v1__job__free_unpacked(job, NULL);
}

/* Expects parsing to fail with a message containing want. */
static void expect_job_error(int argc, char **argv, const char *want)
{
    Csched__V1__Job *job = (void *)1;
    struct cs_cli cli;
    char err[256] = "";

    init_cli(&cli);
    assert_int_equal(cs_cli_parse_job_args(&cli, argc, argv, &job, err, sizeof(err)), -EINVAL);
    assert_null(job);
    if (strstr(err, want) == NULL)
        fail_msg("error '%s' does not contain '%s'", err, want);
}

#define EXPECT_JOB_ERROR(want, ...) expect_job_error(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), want)

static void test_cli_job_args_errors(void **state)
{
    EXPECT_JOB_ERROR("missing job NAME", "--", "true");
    EXPECT_JOB_ERROR("missing command", "j");
    EXPECT_JOB_ERROR("not both", "j", "--shell", "x", "--", "true");
    EXPECT_JOB_ERROR("nothing after --", "j", "--");
    EXPECT_JOB_ERROR("--shell needs", "j", "--shell", "");
    EXPECT_JOB_ERROR("--shell needs", "j", "--shell");
    EXPECT_JOB_ERROR("--env takes KEY=VALUE, not 'A'", "j", "--env", "A", "--", "true");
    EXPECT_JOB_ERROR("--env takes KEY=VALUE, not '=v'", "j", "--env", "=v", "--", "true");
    EXPECT_JOB_ERROR("--env takes KEY=VALUE, not ''", "j", "--env");
    EXPECT_JOB_ERROR("--label takes KEY=VALUE", "j", "--label", "x", "--", "true");
    EXPECT_JOB_ERROR("--max-running takes a whole number", "j", "--max-running", "-1", "--", "t");
    EXPECT_JOB_ERROR("--max-attempts takes a whole number", "j", "--max-attempts", "two", "--",
                     "t");
    EXPECT_JOB_ERROR("--retry-backoff-ms takes", "j", "--retry-backoff-ms", "4294967296", "--",
                     "t");
    EXPECT_JOB_ERROR("--timeout takes whole seconds", "j", "--timeout", "1.5", "--", "t");
    EXPECT_JOB_ERROR("--workdir needs", "j", "--workdir");
    EXPECT_JOB_ERROR("unknown flag '--frobnicate'", "j", "--frobnicate", "--", "t");
    EXPECT_JOB_ERROR("unexpected argument 'echo'", "j", "echo", "hi");
    EXPECT_JOB_ERROR("table or json", "j", "-o", "xml", "--", "t");
}

static void test_cli_take_global_flag(void **state)
{
    struct capture err;
    struct cs_cli cli;
    int i;

    init_cli(&cli);
    capture_err(&cli, &err);
    i = 0;
    assert_int_equal(cs_cli_take_global_flag(&cli, 2, ARGV("-o", "json"), &i), 1);
    assert_int_equal(i, 1);
    assert_int_equal(cli.format, CS_FORMAT_JSON);
    i = 0;
    assert_int_equal(cs_cli_take_global_flag(&cli, 1, ARGV("--job"), &i), 0);
    assert_string_equal(captured(&err), "");
    i = 0;
    assert_int_equal(cs_cli_take_global_flag(&cli, 2, ARGV("-o", "yaml"), &i), -EINVAL);
    assert_non_null(strstr(captured(&err), "csched: -o takes table or json, not 'yaml'"));
    capture_close(&err);
}

/* The end of a flag loop: a global flag is taken, anything else is a usage
 * error naming the command, the argument and the command's usage. */
static void test_cli_take_global_or_fail(void **state)
{
    struct capture err;
    struct cs_cli cli;
    int i;

    init_cli(&cli);
    capture_err(&cli, &err);
    i = 0;
    assert_int_equal(cs_cli_take_global_or_fail(&cli, 2, ARGV("-o", "json"), &i, "runs", "U"), 0);
    assert_int_equal(i, 1);
    assert_string_equal(captured(&err), "");
    i = 0;
    assert_int_equal(
        cs_cli_take_global_or_fail(&cli, 1, ARGV("--bogus"), &i, "runs", "csched runs [--job J]"),
        CS_EXIT_USAGE);
    assert_non_null(
        strstr(captured(&err), "runs: unexpected '--bogus'; usage: csched runs [--job J]"));
    capture_close(&err);
}

/* A command's one word is taken once; a second word, or a flag the command
 * does not know, is a usage error. */
static void test_cli_take_global_or_word(void **state)
{
    const char *word = NULL;
    struct capture err;
    struct cs_cli cli;
    int i;

    init_cli(&cli);
    capture_err(&cli, &err);
    i = 0;
    assert_int_equal(
        cs_cli_take_global_or_word(&cli, 2, ARGV("nightly", "x"), &i, &word, "trigger", "U"), 0);
    assert_int_equal(i, 0);
    assert_string_equal(word, "nightly");
    i = 1;
    assert_int_equal(
        cs_cli_take_global_or_word(&cli, 2, ARGV("nightly", "x"), &i, &word, "trigger", "U"),
        CS_EXIT_USAGE);
    assert_string_equal(word, "nightly");
    assert_non_null(strstr(captured(&err), "trigger: unexpected 'x'; usage: U"));
    word = NULL;
    i = 0;
    assert_int_equal(
        cs_cli_take_global_or_word(&cli, 1, ARGV("--bogus"), &i, &word, "trigger", "U"),
        CS_EXIT_USAGE);
    assert_null(word);
    assert_non_null(strstr(captured(&err), "trigger: unexpected '--bogus'"));
    capture_close(&err);
}

/* A flag whose value is missing is a usage error that says what it needs. */
static void test_cli_take_flag_value(void **state)
{
    struct capture err;
    const char *v = NULL;
    struct cs_cli cli;
    int i;

    init_cli(&cli);
    capture_err(&cli, &err);
    i = 0;
    assert_int_equal(
        cs_cli_take_flag_value(&cli, "--job", "a job name", 2, ARGV("--job", "j"), &i, &v), 1);
    assert_int_equal(i, 1);
    assert_string_equal(v, "j");
    i = 0;
    assert_int_equal(
        cs_cli_take_flag_value(&cli, "--job", "a job name", 1, ARGV("--state"), &i, &v), 0);
    assert_int_equal(i, 0);
    assert_string_equal(captured(&err), "");
    assert_int_equal(cs_cli_take_flag_value(&cli, "--job", "a job name", 1, ARGV("--job"), &i, &v),
                     -EINVAL);
    assert_non_null(strstr(captured(&err), "csched: --job needs a job name"));
    capture_close(&err);
}

static void test_cli_positionals(void **state)
{
    struct capture err;
    const char *pos[2];
    struct cs_cli cli;

    init_cli(&cli);
    capture_err(&cli, &err);
    assert_int_equal(cs_cli_positionals(&cli, 3, ARGV("7", "-o", "json"), pos, 1, "u"), 0);
    assert_string_equal(pos[0], "7");
    assert_int_equal(cli.format, CS_FORMAT_JSON);
    assert_int_equal(cs_cli_positionals(&cli, 0, ARGV(NULL), pos, 1, "csched run ID"),
                     CS_EXIT_USAGE);
    assert_non_null(strstr(captured(&err), "missing argument; usage: csched run ID"));
    assert_int_equal(cs_cli_positionals(&cli, 2, ARGV("1", "2"), pos, 1, "u"), CS_EXIT_USAGE);
    assert_non_null(strstr(captured(&err), "unexpected argument '2'"));
    assert_int_equal(cs_cli_positionals(&cli, 1, ARGV("--all"), pos, 0, "u"), CS_EXIT_USAGE);
    assert_non_null(strstr(captured(&err), "unknown flag '--all'"));
    capture_close(&err);
}

/* Writes s as a JSON string and compares with want. */
static void expect_json_string(const char *s, size_t len, const char *want)
{
    struct capture c;

    capture_open(&c);
    cs_cli_json_string(c.f, s, len);
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
    cs_cli_json_line(c.f, &job->base);
    assert_string_equal(
        captured(&c),
        "{\"name\":\"a\\\"b\",\"command\":[\"echo\",\"hi\\n\"],\"shell\":\"\",\"env\":{\"K\":"
        "\"v\\\\\"},\"working_dir\":\"\",\"max_running\":4,\"timeout_seconds\":0,\"max_attempts\":"
        "0,\"retry_backoff_ms\":0,\"labels\":{},\"version\":18446744073709551615,"
        "\"created_unix_ms\":-5,\"updated_unix_ms\":0}\n");
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
    cs_cli_json_message(c.f, &ev.base);
    /* An unset oneof member is left out. */
    assert_null(strstr(captured(&c), "exit_code"));
    assert_non_null(strstr(captured(&c), "\"state\":\"RUN_STATE_SUCCEEDED\""));
    capture_close(&c);

    /* A set oneof member shows even when it is 0. */
    ev.outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
    ev.exit_code = 0;
    ev.state = 99;
    capture_open(&c);
    cs_cli_json_message(c.f, &ev.base);
    assert_non_null(strstr(captured(&c), "\"state\":99,\"exit_code\":0,"));
    assert_null(strstr(captured(&c), "term_signal"));
    capture_close(&c);

    capture_open(&c);
    cs_cli_json_message(c.f, &stats.base);
    assert_non_null(strstr(captured(&c), "\"lag_since_start\":null"));
    capture_close(&c);

    chunk.stream = CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR;
    chunk.data.data = (uint8_t *)"ok\n\xff";
    chunk.data.len = 4;
    capture_open(&c);
    cs_cli_json_message(c.f, &chunk.base);
    assert_string_equal(
        captured(&c), "{\"stream\":\"LOG_STREAM_STDERR\",\"offset\":0,\"data\":\"ok\\n\\ufffd\"}");
    capture_close(&c);
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
    assert_int_equal(strlen(buf), 19);
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

/* csched run shows how many processes each attempt left behind. */
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
    capture_open(&out);
    cs_cli_print_run(out.f, &run);
    assert_non_null(strstr(captured(&out), " LEFTOVER MESSAGE\n"));
    assert_non_null(strstr(captured(&out), " 1776     2        done\n"));
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
        cmocka_unit_test(test_cli_defaults_and_env_server),
        cmocka_unit_test(test_cli_global_flags),
        cmocka_unit_test(test_cli_global_flag_errors),
        cmocka_unit_test(test_cli_parse_numbers),
        cmocka_unit_test(test_cli_job_args_full),
        cmocka_unit_test(test_cli_job_args_shell),
        cmocka_unit_test(test_cli_job_args_errors),
        cmocka_unit_test(test_cli_take_global_flag),
        cmocka_unit_test(test_cli_take_global_or_fail),
        cmocka_unit_test(test_cli_take_global_or_word),
        cmocka_unit_test(test_cli_take_flag_value),
        cmocka_unit_test(test_cli_positionals),
        cmocka_unit_test(test_cli_json_string_escaping),
        cmocka_unit_test(test_cli_json_job),
        cmocka_unit_test(test_cli_json_oneof_enum_nested),
        cmocka_unit_test(test_cli_format_helpers),
        cmocka_unit_test(test_cli_format_run_outcome),
        cmocka_unit_test(test_cli_print_run_leftovers),
        cmocka_unit_test(test_cli_exit_codes),
        cmocka_unit_test(test_cli_error_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
