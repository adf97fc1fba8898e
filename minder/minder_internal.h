/* What the minder's files share: the attempt being supervised (one object,
 * m) and the helpers every file uses to report and die.
 * The files, each with one job:
 *   minder.c          main, the state x event table and the poll loop
 *   minder_args.c     the command line
 *   minder_start.c    the start record, the note's reserve, the spawn
 *   minder_output.c   the capped logs and the draining of the pipes into them
 *   minder_drop.c     the privilege drop of a command run as another user
 *   minder_lease.c    the replica's lease (-L): the deadline read, the wake
 *                     at it, and the fence when it passes unrenewed
 *   minder_cgroup.c   the limits (-R, -K): the attempt's cgroups made,
 *                     joined, read for peak memory and OOM kills, removed,
 *                     and the rlimits set before the exec
 *   minder_base.c     m, and the helpers to report, die and read the clock:
 *                     below all the others, it calls none of them
 * Invariant: m is the minder's only state, read and written by its one
 * thread. libc and minder/ only. */
#ifndef CS_MINDER_INTERNAL_H
#define CS_MINDER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "minder_contract.h"
#include "note.h"

/* Files are opened with openat(AT_FDCWD, ...) rather than open(): musl's
 * open() follows O_CLOEXEC with an fcntl() for old kernels, a syscall wasted. */

#define PROG CS_MINDER_NAME

/* SWEEPING and SWEEP_KILLING: the command has ended and what it left behind
 * (our children now) is being stopped, with TERM and then KILL. */
enum state { UP, STOPPING, KILLING, SWEEPING, SWEEP_KILLING, DRAINING, NSTATES };

/* One of the command's output streams: pipe in, capped file out. */
struct output {
    const char *name;
    int pipe_fd; /* read end; -1 once at end of file */
    int file_fd;
    uint64_t written_bytes;
    bool write_failed;
};

/* The attempt. A single object, m, as the program supervises exactly one. */
struct minder {
    const char *dir;
    int dir_fd; /* DIR, opened once without links (open_logs), for the logs and the note */
    const char *workdir;
    char **argv;
    uint64_t timeout_ms, grace_ms, cap_bytes;
    int stop_signal; /* sent to the group first on timeout or cancel */
    /* -u, -G and -S: the command is forked and drops to these before exec;
     * enter_first: without -C, into DIR/work, entered before the drop. */
    bool drop, enter_first;
    int wait_fd; /* -w: the go comes on it; -1 without */
    bool batch;  /* started ahead, a batch task until its command starts */
    uid_t uid;
    gid_t gid;
    gid_t *groups;
    size_t n_groups;
    /* -L: the lease file, its deadline mapped read-only (NULL without -L
     * or when it could not be mapped: then the note says why), the deadline
     * last read, and a CLOCK_BOOTTIME timer armed at it, or -1. */
    const char *lease_path;
    const _Atomic int64_t *lease;
    int64_t lease_deadline_ns;
    int lease_timer_fd;

    /* -R and -K: the limits, and the attempt's cgroups (path "" until
     * made; procs_fd: its cgroup.procs, for the child to join, or -1). */
    struct cs_limits limits;
    bool has_limits;
    struct cgroup {
        const char *kind, *parent;
        char path[640];
        int procs_fd;
    } cg[3];
    size_t n_cg;

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
};

/* m.deadline_ns when nothing is due. */
#define NO_DEADLINE INT64_MAX

/* The attempt (minder_base.c). */
extern struct minder m;

/* Writes one line to stderr. */
__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...);
/* Dies on a system error (errno), taking the command's group down with it:
 * without the minder nobody would enforce its limits or record its end. */
_Noreturn void die_unable(const char *verb, const char *object);
/* The time on clock in nanoseconds; dies if it cannot be read. */
int64_t now_ns(clockid_t clock);
/* Sets the note's message unless an earlier, more telling one is there. */
__attribute__((format(printf, 1, 2))) void set_message(const char *fmt, ...);

/* Fills m's command line from argv, or exits with the usage status. */
void parse_args(int argc, char **argv);

/* Leaves the server's session and process group for its own; of the
 * signals that came before, keeps only a cancel from the server (its
 * parent). The server spawns the minder with every signal blocked and in
 * its own session: a session made in the spawned child before its exec
 * would be a new autogroup of the kernel's scheduler, weighed like one of
 * the hundreds of minders a burst starts, while the launch thread waits for
 * that exec. Leaves CHLD, TERM and INT blocked, for the signalfd. */
void enter_own_session(void);
/* Makes sure fds 0-2 are open, so no pipe lands on them and gets clobbered by
 * the child's dup2() calls. */
void sanitize_std_fds(void);
/* Started ahead (-w), waits for the server's go as a batch task, which it
 * stays until its command starts; exits if the go never comes. */
void wait_for_go(void);
/* The attempt's start record; exits unless it is written (see minder_start.c). */
void publish_pid(void);
/* Reserves the note's space; exits if there is none. */
void reserve_note(void);
/* Starts the command; false if it could not start (the note says why). */
bool start(void);

/* With -L, maps the lease file and makes the timer that wakes the loop at
 * its deadline; a file that cannot be mapped is no reason to die, as the
 * note can say why: the attempt ends start_failed, nothing run. */
void lease_open(void);
/* Whether the command may start: true without -L; false when the lease
 * file could not be mapped, or when its deadline has passed (the note then
 * says so, fenced, the command not started). */
bool lease_allows_start(void);
/* With -L, arms the timer at the deadline last read; the loop polls
 * m.lease_timer_fd while the command is up. */
void lease_arm(void);
/* The timer fired: reads the deadline again. True when it has passed (the
 * note's message says so: the command is to be stopped); false when it
 * was renewed, the timer armed at the new one. */
bool lease_ran_out(void);

/* Makes the attempt's cgroups with their limits, before the start; false
 * if one could not be made (the note says why, and nothing runs). */
bool cgroup_make(void);
/* In the forked child: joins the cgroups, then (after the drop) sets the
 * rlimits. The failing step's name in *step, -errno on failure. */
int limits_enter(const char **step);
int limits_set_rlimits(const char **step);
/* Kills everything left in a v2 cgroup (cgroup.kill), which no signal to
 * the group or to our children could name. */
void cgroup_kill(void);
/* The command and all it left are reaped: reads peak memory and what the
 * limits did into the note, then removes the cgroups. */
void limits_finish(void);

/* Opens the attempt's directory (m.dir_fd) and creates the capped log
 * files in it; dies if it cannot. */
void open_logs(void);
/* Reads what one output pipe has into its log, up to the cap; closes the
 * pipe at end of file. */
void drain(struct output *o);

#endif
