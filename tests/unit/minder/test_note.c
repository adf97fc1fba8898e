/* Unit tests of the status note: format/parse round trips, every class of
 * malformed input, message escaping, and the atomic write and read through a
 * temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "note.h"

static struct cs_note sample(void)
{
    struct cs_note note;

    memset(&note, 0, sizeof(note));
    note.outcome = CS_NOTE_TIMED_OUT;
    note.exit_code = 143;
    note.term_signal = 15;
    note.started_unix_ms = 1796033419268;
    note.ended_unix_ms = 1796033419744;
    note.user_cpu_ms = 16;
    note.system_cpu_ms = 3;
    note.max_rss_kb = 1776;
    note.stdout_truncated = true;
    note.stderr_truncated = false;
    note.leftover_processes = 2;
    note.stdout_written_bytes = 209715200;
    note.stdout_kept_bytes = 16777216;
    note.stderr_written_bytes = 12;
    note.stderr_kept_bytes = 12;
    note.peak_memory_bytes = 33554432;
    note.limit_hit = CS_LIMIT_HIT_MEMORY;
    note.unenforced_limits = CS_LIMIT_PIDS | CS_LIMIT_CPU_MILLIS;
    snprintf(note.message, sizeof(note.message), "timed out after 200 ms");
    return note;
}

static void assert_note_equal(const struct cs_note *a, const struct cs_note *b)
{
    assert_int_equal(a->outcome, b->outcome);
    assert_int_equal(a->exit_code, b->exit_code);
    assert_int_equal(a->term_signal, b->term_signal);
    assert_int_equal(a->started_unix_ms, b->started_unix_ms);
    assert_int_equal(a->ended_unix_ms, b->ended_unix_ms);
    assert_int_equal(a->user_cpu_ms, b->user_cpu_ms);
    assert_int_equal(a->system_cpu_ms, b->system_cpu_ms);
    assert_int_equal(a->max_rss_kb, b->max_rss_kb);
    assert_int_equal(a->stdout_truncated, b->stdout_truncated);
    assert_int_equal(a->stderr_truncated, b->stderr_truncated);
    assert_int_equal(a->leftover_processes, b->leftover_processes);
    assert_int_equal(a->stdout_written_bytes, b->stdout_written_bytes);
    assert_int_equal(a->stdout_kept_bytes, b->stdout_kept_bytes);
    assert_int_equal(a->stderr_written_bytes, b->stderr_written_bytes);
    assert_int_equal(a->stderr_kept_bytes, b->stderr_kept_bytes);
    assert_int_equal(a->peak_memory_bytes, b->peak_memory_bytes);
    assert_int_equal(a->limit_hit, b->limit_hit);
    assert_int_equal(a->unenforced_limits, b->unenforced_limits);
    assert_string_equal(a->message, b->message);
}

static void round_trip(const struct cs_note *in)
{
    char buf[CS_NOTE_MAX_BYTES];
    struct cs_note out;
    int len = cs_note_format(in, buf, sizeof(buf));

    assert_true(len > 0);
    assert_int_equal(cs_note_parse(buf, (size_t)len, &out), 0);
    assert_note_equal(in, &out);
}

static int count_lines(const char *s, size_t len)
{
    int n = 0;

    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    return n;
}

/* Formats the sample note, then replaces the line starting with "key=" by
 * line (NULL removes it); returns the new length. */
static size_t sample_with(const char *key, const char *line, char *out, size_t cap)
{
    struct cs_note note = sample();
    char buf[CS_NOTE_MAX_BYTES];
    int len = cs_note_format(&note, buf, sizeof(buf));
    size_t klen = strlen(key), n = 0, pos = 0;

    assert_true(len > 0);
    while (pos < (size_t)len) {
        const char *start = buf + pos;
        const char *nl = memchr(start, '\n', (size_t)len - pos);
        size_t llen = (size_t)(nl - start) + 1;
        const char *copy = start;
        size_t clen = llen;

        assert_non_null(nl);
        if (llen > klen && memcmp(start, key, klen) == 0 && start[klen] == '=') {
            copy = line;
            clen = line == NULL ? 0 : strlen(line);
        }
        assert_true(n + clen < cap);
        if (clen > 0)
            memcpy(out + n, copy, clen);
        n += clen;
        pos += llen;
    }
    return n;
}

static void assert_rejected(const char *key, const char *line)
{
    char buf[CS_NOTE_MAX_BYTES * 2];
    struct cs_note out;
    size_t len = sample_with(key, line, buf, sizeof(buf));

    if (cs_note_parse(buf, len, &out) != -EINVAL)
        fail_msg("accepted %s line \"%s\"", key, line == NULL ? "(removed)" : line);
}

static void test_note_round_trip(void **state)
{
    struct cs_note note = sample();

    round_trip(&note);
    for (int o = CS_NOTE_EXITED; o <= CS_NOTE_FENCED; o++) {
        note.outcome = (enum cs_note_outcome)o;
        round_trip(&note);
    }
    /* The outcome of a minder that fenced its command (-L). */
    assert_string_equal(cs_note_outcome_name(CS_NOTE_FENCED), "fenced");
    memset(&note, 0, sizeof(note));
    note.outcome = CS_NOTE_EXITED;
    round_trip(&note);
    note.started_unix_ms = INT64_MIN;
    note.ended_unix_ms = INT64_MAX;
    note.exit_code = 255;
    note.term_signal = 127;
    note.stderr_truncated = true;
    round_trip(&note);
}

static void test_note_format_shape(void **state)
{
    struct cs_note note = sample();
    char buf[CS_NOTE_MAX_BYTES];
    int len = cs_note_format(&note, buf, sizeof(buf));

    assert_true(len > 0);
    assert_int_equal(strlen(buf), len);
    assert_memory_equal(buf, "csched-note 1\noutcome=timed_out\n", 32);
    assert_string_equal(buf + len - 4, "end\n");
    assert_non_null(strstr(buf, "\nmessage=timed out after 200 ms\n"));
}

static void test_note_format_errors(void **state)
{
    struct cs_note note = sample();
    char buf[CS_NOTE_MAX_BYTES];
    int len = cs_note_format(&note, buf, sizeof(buf));

    assert_true(len > 0);
    assert_int_equal(cs_note_format(&note, buf, (size_t)len), -ENOSPC);
    assert_int_equal(cs_note_format(&note, buf, 0), -ENOSPC);
    assert_int_equal(cs_note_format(&note, buf, (size_t)len + 1), len);
    note.outcome = 0;
    assert_int_equal(cs_note_format(&note, buf, sizeof(buf)), -EINVAL);
    note.outcome = CS_NOTE_FENCED + 1;
    assert_int_equal(cs_note_format(&note, buf, sizeof(buf)), -EINVAL);
}

static void test_note_message_escaped(void **state)
{
    static const char *const messages[] = {
        "line one\nline two\n",
        "back\\slash \\n not a newline",
        "tab\tcr\rbell\a del\x7f esc\x1b",
        "key=value\nend\ncsched-note 1\n",
        "caf\xc3\xa9 \xe2\x9c\x93 and a stray \xff byte",
        "",
    };
    struct cs_note note = sample();
    char buf[CS_NOTE_MAX_BYTES];

    for (size_t i = 0; i < sizeof(messages) / sizeof(messages[0]); i++) {
        int len;

        snprintf(note.message, sizeof(note.message), "%s", messages[i]);
        len = cs_note_format(&note, buf, sizeof(buf));
        assert_true(len > 0);
        /* The message never adds a line, whatever it holds. */
        assert_int_equal(count_lines(buf, (size_t)len), 21);
        round_trip(&note);
    }

    /* The worst case, every byte escaped four-fold, still fits. */
    memset(note.message, '\x01', sizeof(note.message) - 1);
    note.message[sizeof(note.message) - 1] = '\0';
    round_trip(&note);
    memset(note.message, '\n', sizeof(note.message) - 1);
    round_trip(&note);
}

static void test_note_message_unterminated(void **state)
{
    struct cs_note note = sample(), out;
    char buf[CS_NOTE_MAX_BYTES];
    int len;

    /* A message filling the whole array is cut to 255 bytes, not overrun. */
    memset(note.message, 'x', sizeof(note.message));
    len = cs_note_format(&note, buf, sizeof(buf));
    assert_true(len > 0);
    assert_int_equal(cs_note_parse(buf, (size_t)len, &out), 0);
    assert_int_equal(strlen(out.message), sizeof(out.message) - 1);
}

static void test_note_parse_truncated(void **state)
{
    struct cs_note note = sample(), out;
    char buf[CS_NOTE_MAX_BYTES];
    int len = cs_note_format(&note, buf, sizeof(buf));

    assert_true(len > 0);
    for (int cut = 0; cut < len; cut++)
        if (cs_note_parse(buf, (size_t)cut, &out) != -EINVAL)
            fail_msg("accepted the note cut to %d of %d bytes", cut, len);
}

static void test_note_parse_missing_keys(void **state)
{
    static const char *const keys[] = {
        "outcome",          "exit_code",        "term_signal",   "started_unix_ms",
        "ended_unix_ms",    "user_cpu_ms",      "system_cpu_ms", "max_rss_kb",
        "stdout_truncated", "stderr_truncated", "message",
    };

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        assert_rejected(keys[i], NULL);
}

/* A note from a minder older than leftover_processes has no such line: it
 * is still a note, with nothing left behind. */
static void test_note_parse_without_leftovers(void **state)
{
    struct cs_note out;
    char buf[CS_NOTE_MAX_BYTES];
    size_t len = sample_with("leftover_processes", NULL, buf, sizeof(buf));

    assert_int_equal(cs_note_parse(buf, len, &out), 0);
    assert_int_equal(out.leftover_processes, 0);
    assert_int_equal(out.exit_code, 143);
    len = sample_with("leftover_processes", "leftover_processes=7\n", buf, sizeof(buf));
    assert_int_equal(cs_note_parse(buf, len, &out), 0);
    assert_int_equal(out.leftover_processes, 7);
}

/* A note from a minder older than the streams' byte counts says only
 * whether each log was cut: still a note, with the counts 0 (unknown). */
static void test_note_parse_without_byte_counts(void **state)
{
    static const char *const keys[] = {"stdout_written_bytes", "stdout_kept_bytes",
                                       "stderr_written_bytes", "stderr_kept_bytes"};
    struct cs_note note = sample(), out;
    char buf[CS_NOTE_MAX_BYTES];
    int len = cs_note_format(&note, buf, sizeof(buf));

    assert_true(len > 0);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char *line = strstr(buf, keys[i]);
        char *end = strchr(line, '\n') + 1;

        memmove(line, end, (size_t)(buf + len - end) + 1);
        len -= (int)(end - line);
    }
    assert_int_equal(cs_note_parse(buf, (size_t)len, &out), 0);
    assert_true(out.stdout_truncated);
    assert_int_equal(out.stdout_written_bytes, 0);
    assert_int_equal(out.stdout_kept_bytes, 0);
    assert_int_equal(out.stderr_written_bytes, 0);
    assert_int_equal(out.stderr_kept_bytes, 0);
    assert_int_equal(out.exit_code, 143);
    assert_rejected("stdout_written_bytes", "stdout_written_bytes=-1\n");
    assert_rejected("stderr_kept_bytes", "stderr_kept_bytes=x\n");
}

/* A note from a minder older than the jobs' limits: no limit hit, no
 * peak memory, nothing unenforced. */
static void test_note_parse_without_limits(void **state)
{
    static const char *const keys[] = {"peak_memory_bytes", "limit_hit", "unenforced_limits"};
    struct cs_note note = sample(), out;
    char buf[CS_NOTE_MAX_BYTES];
    int len = cs_note_format(&note, buf, sizeof(buf));

    assert_true(len > 0);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char *line = strstr(buf, keys[i]);
        char *end = strchr(line, '\n') + 1;

        memmove(line, end, (size_t)(buf + len - end) + 1);
        len -= (int)(end - line);
    }
    assert_int_equal(cs_note_parse(buf, (size_t)len, &out), 0);
    assert_int_equal(out.peak_memory_bytes, 0);
    assert_int_equal(out.limit_hit, CS_LIMIT_HIT_NONE);
    assert_int_equal(out.unenforced_limits, 0);
    assert_rejected("limit_hit", "limit_hit=9\n");
    assert_rejected("peak_memory_bytes", "peak_memory_bytes=-1\n");
}

static void test_note_parse_bad_values(void **state)
{
    assert_rejected("outcome", "outcome=bogus\n");
    assert_rejected("outcome", "outcome=\n");
    assert_rejected("outcome", "outcome=exited \n");
    assert_rejected("exit_code", "exit_code=abc\n");
    assert_rejected("exit_code", "exit_code=\n");
    assert_rejected("exit_code", "exit_code=256\n");
    assert_rejected("exit_code", "exit_code=-1\n");
    assert_rejected("exit_code", "exit_code= 1\n");
    assert_rejected("exit_code", "exit_code=+1\n");
    assert_rejected("exit_code", "exit_code=1x\n");
    assert_rejected("exit_code", "exit_code=-\n");
    assert_rejected("term_signal", "term_signal=128\n");
    assert_rejected("started_unix_ms", "started_unix_ms=9223372036854775808\n");
    assert_rejected("started_unix_ms", "started_unix_ms=-9223372036854775809\n");
    assert_rejected("started_unix_ms", "started_unix_ms=99999999999999999999999\n");
    assert_rejected("user_cpu_ms", "user_cpu_ms=-5\n");
    assert_rejected("stdout_truncated", "stdout_truncated=2\n");
    assert_rejected("stdout_truncated", "stdout_truncated=true\n");
    assert_rejected("leftover_processes", "leftover_processes=-1\n");
    assert_rejected("leftover_processes", "leftover_processes=2147483648\n");
    assert_rejected("leftover_processes", "leftover_processes=many\n");
    assert_rejected("leftover_processes", "leftover_processes=1\nleftover_processes=2\n");
    assert_rejected("message", "message=bad \\q escape\n");
    assert_rejected("message", "message=trailing backslash\\\n");
    assert_rejected("message", "message=short \\x0\n");
    assert_rejected("message", "message=nul \\x00 byte\n");
    assert_rejected("message", "message=upper \\x0A hex\n");
    assert_rejected("message", "message=raw \r return\n");
}

static void test_note_parse_garbage(void **state)
{
    static const char valid_tail[] = "end\n";
    struct cs_note out;
    char buf[CS_NOTE_MAX_BYTES * 2];
    size_t len;

    assert_int_equal(cs_note_parse("", 0, &out), -EINVAL);
    assert_int_equal(cs_note_parse("\n", 1, &out), -EINVAL);
    assert_int_equal(cs_note_parse("hello\n", 6, &out), -EINVAL);

    assert_rejected("outcome", "outcome=exited\nnot a key value line\n");
    assert_rejected("outcome", "outcome=exited\n\n");
    assert_rejected("outcome", "outcome=exited\nExit_Code=1\n");
    assert_rejected("outcome", "outcome=exited\n=1\n");
    assert_rejected("outcome", "outcome=exited\nexit code=1\n");
    assert_rejected("exit_code", "exit_code=1\nexit_code=2\n");
    assert_rejected("message", "message=a\nmessage=b\n");

    /* No magic line. */
    len = sample_with("outcome", "outcome=exited\n", buf, sizeof(buf));
    assert_int_equal(cs_note_parse(buf + 14, len - 14, &out), -EINVAL);

    /* Wrong version or magic. */
    len = sample_with("outcome", "outcome=exited\n", buf, sizeof(buf));
    memcpy(buf, "csched-note 2", 13);
    assert_int_equal(cs_note_parse(buf, len, &out), -EINVAL);
    memcpy(buf, "CSCHED-NOTE 1", 13);
    assert_int_equal(cs_note_parse(buf, len, &out), -EINVAL);

    /* A NUL byte anywhere. */
    len = sample_with("outcome", "outcome=exited\n", buf, sizeof(buf));
    buf[20] = '\0';
    assert_int_equal(cs_note_parse(buf, len, &out), -EINVAL);

    /* Anything after the end line. */
    len = sample_with("outcome", "outcome=exited\n", buf, sizeof(buf));
    assert_int_equal(cs_note_parse(buf, len, &out), 0);
    memcpy(buf + len, valid_tail, sizeof(valid_tail) - 1);
    assert_int_equal(cs_note_parse(buf, len + sizeof(valid_tail) - 1, &out), -EINVAL);
    memcpy(buf + len, "x", 1);
    assert_int_equal(cs_note_parse(buf, len + 1, &out), -EINVAL);

    /* No end line at all. */
    len = sample_with("outcome", "outcome=exited\n", buf, sizeof(buf));
    assert_int_equal(cs_note_parse(buf, len - 4, &out), -EINVAL);
}

static void test_note_parse_ignores_unknown_keys(void **state)
{
    struct cs_note expected = sample(), out;
    char buf[CS_NOTE_MAX_BYTES * 2];
    size_t len;

    len = sample_with("message", "message=timed out after 200 ms\nfuture_key=any = thing\\q\n", buf,
                      sizeof(buf));
    assert_int_equal(cs_note_parse(buf, len, &out), 0);
    assert_note_equal(&expected, &out);

    len = sample_with("outcome", "future_first=1\noutcome=timed_out\nx9=\n", buf, sizeof(buf));
    assert_int_equal(cs_note_parse(buf, len, &out), 0);
    assert_note_equal(&expected, &out);
}

/* A temporary directory, removed with its files by teardown. */
static char tmpdir[64];

static int make_tmpdir(void **state)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_note.XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static void path_of(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
}

static int remove_tmpdir(void **state)
{
    static const char *const names[] = {CS_NOTE_FILE, "status.tmp"};
    char path[128];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        path_of(names[i], path, sizeof(path));
        (void)unlink(path); /* may not exist */
    }
    return rmdir(tmpdir);
}

static void write_file(const char *name, const char *data, size_t len)
{
    char path[128];
    FILE *f;

    path_of(name, path, sizeof(path));
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_note_write_read(void **state)
{
    struct cs_note note = sample(), out;
    char path[128];

    assert_int_equal(cs_note_read(tmpdir, &out), -ENOENT);
    assert_int_equal(cs_note_write(tmpdir, &note), 0);
    assert_int_equal(cs_note_read(tmpdir, &out), 0);
    assert_note_equal(&note, &out);

    path_of("status.tmp", path, sizeof(path));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(errno, ENOENT);

    /* A second write replaces the first whole. */
    note.outcome = CS_NOTE_EXITED;
    note.message[0] = '\0';
    assert_int_equal(cs_note_write(tmpdir, &note), 0);
    assert_int_equal(cs_note_read(tmpdir, &out), 0);
    assert_note_equal(&note, &out);
    assert_int_equal(access(path, F_OK), -1);
}

static void test_note_write_read_errors(void **state)
{
    struct cs_note note = sample(), out;
    char big[CS_NOTE_MAX_BYTES + 100];
    char buf[CS_NOTE_MAX_BYTES];
    int len;

    assert_int_equal(cs_note_write("/nonexistent/dir", &note), -ENOENT);
    assert_int_equal(cs_note_read("/nonexistent/dir", &out), -ENOENT);
    note.outcome = 0;
    assert_int_equal(cs_note_write(tmpdir, &note), -EINVAL);

    write_file(CS_NOTE_FILE, "csched-note 1\noutcome=exi", 25);
    assert_int_equal(cs_note_read(tmpdir, &out), -EINVAL);
    write_file(CS_NOTE_FILE, "", 0);
    assert_int_equal(cs_note_read(tmpdir, &out), -EINVAL);

    /* Longer than any note could be: refused without parsing. */
    note = sample();
    len = cs_note_format(&note, buf, sizeof(buf));
    assert_true(len > 0);
    memset(big, 'x', sizeof(big));
    memcpy(big, buf, (size_t)len);
    write_file(CS_NOTE_FILE, big, sizeof(big));
    assert_int_equal(cs_note_read(tmpdir, &out), -EINVAL);
}

/* The reserve makes the temp file with room for any note; the write goes
 * into it and cuts it to the note's length. */
static void test_note_reserve_then_write(void **state)
{
    struct cs_note note = sample(), out;
    struct stat st;
    char path[128];

    assert_int_equal(cs_note_reserve(tmpdir), 0);
    path_of("status.tmp", path, sizeof(path));
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size >= CS_NOTE_MAX_BYTES);
    assert_int_equal(cs_note_write(tmpdir, &note), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(cs_note_read(tmpdir, &out), 0);
    assert_note_equal(&note, &out);
    assert_int_equal(cs_note_reserve("/nonexistent/dir"), -ENOENT);
}

/* A link planted where the temp file goes, or in place of the attempt's
 * directory, is not followed: the minder writes there as root. */
static void test_note_links_not_followed(void **state)
{
    struct cs_note note = sample();
    char tmp[128], victim[128], dir_link[128];
    struct stat st;

    snprintf(victim, sizeof(victim), "%s.victim", tmpdir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
    path_of("status.tmp", tmp, sizeof(tmp));
    assert_int_equal(symlink(victim, tmp), 0);
    assert_int_equal(cs_note_reserve(tmpdir), -ELOOP);
    assert_int_equal(cs_note_write(tmpdir, &note), -ELOOP);
    assert_int_equal(stat(victim, &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(unlink(tmp), 0);

    /* A link as the directory itself, or as any part of its path. */
    char sub[160];
    snprintf(dir_link, sizeof(dir_link), "%s.link", tmpdir);
    assert_int_equal(symlink(tmpdir, dir_link), 0);
    assert_int_equal(cs_note_reserve(dir_link), -ELOOP);
    assert_int_equal(cs_note_write(dir_link, &note), -ELOOP);
    path_of("sub", sub, sizeof(sub));
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof(sub), "%s/sub", dir_link);
    assert_int_equal(cs_note_reserve(sub), -ELOOP);
    assert_int_equal(cs_note_write(sub, &note), -ELOOP);
    path_of("sub", sub, sizeof(sub));
    assert_int_equal(rmdir(sub), 0);
    assert_int_equal(unlink(dir_link), 0);
    assert_int_equal(unlink(victim), 0);
}

/* On a file system that fills up after the reserve, the note is still
 * written; once it is full, a reserve fails with -ENOSPC and leaves no temp
 * file. Root only (the tmpfs mount); skipped otherwise. */
static void test_note_reserve_full_disk(void **state)
{
    static const char block[4096];
    struct cs_note note = sample(), out;
    char path[128];
    int fd;

    if (geteuid() != 0)
        skip();
    assert_int_equal(mount("tmpfs", tmpdir, "tmpfs", 0, "size=64k"), 0);
    assert_int_equal(cs_note_reserve(tmpdir), 0);
    path_of("filler", path, sizeof(path));
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    while (write(fd, block, sizeof(block)) > 0)
        ;
    (void)close(fd);
    assert_int_equal(cs_note_write(tmpdir, &note), 0);
    assert_int_equal(cs_note_read(tmpdir, &out), 0);
    assert_note_equal(&note, &out);
    /* The note's own block is all that is left: fill it, then reserve. */
    path_of(CS_NOTE_FILE, path, sizeof(path));
    assert_int_equal(unlink(path), 0);
    path_of("filler", path, sizeof(path));
    fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    assert_true(fd >= 0);
    while (write(fd, block, sizeof(block)) > 0)
        ;
    (void)close(fd);
    assert_int_equal(cs_note_reserve(tmpdir), -ENOSPC);
    path_of("status.tmp", path, sizeof(path));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(umount2(tmpdir, MNT_DETACH), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_note_round_trip),
        cmocka_unit_test(test_note_format_shape),
        cmocka_unit_test(test_note_format_errors),
        cmocka_unit_test(test_note_message_escaped),
        cmocka_unit_test(test_note_message_unterminated),
        cmocka_unit_test(test_note_parse_truncated),
        cmocka_unit_test(test_note_parse_without_byte_counts),
        cmocka_unit_test(test_note_parse_without_limits),
        cmocka_unit_test(test_note_parse_missing_keys),
        cmocka_unit_test(test_note_parse_without_leftovers),
        cmocka_unit_test(test_note_parse_bad_values),
        cmocka_unit_test(test_note_parse_garbage),
        cmocka_unit_test(test_note_parse_ignores_unknown_keys),
        cmocka_unit_test_setup_teardown(test_note_write_read, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_note_write_read_errors, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_note_reserve_then_write, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_note_links_not_followed, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(test_note_reserve_full_disk, make_tmpdir, remove_tmpdir),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
