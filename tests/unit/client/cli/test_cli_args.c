/* Unit tests of how the csched CLI reads its arguments: the defaults and
 * CSCHED_SERVER, the global flags, numbers, ids, durations and states, a
 * job's flags and command, and the helpers each command's flag loop ends in,
 * with the usage errors they write. No server. */
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
#include "test_cli_map.h"

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)))
#define PARSE_JOB(cli, job, err, ...)                                                              \
    cs_cli_parse_job_args(cli, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), job, &err)

static void test_cli_defaults_and_env_server(void **state)
{
    struct cs_cli cli;

    init_cli(&cli);
    assert_string_equal(cli.server, "unix:/run/csched/csched.sock");
    assert_int_equal(cli.format, CS_FORMAT_TABLE);
    setenv("CSCHED_SOCKET", "/tmp/cs.sock", 1);
    cs_cli_init(&cli);
    assert_string_equal(cli.server, "unix:/tmp/cs.sock");
    setenv("CSCHED_SERVER", "10.1.2.3:7000", 1);
    cs_cli_init(&cli);
    assert_string_equal(cli.server, "10.1.2.3:7000");
    unsetenv("CSCHED_SERVER");
    unsetenv("CSCHED_SOCKET");
}

static void test_cli_global_flags(void **state)
{
    char *argv[] = {"--server",       "h:1",   "-o", "json", "--timeout=1.5", "--wait-for-ready",
                    "--output=table", "-ojson"};
    struct cs_cli cli;
    struct cs_cli_err err;
    int i = 0;

    init_cli(&cli);
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, &err), CS_CLI_FLAG_TAKEN);
    assert_string_equal(cli.server, "h:1");
    assert_int_equal(i, 1);
    i = 2;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, &err), CS_CLI_FLAG_TAKEN);
    assert_int_equal(cli.format, CS_FORMAT_JSON);
    i = 4;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, &err), CS_CLI_FLAG_TAKEN);
    assert_int_equal(cli.timeout_ms, 1500);
    i = 5;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, &err), CS_CLI_FLAG_TAKEN);
    assert_true(cli.wait_for_ready);
    i = 6;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, &err), CS_CLI_FLAG_TAKEN);
    assert_int_equal(cli.format, CS_FORMAT_TABLE);
    /* "-ojson" is not a spelling we take. */
    i = 7;
    assert_int_equal(cs_cli_global_flag(&cli, 8, argv, &i, &err), CS_CLI_FLAG_NOT_MINE);
}

static void test_cli_global_flag_errors(void **state)
{
    struct cs_cli cli;
    struct cs_cli_err err;
    int i;

    init_cli(&cli);
    /* wide is the table with more columns. */
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("-o", "wide"), &i, &err), CS_CLI_FLAG_TAKEN);
    assert_true(cli.wide);
    assert_int_equal(cli.format, CS_FORMAT_TABLE);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("-o", "xml"), &i, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "table, wide, json or yaml"));
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 1, ARGV("--server"), &i, &err), -EINVAL);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 1, ARGV("--server="), &i, &err), -EINVAL);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("--timeout", "0"), &i, &err), -EINVAL);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("--timeout", "-1"), &i, &err), -EINVAL);
    i = 0;
    assert_int_equal(cs_cli_global_flag(&cli, 2, ARGV("--timeout", "5s"), &i, &err), -EINVAL);
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
    struct cs_cli_err err;

    init_cli(&cli);
    assert_int_equal(PARSE_JOB(&cli, &job, err, "build", "--env", "A=1", "--env=B=x=y", "--label",
                               "team=core", "--workdir", "/tmp", "--run-as-user", "nobody",
                               "--run-as-group=65534", "--max-running", "3", "--timeout", "10",
                               "--max-attempts", "2", "--retry-backoff-ms=250", "-o", "json",
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
    assert_string_equal(job->run_as_user, "nobody");
    assert_string_equal(job->run_as_group, "65534");
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
    struct cs_cli_err err;

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
    struct cs_cli_err err = {0};

    init_cli(&cli);
    assert_int_equal(cs_cli_parse_job_args(&cli, argc, argv, &job, &err), -EINVAL);
    assert_null(job);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error '%s' does not contain '%s'", err.msg, want);
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
    EXPECT_JOB_ERROR("table, wide, json or yaml", "j", "-o", "xml", "--", "t");
}

static void test_cli_take_global_flag(void **state)
{
    struct capture err;
    struct cs_cli cli;
    int i;

    init_cli(&cli);
    capture_err(&cli, &err);
    i = 0;
    assert_int_equal(cs_cli_take_global_flag(&cli, 2, ARGV("-o", "json"), &i), CS_CLI_FLAG_TAKEN);
    assert_int_equal(i, 1);
    assert_int_equal(cli.format, CS_FORMAT_JSON);
    i = 0;
    assert_int_equal(cs_cli_take_global_flag(&cli, 1, ARGV("--job"), &i), CS_CLI_FLAG_NOT_MINE);
    assert_string_equal(captured(&err), "");
    i = 0;
    assert_int_equal(cs_cli_take_global_flag(&cli, 2, ARGV("-o", "xml"), &i), -EINVAL);
    assert_non_null(
        strstr(captured(&err), "csched: -o takes table, wide, json or yaml, not 'xml'"));
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
        cs_cli_take_flag_value(&cli, "--job", "a job name", 2, ARGV("--job", "j"), &i, &v),
        CS_CLI_FLAG_TAKEN);
    assert_int_equal(i, 1);
    assert_string_equal(v, "j");
    i = 0;
    assert_int_equal(
        cs_cli_take_flag_value(&cli, "--job", "a job name", 1, ARGV("--state"), &i, &v),
        CS_CLI_FLAG_NOT_MINE);
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
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
