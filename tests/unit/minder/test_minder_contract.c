/* Unit tests of the minder's contract: the argv the server builds, the
 * attempt directory's path and its parser, and that the real csched-minder
 * takes the argv as built (the builder and the minder's getopt agree). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "minder_contract.h"
#include "note.h"

extern char **environ;

/* The argv as one string, its words separated by spaces. */
static void join(char **argv, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (char **p = argv; *p != NULL && len < cap; p++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", p == argv ? "" : " ", *p);
}

static void argv_free(char **argv)
{
    for (char **p = argv; *p != NULL; p++)
        free(*p);
    free(argv);
}

static void test_minder_contract_argv(void **state)
{
    char *command[] = {"/bin/echo", "a b", "c"};
    struct cs_minder_cmd cmd = {
        .minder_path = "/x/" CS_MINDER_NAME,
        .dir = "/s/attempts/7-2",
        .grace_ms = CS_MINDER_KILL_GRACE_MS,
        .command = command,
        .n_command = 3,
    };
    char got[512];
    char **argv = cs_minder_argv_new(&cmd);
    assert_non_null(argv);
    join(argv, got, sizeof(got));
    assert_string_equal(got, "/x/csched-minder -d /s/attempts/7-2 -g 10000 -- /bin/echo a b c");
    assert_string_equal(argv[7], "a b"); /* one word, as given */
    argv_free(argv);

    /* A timeout, a working directory and a shell string. */
    cmd.timeout_ms = 30000;
    cmd.workdir = "/tmp";
    cmd.n_command = 0;
    cmd.shell = "exit 3";
    argv = cs_minder_argv_new(&cmd);
    assert_non_null(argv);
    join(argv, got, sizeof(got));
    assert_string_equal(
        got, "/x/csched-minder -d /s/attempts/7-2 -t 30000 -g 10000 -C /tmp -- /bin/sh -c exit 3");
    argv_free(argv);

    /* An empty working directory is no working directory. */
    cmd.workdir = "";
    argv = cs_minder_argv_new(&cmd);
    join(argv, got, sizeof(got));
    assert_null(strstr(got, " -C "));
    argv_free(argv);

    /* A stop signal other than TERM is passed; TERM, the default, is not. */
    cmd.stop_signal = SIGINT;
    argv = cs_minder_argv_new(&cmd);
    join(argv, got, sizeof(got));
    assert_non_null(strstr(got, " -g 10000 -s 2 -- "));
    argv_free(argv);
    cmd.stop_signal = SIGTERM;
    argv = cs_minder_argv_new(&cmd);
    join(argv, got, sizeof(got));
    assert_null(strstr(got, " -s "));
    argv_free(argv);
    assert_true(cs_minder_stop_signal_ok(SIGUSR2));
    assert_false(cs_minder_stop_signal_ok(SIGKILL));

    /* The lease file, with every other option and a shell string: the
     * most the fixed part of the argv takes. */
    cmd.stop_signal = SIGINT;
    cmd.workdir = "/tmp";
    cmd.lease_path = "/s/" CS_LEASE_FILE;
    argv = cs_minder_argv_new(&cmd);
    join(argv, got, sizeof(got));
    assert_string_equal(got, "/x/csched-minder -d /s/attempts/7-2 -t 30000 -g 10000 -s 2 -C /tmp "
                             "-L /s/lease -- /bin/sh -c exit 3");
    argv_free(argv);
}

static void test_minder_contract_dir_round_trip(void **state)
{
    char path[64];
    int64_t run;
    uint32_t attempt;

    assert_int_equal(cs_minder_dir_format(path, sizeof(path), "/var/lib/csched", 42, 3), 0);
    assert_string_equal(path, "/var/lib/csched/attempts/42-3");
    assert_int_equal(cs_minder_dir_parse(strrchr(path, '/') + 1, &run, &attempt), 0);
    assert_int_equal(run, 42);
    assert_int_equal(attempt, 3);
    assert_int_equal(cs_minder_dir_parse("9223372036854775807-1", &run, &attempt), 0);
    assert_int_equal(run, INT64_MAX);

    /* Too long for the buffer: an error, and still a string. */
    assert_int_equal(cs_minder_dir_format(path, 16, "/var/lib/csched", 42, 3), -ENAMETOOLONG);
    assert_int_equal(strlen(path), 15);
}

/* Only "<run>-<attempt>", both positive decimals without a leading zero. */
static void test_minder_contract_dir_parse_rejects(void **state)
{
    static const char *const bad[] = {
        "",
        "1",
        "1-",
        "-1",
        "0-1",
        "1-0",
        "01-1",
        "1-01",
        "a-1",
        "1-a",
        "1-2x",
        "1-2-3",
        " 1-2",
        "1 -2",
        "1- 2",
        "1-2/",
        "+1-2",
        "1-+2",
        "status",
        ".",
        "..",
        "1.5-2",
        "99999999999999999999-1",
    };
    int64_t run = -7;
    uint32_t attempt = 7;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cs_minder_dir_parse(bad[i], &run, &attempt) != -EINVAL)
            fail_msg("\"%s\" parsed as an attempt directory", bad[i]);
    assert_int_equal(run, -7);
    assert_int_equal(attempt, 7);
}

/* The real minder, started with the argv as the server builds it, runs the
 * command with the flags given and writes its note. */
static void test_minder_contract_minder_takes_the_argv(void **state)
{
    char dir[] = "/tmp/test_minder_contract.XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct cs_minder_cmd cmd = {
        .minder_path = CS_MINDER_PATH,
        .dir = dir,
        .timeout_ms = 60000,
        .grace_ms = 100,
        .workdir = "/",
        .shell = "test \"$(pwd)\" = / && exit 3",
    };
    char **argv = cs_minder_argv_new(&cmd);
    assert_non_null(argv);
    pid_t pid;
    int wstatus;
    assert_int_equal(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ), 0);
    argv_free(argv);
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);

    struct cs_note note;
    assert_int_equal(cs_note_read(dir, &note), 0);
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 3);

    static const char *const files[] = {CS_NOTE_FILE, CS_ATTEMPT_PID_FILE, CS_ATTEMPT_STDOUT_FILE,
                                        CS_ATTEMPT_STDERR_FILE, CS_ATTEMPT_PGID_FILE};
    char path[128];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        (void)snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        assert_int_equal(unlink(path), 0);
    }
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minder_contract_argv),
        cmocka_unit_test(test_minder_contract_dir_round_trip),
        cmocka_unit_test(test_minder_contract_dir_parse_rejects),
        cmocka_unit_test(test_minder_contract_minder_takes_the_argv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
