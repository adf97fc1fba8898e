/* A csched-test-proxy run by a test (see testproxy.h): its temp dir, its
 * start and stop as the test's child, and one command at a time on its
 * control socket. */
#include "testproxy.h"

#include <errno.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "testlib_int.h"

#ifndef CS_TESTPROXY_PATH
#error "CS_TESTPROXY_PATH must name the csched-test-proxy program"
#endif

enum {
    START_TIMEOUT_MS = 10000,
    STOP_TIMEOUT_MS = 10000,
    COMMAND_TIMEOUT_S = 5,
    LOG_TAIL_BYTES = 4096,
};

struct cs_testproxy {
    char dir[64];
    char port_path[96];
    char control_path[96];
    char log_path[96];
    char conninfo[512];
    pid_t pid;
    uint16_t port;
};

/* read_port reads the port file, once the proxy has written it whole. */
static bool read_port(struct cs_testproxy *p)
{
    FILE *f = fopen(p->port_path, "r");
    unsigned port = 0;
    bool ok;

    if (f == NULL)
        return false;
    ok = fscanf(f, "%u", &port) == 1 && port > 0 && port < 65536;
    (void)fclose(f); /* read only */
    p->port = (uint16_t)port;
    return ok;
}

static int wait_port(struct cs_testproxy *p)
{
    int64_t deadline = cs_test_now_ms() + START_TIMEOUT_MS;
    int wstatus;

    while (!read_port(p)) {
        if (cs_test__wait(p->pid, 0, &wstatus) == 0) {
            p->pid = 0;
            fprintf(stderr, "testproxy: csched-test-proxy exited at start with status %d\n",
                    cs_test__exit_code(wstatus));
            return -ECHILD;
        }
        if (cs_test_now_ms() > deadline) {
            fprintf(stderr, "testproxy: no port from csched-test-proxy after %d ms\n",
                    START_TIMEOUT_MS);
            return -ETIMEDOUT;
        }
        cs_test_sleep_ms(5);
    }
    return 0;
}

static void kill_proxy(struct cs_testproxy *p)
{
    int wstatus;

    if (p->pid <= 0)
        return;
    (void)kill(p->pid, SIGTERM);
    if (cs_test__wait(p->pid, STOP_TIMEOUT_MS, &wstatus) == -ETIMEDOUT) {
        (void)kill(p->pid, SIGKILL);
        (void)cs_test__wait(p->pid, STOP_TIMEOUT_MS, &wstatus);
    }
    p->pid = 0;
}

int cs_testproxy_start(const char *target, struct cs_testproxy **out)
{
    struct cs_testproxy *p = calloc(1, sizeof(*p));
    int rc;

    if (p == NULL)
        return -ENOMEM;
    if ((rc = cs_test_mkdtemp(p->dir, sizeof(p->dir), "cs-proxy")) != 0)
        goto err_free;
    snprintf(p->port_path, sizeof(p->port_path), "%s/port", p->dir);
    snprintf(p->control_path, sizeof(p->control_path), "%s/control.sock", p->dir);
    snprintf(p->log_path, sizeof(p->log_path), "%s/proxy.log", p->dir);
    const char *argv[] = {CS_TESTPROXY_PATH, p->port_path, p->control_path, target, NULL};
    struct cs_test__spawn s = {.argv = argv, .log_path = p->log_path, .pdeath_signal = SIGTERM};
    if ((rc = cs_test__spawn(&s, &p->pid)) != 0)
        goto err_rmdir;
    if ((rc = wait_port(p)) != 0)
        goto err_kill;
    *out = p;
    return 0;

err_kill:
    kill_proxy(p);
    cs_test__print_tail("csched-test-proxy log", p->log_path, LOG_TAIL_BYTES);
err_rmdir:
    cs_test_rmtree(p->dir);
err_free:
    free(p);
    return rc;
}

/* pg_socket writes "unix:DIR/.s.PGSQL.PORT" for conninfo's host and port,
 * and the rest of the conninfo into rest (user, dbname). */
static int pg_socket(const char *conninfo, char *target, size_t cap, char *rest, size_t rest_cap)
{
    PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
    const char *host = NULL, *port = "5432";
    size_t used = 0;
    int rc = 0;

    if (opts == NULL)
        return -EINVAL;
    rest[0] = '\0';
    for (PQconninfoOption *o = opts; o->keyword != NULL; o++) {
        if (o->val == NULL)
            continue;
        if (strcmp(o->keyword, "host") == 0)
            host = o->val;
        else if (strcmp(o->keyword, "port") == 0)
            port = o->val;
        else if (used < rest_cap)
            used += (size_t)snprintf(rest + used, rest_cap - used, " %s='%s'", o->keyword, o->val);
    }
    if (host == NULL || host[0] != '/')
        rc = -EINVAL;
    else if ((size_t)snprintf(target, cap, "unix:%s/.s.PGSQL.%s", host, port) >= cap ||
             used >= rest_cap)
        rc = -ENAMETOOLONG;
    PQconninfoFree(opts);
    if (rc != 0)
        fprintf(stderr, "testproxy: no unix socket in the conninfo \"%s\"\n", conninfo);
    return rc;
}

int cs_testproxy_start_pg(const char *conninfo, struct cs_testproxy **out)
{
    char target[256], rest[256];
    int rc = pg_socket(conninfo, target, sizeof(target), rest, sizeof(rest));

    if (rc == 0)
        rc = cs_testproxy_start(target, out);
    if (rc == 0)
        snprintf((*out)->conninfo, sizeof((*out)->conninfo), "host=127.0.0.1 port=%u%s",
                 (unsigned)(*out)->port, rest);
    return rc;
}

uint16_t cs_testproxy_port(const struct cs_testproxy *p)
{
    return p->port;
}

const char *cs_testproxy_conninfo(const struct cs_testproxy *p)
{
    return p->conninfo;
}

const char *cs_testproxy_log_path(const struct cs_testproxy *p)
{
    return p->log_path;
}

/* command sends one line and reads the one-line reply into buf. */
static int command(struct cs_testproxy *p, const char *line, char *buf, size_t cap)
{
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    struct timeval tv = {.tv_sec = COMMAND_TIMEOUT_S};
    size_t len = strlen(line), got = 0;
    int rc = 0;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -errno;
    snprintf(un.sun_path, sizeof(un.sun_path), "%s", p->control_path);
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
        connect(fd, (struct sockaddr *)&un, sizeof(un)) != 0 ||
        send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len || send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
        rc = -errno;
        goto out_close;
    }
    while (got + 1 < cap && (got == 0 || buf[got - 1] != '\n')) {
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n <= 0) {
            rc = n < 0 ? -errno : -EPIPE;
            goto out_close;
        }
        got += (size_t)n;
    }
    while (got > 0 && buf[got - 1] == '\n')
        got--;
    buf[got] = '\0';
    if (strncmp(buf, "ok", 2) != 0)
        rc = -EIO;
out_close:
    (void)close(fd);
    if (rc != 0)
        fprintf(stderr, "testproxy: \"%s\" to %s failed: %s (reply \"%s\")\n", line,
                p->control_path, strerror(-rc), got > 0 ? buf : "");
    return rc;
}

int cs_testproxy_cut(struct cs_testproxy *p, enum cs_testproxy_cut mode)
{
    char reply[128];

    return command(p, mode == CS_TESTPROXY_RESET ? "cut reset" : "cut blackhole", reply,
                   sizeof(reply));
}

int cs_testproxy_restore(struct cs_testproxy *p)
{
    char reply[128];

    return command(p, "restore", reply, sizeof(reply));
}

int cs_testproxy_status(struct cs_testproxy *p, struct cs_testproxy_status *st)
{
    char reply[128];
    int rc = command(p, "status", reply, sizeof(reply));

    if (rc == 0 &&
        sscanf(reply, "ok mode=%15s open=%u accepted=%lu", st->mode, &st->open, &st->accepted) != 3)
        rc = -EPROTO;
    return rc;
}

void cs_testproxy_stop(struct cs_testproxy *p)
{
    if (p == NULL)
        return;
    kill_proxy(p);
    cs_test_discard_dir("csched-test-proxy", p->dir);
    free(p);
}
