/* exit_watch against real processes on a real libuv loop: every ended
 * process is reported once with its own context, more ends at once than one
 * turn takes included; a pidfd closed before its process ends is never
 * reported; the watch closes cleanly. */
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "exit_watch.h"
#include "util.h"

#define N_CHILDREN 160

extern char **environ;

struct child {
    pid_t pid;
    int pidfd;
    int reported; /* times on_exit named this child */
};

static struct child children[N_CHILDREN];
static int total_reported;

static void on_exit(void *ctx)
{
    struct child *c = ctx;
    c->reported++;
    total_reported++;
}

static void start_child(struct child *c, const char *seconds)
{
    char *argv[] = {"sleep", (char *)seconds, NULL};
    assert_int_equal(posix_spawnp(&c->pid, "sleep", NULL, NULL, argv, environ), 0);
    c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
    assert_true(c->pidfd >= 0);
    c->reported = 0;
}

static void on_timeout(uv_timer_t *timer)
{
    uv_stop(timer->loop);
}

/* Runs the loop until want reports have come, or 10 s. */
static void run_until(uv_loop_t *loop, int want)
{
    uv_timer_t timer;
    uv_timer_init(loop, &timer);
    uv_timer_start(&timer, on_timeout, 10000, 0);
    while (total_reported < want && uv_timer_get_due_in(&timer) > 0)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&timer, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
}

static void test_exit_watch_reports_each_end_once(void **state)
{
    uv_loop_t loop;
    struct cs_exit_watch w;
    (void)state;

    total_reported = 0;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(cs_exit_watch_init(&loop, &w, on_exit), 0);
    /* Half end at once, together; half a little later, one by one. */
    for (int i = 0; i < N_CHILDREN; i++) {
        start_child(&children[i], i % 2 == 0 ? "0" : "0.2");
        assert_int_equal(cs_exit_watch_add(&w, children[i].pidfd, &children[i]), 0);
    }
    /* The one to be closed before its end: never reported. */
    struct child closed;
    start_child(&closed, "0.1");
    assert_int_equal(cs_exit_watch_add(&w, closed.pidfd, &closed), 0);
    assert_int_equal(close(closed.pidfd), 0);

    run_until(&loop, N_CHILDREN);
    assert_int_equal(total_reported, N_CHILDREN);
    for (int i = 0; i < N_CHILDREN; i++) {
        int wstatus;
        assert_int_equal(children[i].reported, 1);
        /* Reported means ended: reaping it does not wait. */
        assert_int_equal(waitpid(children[i].pid, &wstatus, WNOHANG), children[i].pid);
        assert_int_equal(close(children[i].pidfd), 0);
    }
    assert_int_equal(waitpid(closed.pid, NULL, 0), closed.pid);
    /* Nothing more comes, the closed one included. */
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(closed.reported, 0);
    assert_int_equal(total_reported, N_CHILDREN);

    cs_exit_watch_close(&w);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* The functions under test belong to the loop thread: this one is it. */
static int mark_loop_thread(void **state)
{
    cs_loop_thread_mark();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_watch_reports_each_end_once),
    };
    return cmocka_run_group_tests(tests, mark_loop_thread, NULL);
}
