/* Unit tests of the state dir's probe (server/dir_check_work.c) on real
 * directories: a writable one passes and keeps nothing behind, a missing one
 * fails at the create, and a full tmpfs (root only: mounting it; skipped
 * otherwise) fails at the write with ENOSPC. A probe out of fds says
 * nothing of the directory. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "dir_check.h"
#include "testfile.h"

static int probe(const char *dir, struct cs_dir_probe *p)
{
    memset(p, 0, sizeof(*p));
    (void)snprintf(p->path, sizeof(p->path), "%s/%s", dir, CS_DIR_CHECK_FILE);
    p->work.data = p;
    cs_dir_check_work(&p->work);
    return p->status;
}

static void test_dir_check_writable_and_missing(void **state)
{
    char dir[] = "/tmp/cs-dircheck-XXXXXX";
    struct cs_dir_probe p;

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(probe(dir, &p), 0);
    assert_int_equal(access(p.path, F_OK), -1); /* removed again */
    assert_int_equal(rmdir(dir), 0);
    assert_int_equal(probe(dir, &p), -ENOENT);
    assert_string_equal(p.step, "create");
    assert_true(cs_dir_probe_conclusive(&p));
}

static void test_dir_check_out_of_fds(void **state)
{
    char dir[] = "/tmp/cs-dircheck-XXXXXX";
    struct cs_dir_probe p;
    struct rlimit was;

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(probe(dir, &p), 0);
    assert_true(cs_dir_probe_conclusive(&p));
    cs_test_no_more_fds(&was);
    assert_int_equal(probe(dir, &p), -EMFILE);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    assert_false(cs_dir_probe_conclusive(&p));
    assert_int_equal(rmdir(dir), 0);
}

static void test_dir_check_full(void **state)
{
    static const char block[4096];
    char dir[] = "/tmp/cs-dircheck-XXXXXX", filler[64];
    struct cs_dir_probe p;
    int fd;

    (void)state;
    if (geteuid() != 0)
        skip(); /* mounting a small tmpfs needs root */
    assert_non_null(mkdtemp(dir));
    assert_int_equal(mount("tmpfs", dir, "tmpfs", 0, "size=64k"), 0);
    (void)snprintf(filler, sizeof(filler), "%s/filler", dir);
    fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    while (write(fd, block, sizeof(block)) > 0)
        ;
    (void)close(fd);
    assert_int_equal(probe(dir, &p), -ENOSPC);
    assert_string_equal(p.step, "write");
    assert_int_equal(access(p.path, F_OK), -1);
    assert_int_equal(umount2(dir, MNT_DETACH), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dir_check_writable_and_missing),
        cmocka_unit_test(test_dir_check_full),
        cmocka_unit_test(test_dir_check_out_of_fds),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
