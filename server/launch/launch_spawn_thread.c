/* launch_spawn: what every start of a minder does on a launch thread,
 * started for its attempt or ahead of it (ahead_minder_thread.c): who the
 * command runs as, and the spawn itself. */
#define CS_LOG_COMPONENT "launch"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asan_stack.h"
#include "launcher_thread.h"
#include "log.h"
#include "minder_contract.h"
#include "runas.h"
#include "runas_cache.h"

int cs_launch_prepare_user(struct cs_launch *launch, struct cs_err *err)
{
    struct cs_runas r;
    int rc = cs_runas_cache_resolve(cs_runas_cache_shared(), launch->run_as_user,
                                    launch->run_as_group, launch->default_user, &r, err);
    if (rc != 0)
        return rc;
    if (!r.drop)
        goto out_clear;
    struct cs_minder_creds creds = {
        .uid = r.uid, .gid = r.gid, .groups = r.groups, .n_groups = r.n_groups};
    /* Out of memory: the server aborts, as cs_xmalloc does. */
    CS_ASSERT(cs_minder_argv_add_creds(&launch->argv, &creds) == 0);
    cs_runas_set_env(&launch->envp, &r);

out_clear:
    cs_runas_clear(&r);
    return rc;
}

/* What the child of a spawn needs, and where it leaves its error: it
 * shares our memory until its exec. */
struct spawn_child {
    const char *path;
    char *const *argv;
    char *const *envp;
    int wait_fd;
    int err; /* the errno of the step that failed, or 0 */
};

/* Signals whose handlers cschedd installs: the minder starts with them at
 * their defaults (a handler is an address in our memory, not in its). */
static const int reset_signals[] = {SIGTERM, SIGINT, SIGPIPE, SIGHUP, SIGCHLD};

/* Each returns 0 or a negative errno. */
static int move_fd(int from, int to)
{
    if (from == to)
        return fcntl(to, F_SETFD, 0) < 0 ? -errno : 0; /* keep it across the exec */
    return dup2(from, to) < 0 ? -errno : 0;
}

static int open_on(const char *path, int flags, int to)
{
    int fd = open(path, flags);
    if (fd < 0)
        return -errno;
    if (fd == to)
        return 0;
    int rc = dup2(fd, to) < 0 ? -errno : 0;
    (void)close(fd);
    return rc;
}

/* The child, on a stack of the parent's (which waits until it execs or
 * exits): system calls only, nothing that takes a lock or allocates. */
static int spawn_child_main(void *arg)
{
    struct spawn_child *c = arg;
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (size_t i = 0; i < sizeof(reset_signals) / sizeof(reset_signals[0]); i++)
        (void)sigaction(reset_signals[i], &dfl, NULL);
    /* The wait fd first: it may be numbered 0 or 1 itself. */
    int last_kept = STDERR_FILENO;
    int rc = c->wait_fd >= 0 ? move_fd(c->wait_fd, last_kept = CS_LAUNCH_WAIT_FD) : 0;
    if (rc == 0)
        rc = open_on("/dev/null", O_RDONLY, STDIN_FILENO);
    if (rc == 0)
        rc = open_on("/dev/null", O_WRONLY, STDOUT_FILENO);
    /* Nothing of ours beyond stderr (the log): an fd cschedd inherited
     * without close-on-exec would otherwise reach every command. */
    if (rc == 0 && close_range((unsigned)last_kept + 1, ~0u, 0) != 0)
        rc = -errno;
    if (rc == 0) {
        (void)execve(c->path, c->argv, c->envp);
        rc = -errno;
    }
    c->err = -rc;
    _exit(127);
}

/* posix_spawn made of clone(CLONE_VM | CLONE_VFORK) on a stack of ours, as
 * musl's is: glibc's maps a stack for each spawn and unmaps it after, and in
 * a process of several threads each unmapping interrupts every core that
 * runs one of them to flush its TLB (docs/design/0037). */
int cs_launch_spawn_minder(const char *minder_path, struct cs_launch *launch, int wait_fd)
{
    /* Larger than what the child's few calls need, with ASan's too. */
    _Alignas(16) char stack[32768];
    struct spawn_child c = {minder_path, launch->argv, launch->envp, wait_fd, 0};
    sigset_t all, was;
    /* Born with every signal blocked and in our session, the minder makes
     * its own session first thing and keeps of what came before only a
     * cancel from us (minder_internal.h, enter_own_session): a session made
     * here, before the exec, would weigh the exec like one job among the
     * hundreds a burst starts, while this thread waits for it. A cancel sent
     * the moment the spawn returns waits for the minder's signalfd. Blocked
     * here, no handler of ours can run in the child either (glibc keeps its
     * two of thread cancellation and setuid unblockable; cschedd uses
     * neither). */
    sigfillset(&all);
    (void)pthread_sigmask(SIG_SETMASK, &all, &was);
    pid_t pid =
        clone(spawn_child_main, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
    int rc = pid < 0 ? -errno : 0;
    (void)pthread_sigmask(SIG_SETMASK, &was, NULL);
    CS_ASAN_UNPOISON(stack, sizeof(stack));
    if (rc != 0)
        return rc;
    if (c.err != 0) {
        /* It exited without its exec: reap it, nobody else knows of it. */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return -c.err;
    }
    launch->pid = pid;
    return 0;
}
