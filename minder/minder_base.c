/* The minder's ground floor, below every other file of it (as conmon keeps
 * globals.c and utils.c below conmon.c): the attempt m, and the ways to
 * report, die and read the clock. It calls no other file of the minder.
 * libc only. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "minder_internal.h"

#define EXIT_SYSTEM 111

#define DEFAULT_CAP_BYTES (UINT64_C(16) << 20)

struct minder m = {
    .grace_ms = CS_MINDER_KILL_GRACE_MS,
    .stop_signal = SIGTERM,
    .cap_bytes = DEFAULT_CAP_BYTES,
    .cont = true,
    .wait_fd = -1,
    .dir_fd = -1,
    .lease_timer_fd = -1,
    .deadline_ns = NO_DEADLINE,
    .out = {{.name = CS_ATTEMPT_STDOUT_FILE, .pipe_fd = -1, .file_fd = -1},
            {.name = CS_ATTEMPT_STDERR_FILE, .pipe_fd = -1, .file_fd = -1}},
};

__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
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

_Noreturn void die_unable(const char *verb, const char *object)
{
    int err = errno;

    if (m.pid > 0 && !m.leader_reaped)
        (void)kill(-m.pid, SIGKILL); /* ESRCH only: already gone */
    say(PROG ": fatal: unable to %s %s: %s\n", verb, object, strerror(err));
    _exit(EXIT_SYSTEM);
}

int64_t now_ns(clockid_t clock)
{
    struct timespec ts;

    if (clock_gettime(clock, &ts) < 0)
        die_unable("read", "the clock");
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((format(printf, 1, 2))) void set_message(const char *fmt, ...)
{
    va_list ap;

    if (m.note.message[0] != '\0')
        return;
    va_start(ap, fmt);
    (void)vsnprintf(m.note.message, sizeof(m.note.message), fmt, ap); /* a cut is fine */
    va_end(ap);
}
