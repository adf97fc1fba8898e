/* Unit tests of cschedd's priority over its jobs: the nice value of the
 * session it leads, read back from /proc, and each reason it may not be
 * set reported with a message. Each case runs in a child process, because
 * a session's nice value outlives the call. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "priority.h"

/* The session's nice value as /proc/self/autogroup shows it
 * ("/autogroup-123 nice -7"), or 100 if it cannot be read. */
static int session_nice(void)
{
    char text[128];
    int fd = open("/proc/self/autogroup", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 100;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    (void)close(fd);
    if (n <= 0)
        return 100;
    text[n] = '\0';
    const char *at = strstr(text, " nice ");
    return at != NULL ? atoi(at + strlen(" nice ")) : 100;
}

static bool autogroup_on(void)
{
    char c = '0';
    int fd = open("/proc/sys/kernel/sched_autogroup_enabled", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool on = read(fd, &c, 1) == 1 && c == '1';
    (void)close(fd);
    return on;
}

/* Changes CAP_SYS_NICE in this process's sets: out of the effective set,
 * or into the inheritable and then the ambient set. */
static bool cap_sys_nice(bool effective, bool ambient)
{
    struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &head, data) != 0)
        return false;
    struct __user_cap_data_struct *d = &data[CAP_TO_INDEX(CAP_SYS_NICE)];
    if (!effective)
        d->effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
    if (ambient)
        d->inheritable |= CAP_TO_MASK(CAP_SYS_NICE);
    if (syscall(SYS_capset, &head, data) != 0)
        return false;
    return !ambient || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_NICE, 0, 0) == 0;
}

/* How a child is set up before the call. */
struct setup {
    bool new_session;  /* starts a session of its own */
    bool no_sys_nice;  /* without CAP_SYS_NICE */
    bool ambient_nice; /* CAP_SYS_NICE ambient, as systemd grants it */
    int nice;
};

/* What a child reports back: the call's result, its message, the session's
 * nice value before and after, and whether CAP_SYS_NICE was still ambient. */
struct outcome {
    int rc;
    int before, after;
    bool ambient_after;
    char msg[256];
};

/* Runs cs_priority_set_session_nice in a child set up as asked. */
static struct outcome in_child(struct setup setup)
{
    struct outcome out;
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct cs_err err = {0};
        memset(&out, 0, sizeof(out));
        if ((setup.new_session && setsid() < 0) ||
            ((setup.no_sys_nice || setup.ambient_nice) &&
             !cap_sys_nice(!setup.no_sys_nice, setup.ambient_nice)))
            _exit(2);
        out.before = session_nice();
        out.rc = cs_priority_set_session_nice(setup.nice, &err);
        out.after = session_nice();
        out.ambient_after = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_SYS_NICE, 0, 0) == 1;
        memcpy(out.msg, err.msg, sizeof(out.msg));
        _exit(write(pipefd[1], &out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 3);
    }
    (void)close(pipefd[1]);
    assert_int_equal(read(pipefd[0], &out, sizeof(out)), (ssize_t)sizeof(out));
    (void)close(pipefd[0]);
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    return out;
}

static void test_priority_sets_the_session_it_leads(void **state)
{
    (void)state;
    if (!autogroup_on()) {
        print_message("skipped: the kernel's autogroup scheduling is off\n");
        skip();
    }
    if (geteuid() != 0) {
        print_message("skipped: lowering a nice value needs root\n");
        skip();
    }
    struct outcome out = in_child((struct setup){.new_session = true, .nice = -7});
    if (out.rc != 0)
        fail_msg("expected 0, got %d \"%s\"", out.rc, out.msg);
    assert_int_equal(out.before, 0);
    assert_int_equal(out.after, -7);
}

/* A process that does not lead its session would change its starter's. */
static void test_priority_leaves_a_session_it_does_not_lead(void **state)
{
    (void)state;
    struct outcome out = in_child((struct setup){.nice = -7});
    assert_int_equal(out.rc, -ENOTTY);
    assert_int_equal(out.after, out.before);
    assert_non_null(strstr(out.msg, "setsid"));
}

/* Without CAP_SYS_NICE only a higher nice value may be set. */
static void test_priority_needs_cap_sys_nice(void **state)
{
    (void)state;
    if (!autogroup_on()) {
        print_message("skipped: the kernel's autogroup scheduling is off\n");
        skip();
    }
    struct outcome out =
        in_child((struct setup){.new_session = true, .no_sys_nice = true, .nice = -7});
    assert_int_equal(out.rc, -EPERM);
    assert_int_equal(out.after, out.before);
    assert_non_null(strstr(out.msg, "CAP_SYS_NICE"));
    /* A higher value is anyone's to set. */
    out = in_child((struct setup){.new_session = true, .no_sys_nice = true, .nice = 3});
    assert_int_equal(out.rc, 0);
    assert_int_equal(out.after, 3);
}

static void test_priority_without_autogroup(void **state)
{
    (void)state;
    if (autogroup_on()) {
        print_message("skipped: the kernel's autogroup scheduling is on\n");
        skip();
    }
    struct outcome out = in_child((struct setup){.new_session = true, .nice = -7});
    assert_int_equal(out.rc, -ENOSYS);
    assert_non_null(strstr(out.msg, "cpu weight"));
}

/* Granted as an ambient capability, CAP_SYS_NICE is used and then kept
 * from the processes cschedd starts, also when the nice value is left. */
static void test_priority_keeps_cap_sys_nice_from_children(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("skipped: granting CAP_SYS_NICE needs root\n");
        skip();
    }
    struct outcome out = in_child((struct setup){.ambient_nice = true, .nice = 0});
    assert_int_equal(out.rc, 0);
    assert_false(out.ambient_after);
    if (!autogroup_on()) {
        print_message("autogroup scheduling is off: the session's nice value is not checked\n");
        return;
    }
    out = in_child((struct setup){.new_session = true, .ambient_nice = true, .nice = -4});
    assert_int_equal(out.rc, 0);
    assert_int_equal(out.after, -4);
    assert_false(out.ambient_after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priority_sets_the_session_it_leads),
        cmocka_unit_test(test_priority_leaves_a_session_it_does_not_lead),
        cmocka_unit_test(test_priority_needs_cap_sys_nice),
        cmocka_unit_test(test_priority_without_autogroup),
        cmocka_unit_test(test_priority_keeps_cap_sys_nice_from_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
