/* The replica's lease (-L): cschedd keeps, in its lease file, the deadline
 * by which it must have renewed its lease in the database, and once that
 * has passed another replica may take its runs over and start them again.
 * So the minder must not run its command past it: it maps the deadline
 * read-only, reads it whenever it wakes for it, and fences (stops the
 * command as a timeout does, or never starts it) once it has passed. It
 * never polls on a period: a timerfd on CLOCK_BOOTTIME, armed at the
 * deadline last read, wakes the loop then, however long the machine was
 * suspended meanwhile, and only then is the deadline read again.
 * libc only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "minder_internal.h"

#define EXIT_START_FAILED 127

static int64_t read_deadline(void)
{
    m.lease_deadline_ns = atomic_load_explicit(m.lease, memory_order_acquire);
    return m.lease_deadline_ns;
}

/* Records why the lease file cannot be used (what failed, and err, or 0
 * when what says it all): nothing may run unfenced. */
static void refuse(const char *what, int err)
{
    m.note.outcome = CS_NOTE_START_FAILED;
    m.note.exit_code = EXIT_START_FAILED;
    set_message("lease file %s: %s%s%s%s; the command was not started, as it could not be stopped "
                "once cschedd's lease ran out",
                m.lease_path, what, err != 0 ? ": " : "", err != 0 ? strerror(err) : "",
                err == ELOOP ? " (links are refused)" : "");
}

void lease_open(void)
{
    struct stat st;
    void *map;
    int fd = cs_path_open_no_links(m.lease_path, O_RDONLY, 0);

    if (fd < 0) {
        refuse("open", -fd);
        return;
    }
    if (fstat(fd, &st) < 0)
        refuse("fstat", errno);
    else if (!S_ISREG(st.st_mode))
        refuse("not a regular file", 0);
    /* A mapping past the end of the file faults (SIGBUS) when read. */
    else if (st.st_size < CS_LEASE_BYTES)
        refuse("shorter than the 8 bytes of a deadline", 0);
    else if ((map = mmap(NULL, CS_LEASE_BYTES, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED)
        refuse("mmap", errno);
    else
        m.lease = map;
    (void)close(fd); /* read-only, and the mapping stands without it */
    if (m.lease == NULL)
        return;
    m.lease_timer_fd = timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (m.lease_timer_fd < 0)
        die_unable("create", "the lease's timer");
}

/* Sets the note's message of a fence: what happened to the command
 * ("stopped", "not started"), and when the lease ran out, on the wall
 * clock, for a person to match with cschedd's log. */
static void set_fence_message(const char *what)
{
    int64_t deadline_ns = m.lease_deadline_ns;
    int64_t wall_ms, ago_ns = now_ns(CLOCK_BOOTTIME) - deadline_ns;
    struct tm tm;
    time_t s;

    if (deadline_ns <= 0) {
        set_message("%s: the lease file %s holds no deadline: cschedd has not renewed its lease on "
                    "this machine (another replica may retry the run)",
                    what, m.lease_path);
        return;
    }
    wall_ms = (now_ns(CLOCK_REALTIME) - ago_ns) / 1000000;
    s = (time_t)(wall_ms / 1000);
    /* Fails only past year 2^31, and int64 nanoseconds end in 2262. Not
     * strftime, which would bring musl's locale code into the binary. */
    (void)gmtime_r(&s, &tm);
    set_message("%s: cschedd's lease on this machine ran out at "
                "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ (it stopped renewing; another replica may "
                "retry the run)",
                what, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                tm.tm_sec, (int)(wall_ms % 1000));
}

bool lease_allows_start(void)
{
    if (m.lease_path == NULL)
        return true;
    if (m.lease == NULL)
        return false; /* lease_open's note says why */
    if (now_ns(CLOCK_BOOTTIME) < read_deadline())
        return true;
    m.note.outcome = CS_NOTE_FENCED;
    set_fence_message("not started");
    return false;
}

void lease_arm(void)
{
    int64_t deadline_ns = m.lease_deadline_ns;
    struct itimerspec at = {{0, 0}, {0, 0}};

    if (m.lease == NULL)
        return;
    /* An it_value of zero disarms: a deadline that low has passed anyway. */
    if (deadline_ns <= 0)
        deadline_ns = 1;
    at.it_value.tv_sec = (time_t)(deadline_ns / 1000000000);
    at.it_value.tv_nsec = (long)(deadline_ns % 1000000000);
    if (timerfd_settime(m.lease_timer_fd, TFD_TIMER_ABSTIME, &at, NULL) < 0)
        die_unable("arm", "the lease's timer");
}

bool lease_ran_out(void)
{
    uint64_t expirations;

    /* Emptied so that poll stops reporting it; EAGAIN only if it was. */
    (void)!read(m.lease_timer_fd, &expirations, sizeof(expirations));
    if (now_ns(CLOCK_BOOTTIME) < read_deadline()) {
        lease_arm();
        return false;
    }
    set_fence_message("stopped");
    return true;
}
