/* Unit tests of the minder's privilege drop: the order of its calls, that
 * each failure stops it and is named, and that a root that could be taken
 * back is refused, through a fake table of calls that records what the drop
 * did; and the real csched-minder, run without the privilege to drop to
 * root's groups, ending the attempt start_failed with the step named and
 * the command not run. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "minder_drop.h"
#include "note.h"

/* What the fake calls saw, and which one fails. */
static char calls[128];
static const char *fail_at; /* a call's name, or NULL */
static int fail_errno;
static bool root_comes_back;
static uid_t uid_now;

static int fake(const char *name)
{
    (void)strncat(calls, name, sizeof(calls) - strlen(calls) - 2);
    (void)strcat(calls, " ");
    if (fail_at != NULL && strcmp(fail_at, name) == 0) {
        errno = fail_errno;
        return -1;
    }
    return 0;
}

static int fake_setgroups(size_t n, const gid_t *groups)
{
    (void)groups;
    return fake(n == 0 ? "setgroups(none)" : "setgroups");
}

static int fake_setgid(gid_t gid)
{
    (void)gid;
    return fake("setgid");
}

static int fake_setuid(uid_t uid)
{
    if (uid == 0 && uid_now != 0) {
        (void)strcat(calls, "setuid(0) ");
        if (root_comes_back)
            return 0;
        errno = EPERM;
        return -1;
    }
    int rc = fake("setuid");
    if (rc == 0)
        uid_now = uid;
    return rc;
}

static const struct cs_drop_ops ops = {fake_setgroups, fake_setgid, fake_setuid};

static int setup(void **state)
{
    (void)state;
    calls[0] = '\0';
    fail_at = NULL;
    root_comes_back = false;
    uid_now = 0;
    return 0;
}

static void test_drop_in_order(void **state)
{
    (void)state;
    gid_t groups[] = {10, 20};
    const char *step = "unset";
    assert_int_equal(cs_drop_privileges(&ops, 65534, 65534, groups, 2, &step), 0);
    assert_string_equal(calls, "setgroups setgid setuid setuid(0) ");
    assert_null(step);
    assert_int_equal(uid_now, 65534);
}

static void test_drop_no_groups(void **state)
{
    (void)state;
    const char *step;
    assert_int_equal(cs_drop_privileges(&ops, 1000, 1000, NULL, 0, &step), 0);
    assert_string_equal(calls, "setgroups(none) setgid setuid setuid(0) ");
}

/* Each failure stops the drop there, with its errno and its step named. */
static void test_drop_each_step_fails(void **state)
{
    static const struct {
        const char *fail, *seen;
    } cases[] = {
        {"setgroups", "setgroups "},
        {"setgid", "setgroups setgid "},
        {"setuid", "setgroups setgid setuid "},
    };
    gid_t groups[] = {10};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        setup(state);
        fail_at = cases[i].fail;
        fail_errno = i == 0 ? EPERM : EINVAL;
        const char *step = NULL;
        assert_int_equal(cs_drop_privileges(&ops, 65534, 65534, groups, 1, &step), -fail_errno);
        assert_string_equal(step, cases[i].fail);
        assert_string_equal(calls, cases[i].seen);
    }
}

/* A drop that left a way back to root is a failure. */
static void test_drop_root_comes_back(void **state)
{
    (void)state;
    root_comes_back = true;
    const char *step;
    assert_int_equal(cs_drop_privileges(&ops, 65534, 65534, NULL, 0, &step), -EPERM);
    assert_string_equal(step, "setuid(0) after the drop");
}

/* Running as root on purpose (run_as_user: root) needs no check of a way back. */
static void test_drop_to_root(void **state)
{
    (void)state;
    const char *step;
    assert_int_equal(cs_drop_privileges(&ops, 0, 0, NULL, 0, &step), 0);
    assert_string_equal(calls, "setgroups(none) setgid setuid ");
}

/* The real minder, as nobody (dropping there first when run as root),
 * asked to run its command as root: setgroups fails with EPERM, and the
 * note says so; the marker the command would make is not there. */
static void test_drop_real_minder_refused(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_minder_drop.XXXXXX", marker[64], cmd[128];
    struct passwd *pw = getpwnam("nobody");
    struct cs_note note;
    int wstatus;

    assert_non_null(mkdtemp(dir));
    if (geteuid() == 0) {
        assert_non_null(pw);
        assert_int_equal(chown(dir, pw->pw_uid, pw->pw_gid), 0);
    }
    snprintf(marker, sizeof(marker), "%s/ran", dir);
    snprintf(cmd, sizeof(cmd), "touch %s", marker);
    const char *argv[] = {
        "csched-minder", "-d", dir, "-u", "0", "-G", "0", "-S", "0", "-C", "/", "--",
        "/bin/sh",       "-c", cmd, NULL};
    /* Run from an fd opened before the drop: nobody may have no way to
     * the build tree's path (a clone under /root). */
    int minder = open(CS_MINDER_PATH, O_RDONLY | O_CLOEXEC);
    assert_true(minder >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 &&
            (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0))
            _exit(98);
        fexecve(minder, (char *const *)argv, environ);
        _exit(99);
    }
    assert_int_equal(close(minder), 0);
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);
    assert_int_equal(cs_note_read(dir, &note), 0);
    assert_int_equal(note.outcome, CS_NOTE_START_FAILED);
    assert_int_equal(note.exit_code, 127);
    assert_string_equal(note.message, "setgroups failed dropping to uid 0 gid 0 (1 groups): "
                                      "Operation not permitted: the command was not run");
    assert_int_equal(access(marker, F_OK), -1);
    static const char *const files[] = {"status", "pid", "stdout", "stderr", "status.tmp", "pgid"};
    char path[128];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        (void)unlink(path); /* not every file is made */
    }
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_drop_in_order, setup),
        cmocka_unit_test_setup(test_drop_no_groups, setup),
        cmocka_unit_test_setup(test_drop_each_step_fails, setup),
        cmocka_unit_test_setup(test_drop_root_comes_back, setup),
        cmocka_unit_test_setup(test_drop_to_root, setup),
        cmocka_unit_test(test_drop_real_minder_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
