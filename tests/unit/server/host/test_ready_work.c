/* ready_work: the ready file is written whole and renamed into place, and a
 * link planted at a name a temp file could have had (PATH.tmp) is not
 * written through: the file it points at keeps its content. The work
 * function is called directly, as the pool would. And ready (the loop's
 * side), on a real loop: a write out of file descriptors is tried again
 * until it is written. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "ready.h"
#include "ready_work.h"
#include "testfile.h"
#include "util.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_ready.XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void write_ready(const char *path, const char *text)
{
    struct cs_ready_write w = {.path = path};
    snprintf(w.text, sizeof(w.text), "%s", text);
    w.work.data = &w;
    cs_ready_write_work(&w.work);
}

static void test_ready_written_and_no_temp_left(void **state)
{
    (void)state;
    char path[96], buf[64];
    struct stat st;

    snprintf(path, sizeof(path), "%s/ready", dir);
    write_ready(path, "unix:/run/csched/csched.sock");
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, "unix:/run/csched/csched.sock");
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    /* Only the ready file is left in the folder. */
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_planted_links_not_followed(void **state)
{
    (void)state;
    char path[96], planted[104], victim[96], buf[64];
    struct stat st;

    snprintf(victim, sizeof(victim), "%s/victim", dir);
    cs_test_write_text(victim, "secret\n");
    snprintf(path, sizeof(path), "%s/ready", dir);
    snprintf(planted, sizeof(planted), "%s.tmp", path);
    assert_int_equal(symlink(victim, planted), 0);
    write_ready(path, "unix:/x.sock");
    read_file(victim, buf, sizeof(buf));
    assert_string_equal(buf, "secret\n");
    /* A link at the path itself is replaced, not written through. */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(victim, path), 0);
    write_ready(path, "unix:/y.sock");
    read_file(victim, buf, sizeof(buf));
    assert_string_equal(buf, "secret\n");
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, "unix:/y.sock");
}

static void test_ready_tried_again_out_of_fds(void **state)
{
    (void)state;
    char path[96], buf[64];
    struct rlimit was;
    struct cs_ready r;
    uv_loop_t loop;

    snprintf(path, sizeof(path), "%s/ready", dir);
    cs_loop_thread_mark();
    assert_int_equal(uv_loop_init(&loop), 0);
    cs_test_no_more_fds(&was);
    cs_ready_start(&r, &loop, path, "unix:/run/csched/csched.sock");
    while (r.fd_waits == 0)
        (void)uv_run(&loop, UV_RUN_ONCE);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    assert_int_equal(access(path, F_OK), -1);
    /* The retry writes it; then nothing is left for the loop to do. */
    (void)uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(r.write.rc, 0);
    assert_int_equal(r.fd_waits, 1);
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, "unix:/run/csched/csched.sock");
    cs_ready_stop(&r);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ready_written_and_no_temp_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_planted_links_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ready_tried_again_out_of_fds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
