/* config: flag and environment parsing for cschedd. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_LISTEN = 256,
    OPT_DATABASE_URL,
    OPT_STATE_DIR,
    OPT_MAX_RUNNING,
    OPT_READY_FILE,
    OPT_MINDER,
    OPT_LOG_LEVEL,
    OPT_NICE,
    OPT_RETENTION_DAYS,
    OPT_AUDIT_RETENTION_DAYS,
};

static const struct option options[] = {
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"database-url", required_argument, NULL, OPT_DATABASE_URL},
    {"state-dir", required_argument, NULL, OPT_STATE_DIR},
    {"max-running", required_argument, NULL, OPT_MAX_RUNNING},
    {"ready-file", required_argument, NULL, OPT_READY_FILE},
    {"minder", required_argument, NULL, OPT_MINDER},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"nice", required_argument, NULL, OPT_NICE},
    {"retention-days", required_argument, NULL, OPT_RETENTION_DAYS},
    {"audit-retention-days", required_argument, NULL, OPT_AUDIT_RETENTION_DAYS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

void cs_config_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [options]\n"
            "  --listen HOST:PORT      gRPC address (default " CS_DEFAULT_LISTEN
            "; port 0 picks one)       [CSCHED_LISTEN]\n"
            "  --database-url URL      PostgreSQL to use; without it cschedd runs its own\n"
            "                          under STATE_DIR/pg                 [CSCHED_DATABASE_URL]\n"
            "  --state-dir DIR         attempts' files and the embedded database\n"
            "                          (default " CS_DEFAULT_STATE_DIR
            ")              [CSCHED_STATE_DIR]\n"
            "  --max-running N         runs at once, all jobs together (default %d)\n"
            "                                                             [CSCHED_MAX_RUNNING]\n"
            "  --ready-file PATH       written with the bound HOST:PORT once serving\n"
            "  --minder PATH           csched-minder to run (default: beside cschedd)\n"
            "                                                             [CSCHED_MINDER]\n"
            "  --log-level LEVEL       error, warn, info or debug (default info)\n"
            "                                                             [CSCHED_LOG_LEVEL]\n"
            "  --nice N                nice value of cschedd's session, ahead of its jobs'\n"
            "                          sessions at 0: -20 to 19, 0 leaves it (default %d)\n"
            "                                                             [CSCHED_NICE]\n"
            "  --retention-days N      remove the directories (output) of attempts that\n"
            "                          ended over N days ago; 0 keeps them (default %d)\n"
            "                                                     [CSCHED_RETENTION_DAYS]\n"
            "  --audit-retention-days N  delete audit rows older than N days; 0 keeps\n"
            "                          them (default 0)   [CSCHED_AUDIT_RETENTION_DAYS]\n",
            prog, CS_DEFAULT_MAX_RUNNING, CS_DEFAULT_NICE, CS_DEFAULT_RETENTION_DAYS);
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : fallback;
}

/* A whole decimal number from min to max: digits, with a '-' in front for a
 * negative one; no blanks, no '+'. */
static int parse_whole(const char *text, const char *source, long min, long max, long *out,
                       struct cs_err *err)
{
    const char *digits = text[0] == '-' ? text + 1 : text;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || !isdigit((unsigned char)digits[0]) || v < min || v > max)
        return cs_err_set(err, -EINVAL, "%s \"%s\" must be a whole number from %ld to %ld", source,
                          text, min, max);
    *out = v;
    return 0;
}

static int parse_level(const char *text, const char *source, enum cs_log_level *out,
                       struct cs_err *err)
{
    if (cs_log_level_parse(text, out) != 0)
        return cs_err_set(err, -EINVAL, "%s \"%s\" must be error, warn, info or debug", source,
                          text);
    return 0;
}

/* A setting's text and where it came from, for the error message. */
struct raw {
    const char *text;
    const char *source;
};

static struct raw from_env(const char *name, const char *fallback)
{
    struct raw r = {env_or(name, NULL), name};
    if (r.text == NULL)
        r.text = fallback;
    return r;
}

static int missing_value(char **argv, struct cs_err *err)
{
    return cs_err_set(err, -EINVAL, "%s needs a value; see --help", argv[optind - 1]);
}

/* The settings that are checked once flags and environment are both read. */
struct raw_settings {
    struct raw state_dir, max_running, level, nice, retention, audit_retention;
};

/* Reads the flags over what the environment gave: 0 or -EINVAL. */
static int read_flags(int argc, char **argv, struct cs_config *c, struct raw_settings *raw,
                      struct cs_err *err)
{
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (opt) {
        case OPT_LISTEN:
            c->listen = optarg;
            break;
        case OPT_DATABASE_URL:
            c->database_url = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_STATE_DIR:
            raw->state_dir = (struct raw){optarg, "--state-dir"};
            break;
        case OPT_MAX_RUNNING:
            raw->max_running = (struct raw){optarg, "--max-running"};
            break;
        case OPT_READY_FILE:
            c->ready_file = optarg;
            break;
        case OPT_MINDER:
            c->minder_path = optarg;
            break;
        case OPT_LOG_LEVEL:
            raw->level = (struct raw){optarg, "--log-level"};
            break;
        case OPT_NICE:
            raw->nice = (struct raw){optarg, "--nice"};
            break;
        case OPT_RETENTION_DAYS:
            raw->retention = (struct raw){optarg, "--retention-days"};
            break;
        case OPT_AUDIT_RETENTION_DAYS:
            raw->audit_retention = (struct raw){optarg, "--audit-retention-days"};
            break;
        case 'h':
            c->help = true;
            return 0;
        case ':':
            return missing_value(argv, err);
        default:
            return cs_err_set(err, -EINVAL, "unknown option %s; see --help", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cs_err_set(err, -EINVAL, "unexpected argument \"%s\"; see --help", argv[optind]);
    return 0;
}

/* Checks and converts the settings read as text: 0 or -EINVAL. */
static int check_settings(const struct raw_settings *raw, struct cs_config *c, struct cs_err *err)
{
    c->state_dir = raw->state_dir.text;
    if (c->state_dir[0] != '/')
        return cs_err_set(err, -EINVAL, "%s \"%s\" must be an absolute path", raw->state_dir.source,
                          c->state_dir);
    long v = CS_DEFAULT_MAX_RUNNING;
    if (raw->max_running.text != NULL && parse_whole(raw->max_running.text, raw->max_running.source,
                                                     1, CS_MAX_RUNNING_LIMIT, &v, err) != 0)
        return -EINVAL;
    c->max_running = (uint32_t)v;
    c->log_level = CS_LOG_INFO;
    if (raw->level.text != NULL &&
        parse_level(raw->level.text, raw->level.source, &c->log_level, err) != 0)
        return -EINVAL;
    v = CS_DEFAULT_NICE;
    if (raw->nice.text != NULL &&
        parse_whole(raw->nice.text, raw->nice.source, CS_NICE_MIN, CS_NICE_MAX, &v, err) != 0)
        return -EINVAL;
    c->nice = (int)v;
    v = CS_DEFAULT_RETENTION_DAYS;
    if (raw->retention.text != NULL && parse_whole(raw->retention.text, raw->retention.source, 0,
                                                   CS_RETENTION_DAYS_MAX, &v, err) != 0)
        return -EINVAL;
    c->retention_days = (uint32_t)v;
    v = 0;
    if (raw->audit_retention.text != NULL &&
        parse_whole(raw->audit_retention.text, raw->audit_retention.source, 0,
                    CS_RETENTION_DAYS_MAX, &v, err) != 0)
        return -EINVAL;
    c->audit_retention_days = (uint32_t)v;
    return 0;
}

int cs_config_parse(int argc, char **argv, struct cs_config *c, struct cs_err *err)
{
    memset(c, 0, sizeof(*c));
    c->listen = env_or("CSCHED_LISTEN", CS_DEFAULT_LISTEN);
    c->database_url = env_or("CSCHED_DATABASE_URL", NULL);
    c->minder_path = env_or("CSCHED_MINDER", NULL);
    struct raw_settings raw = {
        .state_dir = from_env("CSCHED_STATE_DIR", CS_DEFAULT_STATE_DIR),
        .max_running = from_env("CSCHED_MAX_RUNNING", NULL),
        .level = from_env("CSCHED_LOG_LEVEL", NULL),
        .nice = from_env("CSCHED_NICE", NULL),
        .retention = from_env("CSCHED_RETENTION_DAYS", NULL),
        .audit_retention = from_env("CSCHED_AUDIT_RETENTION_DAYS", NULL),
    };
    /* Flags win over the environment, so values are checked only after both. */
    int rc = read_flags(argc, argv, c, &raw, err);
    if (rc != 0 || c->help)
        return rc;
    return check_settings(&raw, c, err);
}
