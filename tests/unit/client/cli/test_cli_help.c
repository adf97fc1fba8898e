/* Unit tests of the CLI's help: the summaries of csched --help, "did you
 * mean" for a mistyped command, subcommand or flag (read from each
 * command's help text), and the usage error that carries it. No server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "cli.h"
#include "cli_fixture.h"

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})

static void test_cli_help_suggest_word(void **state)
{
    static const char *const known[] = {"job", "jobs-x", "trigger", "runs", "run", "replicas"};
    char buf[32];

    assert_string_equal(cs_cli_suggest("jbo", known, 6, buf, sizeof(buf)), "job");
    assert_string_equal(cs_cli_suggest("triger", known, 6, buf, sizeof(buf)), "trigger");
    assert_string_equal(cs_cli_suggest("replcias", known, 6, buf, sizeof(buf)), "replicas");
    /* Too far from everything, or the word itself: nothing to say. */
    assert_string_equal(cs_cli_suggest("frobnicate", known, 6, buf, sizeof(buf)), "");
    assert_string_equal(cs_cli_suggest("xy", known, 6, buf, sizeof(buf)), "");
    assert_string_equal(cs_cli_suggest("runs", known, 6, buf, sizeof(buf)), "");
}

static void test_cli_help_suggest_flag(void **state)
{
    char buf[32];

    assert_string_equal(cs_cli_suggest_flag("trigger", "--wiat", buf, sizeof(buf)), "--wait");
    assert_string_equal(cs_cli_suggest_flag("job next", "--cuont", buf, sizeof(buf)), "--count");
    assert_string_equal(cs_cli_suggest_flag("runs", "--stat", buf, sizeof(buf)), "--state");
    /* The global flags are every command's. */
    assert_string_equal(cs_cli_suggest_flag("runs", "--sever", buf, sizeof(buf)), "--server");
    assert_string_equal(cs_cli_suggest_flag("stats", "--nothing-like-it", buf, sizeof(buf)), "");
    /* Two edits from --logs, but too few letters for two. */
    assert_string_equal(cs_cli_suggest_flag("trigger", "--bogus", buf, sizeof(buf)), "");
}

static void test_cli_help_unknown_flag_says_meant(void **state)
{
    const char *word = NULL;
    struct capture err;
    struct cs_cli cli;
    int i = 1;

    init_cli(&cli);
    capture_err(&cli, &err);
    assert_int_equal(
        cs_cli_take_global_or_word(&cli, 2, ARGV("x", "--wiat"), &i, &word, "trigger", "U"),
        CS_EXIT_USAGE);
    assert_string_equal(captured(&err), "csched: trigger: unknown flag '--wiat'; did you mean "
                                        "'--wait'? usage: U (see csched --help)\n");
    capture_close(&err);
}

/* Every command of csched --help has a help of its own, and a summary that
 * fits the line and that fish's single quotes can hold. */
static void test_cli_help_summaries(void **state)
{
    const char *name, *summary;
    size_t i;

    for (i = 0; cs_cli_command_summary(i, &name, &summary) == 0; i++) {
        assert_true(cs_cli_help_text(name, NULL)[0] != '\0');
        assert_null(strchr(summary, '\''));
        assert_true(strlen(summary) <= 100 - 15);
    }
    assert_true(i >= 20);
    assert_string_equal(cs_cli_help_text("no-such", NULL), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_help_suggest_word),
        cmocka_unit_test(test_cli_help_suggest_flag),
        cmocka_unit_test(test_cli_help_unknown_flag_says_meant),
        cmocka_unit_test(test_cli_help_summaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
