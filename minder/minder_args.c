/* The minder's command line: the options of minder_contract.h into m, the
 * command after "--". Anything else exits with the usage status before any
 * file is touched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "minder_internal.h"

#define EXIT_USAGE 100
/* Bounds for -t and -g, so that milliseconds never overflow as nanoseconds. */
#define MAX_MS (UINT64_C(1) << 40)

static _Noreturn void die_usage(const char *why)
{
    say(PROG ": usage: %s: " CS_MINDER_USAGE "\n", why);
    _exit(EXIT_USAGE);
}

/* Parses a whole decimal number of at most max; 0 or -EINVAL. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t value = 0;

    if (*s == '\0')
        return -EINVAL;
    for (; *s != '\0'; s++) {
        unsigned d = (unsigned char)*s - '0';

        if (d > 9 || value > (max - d) / 10)
            return -EINVAL;
        value = value * 10 + d;
    }
    *out = value;
    return 0;
}

/* Parses -S's comma-separated group ids ("-": none) into m.groups. */
static void parse_groups(char *list)
{
    static gid_t groups[CS_MINDER_GROUPS_MAX];
    uint64_t id;

    m.groups = groups;
    m.n_groups = 0;
    if (strcmp(list, "-") == 0)
        return;
    for (char *save = NULL, *g = strtok_r(list, ",", &save); g != NULL;
         g = strtok_r(NULL, ",", &save)) {
        if (m.n_groups == CS_MINDER_GROUPS_MAX || parse_u64(g, UINT32_MAX - 1, &id) < 0)
            die_usage("-S wants group ids separated by commas");
        groups[m.n_groups++] = (gid_t)id;
    }
}

/* Parses a user or group id for -u or -G; (uid_t)-1 is "no change" to the
 * kernel, so it is refused. */
static uint32_t parse_id(const char *s, const char *why)
{
    uint64_t id;

    if (parse_u64(s, UINT32_MAX - 1, &id) < 0)
        die_usage(why);
    return (uint32_t)id;
}

/* Parses -K KIND=DIR into the next of m.cg. */
static void parse_cgroup(char *arg)
{
    char *eq = strchr(arg, '=');

    if (m.n_cg == sizeof(m.cg) / sizeof(m.cg[0]) || eq == NULL || eq[1] != '/')
        die_usage("-K wants KIND=DIR, at most three of them");
    *eq = '\0';
    if (strcmp(arg, CS_CGROUP_V2) != 0 && strcmp(arg, CS_CGROUP_V1_MEMORY) != 0 &&
        strcmp(arg, CS_CGROUP_V1_PIDS) != 0)
        die_usage("-K wants a KIND of v2, memory or pids");
    m.cg[m.n_cg++] = (struct cgroup){.kind = arg, .parent = eq + 1, .procs_fd = -1};
}

void parse_args(int argc, char **argv)
{
    uint64_t value;
    int opt, creds = 0;

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
        case CS_MINDER_OPT_SIGNAL:
            if (parse_u64(optarg, 64, &value) < 0 || !cs_minder_stop_signal_ok((int)value))
                die_usage("-s wants the number of TERM, INT, HUP, QUIT, USR1 or USR2");
            m.stop_signal = (int)value;
            break;
        case CS_MINDER_OPT_LEASE:
            if (optarg[0] == '\0')
                die_usage("-L wants the lease file");
            m.lease_path = optarg;
            break;
        case CS_MINDER_OPT_WAIT:
            if (parse_u64(optarg, INT32_MAX, &value) < 0 || value <= STDERR_FILENO)
                die_usage("-w wants a file descriptor above 2");
            m.wait_fd = (int)value;
            break;
        case CS_MINDER_OPT_LIMITS:
            if (cs_limits_parse(optarg, &m.limits) < 0)
                die_usage("-R wants limits as NAME=N,NAME=N");
            m.has_limits = true;
            break;
        case CS_MINDER_OPT_CGROUP:
            parse_cgroup(optarg);
            break;
        case CS_MINDER_OPT_UID:
            m.uid = parse_id(optarg, "-u wants a user id");
            creds |= 1;
            break;
        case CS_MINDER_OPT_GID:
            m.gid = parse_id(optarg, "-G wants a group id");
            creds |= 2;
            break;
        case CS_MINDER_OPT_GROUPS:
            parse_groups(optarg);
            creds |= 4;
            break;
        default:
            die_usage("unknown option or missing value");
        }
    }
    if (m.dir == NULL)
        die_usage("-d is required");
    if (creds != 0 && creds != 7)
        die_usage("-u, -G and -S go together");
    m.drop = creds == 7;
    if (optind < 2 || strcmp(argv[optind - 1], "--") != 0 || optind >= argc)
        die_usage("the command goes after --");
    if (argc - optind > CS_MINDER_COMMAND_ARGS_MAX)
        die_usage("the command has too many arguments");
    m.argv = argv + optind;
    if (m.workdir == NULL && m.drop) {
        static char work[4096];
        if (snprintf(work, sizeof(work), "%s/" CS_ATTEMPT_WORK_DIR, m.dir) >= (int)sizeof(work))
            die_usage("-d is too long");
        m.workdir = work;
        m.enter_first = true;
    }
    if (m.workdir == NULL)
        m.workdir = m.dir;
}
