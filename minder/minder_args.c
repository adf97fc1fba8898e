/* The minder's command line: the options of minder_contract.h into m, the
 * command after "--". Anything else exits with the usage status before any
 * file is touched. */
#include <stdio.h>
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

/* Parses a whole decimal number of at most max; 0 or -1. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t value = 0;

    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        unsigned d = (unsigned char)*s - '0';

        if (d > 9 || value > (max - d) / 10)
            return -1;
        value = value * 10 + d;
    }
    *out = value;
    return 0;
}

void parse_args(int argc, char **argv)
{
    uint64_t value;
    int opt;

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
        default:
            die_usage("unknown option or missing value");
        }
    }
    if (m.dir == NULL)
        die_usage("-d is required");
    if (optind < 2 || strcmp(argv[optind - 1], "--") != 0 || optind >= argc)
        die_usage("the command goes after --");
    m.argv = argv + optind;
    if (m.workdir == NULL)
        m.workdir = m.dir;
}
