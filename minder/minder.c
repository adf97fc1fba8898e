/* csched-minder: supervises one attempt. It publishes its pid, the attempt's
 * start record, and only then runs the command in its own process
 * group with output to capped log files, enforces the timeout (the stop
 * signal, TERM unless -s names another, to the group, KILL after the grace
 * period), turns SIGTERM/SIGINT into a cancel (stopped the same way),
 * and, being a child subreaper, inherits whatever the command leaves behind
 * (even after setsid or a double fork): once the command ends, that is
 * stopped (TERM, grace, KILL), counted and reaped before the status note.
 * One thread, one poll() over a signalfd, the two output pipes and, with
 * -L, the lease's timer; what each
 * event does in each state is the table near the end, as in s6-supervise.
 * Invariant: the group is signalled only while its leader is unreaped (alive
 * or a zombie), and a process only while it is our unreaped child, so no id
 * signalled can name someone else's process. libc only. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "minder_internal.h"

/* How often a leftover that escaped a listing of our children is looked for
 * again once they are being killed: KILL cannot be ignored, so only a
 * process that was missed (the listing is not atomic) can still be there. */
#define SWEEP_RETRY_MS 100
/* poll(2)'s timeout for none. */
#define POLL_FOREVER (-1)

/* V_CHLD: the leader ended. After each round of reaping, V_LEFT: children
 * remain, or V_ALL_REAPED: none. V_FENCE: the lease's deadline passed. */
enum event { V_TIMEOUT, V_CHLD, V_CANCEL, V_LEFT, V_ALL_REAPED, V_FENCE, NEVENTS };

/* Signals the command's whole group, continuing it after anything but KILL
 * (which needs no help), so a stopped command sees the signal. */
static void signal_group(int sig)
{
    if (m.leader_reaped)
        return;
    if (sig == SIGKILL)
        cgroup_kill();
    if (kill(-m.pid, sig) < 0 && errno != ESRCH)
        die_unable("signal", "the command's process group");
    if (sig != SIGKILL)
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
    signal_group(m.stop_signal);
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

/* lease_ran_out has set the message. */
static void up_fence(void)
{
    if (m.note.outcome == 0)
        m.note.outcome = CS_NOTE_FENCED;
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
    cgroup_kill();
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
    /* V_TIMEOUT, V_CHLD, V_CANCEL, V_LEFT, V_ALL_REAPED, V_FENCE */
    [UP] = {up_timeout, ended, up_cancel, nop, nop, up_fence},
    [STOPPING] = {stopping_timeout, ended, nop, nop, nop, nop},
    [KILLING] = {nop, ended, nop, nop, nop, nop},
    [SWEEPING] = {sweep_timeout, nop, nop, term_children, drain_start, nop},
    [SWEEP_KILLING] = {kill_children_again, nop, nop, kill_children, drain_start, nop},
    [DRAINING] = {bail, nop, nop, nop, nop, nop},
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

/* poll(2)'s timeout: until the deadline, or POLL_FOREVER without one. */
static int poll_timeout_ms(void)
{
    int64_t left_ns;

    if (m.deadline_ns == NO_DEADLINE)
        return POLL_FOREVER;
    left_ns = m.deadline_ns - now_ns(CLOCK_MONOTONIC);
    if (left_ns <= 0)
        return 0;
    if (left_ns / 1000000 >= INT32_MAX)
        return INT32_MAX;
    return (int)((left_ns + 999999) / 1000000);
}

static void run_loop(int sfd)
{
    struct pollfd fds[4];

    while (m.cont) {
        fds[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
        fds[1] = (struct pollfd){.fd = m.out[0].pipe_fd, .events = POLLIN};
        fds[2] = (struct pollfd){.fd = m.out[1].pipe_fd, .events = POLLIN};
        /* Only a running command is fenced: once it is being stopped, or
         * has ended, the lease changes nothing, and its timer would only
         * keep waking the loop. */
        fds[3] = (struct pollfd){.fd = m.state == UP ? m.lease_timer_fd : -1, .events = POLLIN};
        if (poll(fds, 4, poll_timeout_ms()) < 0) {
            if (errno == EINTR)
                continue;
            die_unable("poll", "events");
        }
        for (int i = 0; i < 2; i++)
            if (m.out[i].pipe_fd >= 0 && fds[i + 1].revents != 0)
                drain(&m.out[i]);
        if (fds[0].revents != 0)
            handle_signals(sfd);
        if (fds[3].revents != 0 && m.state == UP && lease_ran_out())
            (*actions[m.state][V_FENCE])();
        if (m.deadline_ns != NO_DEADLINE && now_ns(CLOCK_MONOTONIC) >= m.deadline_ns)
            (*actions[m.state][V_TIMEOUT])();
        if (m.state == DRAINING && m.no_children && m.out[0].pipe_fd < 0 && m.out[1].pipe_fd < 0)
            bail();
    }
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
    if (m.has_limits)
        limits_finish();
    rc = cs_note_write_at(m.dir_fd, &m.note);
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
     * (a Ctrl-C, a stop of its service) reaches the minder from now on; a
     * cancel sent right after the start waits in the signalfd made below. */
    enter_own_session();
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    parse_args(argc, argv);
    sanitize_std_fds();
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
        die_unable("become", "a subreaper");
    /* A command under the minder's own uid must not be able to ptrace it
     * (and so write its note, or stop it from writing one); exec gives the
     * command its own flag back. */
    if (prctl(PR_SET_DUMPABLE, 0) < 0)
        die_unable("become", "not dumpable");
    sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0)
        die_unable("create", "a signalfd");
    /* Before the wait of a minder started ahead, as the rest of a start's
     * cost; the deadline itself is read only once it is released. */
    if (m.lease_path != NULL)
        lease_open();
    if (m.wait_fd >= 0)
        wait_for_go();
    publish_pid();
    open_logs();
    reserve_note();

    if (lease_allows_start() && (!m.has_limits || cgroup_make()) && start()) {
        m.state = UP;
        if (m.timeout_ms > 0)
            m.deadline_ns = now_ns(CLOCK_MONOTONIC) + (int64_t)m.timeout_ms * 1000000;
        lease_arm();
        run_loop(sfd);
    }
    finish();
    return 0;
}
