/* minder_contract: what cschedd and csched-minder agree on, in one place:
 * the minder's command line (its flags, and the argv the server builds from
 * them), its timing defaults, the files of an attempt's directory, where
 * that directory is (STATE_DIR/attempts/<run_id>-<attempt>) with the parser
 * of its name, the start record (the pid file) that the minder
 * publishes and a restarted server may claim, and the lease file whose
 * deadline fences the minders. libc only, no state: the
 * minder builds it in, the server links it; any thread. */
#ifndef CS_MINDER_CONTRACT_H
#define CS_MINDER_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "attempt_limits.h"

/* The program's name, as it shows in argv[0] and /proc/PID/cmdline. */
#define CS_MINDER_NAME "csched-minder"

/* The flags. The option string must name the same letters. */
#define CS_MINDER_OPT_DIR 'd'     /* -d ATTEMPT_DIR, required */
#define CS_MINDER_OPT_TIMEOUT 't' /* -t TIMEOUT_MS, 0 or absent for none */
#define CS_MINDER_OPT_GRACE 'g'   /* -g GRACE_MS between TERM and KILL */
#define CS_MINDER_OPT_CAP 'c'     /* -c LOG_CAP_BYTES per output stream */
#define CS_MINDER_OPT_WORKDIR 'C' /* -C WORKDIR; absent: the attempt's dir (DIR/work with -u) */
#define CS_MINDER_OPT_SIGNAL 's'  /* -s SIGNO sent first on timeout or cancel, TERM if absent */
/* -L LEASE_FILE: the minder fences itself by the deadline in LEASE_FILE
 * (CS_LEASE_FILE below): the command does not start once it has passed, and
 * a running one is stopped as on a timeout when it passes unrenewed. */
#define CS_MINDER_OPT_LEASE 'L'
/* -w FD: started ahead of its attempt, the minder waits, touching nothing,
 * until one byte (CS_MINDER_GO) arrives on FD, and exits with
 * CS_MINDER_EXIT_GIVEN_UP at end of file (cschedd gone or done with it).
 * CS_MINDER_ARM instead comes with one fd (SCM_RIGHTS), its release gate:
 * the minder then goes once that fd is readable, which cschedd makes it at
 * the due time for every minder due then at once; an end of file on FD
 * before that still sends it away. */
#define CS_MINDER_OPT_WAIT 'w'
#define CS_MINDER_GO 'g'
#define CS_MINDER_ARM 'a'

/* One word on the wait socket: a byte, and room for one fd beside it
 * (SCM_RIGHTS), for sendmsg and recvmsg alike. */
struct cs_minder_word {
    char byte;
    struct iovec iov;
    struct msghdr msg;
    /* Last: clang sees CMSG_SPACE's size as folded, allowed only at the end. */
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
};
/* Sets w up to carry byte and, unless fd is -1, fd; to receive, any byte
 * and fd -1. */
void cs_minder_word_init(struct cs_minder_word *w, char byte, int fd);
/* The fd a received w carries, or -1. */
int cs_minder_word_fd(struct cs_minder_word *w);
/* The command's credentials, all three or none: the minder (root) drops to
 * them between its child's start and exec (setgroups, setgid, setuid, in
 * that order). */
#define CS_MINDER_OPT_UID 'u'    /* -u UID */
#define CS_MINDER_OPT_GID 'G'    /* -G GID */
#define CS_MINDER_OPT_GROUPS 'S' /* -S GID,GID,... (supplementary; "-" for none) */
/* -R LIMITS: the command's resource limits, as cs_limits_format writes
 * them (attempt_limits.h); -K KIND=DIR (up to three): a cgroup parent the minder
 * makes the attempt's cgroup in (KIND one of attempt_limits.h's CS_CGROUP_*). */
#define CS_MINDER_OPT_LIMITS 'R'
#define CS_MINDER_OPT_CGROUP 'K'
#define CS_MINDER_OPTSTRING "+d:t:g:c:C:s:L:w:u:G:S:R:K:"
#define CS_MINDER_USAGE                                                                            \
    CS_MINDER_NAME                                                                                 \
    " -d ATTEMPT_DIR [-t TIMEOUT_MS] [-g GRACE_MS] [-c LOG_CAP_BYTES] [-C WORKDIR] [-s SIGNO]"     \
    " [-L LEASE_FILE] [-w FD] [-u UID -G GID -S GROUPS] [-R LIMITS] [-K KIND=DIR]... -- ARGV..."
/* The most arguments the command may have (a job's own limit, the server's
 * CS_JOB_ARGS_MAX): the child that starts it runs on a stack of fixed size,
 * where glibc's execvp copies them for a script without "#!". */
#define CS_MINDER_COMMAND_ARGS_MAX 4096
/* The most supplementary groups -S takes (the kernel's NGROUPS_MAX). */
#define CS_MINDER_GROUPS_MAX 65536

/* How long the minder gives a command between its stop signal and KILL
 * (-g's default, and what the server passes for a job that sets none). */
#define CS_MINDER_KILL_GRACE_MS 10000
/* How long what a command left running when it ended (in its group or out
 * of it, the minder's children now) gets between TERM and KILL. Short and
 * fixed, so an attempt's end stays within the server's backstop. */
#define CS_MINDER_LEFTOVER_GRACE_MS 2000
/* How long the minder still drains output once its command and what it left
 * have ended: only a process that escaped the minder (none should) could
 * hold a pipe open that long. */
#define CS_MINDER_DRAIN_MS 1000

/* The minder's exit status when it refused to run the command because the
 * attempt's directory has no room for the status note (ENOSPC, EDQUOT):
 * nothing ran, and nothing could have been recorded. */
#define CS_MINDER_EXIT_NO_SPACE 113

/* Files in an attempt's directory, which the server's launch thread makes
 * (and syncs) before it starts the minder. The minder writes, in this order:
 * CS_ATTEMPT_PID_FILE (its own pid, the attempt's start record: see
 * cs_attempt_pid_publish), the two logs, CS_ATTEMPT_PGID_FILE (the command's
 * process group, once it runs, so the server can stop the group if the
 * minder itself is killed) and CS_NOTE_FILE (through CS_NOTE_FILE ".tmp"). */
#define CS_NOTE_FILE "status"
#define CS_ATTEMPT_PID_FILE "pid"
#define CS_ATTEMPT_PID_TMP_FILE "pid.tmp"
#define CS_ATTEMPT_STDOUT_FILE "stdout"
#define CS_ATTEMPT_STDERR_FILE "stderr"
#define CS_ATTEMPT_PGID_FILE "pgid"
/* The working directory of a command run with -u and without -C: the
 * minder makes it, gives it to the command's user and enters it before the
 * drop, so the path to it need not be open to that user. */
#define CS_ATTEMPT_WORK_DIR "work"

/* The minder's exit code when it found its attempt given up (see
 * cs_attempt_pid_claim), or waited (-w) and was never told to go: it
 * started nothing and wrote no note. */
#define CS_MINDER_EXIT_GIVEN_UP 112

/* The folder of the state dir that holds every attempt's directory. */
#define CS_ATTEMPTS_DIR "attempts"
/* The folder of the state dir that holds every command hook's attempt's
 * directory, "<delivery id>-<attempt>-<unix ms>" (server/hook/). */
#define CS_HOOKS_DIR "hooks"
/* An attempt directory's name with this appended is its copy made ahead of
 * the start by cschedd (server/ahead_dir.h), empty and never a minder's. */
#define CS_AHEAD_DIR_SUFFIX ".ahead"

/* What one attempt's minder is told. Strings are borrowed. */
struct cs_minder_cmd {
    const char *minder_path;
    const char *dir;
    uint64_t timeout_ms; /* 0: no timeout */
    uint64_t grace_ms;
    int stop_signal;      /* sent first on timeout or cancel; 0: SIGTERM */
    const char *workdir;  /* NULL or "": the attempt's dir */
    char *const *command; /* argv of the command, n_command of them, or */
    size_t n_command;     /* 0, and then: */
    const char *shell;    /* a string run by /bin/sh -c */
    /* -L: the lease file the minder fences itself by; NULL: none. */
    const char *lease_path;
    /* -R and -K: the attempt's limits (NULL or all 0: none) and, with
     * some, the cgroup parents to hold them in (NULL: none). */
    const struct cs_limits *limits;
    const struct cs_cgroup_parents *cgroups;
};

/* The lease file, STATE_DIR/lease: CS_LEASE_BYTES at offset 0, a native
 * int64, the deadline in CLOCK_BOOTTIME nanoseconds (time the machine
 * spends suspended counts) by which cschedd must have renewed it, or its
 * minders stop their commands; 0: none set, which counts as passed. cschedd
 * writes it in place through a shared mapping with an atomic 8-byte store
 * (server/host/lease_file.h), each minder reads it through its own
 * read-only mapping with an atomic load: aligned at offset 0, the 8 bytes
 * are always read whole. */
#define CS_LEASE_FILE "lease"
#define CS_LEASE_BYTES 8

/* Opens path as openat(AT_FDCWD, path, flags | O_CLOEXEC, mode) does, but
 * refuses a link anywhere on the path (-ELOOP; openat2's
 * RESOLVE_NO_SYMLINKS, or where the kernel lacks it, a link as the last
 * part only): cschedd resolves its state dir once, with no link left in it
 * (server/host/state_path.h), and hands out paths below it. The fd, or
 * -errno. */
int cs_path_open_no_links(const char *path, int flags, mode_t mode);

/* Whether the minder accepts signo as its stop signal (-s): TERM, INT, HUP,
 * QUIT, USR1 or USR2, signals a command may catch to stop cleanly. */
bool cs_minder_stop_signal_ok(int signo);

/* Who the command runs as. */
struct cs_minder_creds {
    uint32_t uid, gid;
    const uint32_t *groups; /* supplementary, n_groups of them (may be 0) */
    size_t n_groups;
};

/* Builds the minder's argv for cmd: NULL-terminated, the array and each
 * string malloc'd and owned by the caller. NULL when out of memory. */
char **cs_minder_argv_new(const struct cs_minder_cmd *cmd);
/* Puts -u, -G and -S for creds into *argv (one from cs_minder_argv_new):
 * the array is replaced, its strings kept. 0, or -ENOMEM with *argv as it
 * was. Linear in the groups. */
int cs_minder_argv_add_creds(char ***argv, const struct cs_minder_creds *creds);
/* Puts -w FD into *argv right after argv[0], the two strings
 * CS_MINDER_WAIT_ARGS, as cs_minder_argv_add_creds does. 0 or -ENOMEM. */
#define CS_MINDER_WAIT_ARGS 2
int cs_minder_argv_add_wait(char ***argv, int fd);

/* Writes STATE_DIR/attempts/<run_id>-<attempt> into buf. 0, or
 * -ENAMETOOLONG when it does not fit in cap bytes. */
int cs_minder_dir_format(char *buf, size_t cap, const char *state_dir, int64_t run_id,
                         uint32_t attempt);
/* Parses the name of an attempt's directory ("<run_id>-<attempt>", both
 * positive decimal numbers). 0, or -EINVAL if name is not one. */
int cs_minder_dir_parse(const char *name, int64_t *run_id, uint32_t *attempt);

/* The start record. The minder publishes its pid in DIR/pid before it
 * starts the command, and the file appears whole or not at all (written
 * beside it, then linked). A server that finds neither the pid file nor a
 * note after a restart claims the file instead (empty): from then on the
 * attempt never started and never will, as a minder that comes late finds
 * the file taken and exits with CS_MINDER_EXIT_GIVEN_UP. Exactly one of the
 * two wins. No fsync: the file speaks for a live minder only, and a machine
 * that crashes takes its minders with it.
 * cs_attempt_pid_publish: 0, -EEXIST when the attempt was claimed, or
 * -errno. cs_attempt_pid_claim: 0 when the claim won, -EEXIST when the
 * minder published first (read the pid again), or -errno. */
int cs_attempt_pid_publish(const char *dir, int32_t pid);
int cs_attempt_pid_claim(const char *dir);

#endif
