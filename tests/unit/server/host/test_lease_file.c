/* Unit tests of lease_file, the deadline cschedd shares with its minders:
 * created 0600 with no deadline, set and read back, seen through a second
 * read-only mapping of the file (as a minder maps it) and by another
 * process; an existing file kept with its deadline (a restarted cschedd);
 * a link refused, as the target stays untouched; a wrong size or a mode
 * others may read fixed, a mode others may write, another owner or not a
 * regular file refused, each with a message saying what to do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lease_file.h"
#include "minder_contract.h"

struct fixture {
    char dir[256];
    char path[320];
    struct cs_lease_file lf;
    struct cs_err err;
};

static int setup(void **state)
{
    const char *tmp = getenv("TMPDIR");
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    (void)snprintf(f->dir, sizeof(f->dir), "%s/cs-lease-file-XXXXXX", tmp != NULL ? tmp : "/tmp");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/" CS_LEASE_FILE, f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[320];

    cs_lease_file_close(&f->lf);
    (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static int open_lease(struct fixture *f)
{
    memset(&f->err, 0, sizeof(f->err));
    return cs_lease_file_open(&f->lf, f->dir, &f->err);
}

/* Writes a file at f->path holding len bytes of value (an int64) and mode. */
static void plant(const struct fixture *f, int64_t value, size_t len, mode_t mode)
{
    char bytes[32] = {0};
    int fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

    assert_true(fd >= 0 && len <= sizeof(bytes));
    memcpy(bytes, &value, sizeof(value));
    assert_int_equal(write(fd, bytes, len), (ssize_t)len);
    assert_int_equal(fchmod(fd, mode), 0);
    assert_int_equal(close(fd), 0);
}

static struct stat stat_of(const char *path)
{
    struct stat st;

    assert_int_equal(stat(path, &st), 0);
    return st;
}

static void assert_says(const struct fixture *f, const char *words)
{
    if (strstr(f->err.msg, words) == NULL)
        fail_msg("\"%s\" does not say \"%s\"", f->err.msg, words);
}

static void test_lease_file_created(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(open_lease(f), 0);
    assert_string_equal(f->lf.path, f->path);
    struct stat st = stat_of(f->path);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_size, CS_LEASE_BYTES);
    assert_int_equal(cs_lease_file_get(&f->lf), 0);
}

/* What a minder maps (read-only, shared) sees every store at once, and so
 * does another process. */
static void test_lease_file_set_seen_through_a_second_mapping(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(open_lease(f), 0);
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    const volatile int64_t *minder_view = mmap(NULL, CS_LEASE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(minder_view != MAP_FAILED);
    assert_int_equal(close(fd), 0);

    for (int64_t deadline = 1; deadline < INT64_MAX / 4; deadline = deadline * 7 + 3) {
        cs_lease_file_set(&f->lf, deadline);
        assert_int_equal(cs_lease_file_get(&f->lf), deadline);
        assert_int_equal(*minder_view, deadline);
    }
    cs_lease_file_set(&f->lf, -5);
    assert_int_equal(*minder_view, -5);

    /* Another process, through its own open of the file. */
    cs_lease_file_set(&f->lf, 123456789);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct cs_lease_file other;
        struct cs_err err = {0};
        if (cs_lease_file_open(&other, f->dir, &err) != 0 || cs_lease_file_get(&other) != 123456789)
            _exit(1);
        cs_lease_file_set(&other, 987654321);
        _exit(0);
    }
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    assert_int_equal(*minder_view, 987654321);
    assert_int_equal(cs_lease_file_get(&f->lf), 987654321);
    assert_int_equal(munmap((void *)minder_view, CS_LEASE_BYTES), 0);
}

/* A restarted cschedd finds the file and keeps the deadline its running
 * minders read; closing leaves the file for it. */
static void test_lease_file_reused(void **state)
{
    struct fixture *f = *state;
    const int64_t deadline = 4242424242424242;

    assert_int_equal(open_lease(f), 0);
    struct stat first = stat_of(f->path);
    cs_lease_file_set(&f->lf, deadline);
    cs_lease_file_close(&f->lf);
    assert_null(f->lf.deadline);
    cs_lease_file_close(&f->lf); /* twice is allowed */

    assert_int_equal(open_lease(f), 0);
    assert_int_equal(cs_lease_file_get(&f->lf), deadline);
    struct stat again = stat_of(f->path);
    assert_int_equal(again.st_ino, first.st_ino);
    assert_int_equal(again.st_size, CS_LEASE_BYTES);
}

/* A link is refused, whether the last part or one on the way, as minders
 * refuse it; what it points at is left as it was, or never made. */
static void test_lease_file_refuses_links(void **state)
{
    struct fixture *f = *state;
    char target[512], real[384], via[384];

    (void)snprintf(target, sizeof(target), "%s/target", f->dir);
    assert_int_equal(symlink(target, f->path), 0);
    assert_int_equal(open_lease(f), -ELOOP);
    assert_null(f->lf.deadline);
    assert_says(f, "is a symbolic link");
    assert_says(f, f->path);
    assert_int_equal(access(target, F_OK), -1); /* a dangling link made nothing */

    int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "12345678", 8), 8);
    assert_int_equal(close(fd), 0);
    assert_int_equal(open_lease(f), -ELOOP);
    assert_int_equal(stat_of(target).st_size, 8);

    /* A state dir reached through a link. */
    assert_int_equal(unlink(f->path), 0);
    (void)snprintf(real, sizeof(real), "%s/real", f->dir);
    assert_int_equal(mkdir(real, 0700), 0);
    (void)snprintf(via, sizeof(via), "%s/via", f->dir);
    assert_int_equal(symlink(real, via), 0);
    memset(&f->err, 0, sizeof(f->err));
    assert_int_equal(cs_lease_file_open(&f->lf, via, &f->err), -ELOOP);
    assert_says(f, "goes through one");
    (void)snprintf(target, sizeof(target), "%s/" CS_LEASE_FILE, real);
    assert_int_equal(access(target, F_OK), -1);
}

/* A size other than 8 bytes is set to 8: a longer file keeps its deadline,
 * a shorter one's means nothing and becomes 0. */
static void test_lease_file_fixes_size(void **state)
{
    struct fixture *f = *state;

    plant(f, 777, 16, 0600);
    assert_int_equal(open_lease(f), 0);
    assert_int_equal(stat_of(f->path).st_size, CS_LEASE_BYTES);
    assert_int_equal(cs_lease_file_get(&f->lf), 777);
    cs_lease_file_close(&f->lf);

    assert_int_equal(unlink(f->path), 0);
    plant(f, -1, 3, 0600);
    assert_int_equal(open_lease(f), 0);
    assert_int_equal(stat_of(f->path).st_size, CS_LEASE_BYTES);
    assert_int_equal(cs_lease_file_get(&f->lf), 0);
}

/* Readable by others: narrowed to 0600. Writable by others: refused, as
 * whoever holds it open could keep minders running past the lease. */
static void test_lease_file_mode(void **state)
{
    struct fixture *f = *state;

    plant(f, 99, 8, 0644);
    assert_int_equal(open_lease(f), 0);
    assert_int_equal(stat_of(f->path).st_mode & 07777, 0600);
    assert_int_equal(cs_lease_file_get(&f->lf), 99);
    cs_lease_file_close(&f->lf);

    assert_int_equal(chmod(f->path, 0620), 0);
    assert_int_equal(open_lease(f), -EPERM);
    assert_null(f->lf.deadline);
    assert_says(f, "may be written by others (mode 620)");
    assert_says(f, "remove it");
    assert_int_equal(stat_of(f->path).st_mode & 07777, 0620);

    assert_int_equal(chmod(f->path, 0602), 0);
    assert_int_equal(open_lease(f), -EPERM);
}

/* Not a regular file, or not cschedd's: refused. */
static void test_lease_file_refuses_others(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(mkfifo(f->path, 0600), 0);
    assert_int_equal(open_lease(f), -EINVAL);
    assert_says(f, "is not a regular file");
    assert_int_equal(unlink(f->path), 0);

    assert_int_equal(mkdir(f->path, 0700), 0);
    assert_int_equal(open_lease(f), -EISDIR);
    assert_says(f, f->path);
    assert_int_equal(rmdir(f->path), 0);

    if (geteuid() != 0) {
        /* Only root can give a file away: the owner check is root's case. */
        return;
    }
    plant(f, 5, 8, 0600);
    assert_int_equal(chown(f->path, 65534, 65534), 0);
    assert_int_equal(open_lease(f), -EPERM);
    assert_says(f, "belongs to uid 65534, not to cschedd (uid 0)");
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_lease_file_created),
        TEST(test_lease_file_set_seen_through_a_second_mapping),
        TEST(test_lease_file_reused),
        TEST(test_lease_file_refuses_links),
        TEST(test_lease_file_fixes_size),
        TEST(test_lease_file_mode),
        TEST(test_lease_file_refuses_others),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
