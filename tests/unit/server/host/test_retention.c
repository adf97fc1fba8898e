/* Unit tests of the retention sweep's file side (server/retention_work.c):
 * on a real directory tree, which attempt directories go and which stay,
 * that nothing outside an attempt directory is touched through a link,
 * that a sweep stops at its bound and carries on in the next, and which
 * directories of hook deliveries go with their rows. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "note.h"
#include "retention_work.h"

#define DAY (24 * 60 * 60)

struct tree {
    char root[64];     /* holds attempts/ and outside/ */
    char attempts[96]; /* the directory swept */
    time_t now;
};

static void path_of(char *out, size_t size, const char *base, const char *name)
{
    int n = snprintf(out, size, "%s/%s", base, name);
    assert_true(n > 0 && (size_t)n < size);
}

static void touch_at(const char *path, time_t when)
{
    struct timespec times[2] = {{.tv_sec = when}, {.tv_sec = when}};
    assert_int_equal(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW), 0);
}

static void write_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "x\n", 2), 2);
    assert_int_equal(close(fd), 0);
}

/* An attempt directory with the files a minder leaves, a note changed at
 * note_time (none if 0), and the directory itself changed at dir_time. */
static void make_attempt(const struct tree *t, const char *name, time_t note_time, time_t dir_time)
{
    char dir[256], file[320];
    path_of(dir, sizeof(dir), t->attempts, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    static const char *const files[] = {CS_ATTEMPT_PID_FILE, CS_ATTEMPT_STDOUT_FILE,
                                        CS_ATTEMPT_STDERR_FILE};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        path_of(file, sizeof(file), dir, files[i]);
        write_file(file);
    }
    if (note_time != 0) {
        path_of(file, sizeof(file), dir, CS_NOTE_FILE);
        write_file(file);
        touch_at(file, note_time);
    }
    touch_at(dir, dir_time);
}

static bool exists(const struct tree *t, const char *name)
{
    char path[256];
    struct stat st;
    path_of(path, sizeof(path), t->attempts, name);
    return lstat(path, &st) == 0;
}

static int setup_tree(void **state)
{
    struct tree *t = calloc(1, sizeof(*t));
    char outside[128];
    assert_non_null(t);
    (void)snprintf(t->root, sizeof(t->root), "/tmp/cs-retention-XXXXXX");
    assert_non_null(mkdtemp(t->root));
    path_of(t->attempts, sizeof(t->attempts), t->root, "attempts");
    assert_int_equal(mkdir(t->attempts, 0700), 0);
    path_of(outside, sizeof(outside), t->root, "outside");
    assert_int_equal(mkdir(outside, 0700), 0);
    t->now = time(NULL);
    *state = t;
    return 0;
}

static int teardown_tree(void **state)
{
    struct tree *t = *state;
    char cmd[128];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
    free(t);
    return 0;
}

static void test_retention_removes_only_expired_attempts(void **state)
{
    struct tree *t = *state;
    time_t old = t->now - 40 * DAY, young = t->now - 1 * DAY, cutoff = t->now - 30 * DAY;
    char path[256], outside_file[256], link[320];

    make_attempt(t, "5-1", old, old);     /* ended long ago: goes */
    make_attempt(t, "7-2", 0, old);       /* no note (lost), untouched long: goes */
    make_attempt(t, "6-1", old, old);     /* its run is still active: stays */
    make_attempt(t, "8-1", young, young); /* ended recently: stays */
    make_attempt(t, "9-1", young, old);   /* the note decides, not the directory: stays */
    static const char *const not_attempts[] = {"notes", "12", "0-1", "01-1", "3-0", "3-1x", "-3-1"};
    for (size_t i = 0; i < sizeof(not_attempts) / sizeof(not_attempts[0]); i++)
        make_attempt(t, not_attempts[i], old, old);
    /* A regular file and a link with attempt names are not directories. */
    path_of(path, sizeof(path), t->attempts, "10-1");
    write_file(path);
    touch_at(path, old);
    path_of(path, sizeof(path), t->root, "outside");
    path_of(link, sizeof(link), t->attempts, "11-1");
    assert_int_equal(symlink(path, link), 0);
    /* A command (working in its attempt directory by default) left a link
     * to a file elsewhere and a directory of its own. */
    path_of(outside_file, sizeof(outside_file), path, "keep");
    write_file(outside_file);
    path_of(link, sizeof(link), t->attempts, "5-1/elsewhere");
    assert_int_equal(symlink(outside_file, link), 0);
    path_of(path, sizeof(path), t->attempts, "5-1/work");
    assert_int_equal(mkdir(path, 0700), 0);
    path_of(path, sizeof(path), t->attempts, "5-1/work/data");
    write_file(path);
    path_of(path, sizeof(path), t->attempts, "5-1");
    touch_at(path, old);

    int64_t active[] = {100, 6, 2};
    cs_retention_sort_ids(active, 3);
    struct cs_sweep_result res = cs_retention_sweep(t->attempts, active, 3, cutoff, 100);
    assert_int_equal(res.removed, 2);
    assert_int_equal(res.failed, 0);
    assert_int_equal(res.first_error, 0);
    assert_false(res.more);
    assert_false(exists(t, "5-1"));
    assert_false(exists(t, "7-2"));
    assert_true(exists(t, "6-1"));
    assert_true(exists(t, "8-1"));
    assert_true(exists(t, "9-1"));
    assert_true(exists(t, "10-1"));
    assert_true(exists(t, "11-1"));
    for (size_t i = 0; i < sizeof(not_attempts) / sizeof(not_attempts[0]); i++)
        assert_true(exists(t, not_attempts[i]));
    assert_int_equal(access(outside_file, F_OK), 0);

    /* Nothing more to do: a second sweep removes nothing. */
    res = cs_retention_sweep(t->attempts, active, 3, cutoff, 100);
    assert_int_equal(res.removed, 0);
    assert_false(res.more);
}

/* An empty directory changed at dir_time: a copy made ahead of a start. */
static void make_ahead(const struct tree *t, const char *name, time_t dir_time)
{
    char dir[256];
    path_of(dir, sizeof(dir), t->attempts, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    touch_at(dir, dir_time);
}

/* A copy made ahead that a crash left behind goes with its run's
 * directories: once the run is not active and the copy is old enough. */
static void test_retention_removes_ahead_copies(void **state)
{
    struct tree *t = *state;
    time_t old = t->now - 40 * DAY, young = t->now - 1 * DAY, cutoff = t->now - 30 * DAY;

    make_ahead(t, "5-1" CS_AHEAD_DIR_SUFFIX, old);   /* its run ended: goes */
    make_ahead(t, "6-2" CS_AHEAD_DIR_SUFFIX, old);   /* its run is active: stays */
    make_ahead(t, "8-1" CS_AHEAD_DIR_SUFFIX, young); /* made recently: stays */
    static const char *const not_ahead[] = {CS_AHEAD_DIR_SUFFIX, "x" CS_AHEAD_DIR_SUFFIX,
                                            "5-1" CS_AHEAD_DIR_SUFFIX "x",
                                            "5-1" CS_AHEAD_DIR_SUFFIX CS_AHEAD_DIR_SUFFIX};
    for (size_t i = 0; i < sizeof(not_ahead) / sizeof(not_ahead[0]); i++)
        make_ahead(t, not_ahead[i], old);

    int64_t active[] = {6};
    struct cs_sweep_result res = cs_retention_sweep(t->attempts, active, 1, cutoff, 100);
    assert_int_equal(res.removed, 1);
    assert_int_equal(res.failed, 0);
    assert_false(exists(t, "5-1" CS_AHEAD_DIR_SUFFIX));
    assert_true(exists(t, "6-2" CS_AHEAD_DIR_SUFFIX));
    assert_true(exists(t, "8-1" CS_AHEAD_DIR_SUFFIX));
    for (size_t i = 0; i < sizeof(not_ahead) / sizeof(not_ahead[0]); i++)
        assert_true(exists(t, not_ahead[i]));
}

static void test_retention_sweep_is_bounded(void **state)
{
    struct tree *t = *state;
    time_t old = t->now - 40 * DAY, cutoff = t->now - 30 * DAY;
    char name[32];
    for (int i = 1; i <= 5; i++) {
        (void)snprintf(name, sizeof(name), "%d-1", i);
        make_attempt(t, name, old, old);
    }
    size_t removed[3];
    bool more[3];
    for (int i = 0; i < 3; i++) {
        struct cs_sweep_result res = cs_retention_sweep(t->attempts, NULL, 0, cutoff, 2);
        removed[i] = res.removed;
        more[i] = res.more;
    }
    assert_int_equal(removed[0], 2);
    assert_true(more[0]);
    assert_int_equal(removed[1], 2);
    assert_true(more[1]);
    assert_int_equal(removed[2], 1);
    assert_false(more[2]);
    for (int i = 1; i <= 5; i++) {
        (void)snprintf(name, sizeof(name), "%d-1", i);
        assert_false(exists(t, name));
    }
}

/* Sets or clears the immutable flag of path; false where unsupported. */
static bool set_immutable(const char *path, bool on)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    int flags = 0;
    bool ok = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
    ok = ok && ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    (void)close(fd);
    return ok;
}

/* A directory that cannot be removed is reported and does not hold up the
 * others, even when the bound is smaller than the failures. */
static void test_retention_failure_does_not_block(void **state)
{
    struct tree *t = *state;
    time_t old = t->now - 40 * DAY, cutoff = t->now - 30 * DAY;
    char stuck[256];

    make_attempt(t, "1-1", old, old);
    make_attempt(t, "2-1", old, old);
    make_attempt(t, "3-1", old, old);
    path_of(stuck, sizeof(stuck), t->attempts, "1-1/" CS_ATTEMPT_STDOUT_FILE);
    if (!set_immutable(stuck, true)) {
        print_message("skipped: an immutable file needs root and a file system with the flag\n");
        skip();
    }
    path_of(stuck, sizeof(stuck), t->attempts, "1-1");
    touch_at(stuck, old);

    /* Sweeps of one removal each, as cschedd repeats them while more is
     * set; whatever order readdir gives, the stuck one never stops them. */
    size_t removed = 0, failed = 0, sweeps = 0;
    int error = 0;
    struct cs_sweep_result res;
    do {
        res = cs_retention_sweep(t->attempts, NULL, 0, cutoff, 1);
        removed += res.removed;
        failed += res.failed;
        error = res.first_error != 0 ? res.first_error : error;
    } while (res.more && ++sweeps < 4);
    path_of(stuck, sizeof(stuck), t->attempts, "1-1/" CS_ATTEMPT_STDOUT_FILE);
    assert_true(set_immutable(stuck, false));

    assert_false(res.more);
    assert_int_equal(removed, 2);
    assert_true(failed >= 1);
    assert_int_equal(error, -EPERM);
    assert_true(exists(t, "1-1"));
    assert_false(exists(t, "2-1"));
    assert_false(exists(t, "3-1"));
}

static void test_retention_missing_directory(void **state)
{
    struct tree *t = *state;
    char missing[160];
    path_of(missing, sizeof(missing), t->root, "no-such-dir");
    struct cs_sweep_result res = cs_retention_sweep(missing, NULL, 0, t->now, 10);
    assert_int_equal(res.first_error, -ENOENT);
    assert_int_equal(res.removed, 0);
}

/* The directories of the hook deliveries deleted go, each attempt's; a
 * delivery kept, a name that is not a delivery's and a missing directory
 * are left alone. The tree's attempts/ stands in for STATE_DIR/hooks. */
static void test_retention_removes_hook_dirs(void **state)
{
    struct tree *t = *state;
    static const char *const names[] = {"5-1-1700000000000",
                                        "5-2-1700000001000",
                                        "6-1-1700000002000",
                                        "50-1-1700000003000",
                                        "7",
                                        "x-1-1"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        make_attempt(t, names[i], t->now, t->now);
    const int64_t gone[] = {5, 7};
    struct cs_sweep_result res = cs_retention_remove_hook_dirs(t->attempts, gone, 2);
    assert_int_equal(res.removed, 2);
    assert_int_equal(res.failed, 0);
    assert_false(exists(t, "5-1-1700000000000"));
    assert_false(exists(t, "5-2-1700000001000"));
    assert_true(exists(t, "6-1-1700000002000"));
    assert_true(exists(t, "50-1-1700000003000"));
    assert_true(exists(t, "7"));
    assert_true(exists(t, "x-1-1"));

    char missing[160];
    path_of(missing, sizeof(missing), t->root, "no-such-dir");
    res = cs_retention_remove_hook_dirs(missing, gone, 2);
    assert_int_equal(res.first_error, 0);
    assert_int_equal(res.removed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_retention_removes_only_expired_attempts, setup_tree,
                                        teardown_tree),
        cmocka_unit_test_setup_teardown(test_retention_removes_ahead_copies, setup_tree,
                                        teardown_tree),
        cmocka_unit_test_setup_teardown(test_retention_sweep_is_bounded, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_retention_failure_does_not_block, setup_tree,
                                        teardown_tree),
        cmocka_unit_test_setup_teardown(test_retention_missing_directory, setup_tree,
                                        teardown_tree),
        cmocka_unit_test_setup_teardown(test_retention_removes_hook_dirs, setup_tree,
                                        teardown_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
