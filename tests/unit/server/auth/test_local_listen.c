/* Unit tests of local_listen, without gRPC: the socket made in a directory
 * that did not exist, with its modes; a live socket not taken over, a stale
 * one replaced, a file that is not a socket left alone; the accept thread
 * identifying a real peer and handing its fd over; and the identity source
 * answering only for the connection it recorded. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "local_listen.h"

struct fixture {
    char dir[64];
    char path[128];
    struct cs_local_roles roles;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/test_local_listen.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/run/cs.sock", f->dir);
    f->roles.self_uid = geteuid();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char run[200];
    (void)unlink(f->path);
    (void)snprintf(run, sizeof(run), "%s/run", f->dir);
    (void)rmdir(run);
    (void)rmdir(f->dir);
    free(f);
    return 0;
}

static int connect_to(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    memcpy(addr.sun_path, path, strlen(path) + 1);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    return fd;
}

static void test_local_listen_socket_and_modes(void **state)
{
    /* The modes are exact whatever the umask. */
    mode_t mask = umask(077);
    struct fixture *f = *state;
    struct cs_local_listen l, second;
    struct cs_err err = {0};
    struct stat st;
    char run[200];

    assert_int_equal(cs_local_listen_open(&l, f->path, &f->roles, &err), 0);
    assert_int_equal(stat(f->path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0666);
    (void)snprintf(run, sizeof(run), "%s/run", f->dir);
    assert_int_equal(stat(run, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);

    /* Someone answers there: not taken over. */
    assert_int_equal(cs_local_listen_open(&second, f->path, &f->roles, &err), -EADDRINUSE);
    assert_non_null(strstr(err.msg, "another server is listening on"));

    /* Its server gone without removing it: stale, replaced. */
    close(l.fd);
    cs_local_peers_free(&l.peers);
    assert_int_equal(cs_local_listen_open(&l, f->path, &f->roles, &err), 0);
    cs_local_listen_stop(&l);
    cs_local_listen_close(&l);
    assert_int_equal(access(f->path, F_OK), -1);

    /* Not a socket: left alone. */
    FILE *file = fopen(f->path, "w");
    assert_non_null(file);
    fclose(file);
    assert_int_equal(cs_local_listen_open(&l, f->path, &f->roles, &err), -EEXIST);
    assert_string_equal(strstr(err.msg, "exists"), "exists and is not a socket");

    assert_int_equal(cs_local_listen_open(&l, "cs.sock", &f->roles, &err), -EINVAL);
    umask(mask);
}

/* The accept thread's handoff: the fd goes down a pipe to the test. */
static void handoff_cb(void *ctx, int fd)
{
    const int *pipe_w = ctx;
    assert_int_equal(write(*pipe_w, &fd, sizeof(fd)), sizeof(fd));
}

/* The accept thread reads a real peer (this process: its own uid, so
 * admin), records it and hands its fd over; the identity source knows the
 * connection by "fd:N" and nothing else. */
static void test_local_listen_accepts_and_identifies(void **state)
{
    struct fixture *f = *state;
    struct cs_local_listen l;
    struct cs_err err = {0};
    struct cs_identity who;
    char peer[32], want[64];

    assert_int_equal(cs_local_listen_open(&l, f->path, &f->roles, &err), 0);
    int handed[2], fd = -1;
    assert_int_equal(pipe(handed), 0);
    assert_int_equal(cs_local_listen_start(&l, handoff_cb, &handed[1]), 0);
    int client = connect_to(f->path);
    assert_int_equal(read(handed[0], &fd, sizeof(fd)), sizeof(fd));
    assert_true(fd >= 0);

    (void)snprintf(peer, sizeof(peer), "fd:%d", fd);
    assert_int_equal(cs_local_listen_identify_cb(&l, NULL, peer, NULL, &who, &err), 0);
    assert_int_equal(who.role, CS_ROLE_ADMIN);
    (void)snprintf(want, sizeof(want), "unix:uid=%u", (unsigned)geteuid());
    assert_int_equal(strncmp(who.name, want, strlen(want)), 0);

    assert_int_equal(cs_local_listen_identify_cb(&l, NULL, "ipv4:127.0.0.1:5000", NULL, &who, &err),
                     -ENOENT);
    assert_int_equal(cs_local_listen_identify_cb(&l, NULL, "fd:x", NULL, &who, &err), -ENOENT);
    assert_int_equal(cs_local_listen_identify_cb(&l, NULL, "fd:", NULL, &who, &err), -ENOENT);
    assert_int_equal(cs_local_listen_identify_cb(&l, NULL, "fd:99999", NULL, &who, &err), -ENOENT);

    /* The fd now names another file than the one recorded: no identity. */
    assert_int_equal(dup2(STDERR_FILENO, fd), fd);
    assert_int_equal(cs_local_listen_identify_cb(&l, NULL, peer, NULL, &who, &err), -ENOENT);

    cs_local_listen_stop(&l);
    cs_local_listen_close(&l);
    close(fd);
    close(client);
    close(handed[0]);
    close(handed[1]);
}

int main(void)
{
    cs_loop_thread_mark();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_local_listen_socket_and_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_listen_accepts_and_identifies, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
