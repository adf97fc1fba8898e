/* attempt_limits: what cschedd and csched-minder agree on about an attempt's
 * resource limits: the values (struct cs_limits), their text on the
 * minder's command line (-R), the cgroup parents it is given (-K), and
 * which rlimits stand for which limit. libc only, no state, any thread:
 * the minder builds it in, the server links it. docs/limits.md. */
#ifndef CS_ATTEMPT_LIMITS_H
#define CS_ATTEMPT_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One attempt's limits; 0 is none. */
struct cs_limits {
    uint64_t memory_bytes; /* memory cgroup's limit; without one, RLIMIT_AS */
    uint64_t cpu_seconds;  /* RLIMIT_CPU: SIGXCPU, then SIGKILL a second later */
    uint64_t pids;         /* pids cgroup's pids.max; RLIMIT_NPROC (per uid) besides */
    uint64_t open_files;   /* RLIMIT_NOFILE */
    uint64_t file_size;    /* RLIMIT_FSIZE: SIGXFSZ */
    uint64_t cpu_millis;   /* cgroup v2's cpu.max: CPU time per second of wall time */
};

/* Bits naming the limits (a note's unenforced_limits). */
enum cs_limit_bit {
    CS_LIMIT_MEMORY = 1 << 0,
    CS_LIMIT_CPU_SECONDS = 1 << 1,
    CS_LIMIT_PIDS = 1 << 2,
    CS_LIMIT_OPEN_FILES = 1 << 3,
    CS_LIMIT_FILE_SIZE = 1 << 4,
    CS_LIMIT_CPU_MILLIS = 1 << 5,
};
#define CS_LIMIT_ALL 0x3f
#define CS_LIMIT_COUNT 6 /* bits in CS_LIMIT_ALL */

/* The limit that ended an attempt, as its note records it (limit_hit) and
 * the API's LimitHit numbers them. */
enum cs_limit_hit {
    CS_LIMIT_HIT_NONE = 0,
    CS_LIMIT_HIT_MEMORY,      /* the OOM killer, inside the attempt's memory cgroup */
    CS_LIMIT_HIT_CPU_SECONDS, /* SIGXCPU, or SIGKILL at the hard RLIMIT_CPU */
    CS_LIMIT_HIT_FILE_SIZE,   /* SIGXFSZ */
    CS_LIMIT_HIT_PIDS,        /* a fork refused at pids.max, and the command failed */
};
#define CS_LIMIT_HIT_LAST CS_LIMIT_HIT_PIDS

/* The limit's name as the API and the docs spell it ("memory_bytes"), for
 * one bit; NULL for anything else. */
const char *cs_limit_name(unsigned bit);

/* Writes the set limits as "memory_bytes=N,pids=N" (the -R argument) into
 * buf; "" when none is set. 0 or -ENAMETOOLONG. */
int cs_limits_format(const struct cs_limits *l, char *buf, size_t cap);
/* Parses what cs_limits_format wrote; 0 or -EINVAL. */
int cs_limits_parse(const char *text, struct cs_limits *out);

/* The kinds of cgroup parent the minder is given, as "-K KIND=DIR": it
 * makes the attempt's cgroup in DIR, puts the command in it, reads it when
 * the command has ended and removes it. */
#define CS_CGROUP_V2 "v2"
#define CS_CGROUP_V1_MEMORY "memory"
#define CS_CGROUP_V1_PIDS "pids"

/* Where this host's cgroups can hold an attempt, as cschedd found at
 * start (server/host/limits_probe_work.c); "" for none. */
struct cs_cgroup_parents {
    char v2[512];        /* a delegated v2 dir with memory, pids (and cpu) */
    char v1_memory[512]; /* a writable dir of the v1 memory hierarchy */
    char v1_pids[512];   /* of the v1 pids hierarchy */
    bool v2_cpu;         /* the v2 dir has the cpu controller */
};

/* The limits set in l that the cgroups in p cannot enforce (bits):
 * memory without a memory cgroup is still RLIMIT_AS, so enforced; pids
 * need a pids cgroup (RLIMIT_NPROC counts every process of the uid, and
 * not at all for root); cpu_millis needs v2's cpu controller. */
unsigned cs_limits_unenforced(const struct cs_limits *l, const struct cs_cgroup_parents *p);

/* One rlimit to set before the exec. */
struct cs_rlimit {
    int resource;
    uint64_t soft, hard;
};
#define CS_RLIMITS_MAX 5
/* The rlimits standing for l, into out (CS_RLIMITS_MAX of room); returns
 * how many. memory_by_cgroup: memory is held by a cgroup, so RLIMIT_AS
 * (which counts address space, not memory, and fails allocations rather
 * than killing) is left alone. nproc: the command runs as a uid other than
 * root, so RLIMIT_NPROC means something (it counts every process of that
 * uid, this attempt's and any other's, and root is exempt). */
size_t cs_limits_rlimits(const struct cs_limits *l, bool memory_by_cgroup, bool nproc,
                         struct cs_rlimit out[CS_RLIMITS_MAX]);

#endif
