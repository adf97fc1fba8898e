/* Starting the command: fds 0-2 made safe, the start record and the note's
 * reserve first, then the spawn into its own group, the group id left for
 * the server: a child of our own that, with -u or limits, drops privileges
 * and sets the limits before the exec. Invariant: nothing runs that
 * could not be found or recorded; no room for the start record or the note refuses the start, with
 * the status the server reports as "no space". libc only. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h> /* mkdir */
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asan_stack.h"
#include "minder_drop.h"
#include "minder_internal.h"

#define EXIT_START_FAILED 127

/* A build for the tests reads the setting from a file of its own. */
#ifndef CS_MINDER_SUID_DUMPABLE_PATH
#define CS_MINDER_SUID_DUMPABLE_PATH "/proc/sys/fs/suid_dumpable"
#endif

void enter_own_session(void)
{
    pid_t server = getppid();
    struct timespec none_left = {0, 0};
    sigset_t all, kept;
    siginfo_t si;
    bool cancel = false;

    /* Fails only for a session leader (a minder spawned into a session of
     * its own): it then has one already. */
    (void)setsid();
    sigfillset(&all);
    if (sigprocmask(SIG_BLOCK, &all, NULL) < 0)
        die_unable("block", "signals");
    while (sigtimedwait(&all, &si, &none_left) > 0) {
        if ((si.si_signo == SIGTERM || si.si_signo == SIGINT) && si.si_pid == server)
            cancel = true;
        else
            say(PROG ": signal %d (%s), sent to the server's process group before the minder "
                     "had a session of its own, ignored\n",
                si.si_signo, strsignal(si.si_signo));
    }
    /* From here on a cancel waits in the signalfd: TERM and INT stay blocked,
     * with CHLD; everything else acts as it would. */
    sigemptyset(&kept);
    sigaddset(&kept, SIGCHLD);
    sigaddset(&kept, SIGTERM);
    sigaddset(&kept, SIGINT);
    if (sigprocmask(SIG_SETMASK, &kept, NULL) < 0)
        die_unable("block", "signals");
    if (cancel)
        (void)kill(getpid(), SIGTERM); /* pending again, for the signalfd */
}

void sanitize_std_fds(void)
{
    /* One poll() tells all three apart: a closed fd reports POLLNVAL. */
    struct pollfd fds[3] = {{.fd = 0}, {.fd = 1}, {.fd = 2}};

    if (poll(fds, 3, 0) < 0)
        die_unable("check", "fds 0-2");
    for (int fd = 0; fd <= 2; fd++)
        if ((fds[fd].revents & POLLNVAL) && openat(AT_FDCWD, "/dev/null", O_RDWR) != fd)
            die_unable("open", "/dev/null");
}

/* Leaves the command's group id for the server (best effort, no fsync): if
 * the minder is killed outright, the server stops the group it leaves. */
static void record_pgid(void)
{
    char path[4096], text[24];
    int len = snprintf(text, sizeof(text), "%d\n", (int)m.pid);
    (void)snprintf(path, sizeof(path), "%s/%s", m.dir, CS_ATTEMPT_PGID_FILE);
    int fd = openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    /* A short write only costs the clean-up after a killed minder. */
    (void)!write(fd, text, (size_t)len);
    (void)close(fd);
}

/* The syscall itself, as musl leaves sched_setscheduler out; a failure
 * costs only the policy, so it is not checked. */
static void set_policy(int policy)
{
    struct sched_param param = {0};
    (void)syscall(SYS_sched_setscheduler, 0, policy, &param);
}

/* What a child that could not exec tells the minder. */
struct child_report {
    char step[32];
    int err;
};

/* What the child of a start needs, and where it leaves why it failed. */
struct child {
    int devnull_fd;
    int out_fd;
    int err_fd;
    struct child_report report;
};

/* The child: its group, its fds, its signals, the drop, the working
 * directory, the exec. A working directory of the job's own is entered as
 * the new user (it must be theirs to enter); the attempt's DIR/work, made
 * for them, before the drop (the state dir above it may be closed to
 * them). Only system calls, as after a fork of any program: the child may
 * share the minder's memory (start_child). Returns only if a step failed,
 * with that step and its error in c->report; nothing ran. */
static void child_exec(struct child *c)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    const char *step = "setpgid";
    sigset_t none;
    int rc;

    if (setpgid(0, 0) < 0)
        goto fail;
    step = "dup2";
    if (dup2(c->devnull_fd, STDIN_FILENO) < 0 || dup2(c->out_fd, STDOUT_FILENO) < 0 ||
        dup2(c->err_fd, STDERR_FILENO) < 0)
        goto fail;
    /* The classic signals, the ones servers and shells ignore, back to
     * their defaults (KILL and STOP have none to change). */
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)sigaction(sig, &dfl, NULL);
    sigemptyset(&none);
    step = "sigprocmask";
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        goto fail;
    step = "chdir";
    if (m.enter_first && chdir(m.workdir) < 0)
        goto fail;
    /* The cgroups are joined while still root; the rlimits set after the
     * drop, so that RLIMIT_NPROC is checked against the new uid. */
    if (m.has_limits && (rc = limits_enter(&step)) < 0) {
        errno = -rc;
        goto fail;
    }
    if (m.drop &&
        (rc = cs_drop_privileges(&cs_drop_sys, m.uid, m.gid, m.groups, m.n_groups, &step)) < 0) {
        errno = -rc;
        goto fail;
    }
    if (m.has_limits && (rc = limits_set_rlimits(&step)) < 0) {
        errno = -rc;
        goto fail;
    }
    step = "chdir";
    if (!m.enter_first && chdir(m.workdir) < 0)
        goto fail;
    step = "exec";
    execvp(m.argv[0], m.argv);
fail:
    c->report.err = errno;
    (void)strncpy(c->report.step, step, sizeof(c->report.step) - 1);
}

/* The message of a child's failed start, naming the step and the ids. */
static void record_child_failure(const struct child_report *r)
{
    m.note.outcome = CS_NOTE_START_FAILED;
    m.note.exit_code = EXIT_START_FAILED;
    if (strcmp(r->step, "chdir") == 0 && m.drop)
        set_message("chdir(\"%s\") as uid %u: %s", m.workdir, (unsigned)m.uid, strerror(r->err));
    else if (strcmp(r->step, "chdir") == 0)
        set_message("chdir(\"%s\"): %s", m.workdir, strerror(r->err));
    else if (strcmp(r->step, "exec") == 0)
        set_message("exec(\"%s\"): %s", m.argv[0], strerror(r->err));
    else if (strcmp(r->step, "cgroup") == 0 || strcmp(r->step, "setrlimit") == 0)
        set_message("%s failed setting the command's limits: %s: the command was not run", r->step,
                    strerror(r->err));
    else if (!m.drop)
        set_message("%s failed: %s: the command was not run", r->step, strerror(r->err));
    else
        set_message("%s failed dropping to uid %u gid %u (%zu groups): %s: the command was not run",
                    r->step, (unsigned)m.uid, (unsigned)m.gid, m.n_groups, strerror(r->err));
}

/* A child that shares the minder's memory may drop to the command's user
 * only where the kernel then keeps that user from tracing it: the drop
 * makes the memory dumpable as fs.suid_dumpable says, and at 1 the user
 * could ptrace the child and, through it, write into the minder, which
 * stays root. 0 (the default) and 2 leave it to root alone. */
static bool drop_may_share_memory(void)
{
    char mode = '1';
    int fd = openat(AT_FDCWD, CS_MINDER_SUID_DUMPABLE_PATH, O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        if (read(fd, &mode, 1) != 1)
            mode = '1';
        (void)close(fd);
    }
    return mode == '0' || mode == '2';
}

static int child_main(void *arg)
{
    child_exec(arg);
    return EXIT_START_FAILED;
}

/* clone(CLONE_VM | CLONE_VFORK), as posix_spawn is, on a buffer of this
 * frame: no page tables to copy, and the minder sleeps until the child has
 * exec'd or exited, so the buffer and the report are the child's alone
 * meanwhile. Returns the child's pid, or -1 (errno set). */
static pid_t clone_child(struct child *c)
{
    /* Larger than what the child's calls need, with ASan's: the deepest is
     * glibc's execvp of a script without "#!", which copies the command's
     * arguments to its stack (32 KiB at CS_MINDER_COMMAND_ARGS_MAX), beside
     * its PATH buffer (PATH_MAX). */
    _Alignas(16) char stack[65536];
    pid_t pid = clone(child_main, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, c);

    CS_ASAN_UNPOISON(stack, sizeof(stack));
    return pid;
}

/* A fork, where the child may not share the minder's memory; its report
 * comes through a close-on-exec pipe. Returns the child's pid. */
static pid_t fork_child(struct child *c)
{
    int report[2];
    ssize_t n;

    if (pipe2(report, O_CLOEXEC) < 0)
        die_unable("create", "a pipe");
    pid_t pid = fork();
    if (pid < 0)
        die_unable("fork", "the command");
    if (pid == 0) {
        child_exec(c);
        (void)!write(report[1], &c->report, sizeof(c->report));
        _exit(EXIT_START_FAILED);
    }
    /* Both sides set the group, so it exists whichever runs first. */
    (void)setpgid(pid, pid);
    (void)close(report[1]);
    do
        n = read(report[0], &c->report, sizeof(c->report));
    while (n < 0 && errno == EINTR);
    (void)close(report[0]);
    if (n != (ssize_t)sizeof(c->report))
        memset(&c->report, 0, sizeof(c->report)); /* closed by the exec */
    return pid;
}

/* The child that runs the command, started as posix_spawn starts one but
 * with the steps posix_spawn has none for (the drop, the cgroups, the
 * rlimits), and telling which step failed. Returns 0 or an error number;
 * the failure is recorded. */
static int start_child(int devnull_fd, int out_fd, int err_fd)
{
    struct child c = {devnull_fd, out_fd, err_fd, {{0}, 0}};

    if (!m.drop || drop_may_share_memory()) {
        m.pid = clone_child(&c);
        if (m.pid < 0)
            die_unable("start", "the command");
    } else {
        m.pid = fork_child(&c);
    }
    if (c.report.step[0] == '\0')
        return 0; /* exec'd: the command runs */
    while (waitpid(m.pid, NULL, 0) < 0 && errno == EINTR)
        continue;
    c.report.step[sizeof(c.report.step) - 1] = '\0';
    record_child_failure(&c.report);
    return c.report.err != 0 ? c.report.err : EIO;
}

static void refuse_if_no_space(int rc, const char *what);

/* Makes DIR/work, the working directory of a command run as another user
 * without -C, and gives it to that user: theirs to write in, inside DIR,
 * which stays the server's (the command can neither forge its note nor
 * plant a link there). Made here rather than by the server so that each
 * minder pays for its own inode, not the thread that starts them all.
 * Returns false if it could not (the note says why). */
static bool make_work_dir(void)
{
    int fd, err = 0;

    if (mkdir(m.workdir, 0700) < 0)
        err = errno;
    else if ((fd = openat(AT_FDCWD, m.workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
             0)
        err = errno;
    else {
        if (fchown(fd, m.uid, m.gid) < 0)
            err = errno;
        (void)close(fd); /* a directory: nothing to lose */
    }
    if (err == 0)
        return true;
    refuse_if_no_space(-err, "the command's working directory");
    m.note.outcome = CS_NOTE_START_FAILED;
    m.note.exit_code = EXIT_START_FAILED;
    set_message("making %s for uid %u failed: %s", m.workdir, (unsigned)m.uid, strerror(err));
    return false;
}

/* Starts the command: its own process group, the working directory, stdin
 * from /dev/null, output into the pipes, no signal blocked or ignored (the
 * server may ignore SIGPIPE, and ignored signals survive exec), and, with
 * -u, as that user. Returns false if it could not start (the note says why). */
bool start(void)
{
    int out_pipe[2], err_pipe[2], devnull_fd, rc;

    if (m.enter_first && !make_work_dir())
        return false;
    devnull_fd = openat(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull_fd < 0)
        die_unable("open", "/dev/null");
    if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0)
        die_unable("create", "pipes");
    /* The command gets the usual policy, as does the minder from now on. */
    if (m.batch)
        set_policy(SCHED_OTHER);
    m.note.started_unix_ms = now_ns(CLOCK_REALTIME) / 1000000;
    rc = start_child(devnull_fd, out_pipe[1], err_pipe[1]);
    (void)close(devnull_fd); /* the child's copies are its own: nothing to lose */
    (void)close(out_pipe[1]);
    (void)close(err_pipe[1]);
    m.out[0].pipe_fd = out_pipe[0];
    m.out[1].pipe_fd = err_pipe[0];
    if (rc == 0) {
        record_pgid();
        return true;
    }
    m.pid = 0;
    return false;
}

/* Without room in the attempt's directory nothing may run, as nothing could
 * be recorded: the minder exits, the command not run, with the status the
 * server reports as "no space". Returns only for other errors. */
static void refuse_if_no_space(int rc, const char *what)
{
    if (rc != -ENOSPC && rc != -EDQUOT)
        return;
    say(PROG ": no room for %s in %s (%s): the command was not run\n", what, m.dir, strerror(-rc));
    _exit(CS_MINDER_EXIT_NO_SPACE);
}

/* A minder started ahead of its attempt's due time has everything a start
 * costs behind it, and touches nothing until the server says go: then it
 * goes on as one just started would. At end of file (the server gone, or
 * done with it) there is nothing to undo. */
/* Reads the server's byte from the wait socket: CS_MINDER_GO, or
 * CS_MINDER_ARM with its gate (its fd in *gate_fd), or exits: an end of
 * file or anything else means the server is gone or done with this minder. */
static char read_word(int *gate_fd)
{
    struct cs_minder_word w;
    ssize_t n;

    cs_minder_word_init(&w, 0, -1);
    while ((n = recvmsg(m.wait_fd, &w.msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        continue;
    if (n == 1)
        *gate_fd = cs_minder_word_fd(&w);
    if (n == 1 && w.byte == CS_MINDER_GO)
        return w.byte;
    if (n == 1 && w.byte == CS_MINDER_ARM && *gate_fd >= 0)
        return w.byte;
    _exit(CS_MINDER_EXIT_GIVEN_UP);
}

/* Armed: waits for the gate to open, or for the socket to say otherwise.
 * The gate comes first: the server opens it before it closes the socket
 * of a minder it released, and kills one it takes back before it opens. */
static void wait_for_gate(int gate_fd)
{
    struct pollfd fds[2] = {{.fd = gate_fd, .events = POLLIN}, {.fd = m.wait_fd, .events = POLLIN}};

    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            die_unable("wait for", "the release gate");
        }
        if (fds[0].revents & POLLIN)
            break;
        if (fds[1].revents != 0) {
            int none = -1;
            (void)read_word(&none); /* a go, or the exit */
            break;
        }
    }
    (void)close(gate_fd); /* an eventfd shared with the others: nothing to lose */
}

void wait_for_go(void)
{
    int gate_fd = -1;

    /* A burst releases hundreds at once: a batch task, a minder preempts
     * neither the loop nor the launch threads, on waking or while it makes
     * its start record and its logs, and they preempt it. */
    set_policy(SCHED_BATCH);
    m.batch = true;
    if (read_word(&gate_fd) == CS_MINDER_ARM)
        wait_for_gate(gate_fd);
    (void)close(m.wait_fd); /* the command must not inherit it */
    m.wait_fd = -1;
}

/* The attempt's start record, before anything of the command exists: a
 * restart of the server that finds it adopts this minder; one that finds
 * it missing claims the file, and then this minder starts nothing. A file
 * that cannot be written stops the start too: a command must not run where
 * nobody could find it. */
void publish_pid(void)
{
    int rc = cs_attempt_pid_publish(m.dir, (int32_t)getpid());

    if (rc == -EEXIST) {
        say(PROG ": %s was given up by cschedd before it started: not starting it\n", m.dir);
        _exit(CS_MINDER_EXIT_GIVEN_UP);
    }
    if (rc < 0) {
        refuse_if_no_space(rc, "the start record");
        errno = -rc;
        die_unable("record the start in", m.dir);
    }
}

/* Nothing runs that cannot be recorded: the note's space is reserved
 * before the command starts. */
void reserve_note(void)
{
    int rc = cs_note_reserve_at(m.dir_fd);

    if (rc == 0)
        return;
    refuse_if_no_space(rc, "the status note");
    errno = -rc;
    die_unable("reserve space for", "the status note");
}
