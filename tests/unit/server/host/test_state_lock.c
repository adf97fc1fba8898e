/* Unit tests of state_lock, one cschedd per state dir: the lock taken on a
 * fresh dir with the pid written, refused to a second open file description
 * of this process and to another process, naming the holder's pid (or
 * saying it is unknown), free again once the holder closes or is killed,
 * and never inherited across exec. */
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
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "state_lock.h"

struct fixture {
    char dir[64];
    char path[128];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/cs-state-lock-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, CS_STATE_LOCK_FILE);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    (void)unlink(f->path);
    assert_int_equal(rmdir(f->dir), 0);
    free(f);
    return 0;
}

/* The text of the lock file. */
static void read_lock_file(const struct fixture *f, char *buf, size_t cap)
{
    FILE *fp = fopen(f->path, "r");
    size_t n;

    assert_non_null(fp);
    n = fread(buf, 1, cap - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

static void test_state_lock_taken_with_pid(void **state)
{
    struct fixture *f = *state;
    struct cs_state_lock lock;
    struct cs_err err = {0};
    char text[32], want[32];

    assert_int_equal(cs_state_lock_take(&lock, f->dir, &err), 0);
    assert_true(lock.fd >= 0);
    (void)snprintf(want, sizeof(want), "%ld\n", (long)getpid());
    read_lock_file(f, text, sizeof(text));
    assert_string_equal(text, want);
    /* Minders and PostgreSQL, started with exec, never hold it. */
    assert_true(fcntl(lock.fd, F_GETFD) & FD_CLOEXEC);
    cs_state_lock_release(&lock);
    assert_int_equal(lock.fd, -1);
    cs_state_lock_release(&lock);
}

/* Two open file descriptions of one process exclude each other, as two
 * servers would. */
static void test_state_lock_refused_to_second_open(void **state)
{
    struct fixture *f = *state;
    struct cs_state_lock first, second;
    struct cs_err err = {0};
    char want[64];

    assert_int_equal(cs_state_lock_take(&first, f->dir, &err), 0);
    assert_int_equal(cs_state_lock_take(&second, f->dir, &err), -EBUSY);
    assert_int_equal(second.fd, -1);
    (void)snprintf(want, sizeof(want), "in use by another cschedd (pid %ld)", (long)getpid());
    assert_non_null(strstr(err.msg, want));
    assert_non_null(strstr(err.msg, f->dir));
    assert_non_null(strstr(err.msg, "--state-dir"));
    cs_state_lock_release(&first);
    assert_int_equal(cs_state_lock_take(&second, f->dir, &err), 0);
    cs_state_lock_release(&second);
}

/* Another process holds the lock until it is killed; the refusal names
 * it, and the lock is free once the kernel has ended it. */
static void test_state_lock_held_by_other_process(void **state)
{
    struct fixture *f = *state;
    struct cs_state_lock lock;
    struct cs_err err = {0};
    int pipefd[2];
    char c = 0, want[64];
    pid_t child;
    int wstatus;

    assert_int_equal(pipe(pipefd), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct cs_state_lock held;
        int rc = cs_state_lock_take(&held, f->dir, &err);

        (void)write(pipefd[1], rc == 0 ? "y" : "n", 1);
        pause();
        _exit(0);
    }
    assert_int_equal(read(pipefd[0], &c, 1), 1);
    assert_int_equal(c, 'y');
    assert_int_equal(cs_state_lock_take(&lock, f->dir, &err), -EBUSY);
    (void)snprintf(want, sizeof(want), "(pid %ld)", (long)child);
    assert_non_null(strstr(err.msg, want));
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, &wstatus, 0), child);
    assert_int_equal(cs_state_lock_take(&lock, f->dir, &err), 0);
    cs_state_lock_release(&lock);
    close(pipefd[0]);
    close(pipefd[1]);
}

/* A holder that has not written its pid yet is named as unknown. */
static void test_state_lock_holder_without_pid(void **state)
{
    struct fixture *f = *state;
    struct cs_state_lock lock;
    struct cs_err err = {0};
    int fd = open(f->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    assert_int_equal(cs_state_lock_take(&lock, f->dir, &err), -EBUSY);
    assert_non_null(strstr(err.msg, "(pid unknown)"));
    close(fd);
}

static void test_state_lock_missing_dir(void **state)
{
    struct fixture *f = *state;
    struct cs_state_lock lock;
    struct cs_err err = {0};
    char missing[128];

    (void)snprintf(missing, sizeof(missing), "%s/missing", f->dir);
    assert_int_equal(cs_state_lock_take(&lock, missing, &err), -ENOENT);
    assert_int_equal(lock.fd, -1);
    assert_non_null(strstr(err.msg, missing));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_state_lock_taken_with_pid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_lock_refused_to_second_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_lock_held_by_other_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_lock_holder_without_pid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_lock_missing_dir, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
