/* store_backend: the nice value goes only to a process proven to serve the
 * socket, the child of the process listening on it; TCP and any other pid
 * are refused. A fake server stands in for the postmaster: a child that
 * listens on a unix socket and starts a "backend" in a session of its own.
 * Nice 5, higher than the test's own, needs no privilege. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "store_backend.h"
#include "testlib.h"

struct fake_server {
    pid_t listener;
    pid_t backend;
    pid_t plain; /* a child of the listener in the listener's session */
    int conn;    /* our end, connected to the listener */
    char path[108];
};

/* A child of the listener that reports its pid once it leads a session of
 * its own (lead true, as PostgreSQL's backends do) or, negated, at once;
 * then it waits to be killed. */
static void start_child(bool lead, int report_fd)
{
    if (fork() != 0)
        return;
    if (lead)
        setsid();
    pid_t self = lead ? getpid() : -getpid();
    if (write(report_fd, &self, sizeof(self)) != sizeof(self))
        _exit(1);
    pause();
    _exit(0);
}

/* The listener: listens, starts the backend and the plain child, then
 * waits to be killed. */
static _Noreturn void listener_main(const char *path, int report_fd)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);

    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(lfd, 4) != 0)
        _exit(1);
    start_child(true, report_fd);
    start_child(false, report_fd);
    int c = accept(lfd, NULL, NULL);
    (void)c;
    pause();
    _exit(0);
}

static int setup(void **state)
{
    static struct fake_server s;
    int pipe_fds[2];
    struct sockaddr_un addr = {.sun_family = AF_UNIX};

    snprintf(s.path, sizeof(s.path), "/tmp/csched-test-backend-%d.sock", (int)getpid());
    unlink(s.path);
    assert_int_equal(pipe(pipe_fds), 0);
    s.listener = fork();
    assert_true(s.listener >= 0);
    if (s.listener == 0)
        listener_main(s.path, pipe_fds[1]);
    for (int i = 0; i < 2; i++) {
        pid_t pid;
        assert_int_equal(read(pipe_fds[0], &pid, sizeof(pid)), sizeof(pid));
        if (pid > 0)
            s.backend = pid;
        else
            s.plain = -pid;
    }
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", s.path);
    s.conn = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(connect(s.conn, (struct sockaddr *)&addr, sizeof(addr)), 0);
    if (cs_test_session_nice(s.backend) == CS_TEST_NO_AUTOGROUP) {
        fprintf(stderr, "no autogroup scheduling here: nothing to test\n");
        skip();
    }
    *state = &s;
    return 0;
}

static int teardown(void **state)
{
    struct fake_server *s = *state;
    if (s == NULL)
        return 0;
    kill(s->backend, SIGKILL);
    kill(s->plain, SIGKILL);
    kill(s->listener, SIGKILL);
    (void)waitpid(s->listener, NULL, 0);
    close(s->conn);
    unlink(s->path);
    return 0;
}

static void test_backend_of_the_listener_gets_the_nice(void **state)
{
    struct fake_server *s = *state;

    assert_int_equal(cs_test_session_nice(s->backend), 0);
    assert_int_equal(cs_store_backend_nice(s->conn, s->backend, 5), 0);
    assert_int_equal(cs_test_session_nice(s->backend), 5);
}

static void test_other_processes_are_refused(void **state)
{
    struct fake_server *s = *state;
    int ours = cs_test_session_nice(getpid());

    /* A child in the listener's session (ours too): changing it would
     * change theirs. The listener is not its own child; nor are we, nor
     * init. */
    assert_int_equal(cs_store_backend_nice(s->conn, s->plain, 5), -ESRCH);
    assert_int_equal(cs_store_backend_nice(s->conn, s->listener, 5), -ESRCH);
    assert_int_equal(cs_store_backend_nice(s->conn, getpid(), 5), -ESRCH);
    assert_int_equal(cs_store_backend_nice(s->conn, 1, 5), -ESRCH);
    assert_int_equal(cs_store_backend_nice(s->conn, 0, 5), -ESRCH);
    assert_int_equal(cs_store_backend_nice(s->conn, -1, 5), -ESRCH);
    assert_int_equal(cs_test_session_nice(getpid()), ours);
    assert_int_equal(cs_test_session_nice(s->backend), 0);
}

static void test_a_gone_server_is_refused(void **state)
{
    struct fake_server *s = *state;

    /* The backend's pid now names nothing, or an orphan that init or a
     * subreaper holds: not the listener's child either way. */
    kill(s->backend, SIGKILL);
    kill(s->listener, SIGKILL);
    assert_int_equal(waitpid(s->listener, NULL, 0), s->listener);
    assert_int_equal(cs_store_backend_nice(s->conn, s->backend, 5), -ESRCH);
}

static void test_tcp_is_remote(void **state)
{
    (void)state;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(addr);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    int cfd = socket(AF_INET, SOCK_STREAM, 0);

    assert_int_equal(bind(lfd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(listen(lfd, 1), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&addr, &len), 0);
    assert_int_equal(connect(cfd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(cs_store_backend_nice(cfd, getpid(), 5), -EREMOTE);
    close(cfd);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_backend_of_the_listener_gets_the_nice, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_other_processes_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_gone_server_is_refused, setup, teardown),
        cmocka_unit_test(test_tcp_is_remote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
