/* job_limits: a job's ResourceLimits checked and turned into the minder's
 * (see job_limits.h). */
#include "job_limits.h"

#include <errno.h>
#include <inttypes.h>

#define MIB (UINT64_C(1) << 20)

/* One limit's bounds, by its bit (attempt_limits.h), for the messages. */
static const struct {
    unsigned bit;
    uint64_t min, max;
    const char *max_text;
} bounds[] = {
    {CS_LIMIT_MEMORY, MIB, MIB << 20, "1 TiB"},
    {CS_LIMIT_CPU_SECONDS, 1, 30 * 86400, "30 days"},
    {CS_LIMIT_PIDS, 1, 4194304, "4194304, the kernel's most"},
    {CS_LIMIT_OPEN_FILES, 3, 1048576, "1048576, the kernel's default nr_open"},
    {CS_LIMIT_FILE_SIZE, 1, MIB << 30, "1 PiB"},
    {CS_LIMIT_CPU_MILLIS, 1, 1024000, "1024 CPUs"},
};

/* The value of the limit bit in l. */
static uint64_t value_of(const struct cs_limits *l, unsigned bit)
{
    switch (bit) {
    case CS_LIMIT_MEMORY:
        return l->memory_bytes;
    case CS_LIMIT_CPU_SECONDS:
        return l->cpu_seconds;
    case CS_LIMIT_PIDS:
        return l->pids;
    case CS_LIMIT_OPEN_FILES:
        return l->open_files;
    case CS_LIMIT_FILE_SIZE:
        return l->file_size;
    default:
        return l->cpu_millis;
    }
}

void cs_job_limits_get(const Csched__V1__ResourceLimits *r, struct cs_limits *out)
{
    *out = (struct cs_limits){0};
    if (r == NULL)
        return;
    out->memory_bytes = r->memory_bytes;
    out->cpu_seconds = r->cpu_seconds;
    out->pids = r->pids;
    out->open_files = r->open_files;
    out->file_size = r->file_size;
    out->cpu_millis = r->cpu_millis;
}

int cs_job_limits_validate(const Csched__V1__ResourceLimits *r, struct cs_err *err)
{
    struct cs_limits l;

    cs_job_limits_get(r, &l);
    for (size_t i = 0; i < CS_ARRAY_LEN(bounds); i++) {
        uint64_t v = value_of(&l, bounds[i].bit);
        if (v != 0 && (v < bounds[i].min || v > bounds[i].max))
            return cs_err_set(err, -EINVAL,
                              "job.resources.%s: %" PRIu64 " is out of range: from %" PRIu64
                              " to %" PRIu64 " (%s), or 0 for none",
                              cs_limit_name(bounds[i].bit), v, bounds[i].min, bounds[i].max,
                              bounds[i].max_text);
    }
    return 0;
}

/* Why limit bit cannot be enforced on a host without the cgroups it needs. */
static const char *missing(unsigned bit)
{
    return bit == CS_LIMIT_PIDS ? "no pids cgroup for cschedd" : "no cgroup v2 cpu controller";
}

int cs_job_limits_check(const Csched__V1__ResourceLimits *r, const struct cs_cgroup_parents *p,
                        bool strict, struct cs_err *err)
{
    struct cs_limits l;
    unsigned bits;

    cs_job_limits_get(r, &l);
    bits = cs_limits_unenforced(&l, p);
    if (!strict || bits == 0)
        return 0;
    for (unsigned bit = 1; bit <= CS_LIMIT_ALL; bit <<= 1)
        if (bits & bit)
            return cs_err_set(err, -EBUSY,
                              "job.resources.%s cannot be enforced on this host: %s "
                              "(docs/limits.md); under --limits-enforcement warn it would run "
                              "with a recorded warning",
                              cs_limit_name(bit), missing(bit));
    return 0;
}
