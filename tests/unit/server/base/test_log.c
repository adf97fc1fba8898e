/* Unit tests of server/log.c: the JSON and text lines, every value escaped
 * (quotes, newlines, control bytes, invalid UTF-8), a line cut short still
 * whole, and journald's level prefix only when JOURNAL_STREAM names stderr.
 * Each test points stderr at a temporary file and reads back what it got.
 * The writer thread (log_writer.h): lines in order, and a stderr that stops
 * taking them stalls no caller. */
#include <errno.h>
#include <pthread.h>
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

#include "log.h"
#include "log_writer.h"

static char got[8192];

static void log_info_lines(void)
{
    cs_log_write(CS_LOG_INFO, "t", "hello");
    cs_log_write(CS_LOG_ERROR, "t", "bad");
}

/* Runs fn with stderr on f, then closes f; got holds what fn wrote. */
static void capture_into(FILE *f, void (*fn)(void))
{
    int saved = dup(STDERR_FILENO);
    assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
    fn();
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    rewind(f);
    size_t n = fread(got, 1, sizeof(got) - 1, f);
    got[n] = '\0';
    fclose(f);
}

/* As capture_into, on a new temporary file. */
static void capture(void (*fn)(void))
{
    FILE *f = tmpfile();
    assert_non_null(f);
    capture_into(f, fn);
}

static void configure_text(void)
{
    cs_log_configure(CS_LOG_TEXT, CS_LOG_RUNS_ALL);
    log_info_lines();
}

/* What follows the timestamp of the one line in got. */
static const char *after_time(const char *marker)
{
    const char *p = strstr(got, marker);
    assert_non_null(p);
    return p;
}

static const char hostile[] = "a\"b\\c\nd\x01\x7f\xff\xc3\xa9 e";

static void log_hostile(void)
{
    struct cs_log_field f[] = {CS_LOG_STR("job", hostile), CS_LOG_INT("run_id", -42),
                               CS_LOG_STR("empty", "")};
    cs_log_write_fields(CS_LOG_WARN, "t\"x", f, 3, "msg %s", hostile);
}

static void test_json_escapes_everything(void **state)
{
    (void)state;
    cs_log_configure(CS_LOG_JSON, CS_LOG_RUNS_ALL);
    capture(log_hostile);
    assert_memory_equal(got, "{\"time\":\"", 9);
    assert_string_equal(after_time("\",\"level\""),
                        "\",\"level\":\"warn\",\"component\":\"t\\\"x\","
                        "\"message\":\"msg a\\\"b\\\\c\\nd\\u0001\\u007f\\ufffd\xc3\xa9 e\","
                        "\"job\":\"a\\\"b\\\\c\\nd\\u0001\\u007f\\ufffd\xc3\xa9 e\","
                        "\"run_id\":-42,\"empty\":\"\"}\n");
}

static void test_text_quotes_and_escapes(void **state)
{
    (void)state;
    unsetenv("JOURNAL_STREAM");
    cs_log_configure(CS_LOG_TEXT, CS_LOG_RUNS_ALL);
    capture(log_hostile);
    assert_int_equal(got[4], '-');
    assert_string_equal(after_time("Z warn"),
                        "Z warn t\"x: msg a\"b\\\\c\\nd\\x01\\x7f\\xff\xc3\xa9 e"
                        " job=\"a\\\"b\\\\c\\nd\\x01\\x7f\\xff\xc3\xa9 e\""
                        " run_id=-42 empty=\"\"\n");
}

static void log_long(void)
{
    static char big[4000];
    memset(big, 'x', sizeof(big) - 2);
    big[100] = '"'; /* an escape early on */
    big[sizeof(big) - 2] = '\0';
    struct cs_log_field f[] = {CS_LOG_STR("a", "short"), CS_LOG_STR("b", big)};
    cs_log_write_fields(CS_LOG_ERROR, "t", f, 2, "%s", big + 3000);
    cs_log_write_fields(CS_LOG_ERROR, "t", f, 2, "%s", "m");
}

/* Cut short, a line is still one line, and a JSON one still closes. */
static void test_long_lines_stay_whole(void **state)
{
    (void)state;
    cs_log_configure(CS_LOG_JSON, CS_LOG_RUNS_ALL);
    capture(log_long);
    char *second = strchr(got, '\n');
    assert_non_null(second);
    *second++ = '\0';
    assert_true(strlen(got) < 2048);
    assert_string_equal(got + strlen(got) - 2, "\"}");
    assert_non_null(strstr(got, "\"message\":\"xxx"));
    assert_true(strlen(second) < 2048);
    assert_string_equal(second + strlen(second) - 3, "\"}\n");
    assert_non_null(strstr(second, "\"a\":\"short\",\"b\":\"xxx"));
    assert_non_null(strstr(second, "x\\\"x"));
    assert_ptr_equal(strchr(second, '\n'), second + strlen(second) - 1);
}

static void test_journal_prefix_only_on_its_stream(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    struct stat st;
    assert_int_equal(fstat(fileno(f), &st), 0);
    char js[64];
    snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    setenv("JOURNAL_STREAM", js, 1);
    capture_into(f, configure_text); /* stderr is the stream JOURNAL_STREAM names */
    assert_memory_equal(got, "<6>", 3);
    assert_non_null(strstr(got, "\n<3>"));

    cs_log_configure(CS_LOG_TEXT, CS_LOG_RUNS_ALL); /* stderr is not that stream */
    capture(log_info_lines);
    assert_int_equal(got[0], '2');
    unsetenv("JOURNAL_STREAM");
}

static void test_parse(void **state)
{
    (void)state;
    enum cs_log_format f = CS_LOG_TEXT;
    assert_int_equal(cs_log_format_parse("json", &f), 0);
    assert_int_equal(f, CS_LOG_JSON);
    assert_int_equal(cs_log_format_parse("JSON", &f), -EINVAL);
    cs_log_configure(CS_LOG_TEXT, CS_LOG_RUNS_NONE);
    assert_false(cs_log_run_change_enabled(true));
    cs_log_configure(CS_LOG_TEXT, CS_LOG_RUNS_END);
    assert_true(cs_log_run_change_enabled(true));
    assert_false(cs_log_run_change_enabled(false));
    cs_log_configure(CS_LOG_TEXT, CS_LOG_RUNS_ALL);
    assert_true(cs_log_run_change_enabled(true));
    assert_true(cs_log_run_change_enabled(false));
    enum cs_log_runs r = CS_LOG_RUNS_ALL;
    assert_int_equal(cs_log_runs_parse("end", &r), 0);
    assert_int_equal(r, CS_LOG_RUNS_END);
    assert_int_equal(cs_log_runs_parse("false", &r), 0);
    assert_int_equal(r, CS_LOG_RUNS_NONE);
    assert_int_equal(cs_log_runs_parse("END", &r), -EINVAL);
}

/* The size of what stderr (a file) holds so far; got holds it. */
static long stderr_now(void)
{
    long len = lseek(STDERR_FILENO, 0, SEEK_END);
    assert_true(len >= 0 && len < (long)sizeof(got));
    assert_int_equal(pread(STDERR_FILENO, got, (size_t)len, 0), len);
    got[len] = '\0';
    return len;
}

static void test_the_writer_keeps_order_and_stops(void **state)
{
    (void)state;
    cs_log_configure(CS_LOG_TEXT, CS_LOG_RUNS_ALL);
    FILE *f = tmpfile();
    assert_non_null(f);
    int saved = dup(STDERR_FILENO);
    assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
    assert_int_equal(cs_log_start(), 0);

    for (int i = 0; i < 50; i++)
        cs_log_write(i % 2 == 0 ? CS_LOG_INFO : CS_LOG_WARN, "t", "line %02d", i);
    cs_log_write(CS_LOG_DEBUG, "t", "not written: above the level");
    cs_log_flush();
    stderr_now();
    const char *at = got;
    for (int i = 0; i < 50; i++) {
        char want[16];
        snprintf(want, sizeof(want), "line %02d\n", i);
        const char *found = strstr(at, want);
        assert_non_null(found);
        at = found;
    }
    assert_null(strstr(got, "not written"));
    assert_int_equal(cs_log_writer_dropped(), 0);

    cs_log_write(CS_LOG_INFO, "t", "last before the stop");
    cs_log_stop();
    assert_non_null(strstr(got + stderr_now() - 60, "last before the stop\n"));
    /* Stopped: a line goes out at once again. */
    long before = stderr_now();
    cs_log_write(CS_LOG_INFO, "t", "after the stop");
    assert_true(stderr_now() > before);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    fclose(f);
}

/* The pipe's reader, once it is back: reads into buf until it holds want. */
struct reader {
    int fd;
    char *buf;
    size_t len, cap;
    const char *want;
    pthread_t thread;
};

static void *read_until(void *arg)
{
    struct reader *r = arg;
    r->buf[r->len] = '\0';
    while (strstr(r->buf, r->want) == NULL) {
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - 1 - r->len);
        if (n <= 0)
            break;
        r->len += (size_t)n;
        r->buf[r->len] = '\0';
    }
    return NULL;
}

/* A stderr nobody reads (a pipe whose reader stalled) fills up: the
 * callers go on, the lines past the buffer are dropped and counted, and
 * once the reader is back it gets every line kept, whole and in order, then
 * the count of those dropped at the place they would have been. */
static void test_a_stalled_stderr_stalls_no_caller(void **state)
{
    (void)state;
    enum { LINES = 1500, CAP = 4 << 20 };
    cs_log_configure(CS_LOG_TEXT, CS_LOG_RUNS_ALL);
    int p[2];
    assert_int_equal(pipe(p), 0);
    int saved = dup(STDERR_FILENO);
    assert_true(dup2(p[1], STDERR_FILENO) >= 0);
    uint64_t dropped_before = cs_log_writer_dropped();
    assert_int_equal(cs_log_start(), 0);

    /* 1.5 MB: more than the pipe and the buffer hold. Were a caller to
     * wait for the pipe, this loop would never end. */
    for (int i = 0; i < LINES; i++)
        cs_log_write(CS_LOG_INFO, "t", "n=%04d %01000d", i, 0);
    uint64_t dropped = cs_log_writer_dropped() - dropped_before;
    assert_true(dropped > 0 && dropped < LINES);

    struct reader r = {.fd = p[0], .buf = malloc(CAP), .cap = CAP, .want = "after the drop\n"};
    assert_non_null(r.buf);
    assert_int_equal(pthread_create(&r.thread, NULL, read_until, &r), 0);
    /* The reader is back: what was kept goes out, and the count. */
    while (!cs_log_writer_flush(1000))
        continue;
    cs_log_write(CS_LOG_INFO, "t", "after the drop");
    assert_int_equal(pthread_join(r.thread, NULL), 0);
    cs_log_stop();
    char *buf = r.buf;
    size_t len = r.len;
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    close(p[1]);
    close(p[0]);

    /* Every line whole and in order, and where lines were dropped a line
     * saying how many: the numbers and the counts add up to every line. */
    uint64_t next = 0, notes = 0;
    const char *line = buf;
    for (const char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        const char *n = strstr(line, "n=");
        const char *note = strstr(line, " warn log: ");
        if (n != NULL && n < nl) {
            assert_int_equal(atoi(n + 2), (int)next);
            assert_int_equal(nl - n, 2 + 4 + 1 + 1000);
            next++;
        } else if (note != NULL && note < nl) {
            next += strtoull(note + strlen(" warn log: "), NULL, 10);
            notes++;
        } else {
            if (strstr(line, "after the drop") == NULL || nl + 1 != buf + len)
                fail_msg("unexpected line at %ld of %zu: %.80s", (long)(line - buf), len, line);
        }
    }
    assert_int_equal(next, LINES);
    assert_true(notes > 0);
    assert_true(len > 0 && buf[len - 1] == '\n');
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_escapes_everything),
        cmocka_unit_test(test_text_quotes_and_escapes),
        cmocka_unit_test(test_long_lines_stay_whole),
        cmocka_unit_test(test_journal_prefix_only_on_its_stream),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_the_writer_keeps_order_and_stops),
        cmocka_unit_test(test_a_stalled_stderr_stalls_no_caller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
