/* attempt_limits: an attempt's limits as text and as rlimits (see attempt_limits.h). */
#include "attempt_limits.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* The limits in the order of their bits, each with its field. */
static const struct {
    unsigned bit;
    const char *name;
    size_t offset;
} names[] = {
    {CS_LIMIT_MEMORY, "memory_bytes", offsetof(struct cs_limits, memory_bytes)},
    {CS_LIMIT_CPU_SECONDS, "cpu_seconds", offsetof(struct cs_limits, cpu_seconds)},
    {CS_LIMIT_PIDS, "pids", offsetof(struct cs_limits, pids)},
    {CS_LIMIT_OPEN_FILES, "open_files", offsetof(struct cs_limits, open_files)},
    {CS_LIMIT_FILE_SIZE, "file_size", offsetof(struct cs_limits, file_size)},
    {CS_LIMIT_CPU_MILLIS, "cpu_millis", offsetof(struct cs_limits, cpu_millis)},
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static uint64_t *field(struct cs_limits *l, size_t i)
{
    return (uint64_t *)((char *)l + names[i].offset);
}

static uint64_t value(const struct cs_limits *l, size_t i)
{
    return *(const uint64_t *)((const char *)l + names[i].offset);
}

const char *cs_limit_name(unsigned bit)
{
    for (size_t i = 0; i < NNAMES; i++)
        if (names[i].bit == bit)
            return names[i].name;
    return NULL;
}

int cs_limits_format(const struct cs_limits *l, char *buf, size_t cap)
{
    size_t len = 0;

    if (cap == 0)
        return -ENAMETOOLONG;
    buf[0] = '\0';
    for (size_t i = 0; i < NNAMES; i++) {
        if (value(l, i) == 0)
            continue;
        int n = snprintf(buf + len, cap - len, "%s%s=%llu", len > 0 ? "," : "", names[i].name,
                         (unsigned long long)value(l, i));
        if (n < 0 || (size_t)n >= cap - len)
            return -ENAMETOOLONG;
        len += (size_t)n;
    }
    return 0;
}

/* Parses one "name=N" of length len into out. */
static int parse_one(const char *s, size_t len, struct cs_limits *out)
{
    const char *eq = memchr(s, '=', len);
    uint64_t v = 0;

    if (eq == NULL || eq + 1 == s + len)
        return -EINVAL;
    for (const char *p = eq + 1; p < s + len; p++) {
        unsigned d = (unsigned char)*p - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return -EINVAL;
        v = v * 10 + d;
    }
    for (size_t i = 0; i < NNAMES; i++) {
        if (strlen(names[i].name) == (size_t)(eq - s) && memcmp(s, names[i].name, eq - s) == 0) {
            *field(out, i) = v;
            return 0;
        }
    }
    return -EINVAL;
}

int cs_limits_parse(const char *text, struct cs_limits *out)
{
    memset(out, 0, sizeof(*out));
    while (*text != '\0') {
        size_t len = strcspn(text, ",");
        if (parse_one(text, len, out) < 0)
            return -EINVAL;
        text += len;
        if (*text == ',' && *++text == '\0')
            return -EINVAL;
    }
    return 0;
}

unsigned cs_limits_unenforced(const struct cs_limits *l, const struct cs_cgroup_parents *p)
{
    unsigned bits = 0;

    if (l->pids != 0 && p->v2[0] == '\0' && p->v1_pids[0] == '\0')
        bits |= CS_LIMIT_PIDS;
    if (l->cpu_millis != 0 && (p->v2[0] == '\0' || !p->v2_cpu))
        bits |= CS_LIMIT_CPU_MILLIS;
    return bits;
}

static void put(struct cs_rlimit *out, size_t *n, int resource, uint64_t soft, uint64_t hard)
{
    out[*n] = (struct cs_rlimit){.resource = resource, .soft = soft, .hard = hard};
    (*n)++;
}

size_t cs_limits_rlimits(const struct cs_limits *l, bool memory_by_cgroup, bool nproc,
                         struct cs_rlimit out[CS_RLIMITS_MAX])
{
    size_t n = 0;

    if (l->memory_bytes != 0 && !memory_by_cgroup)
        put(out, &n, RLIMIT_AS, l->memory_bytes, l->memory_bytes);
    /* The soft limit sends SIGXCPU, which a command may catch to stop
     * cleanly; the hard one, a second later, SIGKILL. */
    if (l->cpu_seconds != 0)
        put(out, &n, RLIMIT_CPU, l->cpu_seconds, l->cpu_seconds + 1);
    if (l->pids != 0 && nproc)
        put(out, &n, RLIMIT_NPROC, l->pids, l->pids);
    if (l->open_files != 0)
        put(out, &n, RLIMIT_NOFILE, l->open_files, l->open_files);
    if (l->file_size != 0)
        put(out, &n, RLIMIT_FSIZE, l->file_size, l->file_size);
    return n;
}
