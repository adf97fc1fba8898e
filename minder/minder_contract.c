/* minder_contract: the minder's argv, the attempt-directory path and the
 * start record, built, parsed and taken in one place (see
 * minder_contract.h). */
#include "minder_contract.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The most strings the fixed part of the argv takes: the path, -d DIR,
 * -t MS, -g MS, -s SIGNO, -C WORKDIR, -L LEASE_FILE, -R LIMITS, three of
 * -K KIND=DIR, "--", and /bin/sh -c SHELL. */
#define ARGV_FIXED 25

/* openat2(2)'s argument and flag (linux/openat2.h), stated here since the
 * minder builds against libc's headers alone. */
struct open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};
#define RESOLVE_NO_SYMLINKS 0x04

struct builder {
    char **argv;
    size_t n;
    bool failed;
};

static void add(struct builder *b, const char *s)
{
    char *copy = b->failed ? NULL : strdup(s);
    if (copy == NULL)
        b->failed = true;
    else
        b->argv[b->n++] = copy;
}

static void add_flag(struct builder *b, char letter)
{
    char flag[3] = {'-', letter, '\0'};
    add(b, flag);
}

static void add_u64(struct builder *b, uint64_t value)
{
    char text[24];
    (void)snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
    add(b, text);
}

/* -K KIND=DIR for dir, unless it is "". */
static void add_cgroup(struct builder *b, const char *kind, const char *dir)
{
    char arg[600];

    if (dir[0] == '\0')
        return;
    add_flag(b, CS_MINDER_OPT_CGROUP);
    if (snprintf(arg, sizeof(arg), "%s=%s", kind, dir) >= (int)sizeof(arg))
        b->failed = true;
    else
        add(b, arg);
}

/* -R and the -K of each cgroup parent, when l sets a limit. */
static void add_limits(struct builder *b, const struct cs_limits *l,
                       const struct cs_cgroup_parents *p)
{
    char text[256];

    if (l == NULL || cs_limits_format(l, text, sizeof(text)) < 0 || text[0] == '\0')
        return;
    add_flag(b, CS_MINDER_OPT_LIMITS);
    add(b, text);
    if (p == NULL)
        return;
    add_cgroup(b, CS_CGROUP_V2, p->v2);
    add_cgroup(b, CS_CGROUP_V1_MEMORY, p->v1_memory);
    add_cgroup(b, CS_CGROUP_V1_PIDS, p->v1_pids);
}

bool cs_minder_stop_signal_ok(int signo)
{
    return signo == SIGTERM || signo == SIGINT || signo == SIGHUP || signo == SIGQUIT ||
           signo == SIGUSR1 || signo == SIGUSR2;
}

char **cs_minder_argv_new(const struct cs_minder_cmd *cmd)
{
    struct builder b = {.argv = calloc(ARGV_FIXED + cmd->n_command + 1, sizeof(char *))};
    if (b.argv == NULL)
        return NULL;
    add(&b, cmd->minder_path);
    add_flag(&b, CS_MINDER_OPT_DIR);
    add(&b, cmd->dir);
    if (cmd->timeout_ms > 0) {
        add_flag(&b, CS_MINDER_OPT_TIMEOUT);
        add_u64(&b, cmd->timeout_ms);
    }
    add_flag(&b, CS_MINDER_OPT_GRACE);
    add_u64(&b, cmd->grace_ms);
    if (cmd->stop_signal != 0 && cmd->stop_signal != SIGTERM) {
        add_flag(&b, CS_MINDER_OPT_SIGNAL);
        add_u64(&b, (uint64_t)cmd->stop_signal);
    }
    if (cmd->workdir != NULL && cmd->workdir[0] != '\0') {
        add_flag(&b, CS_MINDER_OPT_WORKDIR);
        add(&b, cmd->workdir);
    }
    if (cmd->lease_path != NULL) {
        add_flag(&b, CS_MINDER_OPT_LEASE);
        add(&b, cmd->lease_path);
    }
    add_limits(&b, cmd->limits, cmd->cgroups);
    add(&b, "--");
    if (cmd->n_command > 0) {
        for (size_t i = 0; i < cmd->n_command; i++)
            add(&b, cmd->command[i]);
    } else {
        add(&b, "/bin/sh");
        add(&b, "-c");
        add(&b, cmd->shell);
    }
    if (!b.failed)
        return b.argv;
    for (size_t i = 0; i < b.n; i++)
        free(b.argv[i]);
    free(b.argv);
    return NULL;
}

/* Replaces *argv with argv[0], the strings b holds (b->n of them, from
 * index 1) and the rest of *argv; on failure frees what b holds. */
static int put_after_path(char ***argv, size_t n, struct builder *b)
{
    if (b->failed) {
        for (size_t i = 1; i < b->n; i++)
            free(b->argv[i]);
        free(b->argv);
        return -ENOMEM;
    }
    b->argv[0] = (*argv)[0];
    memcpy(b->argv + b->n, *argv + 1, n * sizeof(char *)); /* the NULL too */
    free(*argv);
    *argv = b->argv;
    return 0;
}

static size_t argv_len(char **argv)
{
    size_t n = 0;
    while (argv[n] != NULL)
        n++;
    return n;
}

int cs_minder_argv_add_creds(char ***argv, const struct cs_minder_creds *creds)
{
    size_t n = argv_len(*argv);
    /* Each group is at most 10 digits and a comma; "-" stands for none. */
    char *list = malloc(creds->n_groups * 11 + 2);
    struct builder b = {.argv = calloc(n + 7, sizeof(char *)), .n = 1};
    if (list == NULL || b.argv == NULL) {
        free(b.argv);
        free(list);
        return -ENOMEM;
    }
    size_t len = 0;
    for (size_t i = 0; i < creds->n_groups; i++)
        len += (size_t)sprintf(list + len, "%s%u", i > 0 ? "," : "", (unsigned)creds->groups[i]);
    if (creds->n_groups == 0)
        strcpy(list, "-");
    add_flag(&b, CS_MINDER_OPT_UID);
    add_u64(&b, creds->uid);
    add_flag(&b, CS_MINDER_OPT_GID);
    add_u64(&b, creds->gid);
    add_flag(&b, CS_MINDER_OPT_GROUPS);
    add(&b, list);
    free(list);
    return put_after_path(argv, n, &b);
}

int cs_minder_argv_add_wait(char ***argv, int fd)
{
    size_t n = argv_len(*argv);
    struct builder b = {.argv = calloc(n + 1 + CS_MINDER_WAIT_ARGS, sizeof(char *)), .n = 1};
    if (b.argv == NULL)
        return -ENOMEM;
    add_flag(&b, CS_MINDER_OPT_WAIT);
    add_u64(&b, (uint64_t)fd);
    return put_after_path(argv, n, &b);
}

int cs_path_open_no_links(const char *path, int flags, mode_t mode)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .mode = (flags & O_CREAT) ? mode : 0,
                           .resolve = RESOLVE_NO_SYMLINKS};
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

    /* openat, not open: musl's open() follows O_CLOEXEC with an fcntl()
     * for old kernels, a syscall wasted. */
    if (fd < 0 && errno == ENOSYS) /* before Linux 5.6 */
        fd = openat(AT_FDCWD, path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    return fd < 0 ? -errno : (int)fd;
}

int cs_minder_dir_format(char *buf, size_t cap, const char *state_dir, int64_t run_id,
                         uint32_t attempt)
{
    int n =
        snprintf(buf, cap, "%s/" CS_ATTEMPTS_DIR "/%lld-%u", state_dir, (long long)run_id, attempt);
    return n >= 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

int cs_minder_dir_parse(const char *name, int64_t *run_id, uint32_t *attempt)
{
    char *end;
    if (name[0] < '1' || name[0] > '9')
        return -EINVAL;
    errno = 0;
    long long run = strtoll(name, &end, 10);
    if (errno != 0 || *end != '-' || end[1] < '1' || end[1] > '9')
        return -EINVAL;
    unsigned long number = strtoul(end + 1, &end, 10);
    if (errno != 0 || *end != '\0')
        return -EINVAL;
    *run_id = (int64_t)run;
    *attempt = (uint32_t)number;
    return 0;
}

/* Writes DIR/NAME into buf (4096 bytes); -ENAMETOOLONG if it does not fit. */
static int path_in(char *buf, const char *dir, const char *name)
{
    int n = snprintf(buf, 4096, "%s/%s", dir, name);
    return n >= 0 && n < 4096 ? 0 : -ENAMETOOLONG;
}

int cs_attempt_pid_publish(const char *dir, int32_t pid)
{
    char tmp[4096], path[4096], text[24];
    int rc = path_in(tmp, dir, CS_ATTEMPT_PID_TMP_FILE);
    if (rc == 0)
        rc = path_in(path, dir, CS_ATTEMPT_PID_FILE);
    if (rc != 0)
        return rc;
    int len = snprintf(text, sizeof(text), "%d\n", (int)pid);
    /* openat: musl's open() adds an fcntl for O_CLOEXEC (see note.c). */
    int fd = openat(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    errno = 0;
    rc = write(fd, text, (size_t)len) == len ? 0 : (errno != 0 ? -errno : -ENOSPC);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    /* link, not rename: it fails rather than replace a claim. */
    if (rc == 0 && link(tmp, path) != 0)
        rc = -errno;
    (void)unlink(tmp); /* a leftover only costs a few bytes */
    return rc;
}

int cs_attempt_pid_claim(const char *dir)
{
    char path[4096];
    int rc = path_in(path, dir, CS_ATTEMPT_PID_FILE);
    if (rc != 0)
        return rc;
    int fd = openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    (void)close(fd); /* empty: nothing written to lose */
    return 0;
}

void cs_minder_word_init(struct cs_minder_word *w, char byte, int fd)
{
    memset(w, 0, sizeof(*w));
    w->byte = byte;
    w->iov = (struct iovec){.iov_base = &w->byte, .iov_len = 1};
    w->msg.msg_iov = &w->iov;
    w->msg.msg_iovlen = 1;
    w->msg.msg_control = w->control.buf;
    w->msg.msg_controllen = sizeof(w->control.buf);
    if (fd < 0)
        return;
    struct cmsghdr *c = CMSG_FIRSTHDR(&w->msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

int cs_minder_word_fd(struct cs_minder_word *w)
{
    struct cmsghdr *c = CMSG_FIRSTHDR(&w->msg);
    int fd = -1;
    if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}
