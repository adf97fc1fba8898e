/* Unit tests of the tail read of an attempt's log files (attempt_tail_work):
 * the last bytes of a file longer than the tail, the whole of a shorter one,
 * nothing of an empty one, and a missing file, a planted link or a
 * directory refused; and the work item reading both streams of a
 * directory where one is missing. */
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
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "attempt_tail.h"
#include "minder_contract.h"

static char tmpdir[256];

static int make_tmpdir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/test_attempt_tail.XXXXXX",
             base != NULL && base[0] != '\0' ? base : "/tmp");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static void path_of(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
}

static int remove_tmpdir(void **state)
{
    static const char *const names[] = {"long", "short", "empty", "link", "subdir", "stdout"};
    char path[512];
    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        path_of(path, sizeof(path), names[i]);
        if (unlink(path) != 0)
            (void)rmdir(path); /* the directory, or nothing there */
    }
    return rmdir(tmpdir);
}

/* Writes n bytes, byte k being k mod 251 (a period no power of two hides). */
static void write_pattern(const char *name, size_t n)
{
    char path[512];
    path_of(path, sizeof(path), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t k = 0; k < n; k++)
        assert_int_not_equal(fputc((int)(k % 251), f), EOF);
    assert_int_equal(fclose(f), 0);
}

static void assert_pattern(const uint8_t *bytes, size_t len, size_t from)
{
    for (size_t k = 0; k < len; k++)
        if (bytes[k] != (uint8_t)((from + k) % 251))
            fail_msg("byte %zu of the tail is %u, want %u (byte %zu of the file)", k, bytes[k],
                     (unsigned)((from + k) % 251), from + k);
}

static void test_attempt_tail_longer_file_gives_its_last_bytes(void **state)
{
    (void)state;
    size_t size = 3 * CS_ATTEMPT_TAIL_BYTES + 123;
    char path[512];
    uint8_t *bytes;
    size_t len;
    write_pattern("long", size);
    path_of(path, sizeof(path), "long");
    assert_int_equal(cs_attempt_tail_read(path, CS_ATTEMPT_TAIL_BYTES, &bytes, &len), 0);
    assert_int_equal(len, CS_ATTEMPT_TAIL_BYTES);
    assert_pattern(bytes, len, size - CS_ATTEMPT_TAIL_BYTES);
    free(bytes);
}

static void test_attempt_tail_shorter_file_gives_all(void **state)
{
    (void)state;
    char path[512];
    uint8_t *bytes;
    size_t len;
    write_pattern("short", 1000);
    path_of(path, sizeof(path), "short");
    assert_int_equal(cs_attempt_tail_read(path, CS_ATTEMPT_TAIL_BYTES, &bytes, &len), 0);
    assert_int_equal(len, 1000);
    assert_pattern(bytes, len, 0);
    free(bytes);
}

static void test_attempt_tail_empty_file_gives_nothing(void **state)
{
    (void)state;
    char path[512];
    uint8_t *bytes = (uint8_t *)"x";
    size_t len = 1;
    write_pattern("empty", 0);
    path_of(path, sizeof(path), "empty");
    assert_int_equal(cs_attempt_tail_read(path, CS_ATTEMPT_TAIL_BYTES, &bytes, &len), 0);
    assert_null(bytes);
    assert_int_equal(len, 0);
}

static void test_attempt_tail_refuses_missing_link_and_dir(void **state)
{
    (void)state;
    char path[512], target[512];
    uint8_t *bytes;
    size_t len;
    path_of(path, sizeof(path), "missing");
    assert_int_equal(cs_attempt_tail_read(path, CS_ATTEMPT_TAIL_BYTES, &bytes, &len), -ENOENT);
    assert_null(bytes);
    /* A command may replace its log with a link to a file it cannot read:
     * the tail must not follow it. */
    write_pattern("short", 10);
    path_of(target, sizeof(target), "short");
    path_of(path, sizeof(path), "link");
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(cs_attempt_tail_read(path, CS_ATTEMPT_TAIL_BYTES, &bytes, &len), -ELOOP);
    path_of(path, sizeof(path), "subdir");
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(cs_attempt_tail_read(path, CS_ATTEMPT_TAIL_BYTES, &bytes, &len), -EINVAL);
    assert_null(bytes);
}

static void test_attempt_tail_work_reads_both_streams(void **state)
{
    (void)state;
    struct cs_tail_work w;
    memset(&w, 0, sizeof(w));
    w.dir = tmpdir;
    write_pattern(CS_ATTEMPT_STDOUT_FILE, CS_ATTEMPT_TAIL_BYTES + 5);
    cs_attempt_tail_work(&w.work);
    assert_int_equal(w.rc[0], 0);
    assert_int_equal(w.len[0], CS_ATTEMPT_TAIL_BYTES);
    assert_pattern(w.bytes[0], w.len[0], 5);
    /* No stderr file: that stream alone is unread. */
    assert_int_equal(w.rc[1], -ENOENT);
    assert_null(w.bytes[1]);
    free(w.bytes[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attempt_tail_longer_file_gives_its_last_bytes),
        cmocka_unit_test(test_attempt_tail_shorter_file_gives_all),
        cmocka_unit_test(test_attempt_tail_empty_file_gives_nothing),
        cmocka_unit_test(test_attempt_tail_refuses_missing_link_and_dir),
        cmocka_unit_test(test_attempt_tail_work_reads_both_streams),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
