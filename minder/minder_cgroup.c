/* The attempt's limits (-R, -K): its cgroups made in the parents cschedd
 * named, with their limits written, before the start; joined by the forked
 * child before the drop, the rlimits set after it, just before the exec;
 * read once everything is reaped (peak memory, OOM kills, forks refused at
 * pids.max) and removed. Blocking file work in the minder's own process,
 * one attempt's worth, so never on cschedd's loop. Invariant: a limit
 * asked for and meant to be held by a cgroup is held, or nothing runs.
 * libc only. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "minder_internal.h"

#define EXIT_START_FAILED 127
/* read_number's answer for a count or size the cgroup does not tell. */
#define UNKNOWN (-1)

static bool is_kind(const struct cgroup *c, const char *kind)
{
    return strcmp(c->kind, kind) == 0;
}

/* Writes text into the cgroup's file name; 0 or -errno. */
static int write_file(const struct cgroup *c, const char *name, const char *text)
{
    char path[sizeof(c->path) + 64];
    size_t len = strlen(text);
    ssize_t n;
    int fd, rc;

    (void)snprintf(path, sizeof(path), "%s/%s", c->path, name); /* fits: names are short */
    fd = openat(AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = write(fd, text, len);
    rc = n == (ssize_t)len ? 0 : (n < 0 ? -errno : -EIO);
    (void)close(fd); /* a cgroup file: the write above said it all */
    return rc;
}

/* The number in the cgroup's file name, or after "key " on one of its
 * lines (memory.events, memory.oom_control); UNKNOWN when it cannot be
 * read. */
static int64_t read_number(const struct cgroup *c, const char *name, const char *key)
{
    char path[sizeof(c->path) + 64], buf[4096];
    const char *p = buf;
    ssize_t n;
    int fd;

    (void)snprintf(path, sizeof(path), "%s/%s", c->path, name);
    fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return UNKNOWN;
    n = read(fd, buf, sizeof(buf) - 1);
    (void)close(fd); /* read-only: nothing to lose */
    if (n <= 0)
        return UNKNOWN;
    buf[n] = '\0';
    if (key != NULL) {
        size_t klen = strlen(key);
        while (p != NULL && !(strncmp(p, key, klen) == 0 && p[klen] == ' '))
            p = (p = strchr(p, '\n')) != NULL ? p + 1 : NULL;
        if (p == NULL)
            return UNKNOWN;
        p += klen + 1;
    }
    return strtoll(p, NULL, 10);
}

static int write_u64(const struct cgroup *c, const char *name, uint64_t value)
{
    char text[24];
    (void)snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
    return write_file(c, name, text);
}

/* Whether the cgroup c is made at all: one for memory always (so peak
 * memory is known), one for pids only when there is a pids limit. */
static bool wanted(const struct cgroup *c)
{
    return !is_kind(c, CS_CGROUP_V1_PIDS) || m.limits.pids != 0;
}

/* Writes c's limits; the name of the file that failed in *file. */
static int write_limits(const struct cgroup *c, const char **file)
{
    const struct cs_limits *l = &m.limits;
    char cpu_max[48];
    int rc = 0;

    if (is_kind(c, CS_CGROUP_V2)) {
        if (l->memory_bytes != 0 && (rc = write_u64(c, *file = "memory.max", l->memory_bytes)) < 0)
            return rc;
        /* Past memory.max the OOM killer must come, not the swap. */
        if (l->memory_bytes != 0)
            (void)write_file(c, "memory.swap.max", "0"); /* absent without swap accounting */
        if (l->pids != 0 && (rc = write_u64(c, *file = "pids.max", l->pids)) < 0)
            return rc;
        /* cpu_millis of CPU time per 1000 ms, as a quota per 100 ms period. */
        (void)snprintf(cpu_max, sizeof(cpu_max), "%llu 100000",
                       (unsigned long long)l->cpu_millis * 100);
        if (l->cpu_millis != 0 && write_file(c, "cpu.max", cpu_max) < 0)
            m.note.unenforced_limits |= CS_LIMIT_CPU_MILLIS;
    } else if (is_kind(c, CS_CGROUP_V1_MEMORY) && l->memory_bytes != 0) {
        if ((rc = write_u64(c, *file = "memory.limit_in_bytes", l->memory_bytes)) < 0)
            return rc;
        /* Memory and swap together, where swap is accounted: see above. */
        (void)write_u64(c, "memory.memsw.limit_in_bytes", l->memory_bytes);
    } else if (is_kind(c, CS_CGROUP_V1_PIDS)) {
        rc = write_u64(c, *file = "pids.max", l->pids);
    }
    return rc;
}

/* Makes c's cgroup, its limits and its cgroup.procs open; 0 or -errno. */
static int make_one(struct cgroup *c, const char **step)
{
    const char *base = strrchr(m.dir, '/');
    char procs[sizeof(c->path) + 16];
    int n, rc;

    base = base != NULL ? base + 1 : m.dir;
    n = snprintf(c->path, sizeof(c->path), "%s/%s.%d", c->parent, base, (int)getpid());
    *step = "mkdir";
    if (n < 0 || (size_t)n >= sizeof(c->path))
        return -ENAMETOOLONG;
    if (mkdir(c->path, 0755) < 0) {
        c->path[0] = '\0';
        return -errno;
    }
    rc = write_limits(c, step);
    if (rc < 0)
        return rc;
    (void)snprintf(procs, sizeof(procs), "%s/cgroup.procs", c->path);
    *step = "cgroup.procs";
    c->procs_fd = openat(AT_FDCWD, procs, O_WRONLY | O_CLOEXEC);
    return c->procs_fd < 0 ? -errno : 0;
}

bool cgroup_make(void)
{
    struct cs_cgroup_parents p = {.v2_cpu = true};

    for (size_t i = 0; i < m.n_cg; i++) {
        struct cgroup *c = &m.cg[i];
        char *dst = is_kind(c, CS_CGROUP_V2)          ? p.v2
                    : is_kind(c, CS_CGROUP_V1_MEMORY) ? p.v1_memory
                                                      : p.v1_pids;
        (void)snprintf(dst, sizeof(p.v2), "%s", c->parent);
    }
    m.note.unenforced_limits = (int)cs_limits_unenforced(&m.limits, &p);
    for (size_t i = 0; i < m.n_cg; i++) {
        const char *step = "";
        int rc = wanted(&m.cg[i]) ? make_one(&m.cg[i], &step) : 0;

        if (rc == 0)
            continue;
        m.note.outcome = CS_NOTE_START_FAILED;
        m.note.exit_code = EXIT_START_FAILED;
        set_message("cgroup %s: %s: %s; the command was not run, as its limits could not be "
                    "enforced",
                    m.cg[i].path[0] != '\0' ? m.cg[i].path : m.cg[i].parent, step, strerror(-rc));
        return false;
    }
    return true;
}

int limits_enter(const char **step)
{
    char pid[24];
    int len = snprintf(pid, sizeof(pid), "%d", (int)getpid());

    *step = "cgroup";
    for (size_t i = 0; i < m.n_cg; i++)
        if (m.cg[i].procs_fd >= 0 && write(m.cg[i].procs_fd, pid, (size_t)len) != len)
            return -errno;
    return 0;
}

int limits_set_rlimits(const char **step)
{
    struct cs_rlimit r[CS_RLIMITS_MAX];
    bool memory_by_cgroup = false, pids_by_cgroup = false;
    size_t n;

    for (size_t i = 0; i < m.n_cg; i++) {
        if (m.cg[i].procs_fd < 0)
            continue;
        if (!is_kind(&m.cg[i], CS_CGROUP_V1_PIDS))
            memory_by_cgroup = true;
        if (!is_kind(&m.cg[i], CS_CGROUP_V1_MEMORY))
            pids_by_cgroup = true;
    }
    /* RLIMIT_NPROC only where no pids cgroup counts this attempt alone:
     * it counts every process of the uid, and would refuse forks first. */
    n = cs_limits_rlimits(&m.limits, memory_by_cgroup, !pids_by_cgroup && m.drop && m.uid != 0, r);
    *step = "setrlimit";
    for (size_t i = 0; i < n; i++) {
        struct rlimit rl = {.rlim_cur = (rlim_t)r[i].soft, .rlim_max = (rlim_t)r[i].hard};
        if (setrlimit(r[i].resource, &rl) < 0)
            return -errno;
    }
    return 0;
}

void cgroup_kill(void)
{
    for (size_t i = 0; i < m.n_cg; i++)
        if (m.cg[i].path[0] != '\0' && is_kind(&m.cg[i], CS_CGROUP_V2))
            (void)write_file(&m.cg[i], "cgroup.kill", "1"); /* before 5.14: signals alone */
}

/* Which limit, if any, ended the command, from what the cgroups counted
 * (OOM kills, forks refused) and how it ended. */
static enum cs_limit_hit limit_hit(int64_t oom_kills, int64_t forks_refused)
{
    int sig = m.note.term_signal;
    /* A shell reports a child that a signal killed as 128 + its number. */
    int shell_sig =
        m.note.outcome == CS_NOTE_EXITED && m.note.exit_code > 128 ? m.note.exit_code - 128 : 0;
    int64_t cpu_ms = m.note.user_cpu_ms + m.note.system_cpu_ms;

    if (oom_kills > 0)
        return CS_LIMIT_HIT_MEMORY;
    if (m.limits.cpu_seconds != 0 &&
        (sig == SIGXCPU || shell_sig == SIGXCPU ||
         (sig == SIGKILL && cpu_ms >= (int64_t)m.limits.cpu_seconds * 1000)))
        return CS_LIMIT_HIT_CPU_SECONDS;
    if (m.limits.file_size != 0 && (sig == SIGXFSZ || shell_sig == SIGXFSZ))
        return CS_LIMIT_HIT_FILE_SIZE;
    if (forks_refused > 0 && !(m.note.outcome == CS_NOTE_EXITED && m.note.exit_code == 0))
        return CS_LIMIT_HIT_PIDS;
    return CS_LIMIT_HIT_NONE;
}

static void set_hit_message(enum cs_limit_hit hit)
{
    const struct cs_limits *l = &m.limits;

    if (hit == CS_LIMIT_HIT_MEMORY)
        set_message("killed by the OOM killer at its memory limit (memory_bytes %llu)",
                    (unsigned long long)l->memory_bytes);
    else if (hit == CS_LIMIT_HIT_CPU_SECONDS)
        set_message("killed at its CPU time limit (cpu_seconds %llu)",
                    (unsigned long long)l->cpu_seconds);
    else if (hit == CS_LIMIT_HIT_FILE_SIZE)
        set_message("killed writing past its file size limit (file_size %llu)",
                    (unsigned long long)l->file_size);
    else if (hit == CS_LIMIT_HIT_PIDS)
        set_message("forks were refused at its process limit (pids %llu)",
                    (unsigned long long)l->pids);
}

void limits_finish(void)
{
    int64_t oom_kills = 0, forks_refused = 0;

    for (size_t i = 0; i < m.n_cg; i++) {
        struct cgroup *c = &m.cg[i];
        bool v2 = is_kind(c, CS_CGROUP_V2);

        if (c->path[0] == '\0')
            continue;
        if (v2 || is_kind(c, CS_CGROUP_V1_MEMORY)) {
            int64_t peak = read_number(c, v2 ? "memory.peak" : "memory.max_usage_in_bytes", NULL);
            int64_t kills = read_number(c, v2 ? "memory.events" : "memory.oom_control", "oom_kill");
            if (peak > m.note.peak_memory_bytes)
                m.note.peak_memory_bytes = peak;
            if (kills > 0)
                oom_kills += kills;
        }
        if (v2 || is_kind(c, CS_CGROUP_V1_PIDS)) {
            int64_t refused = read_number(c, "pids.events", "max");
            if (refused > 0)
                forks_refused += refused;
        }
        if (c->procs_fd >= 0)
            (void)close(c->procs_fd); /* write-only, nothing pending */
        if (rmdir(c->path) < 0)
            say(PROG ": unable to remove cgroup %s: %s\n", c->path, strerror(errno));
    }
    m.note.limit_hit = (int)limit_hit(oom_kills, forks_refused);
    set_hit_message((enum cs_limit_hit)m.note.limit_hit);
}
