/* test_attempt_left: what a restart makes of the last attempt's directory
 * from what its minder left (note, pid file) and whether the directory
 * predates the machine's boot: the pure decision, then the pool work on
 * real directories, made now or with their times set long before the boot
 * (which /proc/stat's btime, read by the work, must tell apart). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "attempt.h"
#include "minder_contract.h"

#define BOOT 1700000000
/* 2020-01-01: before any boot of a machine these tests run on. */
#define LONG_BEFORE_BOOT 1577836800

static void test_left_note_and_pid_first(void **state)
{
    (void)state;
    /* A note or a pid file decides, whatever the directory's time. */
    for (int64_t t = BOOT - 100; t <= BOOT + 100; t += 100) {
        assert_int_equal(cs_attempt_left_classify(true, false, t, BOOT), CS_ATTEMPT_LEFT_NOTE);
        assert_int_equal(cs_attempt_left_classify(true, true, t, BOOT), CS_ATTEMPT_LEFT_NOTE);
        assert_int_equal(cs_attempt_left_classify(false, true, t, BOOT), CS_ATTEMPT_LEFT_PID);
    }
}

static void test_left_nothing_by_boot_time(void **state)
{
    (void)state;
    assert_int_equal(cs_attempt_left_classify(false, false, BOOT - 1, BOOT),
                     CS_ATTEMPT_LEFT_PRE_BOOT);
    assert_int_equal(cs_attempt_left_classify(false, false, 0, BOOT), CS_ATTEMPT_LEFT_PRE_BOOT);
    assert_int_equal(cs_attempt_left_classify(false, false, BOOT, BOOT), CS_ATTEMPT_LEFT_NOTHING);
    assert_int_equal(cs_attempt_left_classify(false, false, BOOT + 5, BOOT),
                     CS_ATTEMPT_LEFT_NOTHING);
    /* An unknown boot time (0) puts every directory in this boot. */
    assert_int_equal(cs_attempt_left_classify(false, false, 12345, 0), CS_ATTEMPT_LEFT_NOTHING);
}

/* Runs the restart's pool work on attempt 1 of run 7 under state_dir, whose
 * directory is made empty with its times set to mtime (0: left as made). */
static void adopt_empty_dir(const char *state_dir, time_t mtime, char *message, size_t cap,
                            bool *claimed)
{
    char dir[4096], pid_path[4200];
    assert_int_equal(cs_minder_dir_format(dir, sizeof(dir), state_dir, 7, 1), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    if (mtime != 0) {
        struct timespec times[2] = {{.tv_sec = mtime}, {.tv_sec = mtime}};
        assert_int_equal(utimensat(AT_FDCWD, dir, times, 0), 0);
    }
    Csched__V1__Run msg = CSCHED__V1__RUN__INIT;
    msg.id = 7;
    struct cs_run run = {.msg = &msg};
    struct cs_sched sched = {.state_dir = state_dir};
    struct cs_attempt att = {.sched = &sched, .run = &run, .number = 1, .dir = strdup(dir)};
    cs_attempt_adopt_work(&att.work);
    assert_int_equal(att.note_rc, -ENOENT);
    assert_int_equal(att.adopt_pidfd, -1);
    assert_int_equal(att.n_earlier, 0);
    (void)snprintf(message, cap, "%s", att.note.message);
    (void)snprintf(pid_path, sizeof(pid_path), "%s/%s", dir, CS_ATTEMPT_PID_FILE);
    *claimed = access(pid_path, F_OK) == 0;
    (void)unlink(pid_path);
    assert_int_equal(rmdir(dir), 0);
    free(att.dir);
}

static void test_left_work_on_directories(void **state)
{
    (void)state;
    char root[] = "/tmp/test_attempt_left.XXXXXX", attempts[64], message[1024];
    bool claimed;
    assert_non_null(mkdtemp(root));
    (void)snprintf(attempts, sizeof(attempts), "%s/attempts", root);
    assert_int_equal(mkdir(attempts, 0700), 0);

    /* Made in this boot: claimed, never started (a crash of cschedd alone). */
    adopt_empty_dir(root, 0, message, sizeof(message), &claimed);
    assert_string_equal(message, CS_ATTEMPT_NEVER_STARTED_MESSAGE);
    assert_true(claimed);

    /* Made before the boot: may have run, and not claimed, so that a second
     * restart before the end commits finds the same. */
    adopt_empty_dir(root, LONG_BEFORE_BOOT, message, sizeof(message), &claimed);
    assert_string_equal(message, CS_ATTEMPT_PRE_BOOT_MESSAGE);
    assert_false(claimed);

    assert_int_equal(rmdir(attempts), 0);
    assert_int_equal(rmdir(root), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_left_note_and_pid_first),
        cmocka_unit_test(test_left_nothing_by_boot_time),
        cmocka_unit_test(test_left_work_on_directories),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
