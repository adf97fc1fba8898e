/* csched-test-proxy: a TCP proxy for fault tests, put between one replica
 * and its database so that the link of that replica alone can be cut.
 *
 *   csched-test-proxy PORT_FILE CONTROL_SOCKET TARGET
 *
 * It listens on 127.0.0.1 on a port the kernel picks, writes that port to
 * PORT_FILE once it serves, and forwards every connection to TARGET
 * ("unix:/path" or "IPV4:PORT"), both ways, half-closes included. Commands
 * come as lines on the unix socket CONTROL_SOCKET (tests/replicas/README.md
 * has the protocol): "cut reset", "cut blackhole", "restore", "status".
 * One thread, one poll() loop, every socket non-blocking. It runs until it
 * is killed; the test that starts it gives it a parent-death signal.
 * Exit status (as the minder's): 100 bad usage, 111 a failure at start. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

enum {
    FLOW_BYTES = 64 * 1024,
    MAX_CONNS = 128,
    MAX_CONTROLS = 4,
    LINE_BYTES = 128,
    LISTEN_BACKLOG = 64,
};

enum mode { MODE_FORWARD, MODE_BLACKHOLE, MODE_RESET };

static const char *const mode_names[] = {"forward", "blackhole", "reset"};

enum side { CLIENT, TARGET };

/* One direction of a connection: bytes read from one side, not yet written
 * to the other (buf[off..len)). */
struct flow {
    char buf[FLOW_BYTES];
    size_t off, len;
    bool eof;  /* its source ended: once drained, the sink's write side is shut */
    bool shut; /* the sink's write side is shut */
};

/* A connection: flow[s] reads fd[s] and writes fd[!s]. fd[TARGET] is -1
 * while held (accepted under cut blackhole, not connected onwards yet). */
struct conn {
    int fd[2];
    bool connecting;
    struct flow flow[2];
};

struct control {
    int fd; /* -1: a free slot */
    char line[LINE_BYTES];
    size_t len;
};

struct proxy {
    enum mode mode;
    /* Bound to the port for the proxy's whole life and never listening: it
     * keeps the port ours while cut reset has no listener (SYNs then get an
     * RST, as from a host whose server died), so restore can listen on the
     * same port again. */
    int reserve_fd;
    int listen_fd; /* -1 under cut reset */
    int control_fd;
    struct sockaddr_in addr;
    struct sockaddr_storage target;
    socklen_t target_len;
    const char *target_text;
    struct conn *conns[MAX_CONNS];
    size_t n_conns;
    struct control controls[MAX_CONTROLS];
    unsigned long accepted;
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
    va_list ap;

    fputs("csched-test-proxy: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static _Noreturn void die(int status, const char *what)
{
    say("fatal: unable to %s: %s", what, strerror(errno));
    exit(status);
}

/* parse_target fills p->target from "unix:/path" or "IPV4:PORT". */
static int parse_target(struct proxy *p, const char *text)
{
    p->target_text = text;
    memset(&p->target, 0, sizeof(p->target));
    if (strncmp(text, "unix:", 5) == 0) {
        struct sockaddr_un *un = (struct sockaddr_un *)&p->target;
        if (strlen(text + 5) >= sizeof(un->sun_path))
            return -ENAMETOOLONG;
        un->sun_family = AF_UNIX;
        strcpy(un->sun_path, text + 5);
        p->target_len = sizeof(*un);
        return 0;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)&p->target;
    char host[64];
    const char *colon = strrchr(text, ':');
    char *end;
    if (colon == NULL || (size_t)(colon - text) >= sizeof(host))
        return -EINVAL;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535 || inet_pton(AF_INET, host, &in->sin_addr) != 1)
        return -EINVAL;
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)port);
    p->target_len = sizeof(*in);
    return 0;
}

static void set_nodelay(int fd)
{
    int one = 1;
    /* Nagle would hold back the protocol's small messages; only TCP has it,
     * so a unix socket's refusal is expected. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* listen_again makes the listener on the reserved port. */
static int listen_again(struct proxy *p)
{
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -errno;
    /* Both it and the reserving socket need it to share the port. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&p->addr, sizeof(p->addr)) != 0 ||
        listen(fd, LISTEN_BACKLOG) != 0) {
        int rc = -errno;
        (void)close(fd);
        return rc;
    }
    p->listen_fd = fd;
    return 0;
}

static int listen_first(struct proxy *p)
{
    socklen_t len = sizeof(p->addr);
    int one = 1;

    p->reserve_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->reserve_fd < 0)
        return -errno;
    p->addr.sin_family = AF_INET;
    p->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (setsockopt(p->reserve_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(p->reserve_fd, (struct sockaddr *)&p->addr, sizeof(p->addr)) != 0 ||
        getsockname(p->reserve_fd, (struct sockaddr *)&p->addr, &len) != 0)
        return -errno;
    return listen_again(p);
}

static int listen_control(struct proxy *p, const char *path)
{
    struct sockaddr_un un = {.sun_family = AF_UNIX};

    if (strlen(path) >= sizeof(un.sun_path))
        return -ENAMETOOLONG;
    strcpy(un.sun_path, path);
    (void)unlink(path); /* a socket left by an earlier proxy; none is fine */
    p->control_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (p->control_fd < 0 || bind(p->control_fd, (struct sockaddr *)&un, sizeof(un)) != 0 ||
        listen(p->control_fd, MAX_CONTROLS) != 0)
        return -errno;
    for (size_t i = 0; i < MAX_CONTROLS; i++)
        p->controls[i].fd = -1;
    return 0;
}

/* write_port_file writes the port through a temp file and a rename, so a
 * reader sees the whole number or nothing. */
static int write_port_file(const struct proxy *p, const char *path)
{
    char tmp[4096];
    FILE *f;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    f = fopen(tmp, "w");
    if (f == NULL)
        return -errno;
    fprintf(f, "%u\n", (unsigned)ntohs(p->addr.sin_port));
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return -errno;
    return 0;
}

/* conn_close closes both sides; abort makes the client's an RST (linger
 * 0), as from a host that drops a connection it no longer knows. */
static void conn_close(struct proxy *p, size_t i, bool abort)
{
    struct conn *c = p->conns[i];

    if (abort) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        (void)setsockopt(c->fd[CLIENT], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    for (int s = CLIENT; s <= TARGET; s++)
        if (c->fd[s] >= 0)
            (void)close(c->fd[s]); /* nothing to do about a failed close */
    free(c);
    p->conns[i] = NULL;
}

/* Drops the closed connections' slots, keeping the order. */
static void conns_compact(struct proxy *p)
{
    size_t out = 0;

    for (size_t i = 0; i < p->n_conns; i++)
        if (p->conns[i] != NULL)
            p->conns[out++] = p->conns[i];
    p->n_conns = out;
}

/* connect_onwards starts the connection to the target; false when it
 * failed (the caller aborts the connection). */
static bool connect_onwards(struct proxy *p, struct conn *c)
{
    int fd = socket(p->target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        say("socket() for %s failed: %s", p->target_text, strerror(errno));
        return false;
    }
    c->fd[TARGET] = fd;
    if (p->target.ss_family == AF_INET)
        set_nodelay(fd);
    if (connect(fd, (struct sockaddr *)&p->target, p->target_len) == 0)
        return true;
    if (errno == EINPROGRESS) {
        c->connecting = true;
        return true;
    }
    /* A unix socket whose backlog is full says EAGAIN: refused as well. */
    say("connect(%s) failed: %s", p->target_text, strerror(errno));
    return false;
}

static void accept_all(struct proxy *p)
{
    for (;;) {
        int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                say("accept() failed: %s", strerror(errno));
            break;
        }
        p->accepted++;
        struct conn *c = p->n_conns < MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
        if (c == NULL) {
            say("refusing a connection: %zu open", p->n_conns);
            (void)close(fd);
            continue;
        }
        set_nodelay(fd);
        c->fd[CLIENT] = fd;
        c->fd[TARGET] = -1;
        p->conns[p->n_conns++] = c;
        if (p->mode == MODE_FORWARD && !connect_onwards(p, c))
            conn_close(p, p->n_conns - 1, true);
    }
    conns_compact(p);
}

/* The poll events side s of c waits for. */
static short side_events(const struct conn *c, enum side s)
{
    const struct flow *in = &c->flow[s], *out = &c->flow[!s];
    short ev = 0;

    if (c->fd[s] < 0)
        return 0;
    if (s == TARGET && c->connecting)
        return POLLOUT;
    if (!in->eof && in->len < FLOW_BYTES)
        ev |= POLLIN;
    if (out->off < out->len)
        ev |= POLLOUT;
    return ev;
}

/* flow_read reads side s into its flow: false on an error that ends the
 * connection. */
static bool flow_read(struct conn *c, enum side s)
{
    struct flow *f = &c->flow[s];
    ssize_t n;

    n = read(c->fd[s], f->buf + f->len, FLOW_BYTES - f->len);
    if (n > 0)
        f->len += (size_t)n;
    else if (n == 0)
        f->eof = true;
    else if (errno != EAGAIN && errno != EINTR)
        return false;
    return true;
}

/* flow_write writes what the other side's flow holds to side s. */
static bool flow_write(struct conn *c, enum side s)
{
    struct flow *f = &c->flow[!s];
    ssize_t n = send(c->fd[s], f->buf + f->off, f->len - f->off, MSG_NOSIGNAL);

    if (n > 0 && (f->off += (size_t)n) == f->len)
        f->off = f->len = 0; /* drained: the whole buffer is free again */
    else if (n < 0 && errno != EAGAIN && errno != EINTR)
        return false;
    return true;
}

/* conn_step handles the poll results of c's two sides; false when c is to
 * be aborted. true with both flows shut means it ended cleanly. */
static bool conn_step(struct conn *c, const struct pollfd *pfd)
{
    for (int s = CLIENT; s <= TARGET; s++) {
        short re = pfd[s].revents;
        if (re == 0)
            continue;
        if (s == TARGET && c->connecting) {
            int err = 0;
            socklen_t len = sizeof(err);
            if (getsockopt(c->fd[s], SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
                say("connect onwards failed: %s", strerror(err != 0 ? err : errno));
                return false;
            }
            c->connecting = false;
            continue;
        }
        if ((re & POLLERR) != 0)
            return false;
        if ((pfd[s].events & POLLIN) != 0 && (re & (POLLIN | POLLHUP)) != 0 && !flow_read(c, s))
            return false;
        /* A hang-up on a side not read (its flow is full) would be reported
         * on every poll: that peer is gone, and so is the connection. */
        if ((pfd[s].events & POLLIN) == 0 && (re & POLLHUP) != 0)
            return false;
        if ((re & POLLOUT) != 0 && !flow_write(c, s))
            return false;
    }
    for (int s = CLIENT; s <= TARGET; s++) {
        struct flow *f = &c->flow[s];
        if (f->eof && !f->shut && f->off == f->len) {
            /* The peer may be gone already; the close that follows says so. */
            (void)shutdown(c->fd[!s], SHUT_WR);
            f->shut = true;
        }
    }
    return true;
}

static void conns_close_all(struct proxy *p)
{
    for (size_t i = 0; i < p->n_conns; i++)
        conn_close(p, i, true);
    p->n_conns = 0;
}

/* set_mode carries out a command; the reply goes once it is done. */
static int set_mode(struct proxy *p, enum mode mode)
{
    int rc;

    if (mode == MODE_RESET) {
        size_t n = p->n_conns;
        conns_close_all(p);
        if (p->listen_fd >= 0) {
            (void)close(p->listen_fd); /* its queued connections get an RST */
            p->listen_fd = -1;
        }
        say("cut reset: %zu connections reset, new ones refused", n);
        p->mode = mode;
        return 0;
    }
    if (p->listen_fd < 0 && (rc = listen_again(p)) != 0)
        return rc;
    p->mode = mode;
    if (mode == MODE_BLACKHOLE) {
        say("cut blackhole: %zu connections held, nothing forwarded", p->n_conns);
        return 0;
    }
    for (size_t i = 0; i < p->n_conns; i++)
        if (p->conns[i]->fd[TARGET] < 0 && !connect_onwards(p, p->conns[i]))
            conn_close(p, i, true);
    conns_compact(p);
    say("restore: forwarding %zu connections", p->n_conns);
    return 0;
}

static void reply(struct control *ctl, const char *text)
{
    size_t len = strlen(text);

    /* A few bytes into an empty socket buffer; a control client that does
     * not read is dropped. */
    if (send(ctl->fd, text, len, MSG_NOSIGNAL) != (ssize_t)len) {
        (void)close(ctl->fd);
        ctl->fd = -1;
    }
}

static void run_command(struct proxy *p, struct control *ctl, const char *line)
{
    char text[256];
    int rc = 0;

    if (strcmp(line, "cut reset") == 0)
        rc = set_mode(p, MODE_RESET);
    else if (strcmp(line, "cut blackhole") == 0)
        rc = set_mode(p, MODE_BLACKHOLE);
    else if (strcmp(line, "restore") == 0)
        rc = set_mode(p, MODE_FORWARD);
    else if (strcmp(line, "status") != 0)
        rc = -EINVAL;
    if (rc == -EINVAL)
        snprintf(text, sizeof(text),
                 "error unknown command \"%.64s\": cut reset, cut blackhole, restore or status\n",
                 line);
    else if (rc != 0)
        snprintf(text, sizeof(text), "error listening again on port %u: %s\n",
                 (unsigned)ntohs(p->addr.sin_port), strerror(-rc));
    else
        snprintf(text, sizeof(text), "ok mode=%s open=%zu accepted=%lu\n", mode_names[p->mode],
                 p->n_conns, p->accepted);
    reply(ctl, text);
}

static void control_read(struct proxy *p, struct control *ctl)
{
    ssize_t n = read(ctl->fd, ctl->line + ctl->len, sizeof(ctl->line) - 1 - ctl->len);
    char *nl;

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        (void)close(ctl->fd);
        ctl->fd = -1;
        return;
    }
    ctl->len += (size_t)n;
    ctl->line[ctl->len] = '\0';
    while (ctl->fd >= 0 && (nl = strchr(ctl->line, '\n')) != NULL) {
        *nl = '\0';
        if (nl > ctl->line && nl[-1] == '\r')
            nl[-1] = '\0';
        run_command(p, ctl, ctl->line);
        ctl->len -= (size_t)(nl + 1 - ctl->line);
        memmove(ctl->line, nl + 1, ctl->len + 1);
    }
    if (ctl->fd >= 0 && ctl->len == sizeof(ctl->line) - 1) {
        reply(ctl, "error line too long\n");
        ctl->len = 0;
    }
}

static void control_accept(struct proxy *p)
{
    int fd = accept4(p->control_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (fd < 0)
        return;
    for (size_t i = 0; i < MAX_CONTROLS; i++) {
        if (p->controls[i].fd < 0) {
            p->controls[i] = (struct control){.fd = fd};
            return;
        }
    }
    say("refusing a control connection: %d open", MAX_CONTROLS);
    (void)close(fd);
}

/* The poll set: control listener, listener, control clients, then two
 * entries per connection (its client side, its target side). */
enum { PFD_CONTROL, PFD_LISTEN, PFD_CONTROLS };
#define PFD_CONNS (PFD_CONTROLS + MAX_CONTROLS)

static nfds_t fill_pollfds(const struct proxy *p, struct pollfd *pfd)
{
    pfd[PFD_CONTROL] = (struct pollfd){.fd = p->control_fd, .events = POLLIN};
    pfd[PFD_LISTEN] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
    for (size_t i = 0; i < MAX_CONTROLS; i++)
        pfd[PFD_CONTROLS + i] = (struct pollfd){.fd = p->controls[i].fd, .events = POLLIN};
    for (size_t i = 0; i < p->n_conns; i++) {
        const struct conn *c = p->conns[i];
        for (int s = CLIENT; s <= TARGET; s++) {
            /* Under cut blackhole nothing moves, not even a close. */
            short ev = p->mode == MODE_FORWARD ? side_events(c, s) : 0;
            pfd[PFD_CONNS + 2 * i + s] =
                (struct pollfd){.fd = ev != 0 ? c->fd[s] : -1, .events = ev};
        }
    }
    return PFD_CONNS + 2 * p->n_conns;
}

static _Noreturn void serve(struct proxy *p)
{
    static struct pollfd pfd[PFD_CONNS + 2 * MAX_CONNS];

    for (;;) {
        nfds_t n = fill_pollfds(p, pfd);
        if (poll(pfd, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            die(111, "poll");
        }
        /* Connections first: a command below may close them all, and the
         * poll set then names fds that are gone. Under a cut none moves. */
        for (size_t i = 0; p->mode == MODE_FORWARD && i < p->n_conns; i++) {
            struct conn *c = p->conns[i];
            if (!conn_step(c, &pfd[PFD_CONNS + 2 * i]))
                conn_close(p, i, true);
            else if (c->flow[CLIENT].shut && c->flow[TARGET].shut)
                conn_close(p, i, false);
        }
        conns_compact(p);
        if (p->listen_fd >= 0 && (pfd[PFD_LISTEN].revents & POLLIN) != 0)
            accept_all(p);
        for (size_t i = 0; i < MAX_CONTROLS; i++)
            if (p->controls[i].fd >= 0 && pfd[PFD_CONTROLS + i].revents != 0)
                control_read(p, &p->controls[i]);
        if ((pfd[PFD_CONTROL].revents & POLLIN) != 0)
            control_accept(p);
    }
}

int main(int argc, char **argv)
{
    static struct proxy p = {.listen_fd = -1, .control_fd = -1, .reserve_fd = -1};
    int rc;

    if (argc != 4) {
        fprintf(stderr, "usage: csched-test-proxy PORT_FILE CONTROL_SOCKET TARGET\n"
                        "  TARGET: unix:/path/to/socket or IPV4:PORT\n");
        return 100;
    }
    if (parse_target(&p, argv[3]) != 0) {
        say("fatal: target \"%s\" is neither unix:/path nor IPV4:PORT", argv[3]);
        return 100;
    }
    if ((rc = listen_first(&p)) != 0) {
        errno = -rc;
        die(111, "listen on 127.0.0.1");
    }
    if ((rc = listen_control(&p, argv[2])) != 0) {
        errno = -rc;
        die(111, "listen on the control socket");
    }
    if ((rc = write_port_file(&p, argv[1])) != 0) {
        errno = -rc;
        die(111, "write the port file");
    }
    say("listening on 127.0.0.1:%u, forwarding to %s", (unsigned)ntohs(p.addr.sin_port),
        p.target_text);
    serve(&p);
}
