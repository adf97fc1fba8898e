/* csched-minder: supervises one attempt. It publishes its pid, the attempt's
 * start record, and only then runs the command in its own process
 * group with output to capped log files, enforces the timeout (TERM to the
 * group, KILL after the grace period), turns SIGTERM/SIGINT into a cancel,
 * and, being a child subreaper, inherits whatever the command leaves behind
 * (even after setsid or a double fork): once the command ends, that is
 * stopped (TERM, grace, KILL), counted and reaped before the status note.
 * One thread, one poll() over a signalfd and the two output pipes; what each
 * event does in each state is the table near the end, as in s6-supervise.
 * Invariant: the group is signalled only while its leader is unreaped (alive
 * or a zombie), and a process only while it is our unreaped child, so no id
 * signalled can name someone else's process. libc only. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "minder_contract.h"
#include "note.h"

/* Files are opened with openat(AT_FDCWD, ...) rather than open(): musl's
 * open() follows O_CLOEXEC with an fcntl() for old kernels, a syscall wasted. */

#define PROG CS_MINDER_NAME

#define EXIT_USAGE 100
#define EXIT_SYSTEM 111
#define EXIT_START_FAILED 127

#define DEFAULT_CAP_BYTES (UINT64_C(16) << 20)
/* Bounds for -t and -g, so that milliseconds never overflow as nanoseconds. */
#define MAX_MS (UINT64_C(1) << 40)
#define NO_DEADLINE INT64_MAX
/* How often a leftover that escaped a listing of our children is looked for
 * again once they are being killed: KILL cannot be ignored, so only a
 * process that was missed (the listing is not atomic) can still be there. */
#define SWEEP_RETRY_MS 100

/* SWEEPING and SWEEP_KILLING: the command has ended and what it left behind
 * (our children now) is being stopped, with TERM and then KILL. */
enum state { UP, STOPPING, KILLING, SWEEPING, SWEEP_KILLING, DRAINING, NSTATES };
/* V_CHLD: the leader ended. After each round of reaping, V_LEFT: children
 * remain, or V_ALL_REAPED: none. */
enum event { V_TIMEOUT, V_CHLD, V_CANCEL, V_LEFT, V_ALL_REAPED, NEVENTS };

/* One of the command's output streams: pipe in, capped file out. */
struct output {
    const char *name;
    int pipe_fd; /* read end; -1 once at end of file */
    int file_fd;
    uint64_t written_bytes;
    bool write_failed;
};

/* The attempt. Static, as the program supervises exactly one. */
static struct {
    const char *dir;
    const char *workdir;
    char **argv;
    uint64_t timeout_ms, grace_ms, cap_bytes;

    enum state state;
    pid_t pid; /* the command, leader of its own group */
    int wstatus;
    bool leader_ended;  /* seen as a zombie: from then on, reaped children were left */
    bool leader_reaped; /* after this, the group id is no longer ours */
    bool no_children;   /* waitpid said ECHILD: everything is reaped */
    bool cont;
    int64_t deadline_ns;
    struct output out[2];
    struct cs_note note;
} m = {
    .grace_ms = CS_MINDER_KILL_GRACE_MS,
    .cap_bytes = DEFAULT_CAP_BYTES,
    .cont = true,
    .deadline_ns = NO_DEADLINE,
    .out = {{.name = CS_ATTEMPT_STDOUT_FILE, .pipe_fd = -1, .file_fd = -1},
            {.name = CS_ATTEMPT_STDERR_FILE, .pipe_fd = -1, .file_fd = -1}},
};

/* Writes one line to stderr. */
static __attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    /* Nothing is left to do if stderr is gone; the exit code still tells. */
    (void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static _Noreturn void die_usage(const char *why)
{
    say(PROG ": usage: %s: " CS_MINDER_USAGE "\n", why);
    _exit(EXIT_USAGE);
}

/* Dies on a system error (errno), taking the command's group down with it:
 * without the minder nobody would enforce its limits or record its end. */
static _Noreturn void die_unable(const char *verb, const char *object)
{
    int err = errno;

    if (m.pid > 0 && !m.leader_reaped)
        (void)kill(-m.pid, SIGKILL); /* ESRCH only: already gone */
    say(PROG ": fatal: unable to %s %s: %s\n", verb, object, strerror(err));
    _exit(EXIT_SYSTEM);
}

static int64_t now_ns(clockid_t clock)
{
    struct timespec ts;

    if (clock_gettime(clock, &ts) < 0)
        die_unable("read", "the clock");
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sets the note's message unless an earlier, more telling one is there. */
static __attribute__((format(printf, 1, 2))) void set_message(const char *fmt, ...)
{
    va_list ap;

    if (m.note.message[0] != '\0')
        return;
    va_start(ap, fmt);
    (void)vsnprintf(m.note.message, sizeof(m.note.message), fmt, ap); /* a cut is fine */
    va_end(ap);
}

/* Parses a whole decimal number of at most max; 0 or -1. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t value = 0;

    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        unsigned d = (unsigned char)*s - '0';

        if (d > 9 || value > (max - d) / 10)
            return -1;
        value = value * 10 + d;
    }
    *out = value;
    return 0;
}

static void parse_args(int argc, char **argv)
{
    int opt;

    opterr = 0;
    while ((opt = getopt(argc, argv, CS_MINDER_OPTSTRING)) != -1) {
        switch (opt) {
        case CS_MINDER_OPT_DIR:
            m.dir = optarg;
            break;
        case CS_MINDER_OPT_TIMEOUT:
            if (parse_u64(optarg, MAX_MS, &m.timeout_ms) < 0)
                die_usage("-t wants milliseconds");
            break;
        case CS_MINDER_OPT_GRACE:
            if (parse_u64(optarg, MAX_MS, &m.grace_ms) < 0)
                die_usage("-g wants milliseconds");
            break;
        case CS_MINDER_OPT_CAP:
            if (parse_u64(optarg, UINT64_MAX, &m.cap_bytes) < 0)
                die_usage("-c wants a byte count");
            break;
        case CS_MINDER_OPT_WORKDIR:
            m.workdir = optarg;
            break;
        default:
            die_usage("unknown option or missing value");
        }
    }
    if (m.dir == NULL)
        die_usage("-d is required");
    if (optind < 2 || strcmp(argv[optind - 1], "--") != 0 || optind >= argc)
        die_usage("the command goes after --");
    m.argv = argv + optind;
    if (m.workdir == NULL)
        m.workdir = m.dir;
}

/* Makes sure fds 0-2 are open, so no pipe lands on them and gets clobbered by
 * the child's dup2() calls. */
static void sanitize_std_fds(void)
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

/* Fails with the error number rc (from a posix_spawn* call) unless it is 0. */
static void check_spawn_setup(int rc)
{
    if (rc != 0) {
        errno = rc;
        die_unable("prepare", "the command's start");
    }
}

/* posix_spawnp() says only that the start failed, not at which step: retry
 * the chdir's checks here to tell a bad working directory from a bad command. */
static void record_start_failure(int err)
{
    struct stat st;
    int chdir_err = 0;

    m.note.outcome = CS_NOTE_START_FAILED;
    m.note.exit_code = EXIT_START_FAILED;
    if (stat(m.workdir, &st) < 0)
        chdir_err = errno;
    else if (!S_ISDIR(st.st_mode))
        chdir_err = ENOTDIR;
    else if (faccessat(AT_FDCWD, m.workdir, X_OK, AT_EACCESS) < 0)
        chdir_err = errno;
    if (chdir_err != 0)
        set_message("chdir(\"%s\"): %s", m.workdir, strerror(chdir_err));
    else
        set_message("exec(\"%s\"): %s", m.argv[0], strerror(err));
}

/* Starts the command: its own process group, the working directory, stdin
 * from /dev/null, output into the pipes, no signal blocked or ignored (the
 * server may ignore SIGPIPE, and ignored signals survive exec). Returns false
 * if it could not start (the note says why).
 * posix_spawn rather than fork: it shares the address space until the exec
 * (vfork-style, no page tables to copy; minder/README.md has the cost), and
 * the group exists before the call returns. */
static bool start(void)
{
    int out_pipe[2], err_pipe[2], devnull_fd, rc;
    posix_spawn_file_actions_t file_actions;
    posix_spawnattr_t attr;
    sigset_t none, reset;

    devnull_fd = openat(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull_fd < 0)
        die_unable("open", "/dev/null");
    if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0)
        die_unable("create", "pipes");

    sigemptyset(&none);
    sigemptyset(&reset);
    /* The classic signals are the ones servers and shells ignore. */
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaddset(&reset, sig);
    check_spawn_setup(posix_spawnattr_init(&attr));
    check_spawn_setup(posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
    check_spawn_setup(posix_spawnattr_setpgroup(&attr, 0));
    check_spawn_setup(posix_spawnattr_setsigmask(&attr, &none));
    check_spawn_setup(posix_spawnattr_setsigdefault(&attr, &reset));
    check_spawn_setup(posix_spawn_file_actions_init(&file_actions));
    check_spawn_setup(posix_spawn_file_actions_addchdir_np(&file_actions, m.workdir));
    check_spawn_setup(posix_spawn_file_actions_adddup2(&file_actions, devnull_fd, STDIN_FILENO));
    check_spawn_setup(posix_spawn_file_actions_adddup2(&file_actions, out_pipe[1], STDOUT_FILENO));
    check_spawn_setup(posix_spawn_file_actions_adddup2(&file_actions, err_pipe[1], STDERR_FILENO));

    m.note.started_unix_ms = now_ns(CLOCK_REALTIME) / 1000000;
    rc = posix_spawnp(&m.pid, m.argv[0], &file_actions, &attr, m.argv, environ);
    (void)posix_spawn_file_actions_destroy(&file_actions); /* frees memory only */
    (void)posix_spawnattr_destroy(&attr);
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
    record_start_failure(rc);
    return false;
}

/* Signals the command's whole group, continuing it first if it is stopped. */
static void signal_group(int sig)
{
    if (m.leader_reaped)
        return;
    if (kill(-m.pid, sig) < 0 && errno != ESRCH)
        die_unable("signal", "the command's process group");
    if (sig == SIGTERM)
        (void)kill(-m.pid, SIGCONT); /* same group, same outcome as above */
}

/* The action table. */

static void nop(void)
{
}

static void bail(void)
{
    m.cont = false;
}

static void stop(void)
{
    signal_group(SIGTERM);
    m.state = STOPPING;
    m.deadline_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)m.grace_ms * 1000000;
}

static void up_timeout(void)
{
    if (m.note.outcome == 0)
        m.note.outcome = CS_NOTE_TIMED_OUT;
    set_message("timed out after %llu ms", (unsigned long long)m.timeout_ms);
    stop();
}

static void up_cancel(void)
{
    if (m.note.outcome == 0)
        m.note.outcome = CS_NOTE_CANCELLED;
    set_message("cancelled");
    stop();
}

/* Sends sig to each of our children: after the leader's end, what the command
 * left behind (reparented to us, the subreaper). They are unreaped, so their
 * pids are still theirs. Returns false if they cannot be listed. */
static bool signal_children(int sig)
{
    char buf[4096];
    long pid = 0;
    bool in_number = false;
    ssize_t n;
    int fd = openat(AT_FDCWD, "/proc/thread-self/children", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return false;
    /* Space-separated pids; a number may straddle two reads. */
    while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (buf[i] - '0');
                in_number = true;
                continue;
            }
            if (in_number) {
                (void)kill((pid_t)pid, sig); /* a zombie ignores it: nothing lost */
                if (sig == SIGTERM)
                    (void)kill((pid_t)pid, SIGCONT);
            }
            pid = 0;
            in_number = false;
        }
    }
    if (in_number)
        (void)kill((pid_t)pid, sig);
    (void)close(fd); /* read-only fd: nothing to lose */
    return n == 0;
}

static void drain_start(void)
{
    m.state = DRAINING;
    m.deadline_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)CS_MINDER_DRAIN_MS * 1000000;
}

/* Without a list of our children nothing left can be stopped: say so and
 * go on as if all were gone, so the attempt still ends and is recorded. */
static void sweep_signal(int sig)
{
    if (!signal_children(sig)) {
        say(PROG ": unable to list the processes the command left: %s\n", strerror(errno));
        drain_start();
    }
}

static void term_children(void)
{
    sweep_signal(SIGTERM);
}

static void kill_children(void)
{
    sweep_signal(SIGKILL);
}

static void sweep_timeout(void)
{
    m.state = SWEEP_KILLING;
    m.deadline_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)SWEEP_RETRY_MS * 1000000;
    kill_children();
}

static void kill_children_again(void)
{
    m.deadline_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)SWEEP_RETRY_MS * 1000000;
    kill_children();
}

static void stopping_timeout(void)
{
    size_t len = strnlen(m.note.message, sizeof(m.note.message));

    /* Tell a person the grace period ran out, after whatever came first. */
    (void)snprintf(m.note.message + len, sizeof(m.note.message) - len, "%sSIGKILL after %llu ms",
                   len > 0 ? "; " : "", (unsigned long long)m.grace_ms); /* a cut is fine */
    signal_group(SIGKILL);
    m.state = KILLING;
    m.deadline_ns = NO_DEADLINE;
}

/* The leader ended with m.wstatus. An outcome decided earlier (timeout,
 * cancel, start failure) stands; the exit code or signal is added to it. */
static void ended(void)
{
    int wstatus = m.wstatus;

    if (WIFEXITED(wstatus)) {
        m.note.exit_code = WEXITSTATUS(wstatus);
        if (m.note.outcome == 0)
            m.note.outcome = CS_NOTE_EXITED;
    } else {
        m.note.term_signal = WTERMSIG(wstatus);
        if (m.note.outcome == 0)
            m.note.outcome = CS_NOTE_SIGNALED;
    }
    m.note.ended_unix_ms = now_ns(CLOCK_REALTIME) / 1000000;
    /* What it left is signalled once this round of reaping tells (V_LEFT). */
    m.state = SWEEPING;
    m.deadline_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)CS_MINDER_LEFTOVER_GRACE_MS * 1000000;
}

typedef void action_fn(void);

static action_fn *const actions[NSTATES][NEVENTS] = {
    /* V_TIMEOUT, V_CHLD, V_CANCEL, V_LEFT, V_ALL_REAPED */
    [UP] = {up_timeout, ended, up_cancel, nop, nop},
    [STOPPING] = {stopping_timeout, ended, nop, nop, nop},
    [KILLING] = {nop, ended, nop, nop, nop},
    [SWEEPING] = {sweep_timeout, nop, nop, term_children, drain_start},
    [SWEEP_KILLING] = {kill_children_again, nop, nop, kill_children, drain_start},
    [DRAINING] = {bail, nop, nop, nop, nop},
};

/* The main loop: poll, then turn what it saw into events for the table. */

static void reap(void)
{
    siginfo_t si;
    int wstatus;
    pid_t pid;

    if (!m.leader_reaped) {
        /* Peek first: while the leader is a zombie its group id is still
         * ours, so whatever it left running in the group is told to stop
         * here, including a member whose parent still lives. */
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)m.pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
            die_unable("wait", "for the command");
        if (si.si_pid == m.pid) {
            m.leader_ended = true;
            signal_group(SIGTERM);
        }
    }
    for (;;) {
        pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0 && errno == ECHILD) {
            m.no_children = true;
            (*actions[m.state][V_ALL_REAPED])();
            return;
        }
        if (pid < 0)
            die_unable("wait", "for children");
        if (pid == 0) {
            (*actions[m.state][V_LEFT])();
            return;
        }
        if (pid == m.pid) {
            m.leader_reaped = true;
            m.wstatus = wstatus;
            (*actions[m.state][V_CHLD])();
        } else if (m.leader_ended && m.note.leftover_processes < INT32_MAX) {
            m.note.leftover_processes++;
        }
    }
}

static void handle_signals(int sfd)
{
    struct signalfd_siginfo si;
    bool chld = false, cancel = false;
    ssize_t n;

    for (;;) {
        n = read(sfd, &si, sizeof(si));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n != (ssize_t)sizeof(si))
            die_unable("read", "signals");
        if (si.ssi_signo == SIGCHLD)
            chld = true;
        else
            cancel = true;
    }
    /* An end that raced a cancel is reported as the end it was. */
    if (chld)
        reap();
    if (cancel)
        (*actions[m.state][V_CANCEL])();
}

static void drain(struct output *o)
{
    char buf[65536];
    uint64_t room = m.cap_bytes - o->written_bytes;
    size_t keep, done = 0;
    ssize_t n;

    n = read(o->pipe_fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        (void)close(o->pipe_fd); /* read end: nothing to lose */
        o->pipe_fd = -1;
        return;
    }
    keep = (uint64_t)n < room ? (size_t)n : (size_t)room;
    if (keep < (size_t)n) {
        if (o == &m.out[0])
            m.note.stdout_truncated = true;
        else
            m.note.stderr_truncated = true;
    }
    o->written_bytes += keep;
    /* A full disk must not stop the supervision: stop logging, say why. */
    while (done < keep && !o->write_failed) {
        ssize_t w = write(o->file_fd, buf + done, keep - done);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            o->write_failed = true;
            set_message("unable to write %s: %s", o->name, strerror(errno));
            break;
        }
        done += (size_t)w;
    }
}

static int poll_timeout_ms(void)
{
    int64_t left_ns;

    if (m.deadline_ns == NO_DEADLINE)
        return -1;
    left_ns = m.deadline_ns - now_ns(CLOCK_MONOTONIC);
    if (left_ns <= 0)
        return 0;
    if (left_ns / 1000000 >= INT32_MAX)
        return INT32_MAX;
    return (int)((left_ns + 999999) / 1000000);
}

static void run_loop(int sfd)
{
    struct pollfd fds[3];

    while (m.cont) {
        fds[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
        fds[1] = (struct pollfd){.fd = m.out[0].pipe_fd, .events = POLLIN};
        fds[2] = (struct pollfd){.fd = m.out[1].pipe_fd, .events = POLLIN};
        if (poll(fds, 3, poll_timeout_ms()) < 0) {
            if (errno == EINTR)
                continue;
            die_unable("poll", "events");
        }
        for (int i = 0; i < 2; i++)
            if (m.out[i].pipe_fd >= 0 && fds[i + 1].revents != 0)
                drain(&m.out[i]);
        if (fds[0].revents != 0)
            handle_signals(sfd);
        if (m.deadline_ns != NO_DEADLINE && now_ns(CLOCK_MONOTONIC) >= m.deadline_ns)
            (*actions[m.state][V_TIMEOUT])();
        if (m.state == DRAINING && m.no_children && m.out[0].pipe_fd < 0 && m.out[1].pipe_fd < 0)
            bail();
    }
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

/* The attempt's start record, before anything of the command exists: a
 * restart of the server that finds it adopts this minder; one that finds
 * it missing claims the file, and then this minder starts nothing. A file
 * that cannot be written stops the start too: a command must not run where
 * nobody could find it. */
static void publish_pid(void)
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

static void open_logs(void)
{
    int dfd = openat(AT_FDCWD, m.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (dfd < 0)
        die_unable("open", m.dir);
    for (int i = 0; i < 2; i++) {
        m.out[i].file_fd =
            openat(dfd, m.out[i].name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (m.out[i].file_fd < 0)
            die_unable("create", m.out[i].name);
    }
    (void)close(dfd); /* read-only directory fd */
}

/* Nothing runs that cannot be recorded: the note's space is reserved
 * before the command starts. */
static void reserve_note(void)
{
    int rc = cs_note_reserve(m.dir);

    if (rc == 0)
        return;
    refuse_if_no_space(rc, "the status note");
    errno = -rc;
    die_unable("reserve space for", "the status note");
}

static void finish(void)
{
    struct rusage ru;
    int rc;

    /* Everything reaped was ours: the command and what it left behind. */
    if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
        die_unable("read", "resource use");
    m.note.user_cpu_ms = (int64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
    m.note.system_cpu_ms = (int64_t)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
    m.note.max_rss_kb = ru.ru_maxrss;
    if (m.note.ended_unix_ms == 0)
        m.note.ended_unix_ms = now_ns(CLOCK_REALTIME) / 1000000;
    rc = cs_note_write(m.dir, &m.note);
    if (rc < 0) {
        errno = -rc;
        die_unable("write", "the status note");
    }
}

int main(int argc, char **argv)
{
    sigset_t set;
    int sfd;

    /* First its own session, so nothing sent to the server's process group
     * (a Ctrl-C, a stop of its service) reaches the minder from now on. It
     * fails only for a group leader, e.g. one spawned with
     * POSIX_SPAWN_SETSID, which is already out of that group. */
    (void)setsid();
    /* Then block the signals at once: a cancel sent right after the start
     * waits in the signalfd made below instead of killing the minder. */
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        die_unable("block", "signals");
    parse_args(argc, argv);
    sanitize_std_fds();
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
        die_unable("become", "a subreaper");
    sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0)
        die_unable("create", "a signalfd");
    publish_pid();
    open_logs();
    reserve_note();

    if (start()) {
        m.state = UP;
        if (m.timeout_ms > 0)
            m.deadline_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)m.timeout_ms * 1000000;
        run_loop(sfd);
    }
    finish();
    return 0;
}
