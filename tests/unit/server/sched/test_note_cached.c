/* Unit tests of the note read on the loop thread (note_cached): it reads
 * what the minder's cs_note_write wrote, and refuses, rather than waits,
 * when the note's bytes are not in the page cache or O_NOATIME is not
 * allowed (a note of another owner read by an unprivileged server), so the
 * caller falls back to the blocking read. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "note_cached.h"

static char tmpdir[64];

static int make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_note_cached.XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static void note_path(char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", tmpdir, CS_NOTE_FILE);
}

static int remove_tmpdir(void **state)
{
    char path[128];
    (void)state;
    note_path(path, sizeof(path));
    (void)unlink(path); /* may not exist */
    return rmdir(tmpdir);
}

static struct cs_note sample(void)
{
    struct cs_note note;
    memset(&note, 0, sizeof(note));
    note.outcome = CS_NOTE_EXITED;
    note.exit_code = 3;
    note.started_unix_ms = 1700000000000;
    note.ended_unix_ms = 1700000001234;
    note.user_cpu_ms = 17;
    note.system_cpu_ms = 5;
    note.max_rss_kb = 2048;
    note.leftover_processes = 1;
    snprintf(note.message, sizeof(note.message), "exit status 3");
    return note;
}

static void test_note_cached_reads_what_was_written(void **state)
{
    struct cs_note note = sample(), out;
    (void)state;
    /* A lookup not made before is not in the caches either. */
    assert_int_equal(cs_note_read_cached(tmpdir, &out), -EAGAIN);
    assert_int_equal(cs_note_read(tmpdir, &out), -ENOENT);
    assert_int_equal(cs_note_read_cached(tmpdir, &out), -ENOENT);
    assert_int_equal(cs_note_write(tmpdir, &note), 0);
    assert_int_equal(cs_note_read_cached(tmpdir, &out), 0);
    assert_int_equal(out.outcome, note.outcome);
    assert_int_equal(out.exit_code, note.exit_code);
    assert_int_equal(out.started_unix_ms, note.started_unix_ms);
    assert_int_equal(out.ended_unix_ms, note.ended_unix_ms);
    assert_int_equal(out.user_cpu_ms, note.user_cpu_ms);
    assert_int_equal(out.system_cpu_ms, note.system_cpu_ms);
    assert_int_equal(out.max_rss_kb, note.max_rss_kb);
    assert_int_equal(out.leftover_processes, note.leftover_processes);
    assert_string_equal(out.message, note.message);
}

static void test_note_cached_refuses_malformed(void **state)
{
    char path[128], big[CS_NOTE_MAX_BYTES + 10];
    struct cs_note out;
    (void)state;
    note_path(path, sizeof(path));
    memset(big, 'x', sizeof(big));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(big, 1, sizeof(big), f), sizeof(big));
    assert_int_equal(fclose(f), 0);
    assert_int_equal(cs_note_read_cached(tmpdir, &out), -EINVAL);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs("csched-note 1\ngarbage\n", f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(cs_note_read_cached(tmpdir, &out), -EINVAL);
}

/* A note whose pages were dropped from the page cache would need the disk:
 * refused with -EAGAIN, while the blocking read still reads it. */
static void test_note_cached_refuses_to_wait_for_the_disk(void **state)
{
    struct cs_note note = sample(), out;
    char path[128];
    struct statfs fs;
    (void)state;
    assert_int_equal(statfs(tmpdir, &fs), 0);
    if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC) {
        /* Their pages are the files: there is no disk to wait for. */
        print_message("skipped: %s is in memory, its pages cannot be dropped\n", tmpdir);
        skip();
    }
    assert_int_equal(cs_note_write(tmpdir, &note), 0);
    note_path(path, sizeof(path));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    /* Clean pages (cs_note_write synced them) are dropped, unless the
     * kernel holds one for a moment (writeback of its journal). */
    int rc = 0;
    for (int i = 0; i < 100 && rc != -EAGAIN; i++) {
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        rc = cs_note_read_cached(tmpdir, &out);
        if (rc != -EAGAIN)
            (void)usleep(10 * 1000);
    }
    assert_int_equal(close(fd), 0);
    assert_int_equal(rc, -EAGAIN);
    assert_int_equal(cs_note_read(tmpdir, &out), 0);
    assert_int_equal(out.exit_code, note.exit_code);
    /* The blocking read brought the pages back. */
    assert_int_equal(cs_note_read_cached(tmpdir, &out), 0);
}

/* O_NOATIME is only for the file's owner or CAP_FOWNER: a server running
 * as another user than the minder that wrote the note is refused, and then
 * reads it the blocking way. */
static void test_note_cached_refused_for_another_owner(void **state)
{
    struct cs_note note = sample(), out;
    (void)state;
    if (geteuid() != 0) {
        print_message("skipped: needs root, to read as another user\n");
        skip();
    }
    assert_int_equal(cs_note_write(tmpdir, &note), 0);
    assert_int_equal(chmod(tmpdir, 0755), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(10);
        if (cs_note_read_cached(tmpdir, &out) != -EPERM)
            _exit(11);
        _exit(cs_note_read(tmpdir, &out) == 0 && out.exit_code == note.exit_code ? 0 : 12);
    }
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_note_cached_reads_what_was_written, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_note_cached_refuses_malformed, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_note_cached_refuses_to_wait_for_the_disk, make_tmpdir,
                                        remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_note_cached_refused_for_another_owner, make_tmpdir,
                                        remove_tmpdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
