/* Unit tests of an attempt's limits in the minder: their text on the
 * command line (-R) and the argv the server builds with them (-R, -K), the
 * rlimits that stand for them, which ones a host without cgroups cannot
 * hold, and the real csched-minder setting the rlimits before the exec and
 * recording the limit that ended its command, or refusing to start one
 * whose cgroup it cannot make. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "attempt_limits.h"
#include "minder_contract.h"
#include "minder_spawn.h"
#include "note.h"

static void test_minder_limits_text_round_trip(void **state)
{
    struct cs_limits l = {.memory_bytes = 1 << 20, .pids = 3, .file_size = UINT64_MAX};
    struct cs_limits back;
    char text[256];

    assert_int_equal(cs_limits_format(&l, text, sizeof(text)), 0);
    assert_string_equal(text, "memory_bytes=1048576,pids=3,file_size=18446744073709551615");
    assert_int_equal(cs_limits_parse(text, &back), 0);
    assert_memory_equal(&l, &back, sizeof(l));

    struct cs_limits none = {0};
    assert_int_equal(cs_limits_format(&none, text, sizeof(text)), 0);
    assert_string_equal(text, "");
    assert_int_equal(cs_limits_format(&l, text, 10), -ENAMETOOLONG);

    static const char *const bad[] = {"x=1",
                                      "pids=",
                                      "pids",
                                      "pids=1,",
                                      "pids=-1",
                                      "pids=1x",
                                      "file_size=18446744073709551616",
                                      ",pids=1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cs_limits_parse(bad[i], &back) != -EINVAL)
            fail_msg("\"%s\" was taken", bad[i]);
}

/* Finds resource in r[0..n): its index, or -1. */
static int find(const struct cs_rlimit *r, size_t n, int resource)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].resource == resource)
            return (int)i;
    return -1;
}

static void test_minder_limits_rlimits(void **state)
{
    struct cs_limits l = {.memory_bytes = 64 << 20,
                          .cpu_seconds = 5,
                          .pids = 7,
                          .open_files = 32,
                          .file_size = 4096,
                          .cpu_millis = 500};
    struct cs_rlimit r[CS_RLIMITS_MAX];
    size_t n = cs_limits_rlimits(&l, false, false, r);
    int i;

    assert_int_equal(n, 4);
    assert_true((i = find(r, n, RLIMIT_AS)) >= 0);
    assert_int_equal(r[i].soft, 64 << 20);
    /* SIGXCPU at the soft limit, SIGKILL at the hard one a second later. */
    assert_true((i = find(r, n, RLIMIT_CPU)) >= 0);
    assert_int_equal(r[i].soft, 5);
    assert_int_equal(r[i].hard, 6);
    assert_true((i = find(r, n, RLIMIT_NOFILE)) >= 0);
    assert_int_equal(r[i].soft, 32);
    assert_int_equal(r[i].hard, 32);
    assert_true((i = find(r, n, RLIMIT_FSIZE)) >= 0);
    assert_int_equal(r[i].hard, 4096);
    /* RLIMIT_NPROC counts a uid's processes: only for a command of its own. */
    assert_int_equal(find(r, n, RLIMIT_NPROC), -1);

    /* A memory cgroup holds the memory: no address-space limit then. */
    n = cs_limits_rlimits(&l, true, true, r);
    assert_int_equal(n, 4);
    assert_int_equal(find(r, n, RLIMIT_AS), -1);
    assert_true((i = find(r, n, RLIMIT_NPROC)) >= 0);
    assert_int_equal(r[i].soft, 7);

    struct cs_limits none = {0};
    assert_int_equal(cs_limits_rlimits(&none, false, true, r), 0);
}

static void test_minder_limits_unenforced(void **state)
{
    struct cs_limits l = {.memory_bytes = 1 << 20, .pids = 3, .cpu_millis = 500};
    struct cs_cgroup_parents none = {0}, v1 = {.v1_memory = "/m", .v1_pids = "/p"};
    struct cs_cgroup_parents v2 = {.v2 = "/u", .v2_cpu = true};

    assert_int_equal(cs_limits_unenforced(&l, &none), CS_LIMIT_PIDS | CS_LIMIT_CPU_MILLIS);
    assert_int_equal(cs_limits_unenforced(&l, &v1), CS_LIMIT_CPU_MILLIS);
    assert_int_equal(cs_limits_unenforced(&l, &v2), 0);
    v2.v2_cpu = false;
    assert_int_equal(cs_limits_unenforced(&l, &v2), CS_LIMIT_CPU_MILLIS);
    assert_string_equal(cs_limit_name(CS_LIMIT_CPU_MILLIS), "cpu_millis");
    assert_null(cs_limit_name(3));
}

static void argv_free(char **argv)
{
    for (char **p = argv; *p != NULL; p++)
        free(*p);
    free(argv);
}

/* The argv as one string, its words separated by spaces. */
static void join(char **argv, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (char **p = argv; *p != NULL && len < cap; p++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", p == argv ? "" : " ", *p);
}

static void test_minder_limits_argv(void **state)
{
    struct cs_limits l = {.memory_bytes = 1 << 20, .pids = 3};
    struct cs_cgroup_parents p = {.v1_memory = "/m/csched", .v1_pids = "/p/csched"};
    struct cs_minder_cmd cmd = {.minder_path = "/x/" CS_MINDER_NAME,
                                .dir = "/s/attempts/7-2",
                                .grace_ms = 100,
                                .shell = "true",
                                .limits = &l,
                                .cgroups = &p};
    char got[512];
    char **argv = cs_minder_argv_new(&cmd);

    join(argv, got, sizeof(got));
    assert_string_equal(got, "/x/csched-minder -d /s/attempts/7-2 -g 100 -R "
                             "memory_bytes=1048576,pids=3 -K memory=/m/csched -K pids=/p/csched "
                             "-- /bin/sh -c true");
    argv_free(argv);

    /* No limit, no -R and no cgroup: such a minder stays on posix_spawn. */
    struct cs_limits none = {0};
    cmd.limits = &none;
    argv = cs_minder_argv_new(&cmd);
    join(argv, got, sizeof(got));
    assert_string_equal(got, "/x/csched-minder -d /s/attempts/7-2 -g 100 -- /bin/sh -c true");
    argv_free(argv);
}

/* Runs the real minder on shell in a fresh directory with extra flags (up
 * to 4, NULL-terminated), and reads its note and stdout; returns the dir. */
static char *run_minder(const char *const *flags, const char *shell, struct cs_note *note,
                        char *out, size_t cap)
{
    static char dir[64];
    const char *args[16];
    size_t n = 0;
    char path[128];
    int wstatus;

    (void)snprintf(dir, sizeof(dir), "/tmp/test_minder_limits.XXXXXX");
    assert_non_null(mkdtemp(dir));
    args[n++] = "-d";
    args[n++] = dir;
    for (; *flags != NULL; flags++)
        args[n++] = *flags;
    args[n++] = "--";
    args[n++] = "/bin/sh";
    args[n++] = "-c";
    args[n++] = shell;
    args[n] = NULL;
    pid_t pid = cs_test_minder_spawn(args, -1);
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);
    assert_int_equal(cs_note_read(dir, note), 0);
    (void)snprintf(path, sizeof(path), "%s/stdout", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t len = fread(out, 1, cap - 1, f);
    out[len] = '\0';
    fclose(f);
    (void)snprintf(path, sizeof(path), "rm -rf %s", dir);
    assert_int_equal(system(path), 0);
    return dir;
}

/* The command runs under the rlimits asked for (dash's ulimit -f counts
 * 512-byte blocks). */
static void test_minder_limits_rlimits_reach_the_command(void **state)
{
    const char *const flags[] = {"-R", "open_files=10,file_size=4096,cpu_seconds=7", NULL};
    struct cs_note note;
    char out[256];

    run_minder(flags, "ulimit -n; ulimit -f; ulimit -t", &note, out, sizeof(out));
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 0);
    assert_string_equal(out, "10\n8\n7\n");
    assert_int_equal(note.limit_hit, CS_LIMIT_HIT_NONE);
}

static void test_minder_limits_file_size_recorded(void **state)
{
    const char *const flags[] = {"-R", "file_size=4096", NULL};
    struct cs_note note;
    char out[16];

    run_minder(flags, "exec head -c 100000 /dev/zero > big", &note, out, sizeof(out));
    assert_int_equal(note.outcome, CS_NOTE_SIGNALED);
    assert_int_equal(note.term_signal, SIGXFSZ);
    assert_int_equal(note.limit_hit, CS_LIMIT_HIT_FILE_SIZE);
    assert_non_null(strstr(note.message, "file_size 4096"));
}

/* A shell that reports its child's SIGXCPU as 128 + 24 is told apart too. */
static void test_minder_limits_cpu_seconds_recorded(void **state)
{
    const char *const flags[] = {"-R", "cpu_seconds=1", NULL};
    struct cs_note note;
    char out[16];

    run_minder(flags, "sh -c 'while :; do :; done'; exit $?", &note, out, sizeof(out));
    assert_int_equal(note.outcome, CS_NOTE_EXITED);
    assert_int_equal(note.exit_code, 128 + SIGXCPU);
    assert_int_equal(note.limit_hit, CS_LIMIT_HIT_CPU_SECONDS);
    assert_true(note.user_cpu_ms + note.system_cpu_ms >= 500); /* sampled at ticks */
}

/* A cgroup that cannot be made stops the start: a limit asked for is never
 * silently dropped. */
static void test_minder_limits_cgroup_refused(void **state)
{
    const char *const flags[] = {"-R", "memory_bytes=1048576", "-K", "memory=/nonexistent/csched",
                                 NULL};
    struct cs_note note;
    char out[64];

    run_minder(flags, "echo ran", &note, out, sizeof(out));
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_string_equal(out, "");
    assert_non_null(strstr(note.message, "cgroup /nonexistent/csched: mkdir: No such file"));
    assert_non_null(strstr(note.message, "not run"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minder_limits_text_round_trip),
        cmocka_unit_test(test_minder_limits_rlimits),
        cmocka_unit_test(test_minder_limits_unenforced),
        cmocka_unit_test(test_minder_limits_argv),
        cmocka_unit_test(test_minder_limits_rlimits_reach_the_command),
        cmocka_unit_test(test_minder_limits_file_size_recorded),
        cmocka_unit_test(test_minder_limits_cpu_seconds_recorded),
        cmocka_unit_test(test_minder_limits_cgroup_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
