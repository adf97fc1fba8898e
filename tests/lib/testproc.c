/* Processes for the test harness: spawning (as another user when asked),
 * bounded waits through a pidfd, removal of temp trees, log tails, and CPU
 * use read from /proc. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib_int.h"

extern char **environ;

/* child_exec runs in the forked child: only async-signal-safe calls. On
 * failure it writes errno to err_fd and exits 127. */
static _Noreturn void child_exec(const struct cs_test__spawn *s, pid_t parent, int err_fd)
{
    int err;

    if (s->new_session && setsid() < 0)
        goto fail;
    if (s->log_path != NULL) {
        int fd = open(s->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
            goto fail;
    }
    if (s->set_user) {
        if (setgroups(0, NULL) != 0 || setgid(s->gid) != 0 || setuid(s->uid) != 0)
            goto fail;
    }
    /* Set after the user change: a change of credentials clears it. */
    if (s->pdeath_signal != 0) {
        if (prctl(PR_SET_PDEATHSIG, s->pdeath_signal) != 0)
            goto fail;
        if (getppid() != parent)
            _exit(127);
    }
    execve(s->argv[0], (char *const *)s->argv, environ);
fail:
    err = errno;
    if (write(err_fd, &err, sizeof(err)) < 0) {
        /* Nothing more to report with. */
    }
    _exit(127);
}

int cs_test__spawn(const struct cs_test__spawn *s, pid_t *pid_out)
{
    int pipefd[2];
    int child_err = 0;
    pid_t parent = getpid();
    pid_t pid;
    ssize_t n;
    int wstatus;

    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -errno;
    pid = fork();
    if (pid < 0) {
        int err = -errno;
        close(pipefd[0]);
        close(pipefd[1]);
        return err;
    }
    if (pid == 0) {
        close(pipefd[0]);
        child_exec(s, parent, pipefd[1]);
    }
    close(pipefd[1]);
    do {
        n = read(pipefd[0], &child_err, sizeof(child_err));
    } while (n < 0 && errno == EINTR);
    close(pipefd[0]);
    if (n > 0) {
        waitpid(pid, &wstatus, 0);
        fprintf(stderr, "testlib: cannot start %s: %s\n", s->argv[0], strerror(child_err));
        return child_err > 0 ? -child_err : -ECHILD;
    }
    *pid_out = pid;
    return 0;
}

int cs_test__wait(pid_t pid, int timeout_ms, int *wstatus)
{
    int pidfd = pidfd_open(pid, 0);
    int rc = 0;

    if (pidfd < 0)
        return -errno;
    struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
    int64_t deadline = cs_test_now_ms() + timeout_ms;
    for (;;) {
        int64_t left = deadline - cs_test_now_ms();
        int n = poll(&pfd, 1, left > 0 ? (int)left : 0);
        if (n > 0)
            break;
        if (n == 0) {
            rc = -ETIMEDOUT;
            goto out_close;
        }
        if (errno != EINTR) {
            rc = -errno;
            goto out_close;
        }
    }
    while (waitpid(pid, wstatus, 0) < 0) {
        if (errno != EINTR) {
            rc = -errno;
            goto out_close;
        }
    }
out_close:
    close(pidfd);
    return rc;
}

int cs_test__exit_code(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 255;
}

int cs_test__run(const struct cs_test__spawn *s, int timeout_ms)
{
    pid_t pid;
    int wstatus;
    int rc = cs_test__spawn(s, &pid);

    if (rc != 0)
        return rc;
    rc = cs_test__wait(pid, timeout_ms, &wstatus);
    if (rc == -ETIMEDOUT) {
        fprintf(stderr, "testlib: %s took over %d ms; killed\n", s->argv[0], timeout_ms);
        kill(pid, SIGKILL);
        waitpid(pid, &wstatus, 0);
        return rc;
    }
    if (rc != 0)
        return rc;
    return cs_test__exit_code(wstatus);
}

/* The first failure of the removal under way: nftw's callback takes no
 * argument of the caller's. */
static _Thread_local int rm_error;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (remove(path) != 0 && errno != ENOENT) {
        fprintf(stderr, "testlib: cannot remove %s: %s\n", path, strerror(errno));
        if (rm_error == 0)
            rm_error = -errno;
    }
    return 0;
}

int cs_test_rmtree(const char *path)
{
    rm_error = 0;
    if (nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
        return -errno;
    return rm_error;
}

void cs_test__print_tail(const char *what, const char *path, long max_bytes)
{
    char buf[4096];
    size_t n;
    struct stat st;
    /* A FIFO (a stalled stderr) has no tail to show, and opening it may wait. */
    FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "r") : NULL;

    if (f == NULL)
        return;
    fprintf(stderr, "----- %s (%s), last %ld bytes -----\n", what, path, max_bytes);
    if (fseek(f, -max_bytes, SEEK_END) != 0)
        rewind(f);
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, stderr);
    fprintf(stderr, "----- end of %s -----\n", what);
    fclose(f);
}

const char *cs_test_tmp_base(void)
{
    /* A base of its own, not TMPDIR: the daemons' unix sockets live in
     * these dirs, and a path over 107 bytes cannot be bound. */
    const char *base = getenv("CSCHED_TEST_TMPDIR");
    return base == NULL || base[0] == '\0' ? "/tmp" : base;
}

int cs_test_mkdtemp(char *buf, size_t cap, const char *prefix)
{
    int n = snprintf(buf, cap, "%s/%s-XXXXXX", cs_test_tmp_base(), prefix);
    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    return mkdtemp(buf) != NULL ? 0 : -errno;
}

bool cs_test_keep_dirs(void)
{
    const char *v = getenv("CSCHED_TEST_KEEP");
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* Dirs discarded while deferring, removed when deferring ends. */
static struct {
    pthread_mutex_t lock;
    bool defer;
    char **paths;
    size_t n;
} discards = {.lock = PTHREAD_MUTEX_INITIALIZER};

void cs_test_discard_dir(const char *what, const char *path)
{
    if (cs_test_keep_dirs()) {
        fprintf(stderr, "testlib: kept %s dir %s\n", what, path);
        return;
    }
    pthread_mutex_lock(&discards.lock);
    bool later = discards.defer;
    if (later) {
        discards.paths = realloc(discards.paths, (discards.n + 1) * sizeof(*discards.paths));
        CS_TEST_TRUE(discards.paths != NULL);
        discards.paths[discards.n] = strdup(path);
        CS_TEST_TRUE(discards.paths[discards.n] != NULL);
        discards.n++;
    }
    pthread_mutex_unlock(&discards.lock);
    if (!later)
        cs_test_rmtree(path);
}

void cs_test_defer_discards(bool defer)
{
    pthread_mutex_lock(&discards.lock);
    discards.defer = defer;
    char **paths = defer ? NULL : discards.paths;
    size_t n = defer ? 0 : discards.n;
    if (!defer) {
        discards.paths = NULL;
        discards.n = 0;
    }
    pthread_mutex_unlock(&discards.lock);
    for (size_t i = 0; i < n; i++) {
        cs_test_rmtree(paths[i]);
        free(paths[i]);
    }
    free(paths);
}

int64_t cs_test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cs_test_sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* What read_stat takes from /proc/<pid>/stat. */
struct proc_stat {
    char state;
    int ppid, pgrp;
    long long ticks[4]; /* utime, stime, cutime, cstime (clock ticks) */
};

static int read_stat(pid_t pid, struct proc_stat *st)
{
    char path[64];
    char buf[1024];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -EIO;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    /* After the comm: state ppid pgrp session tty_nr tpgid flags minflt
     * cminflt majflt cmajflt utime stime cutime cstime. */
    if (p == NULL || sscanf(p + 1, " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld %lld %lld",
                            &st->state, &st->ppid, &st->pgrp, &st->ticks[0], &st->ticks[1],
                            &st->ticks[2], &st->ticks[3]) != 7)
        return -EIO;
    return 0;
}

int cs_test_proc_cpu_ms(pid_t pid, bool with_reaped, double *out)
{
    struct proc_stat st;
    int rc = read_stat(pid, &st);
    if (rc != 0)
        return rc;
    long long sum = st.ticks[0] + st.ticks[1] + (with_reaped ? st.ticks[2] + st.ticks[3] : 0);
    *out = (double)sum * 1000.0 / (double)sysconf(_SC_CLK_TCK);
    return 0;
}

int cs_test__each_process(cs_test__process_cb process_cb, void *arg)
{
    struct dirent *de;
    DIR *proc = opendir("/proc");

    if (proc == NULL)
        return -errno;
    while ((de = readdir(proc)) != NULL) {
        if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
            process_cb((pid_t)atoi(de->d_name), arg);
    }
    closedir(proc);
    return 0;
}

/* A walk over every process's stat: each visit sees the process and what
 * the walk is about (a root pid or a group, a signal), and adds to total. */
struct stat_walk {
    pid_t of;
    int sig;
    long long total;
    void (*visit)(pid_t pid, const struct proc_stat *st, struct stat_walk *w);
};

static void stat_walk_cb(pid_t pid, void *arg)
{
    struct stat_walk *w = arg;
    struct proc_stat st;

    if (read_stat(pid, &st) == 0)
        w->visit(pid, &st, w);
}

/* The walk's total, or a negative errno when /proc cannot be read. */
static long long stat_walk(struct stat_walk *w)
{
    int rc = cs_test__each_process(stat_walk_cb, w);
    return rc != 0 ? rc : w->total;
}

/* The CPU ticks of the root and of its children. */
static void add_tree_cpu(pid_t pid, const struct proc_stat *st, struct stat_walk *w)
{
    if (st->ppid == w->of || pid == w->of)
        w->total += st->ticks[0] + st->ticks[1];
}

int cs_test_tree_cpu_ms(pid_t pid, double *out)
{
    struct stat_walk w = {.of = pid, .visit = add_tree_cpu};
    long long ticks = stat_walk(&w);

    if (ticks < 0)
        return (int)ticks;
    *out = (double)ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK);
    return 0;
}

static void signal_child(pid_t pid, const struct proc_stat *st, struct stat_walk *w)
{
    if (st->ppid == w->of)
        (void)kill(pid, w->sig); /* it may have just exited */
}

int cs_test_signal_tree(pid_t pid, int sig)
{
    struct stat_walk w = {.of = pid, .sig = sig, .visit = signal_child};

    if (kill(pid, sig) != 0)
        return -errno;
    long long rc = stat_walk(&w);
    return rc < 0 ? (int)rc : 0;
}

static void count_live_member(pid_t pid, const struct proc_stat *st, struct stat_walk *w)
{
    (void)pid;
    if (st->pgrp == w->of && st->state != 'Z' && st->state != 'X')
        w->total++;
}

int cs_test_session_nice(pid_t pid)
{
    char path[64], line[128];
    const char *v = NULL;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/autogroup", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return CS_TEST_NO_AUTOGROUP;
    if (fgets(line, sizeof(line), f) != NULL)
        v = strstr(line, " nice ");
    fclose(f);
    return v != NULL ? atoi(v + 6) : CS_TEST_NO_AUTOGROUP;
}

int cs_test_group_live(pid_t pgid)
{
    struct stat_walk w = {.of = pgid, .visit = count_live_member};
    return (int)stat_walk(&w);
}
