/* config: flag and environment parsing for cschedd. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_addr.h"
#include "tzdb.h"

enum {
    OPT_SOCKET = 256,
    OPT_LISTEN,
    OPT_INSECURE_TCP,
    OPT_POLL_ONLY,
    OPT_ADMIN_GROUP,
    OPT_OPERATOR_GROUP,
    OPT_VIEWER_GROUP,
    OPT_DATABASE_URL,
    OPT_STATE_DIR,
    OPT_MAX_RUNNING,
    OPT_READY_FILE,
    OPT_ADVERTISE,
    OPT_MINDER,
    OPT_LOG_LEVEL,
    OPT_LOG_FORMAT,
    OPT_LOG_RUNS,
    OPT_NICE,
    OPT_RETENTION_DAYS,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_TLS_CLIENT_CA,
    OPT_PEER_CA,
    OPT_TLS_CLIENT_ROLES,
    OPT_TOKENS_FILE,
    OPT_JOB_USER,
    OPT_AUDIT_RETENTION_DAYS,
    OPT_METRICS_LISTEN,
    OPT_HTTP_LISTEN,
    OPT_CONSOLE_DIR,
    OPT_CONSOLE_URL,
    OPT_HOOK_RETRY_BASE_MS,
    OPT_AFTER_WINDOW,
    OPT_DEFAULT_HOOKS,
    OPT_LAUNCH_THREADS,
    OPT_MAX_HEALTH_WATCHES,
    OPT_MAX_STREAMS,
    OPT_ZONEINFO,
    OPT_REPLICA_ID,
    OPT_HEARTBEAT,
    OPT_ATTEMPT_LEASE,
    OPT_DRAIN_TIMEOUT,
    OPT_CLUSTER_MAX_RUNNING,
    OPT_LIMITS_ENFORCEMENT
};

static const struct option options[] = {
    {"socket", required_argument, NULL, OPT_SOCKET},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"insecure-tcp", no_argument, NULL, OPT_INSECURE_TCP},
    {"poll-only", no_argument, NULL, OPT_POLL_ONLY},
    {"admin-group", required_argument, NULL, OPT_ADMIN_GROUP},
    {"operator-group", required_argument, NULL, OPT_OPERATOR_GROUP},
    {"viewer-group", required_argument, NULL, OPT_VIEWER_GROUP},
    {"database-url", required_argument, NULL, OPT_DATABASE_URL},
    {"state-dir", required_argument, NULL, OPT_STATE_DIR},
    {"max-running", required_argument, NULL, OPT_MAX_RUNNING},
    {"cluster-max-running", required_argument, NULL, OPT_CLUSTER_MAX_RUNNING},
    {"ready-file", required_argument, NULL, OPT_READY_FILE},
    {"advertise", required_argument, NULL, OPT_ADVERTISE},
    {"minder", required_argument, NULL, OPT_MINDER},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    {"log-runs", required_argument, NULL, OPT_LOG_RUNS},
    {"nice", required_argument, NULL, OPT_NICE},
    {"retention-days", required_argument, NULL, OPT_RETENTION_DAYS},
    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
    {"tls-client-ca", required_argument, NULL, OPT_TLS_CLIENT_CA},
    {"peer-ca", required_argument, NULL, OPT_PEER_CA},
    {"tls-client-roles", required_argument, NULL, OPT_TLS_CLIENT_ROLES},
    {"tokens-file", required_argument, NULL, OPT_TOKENS_FILE},
    {"job-user", required_argument, NULL, OPT_JOB_USER},
    {"audit-retention-days", required_argument, NULL, OPT_AUDIT_RETENTION_DAYS},
    {"metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN},
    {"http-listen", required_argument, NULL, OPT_HTTP_LISTEN},
    {"console-dir", required_argument, NULL, OPT_CONSOLE_DIR},
    {"console-url", required_argument, NULL, OPT_CONSOLE_URL},
    {"hook-retry-base-ms", required_argument, NULL, OPT_HOOK_RETRY_BASE_MS},
    {"after-window-seconds", required_argument, NULL, OPT_AFTER_WINDOW},
    {"default-hooks", required_argument, NULL, OPT_DEFAULT_HOOKS},
    {"launch-threads", required_argument, NULL, OPT_LAUNCH_THREADS},
    {"max-health-watches", required_argument, NULL, OPT_MAX_HEALTH_WATCHES},
    {"max-streams", required_argument, NULL, OPT_MAX_STREAMS},
    {"zoneinfo", required_argument, NULL, OPT_ZONEINFO},
    {"replica-id", required_argument, NULL, OPT_REPLICA_ID},
    {"heartbeat", required_argument, NULL, OPT_HEARTBEAT},
    {"attempt-lease", required_argument, NULL, OPT_ATTEMPT_LEASE},
    {"drain-timeout", required_argument, NULL, OPT_DRAIN_TIMEOUT},
    {"limits-enforcement", required_argument, NULL, OPT_LIMITS_ENFORCEMENT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

void cs_config_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [options]\n"
            "  --socket PATH           the unix socket local clients use\n"
            "                          (default " CS_DEFAULT_SOCKET ")   [CSCHED_SOCKET]\n"
            "  --listen HOST:PORT      also serve TCP (port 0 picks one); needs TLS and\n"
            "                          authentication, or --insecure-tcp  [CSCHED_LISTEN]\n"
            "  --insecure-tcp          serve --listen without TLS or authentication: anyone\n"
            "                          who reaches the port is admin [CSCHED_INSECURE_TCP=1]\n"
            "  --admin-group GROUP     unix-socket peers in GROUP (name or gid) are admins\n"
            "                          (default: group csched, if it exists; \"\" for none)\n"
            "                                                             [CSCHED_ADMIN_GROUP]\n"
            "  --operator-group GROUP  ... are operators                  [CSCHED_OPERATOR_GROUP]\n"
            "  --viewer-group GROUP    ... are viewers                    [CSCHED_VIEWER_GROUP]\n"
            "  --database-url URL      PostgreSQL to use; without it cschedd runs its own\n"
            "                          under STATE_DIR/pg                 [CSCHED_DATABASE_URL]\n"
            "  --state-dir DIR         attempts' files and the embedded database\n"
            "                          (default " CS_DEFAULT_STATE_DIR
            ")              [CSCHED_STATE_DIR]\n"
            "  --max-running N         runs at once, all jobs together (default %d)\n"
            "                                                             [CSCHED_MAX_RUNNING]\n"
            "  --cluster-max-running N  runs at once, all replicas together, stored in the\n"
            "                          database where no one has set it yet (0: none; change\n"
            "                          it later with csched cluster set-max-running)\n"
            "                                                     [CSCHED_CLUSTER_MAX_RUNNING]\n"
            "  --launch-threads N      threads that start the minders: 1 to %d (default %d)\n"
            "                                                      [CSCHED_LAUNCH_THREADS]\n"
            "  --max-health-watches N  health Watch streams open at once, all callers\n"
            "                          together (default %d)  [CSCHED_MAX_HEALTH_WATCHES]\n"
            "  --max-streams N         event Watch streams open at once, all callers together,\n"
            "                          and as many ReadLogs (default %d) [CSCHED_MAX_STREAMS]\n"
            "  --ready-file PATH       written with the bound HOST:PORT once serving\n"
            "  --minder PATH           csched-minder to run (default: beside cschedd)\n"
            "                                                             [CSCHED_MINDER]\n"
            "  --zoneinfo DIR          the tz database schedules' time zones are read from\n"
            "                          (default " CS_TZDB_DIR_DEFAULT ")  [CSCHED_ZONEINFO]\n"
            "  --log-level LEVEL       error, warn, info or debug (default info)\n"
            "                                                             [CSCHED_LOG_LEVEL]\n"
            "  --log-format FORMAT     text or json (default text)      [CSCHED_LOG_FORMAT]\n"
            "  --log-runs WHICH        info lines of runs: end (one per run, at its end;\n"
            "                          the default), all (every run and attempt state\n"
            "                          change) or none                    [CSCHED_LOG_RUNS]\n"
            "  --nice N                nice value of cschedd's session, ahead of its jobs'\n"
            "                          sessions at 0: -20 to 19, 0 leaves it (default %d)\n"
            "                                                             [CSCHED_NICE]\n"
            "  --retention-days N      remove the directories (output) of attempts that\n"
            "                          ended over N days ago; 0 keeps them (default %d)\n"
            "                                                     [CSCHED_RETENTION_DAYS]\n"
            "  --audit-retention-days N  delete audit rows older than N days; 0 keeps\n"
            "                          them (default 0)   [CSCHED_AUDIT_RETENTION_DAYS]\n"
            "  --tls-cert FILE         serve TLS with this certificate chain (PEM)\n"
            "                                                             [CSCHED_TLS_CERT]\n"
            "  --tls-key FILE          and its private key (PEM)           [CSCHED_TLS_KEY]\n"
            "  --tls-client-ca FILE    require client certificates from these CAs (mTLS)\n"
            "                                                        [CSCHED_TLS_CLIENT_CA]\n"
            "  --peer-ca FILE          the CAs of the other replicas' certificates, when a\n"
            "                          standby forwards calls over TLS (default: the\n"
            "                          system's roots)                  [CSCHED_PEER_CA]\n"
            "  --tls-client-roles FILE client certificate subject or CN -> role\n"
            "                                                     [CSCHED_TLS_CLIENT_ROLES]\n"
            "  --tokens-file FILE      bearer tokens: NAME ROLE SHA256 per line\n"
            "                                                          [CSCHED_TOKENS_FILE]\n"
            "  --job-user NAME         as root, who a job without run_as_user runs as\n"
            "                          (default: csched-job if it exists, else nobody)\n"
            "                                                           [CSCHED_JOB_USER]\n"
            "  --metrics-listen HOST:PORT  serve Prometheus metrics on GET /metrics (off by\n"
            "                          default); beyond loopback it needs --tls-cert and\n"
            "                          --tokens-file, or --insecure-tcp [CSCHED_METRICS_LISTEN]\n"
            "  --http-listen HOST:PORT the HTTP/JSON API and the web console (off by default);\n"
            "                          it needs --tokens-file, and beyond loopback --tls-cert\n"
            "                          or --insecure-tcp                [CSCHED_HTTP_LISTEN]\n"
            "  --console-dir DIR       the console's files (default " CS_DEFAULT_CONSOLE_DIR ")\n"
            "                                                         [CSCHED_CONSOLE_DIR]\n"
            "  --console-url URL       the console's address, for the links in hooks'\n"
            "                          bodies (docs/hooks.md)          [CSCHED_CONSOLE_URL]\n"
            "  --hook-retry-base-ms MS a hook delivery's first retry wait, doubling up to\n"
            "                          10 minutes (default 1000) [CSCHED_HOOK_RETRY_BASE_MS]\n"
            "  --after-window-seconds S  how long a cause of a job's runs after others waits\n"
            "                          for all of them (docs/dependencies.md; default 86400)\n"
            "                                                [CSCHED_AFTER_WINDOW_SECONDS]\n"
            "  --default-hooks FILE    hooks every job's runs are told to besides their own:\n"
            "                          JSON {\"hooks\": [...]} (docs/hooks.md)\n"
            "                                                       [CSCHED_DEFAULT_HOOKS]\n"
            "  --replica-id ID         this replica's name among those sharing the database:\n"
            "                          letters, digits, '.', '-', '_', at most %d (default:\n"
            "                          the host name)                   [CSCHED_REPLICA_ID]\n"
            "  --heartbeat DURATION    how often the replica renews its lease; others take\n"
            "                          its work over 2 heartbeats after its last renewal\n"
            "                          (default 2s)                      [CSCHED_HEARTBEAT]\n"
            "  --attempt-lease DURATION  how long its running commands outlive its last\n"
            "                          renewal before they stop themselves, and after which\n"
            "                          another replica may retry them; external database\n"
            "                          only (default 60s)            [CSCHED_ATTEMPT_LEASE]\n"
            "  --advertise HOST:PORT   where other replicas reach this one, to forward the\n"
            "                          calls a standby cannot answer (default: the --listen\n"
            "                          address, else the unix socket) [CSCHED_ADVERTISE]\n"
            "  --drain-timeout DURATION  on SIGTERM, how long running commands may go on\n"
            "                          before the replica leaves (default 25s)\n"
            "                                                        [CSCHED_DRAIN_TIMEOUT]\n"
            "  --poll-only             never LISTEN for the other replicas' role changes: a\n"
            "                          drain's takeover waits for the next heartbeat (for a\n"
            "                          pooler that drops notifications)  [CSCHED_POLL_ONLY=1]\n"
            "  --limits-enforcement strict|warn  a job's resource limit this host cannot\n"
            "                          enforce: refused at create (strict, the default), or\n"
            "                          run with a recorded warning (warn); docs/limits.md\n"
            "                                                   [CSCHED_LIMITS_ENFORCEMENT]\n"
            "  DURATION is a whole number with ms, s or m (2s, 500ms, 1m).\n"
            "  SIGHUP rereads the TLS files, the tokens and client-roles files and the\n"
            "  time zones.\n",
            prog, CS_DEFAULT_MAX_RUNNING, CS_LAUNCH_THREADS_MAX, CS_DEFAULT_LAUNCH_THREADS,
            CS_DEFAULT_MAX_HEALTH_WATCHES, CS_DEFAULT_MAX_STREAMS, CS_DEFAULT_NICE,
            CS_DEFAULT_RETENTION_DAYS, CS_REPLICA_ID_MAX);
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

/* A duration: a whole number and its unit, ms, s or m, from min_ms to
 * max_ms. */
static int parse_duration(const char *text, const char *source, int64_t min_ms, int64_t max_ms,
                          int64_t *out_ms, struct cs_err *err)
{
    static const struct {
        const char *unit;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}};
    char *end;
    errno = 0;
    long long v = isdigit((unsigned char)text[0]) ? strtoll(text, &end, 10) : -1;
    for (size_t i = 0; v >= 0 && errno == 0 && i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) == 0 && v <= max_ms / units[i].ms &&
            v * units[i].ms >= min_ms) {
            *out_ms = v * units[i].ms;
            return 0;
        }
    }
    return cs_err_set(err, -EINVAL,
                      "%s \"%s\" must be a duration from %lldms to %llds, a whole number with "
                      "ms, s or m",
                      source, text, (long long)min_ms, (long long)(max_ms / 1000));
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

/* The field of paths that an OPT_TLS_* or OPT_TOKENS_FILE flag sets. */
static const char **auth_path(struct cs_auth_paths *paths, int opt)
{
    switch (opt) {
    case OPT_TLS_CERT:
        return &paths->tls_cert;
    case OPT_TLS_KEY:
        return &paths->tls_key;
    case OPT_TLS_CLIENT_CA:
        return &paths->tls_client_ca;
    case OPT_PEER_CA:
        return &paths->peer_ca;
    case OPT_TLS_CLIENT_ROLES:
        return &paths->client_roles;
    default:
        return &paths->tokens;
    }
}

static int missing_value(char **argv, struct cs_err *err)
{
    return cs_err_set(err, -EINVAL, "%s needs a value; see --help", argv[optind - 1]);
}

/* The settings that are checked once flags and environment are both read. */
struct raw_settings {
    struct raw state_dir, max_running, launch_threads, health_watches, streams, level, format, runs,
        nice, retention, audit_retention, replica_id, heartbeat, attempt_lease, drain_timeout,
        cluster_max_running, limits, hook_retry, after_window;
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
        case OPT_SOCKET:
            c->socket_path = optarg;
            break;
        case OPT_LISTEN:
            c->listen = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_POLL_ONLY:
            c->poll_only = true;
            break;
        case OPT_INSECURE_TCP:
            c->insecure_tcp = true;
            break;
        case OPT_ADMIN_GROUP:
            c->admin_group = optarg;
            break;
        case OPT_OPERATOR_GROUP:
            c->operator_group = optarg;
            break;
        case OPT_VIEWER_GROUP:
            c->viewer_group = optarg;
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
        case OPT_CLUSTER_MAX_RUNNING:
            raw->cluster_max_running = (struct raw){optarg, "--cluster-max-running"};
            break;
        case OPT_LAUNCH_THREADS:
            raw->launch_threads = (struct raw){optarg, "--launch-threads"};
            break;
        case OPT_MAX_HEALTH_WATCHES:
            raw->health_watches = (struct raw){optarg, "--max-health-watches"};
            break;
        case OPT_MAX_STREAMS:
            raw->streams = (struct raw){optarg, "--max-streams"};
            break;
        case OPT_READY_FILE:
            c->ready_file = optarg;
            break;
        case OPT_ADVERTISE:
            c->advertise = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_MINDER:
            c->minder_path = optarg;
            break;
        case OPT_ZONEINFO:
            c->zoneinfo = optarg;
            break;
        case OPT_REPLICA_ID:
            raw->replica_id = (struct raw){optarg, "--replica-id"};
            break;
        case OPT_HEARTBEAT:
            raw->heartbeat = (struct raw){optarg, "--heartbeat"};
            break;
        case OPT_ATTEMPT_LEASE:
            raw->attempt_lease = (struct raw){optarg, "--attempt-lease"};
            break;
        case OPT_DRAIN_TIMEOUT:
            raw->drain_timeout = (struct raw){optarg, "--drain-timeout"};
            break;
        case OPT_LIMITS_ENFORCEMENT:
            raw->limits = (struct raw){optarg, "--limits-enforcement"};
            break;
        case OPT_LOG_LEVEL:
            raw->level = (struct raw){optarg, "--log-level"};
            break;
        case OPT_LOG_FORMAT:
            raw->format = (struct raw){optarg, "--log-format"};
            break;
        case OPT_LOG_RUNS:
            raw->runs = (struct raw){optarg, "--log-runs"};
            break;
        case OPT_NICE:
            raw->nice = (struct raw){optarg, "--nice"};
            break;
        case OPT_RETENTION_DAYS:
            raw->retention = (struct raw){optarg, "--retention-days"};
            break;
        case OPT_TLS_CERT:
        case OPT_TLS_KEY:
        case OPT_TLS_CLIENT_CA:
        case OPT_PEER_CA:
        case OPT_TLS_CLIENT_ROLES:
        case OPT_TOKENS_FILE:
            *auth_path(&c->auth, opt) = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_JOB_USER:
            c->job_user = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_METRICS_LISTEN:
            c->metrics_listen = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_HTTP_LISTEN:
            c->http_listen = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_CONSOLE_DIR:
            c->console_dir = optarg;
            break;
        case OPT_CONSOLE_URL:
            c->console_url = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_DEFAULT_HOOKS:
            c->default_hooks = optarg[0] != '\0' ? optarg : NULL;
            break;
        case OPT_AFTER_WINDOW:
            raw->after_window = (struct raw){optarg, "--after-window-seconds"};
            break;
        case OPT_HOOK_RETRY_BASE_MS:
            raw->hook_retry = (struct raw){optarg, "--hook-retry-base-ms"};
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

/* The TLS files come as a pair, and what rests on TLS needs it: a token or
 * a certificate's role must not cross the network in the clear. */
static int check_auth(const struct cs_config *c, struct cs_err *err)
{
    const struct cs_auth_paths *a = &c->auth;
    /* The HTTP API on loopback takes its tokens in the clear: they never
     * leave the machine. */
    bool tokens_in_clear = c->http_listen != NULL && (c->http_loopback || c->insecure_tcp);
    if ((a->tls_cert == NULL) != (a->tls_key == NULL))
        return cs_err_set(err, -EINVAL, "--tls-cert and --tls-key go together");
    if (a->tls_cert == NULL &&
        (a->tls_client_ca != NULL || (a->tokens != NULL && !tokens_in_clear) || a->peer_ca != NULL))
        return cs_err_set(err, -EINVAL, "%s needs --tls-cert and --tls-key",
                          a->tokens != NULL          ? "--tokens-file"
                          : a->tls_client_ca != NULL ? "--tls-client-ca"
                                                     : "--peer-ca");
    if (a->client_roles != NULL && a->tls_client_ca == NULL)
        return cs_err_set(err, -EINVAL,
                          "--tls-client-roles needs --tls-client-ca: without it no client "
                          "certificate is asked for");
    return 0;
}

/* --log-format, --log-runs and --limits-enforcement: 0 or -EINVAL. */
static int parse_log_style(const struct raw_settings *raw, struct cs_config *c, struct cs_err *err)
{
    if (cs_log_format_parse(raw->format.text, &c->log_format) != 0)
        return cs_err_set(err, -EINVAL, "%s \"%s\" must be text or json", raw->format.source,
                          raw->format.text);
    c->limits_warn = strcmp(raw->limits.text, "warn") == 0;
    if (!c->limits_warn && strcmp(raw->limits.text, "strict") != 0)
        return cs_err_set(err, -EINVAL, "%s \"%s\" must be strict or warn", raw->limits.source,
                          raw->limits.text);
    if (cs_log_runs_parse(raw->runs.text, &c->log_runs) != 0)
        return cs_err_set(err, -EINVAL, "%s \"%s\" must be end, all or none", raw->runs.source,
                          raw->runs.text);
    return 0;
}

/* The metrics endpoint follows the gRPC listener's rules: beyond loopback,
 * TLS and a token, or the operator's explicit --insecure-tcp. */
static int check_metrics(struct cs_config *c, struct cs_err *err)
{
    struct sockaddr_storage addr;
    if (c->metrics_listen == NULL)
        return 0;
    if (cs_net_addr_parse("--metrics-listen", c->metrics_listen, &addr, err) != 0)
        return -EINVAL;
    c->metrics_loopback = cs_net_addr_is_loopback(&addr);
    if (c->metrics_loopback || c->insecure_tcp ||
        (c->auth.tls_cert != NULL && c->auth.tokens != NULL))
        return 0;
    return cs_err_set(err, -EPERM,
                      "--metrics-listen %s is beyond loopback: without TLS and bearer tokens "
                      "anyone who reaches it reads cschedd's metrics; give --tls-cert, --tls-key "
                      "and --tokens-file, pass --insecure-tcp to accept that, or listen on "
                      "127.0.0.1",
                      c->metrics_listen);
}

/* The HTTP API knows callers only by their bearer tokens (a TCP peer has
 * no unix credentials), and beyond loopback those need TLS, or the
 * operator's explicit --insecure-tcp. */
static int check_http(struct cs_config *c, struct cs_err *err)
{
    struct sockaddr_storage addr;
    if (c->http_listen == NULL)
        return 0;
    if (cs_net_addr_parse("--http-listen", c->http_listen, &addr, err) != 0)
        return -EINVAL;
    c->http_loopback = cs_net_addr_is_loopback(&addr);
    if (c->auth.tokens == NULL)
        return cs_err_set(err, -EINVAL,
                          "--http-listen needs --tokens-file: the HTTP API knows its callers only "
                          "by their bearer tokens");
    if (c->http_loopback || c->insecure_tcp || c->auth.tls_cert != NULL)
        return 0;
    return cs_err_set(err, -EPERM,
                      "--http-listen %s is beyond loopback: without TLS its tokens and session "
                      "cookies would cross the network in the clear; give --tls-cert and "
                      "--tls-key, pass --insecure-tcp to accept that, or listen on 127.0.0.1",
                      c->http_listen);
}

/* --max-running, --cluster-max-running, --launch-threads, --max-health-watches and --max-streams:
 * 0 or -EINVAL. */
static int parse_counts(const struct raw_settings *raw, struct cs_config *c, struct cs_err *err)
{
    long v = CS_DEFAULT_MAX_RUNNING;
    if (raw->max_running.text != NULL && parse_whole(raw->max_running.text, raw->max_running.source,
                                                     1, CS_MAX_RUNNING_LIMIT, &v, err) != 0)
        return -EINVAL;
    c->max_running = (uint32_t)v;
    c->cluster_max_running_set = raw->cluster_max_running.text != NULL;
    v = 0;
    if (c->cluster_max_running_set &&
        parse_whole(raw->cluster_max_running.text, raw->cluster_max_running.source, 0,
                    CS_MAX_RUNNING_LIMIT, &v, err) != 0)
        return -EINVAL;
    c->cluster_max_running = (uint32_t)v;
    v = CS_DEFAULT_LAUNCH_THREADS;
    if (raw->launch_threads.text != NULL &&
        parse_whole(raw->launch_threads.text, raw->launch_threads.source, 1, CS_LAUNCH_THREADS_MAX,
                    &v, err) != 0)
        return -EINVAL;
    c->launch_threads = (unsigned)v;
    v = CS_DEFAULT_MAX_HEALTH_WATCHES;
    if (raw->health_watches.text != NULL &&
        parse_whole(raw->health_watches.text, raw->health_watches.source, 1,
                    CS_MAX_HEALTH_WATCHES_LIMIT, &v, err) != 0)
        return -EINVAL;
    c->max_health_watches = (uint32_t)v;
    v = CS_DEFAULT_MAX_STREAMS;
    if (raw->streams.text != NULL &&
        parse_whole(raw->streams.text, raw->streams.source, 1, CS_MAX_STREAMS_LIMIT, &v, err) != 0)
        return -EINVAL;
    c->max_streams = (uint32_t)v;
    return 0;
}

/* The replica's id, as a host name or pod name is spelt: it names the
 * replica in the database, the log and the metrics. */
static int check_replica_id(const char *id, const char *source, struct cs_err *err)
{
    size_t n = strlen(id);
    bool ok = n >= 1 && n <= CS_REPLICA_ID_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)id[i]) || strchr(".-_", id[i]) != NULL;
    if (!ok)
        return cs_err_set(err, -EINVAL,
                          "%s \"%s\" must be 1 to %d letters, digits, '.', '-' or '_'", source, id,
                          CS_REPLICA_ID_MAX);
    return 0;
}

/* --replica-id, --heartbeat, --attempt-lease and --drain-timeout: 0 or
 * -EINVAL. The host name is read here, once, when no id is given. */
static int parse_replica(const struct raw_settings *raw, struct cs_config *c, struct cs_err *err)
{
    c->replica_id = raw->replica_id.text;
    if (c->replica_id == NULL) {
        if (gethostname(c->replica_host, sizeof(c->replica_host)) != 0)
            return cs_err_set(err, -EINVAL, "the host name cannot be read (%s): give --replica-id",
                              strerror(errno));
        c->replica_host[sizeof(c->replica_host) - 1] = '\0';
        c->replica_id = c->replica_host;
    }
    if (check_replica_id(c->replica_id,
                         raw->replica_id.text != NULL ? raw->replica_id.source : "the host name",
                         err) != 0)
        return -EINVAL;
    c->heartbeat_ms = CS_DEFAULT_HEARTBEAT_MS;
    if (raw->heartbeat.text != NULL &&
        parse_duration(raw->heartbeat.text, raw->heartbeat.source, CS_HEARTBEAT_MIN_MS,
                       CS_HEARTBEAT_MAX_MS, &c->heartbeat_ms, err) != 0)
        return -EINVAL;
    c->attempt_lease_ms = CS_DEFAULT_ATTEMPT_LEASE_MS;
    if (raw->attempt_lease.text != NULL &&
        parse_duration(raw->attempt_lease.text, raw->attempt_lease.source, 1000,
                       CS_ATTEMPT_LEASE_MAX_MS, &c->attempt_lease_ms, err) != 0)
        return -EINVAL;
    /* A command must outlive the replica's own lease, or a replica that
     * only missed a renewal would stop commands that another may not retry
     * yet. */
    if (c->attempt_lease_ms < 3 * c->heartbeat_ms)
        return cs_err_set(err, -EINVAL,
                          "--attempt-lease %lldms must be at least 3 heartbeats (%lldms): a "
                          "replica's commands outlive the lease of its work, 2 heartbeats",
                          (long long)c->attempt_lease_ms, (long long)(3 * c->heartbeat_ms));
    c->drain_timeout_ms = CS_DEFAULT_DRAIN_TIMEOUT_MS;
    if (raw->drain_timeout.text != NULL &&
        parse_duration(raw->drain_timeout.text, raw->drain_timeout.source, 0,
                       CS_DRAIN_TIMEOUT_MAX_MS, &c->drain_timeout_ms, err) != 0)
        return -EINVAL;
    return 0;
}

/* Checks and converts the settings read as text: 0 or -EINVAL. */
static int check_settings(const struct raw_settings *raw, struct cs_config *c, struct cs_err *err)
{
    c->state_dir = raw->state_dir.text;
    if (c->state_dir[0] != '/')
        return cs_err_set(err, -EINVAL, "%s \"%s\" must be an absolute path", raw->state_dir.source,
                          c->state_dir);
    if (parse_counts(raw, c, err) != 0 || parse_replica(raw, c, err) != 0)
        return -EINVAL;
    c->log_level = CS_LOG_INFO;
    if (raw->level.text != NULL &&
        parse_level(raw->level.text, raw->level.source, &c->log_level, err) != 0)
        return -EINVAL;
    if (parse_log_style(raw, c, err) != 0)
        return -EINVAL;
    long v = CS_DEFAULT_NICE;
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
    v = CS_DEFAULT_HOOK_RETRY_BASE_MS;
    if (raw->hook_retry.text != NULL && parse_whole(raw->hook_retry.text, raw->hook_retry.source, 1,
                                                    CS_HOOK_RETRY_BASE_MAX_MS, &v, err) != 0)
        return -EINVAL;
    c->hook_retry_base_ms = (uint32_t)v;
    v = CS_DEFAULT_AFTER_WINDOW_S;
    if (raw->after_window.text != NULL &&
        parse_whole(raw->after_window.text, raw->after_window.source, 1, CS_AFTER_WINDOW_MAX_S, &v,
                    err) != 0)
        return -EINVAL;
    c->after_window_s = (uint32_t)v;
    if (c->socket_path[0] != '/')
        return cs_err_set(err, -EINVAL, "--socket \"%s\" must be an absolute path", c->socket_path);
    if (c->zoneinfo[0] != '/')
        return cs_err_set(err, -EINVAL, "--zoneinfo \"%s\" must be an absolute path", c->zoneinfo);
    int rc = check_http(c, err);
    if (rc != 0)
        return rc;
    if (check_auth(c, err) != 0)
        return -EINVAL;
    if (c->auth.tls_cert != NULL && c->listen == NULL && c->metrics_listen == NULL &&
        c->http_listen == NULL)
        return cs_err_set(err, -EINVAL,
                          "--tls-cert secures the TCP listeners: it needs --listen, "
                          "--metrics-listen or --http-listen");
    if (c->auth.tls_cert != NULL && c->insecure_tcp)
        return cs_err_set(err, -EINVAL, "--insecure-tcp and --tls-cert exclude each other");
    /* Plain TCP lets anyone who reaches the port do anything: only on the
     * operator's explicit word. */
    if (c->listen != NULL && c->auth.tls_cert == NULL && !c->insecure_tcp)
        return cs_err_set(err, -EPERM,
                          "--listen %s would serve TCP without TLS or authentication, so anyone "
                          "who reaches the port could run commands as cschedd's user; give "
                          "--tls-cert and --tls-key (with --tokens-file or --tls-client-ca), pass "
                          "--insecure-tcp to accept that, or use the unix socket %s",
                          c->listen, c->socket_path);
    return check_metrics(c, err);
}

int cs_config_parse(int argc, char **argv, struct cs_config *c, struct cs_err *err)
{
    memset(c, 0, sizeof(*c));
    c->socket_path = env_or("CSCHED_SOCKET", CS_DEFAULT_SOCKET);
    c->listen = env_or("CSCHED_LISTEN", NULL);
    c->metrics_listen = env_or("CSCHED_METRICS_LISTEN", NULL);
    c->http_listen = env_or("CSCHED_HTTP_LISTEN", NULL);
    c->console_dir = env_or("CSCHED_CONSOLE_DIR", CS_DEFAULT_CONSOLE_DIR);
    c->console_url = env_or("CSCHED_CONSOLE_URL", NULL);
    c->default_hooks = env_or("CSCHED_DEFAULT_HOOKS", NULL);
    c->insecure_tcp = strcmp(env_or("CSCHED_INSECURE_TCP", "0"), "1") == 0;
    c->poll_only = strcmp(env_or("CSCHED_POLL_ONLY", "0"), "1") == 0;
    c->admin_group = env_or("CSCHED_ADMIN_GROUP", NULL);
    c->operator_group = env_or("CSCHED_OPERATOR_GROUP", NULL);
    c->viewer_group = env_or("CSCHED_VIEWER_GROUP", NULL);
    c->database_url = env_or("CSCHED_DATABASE_URL", NULL);
    c->minder_path = env_or("CSCHED_MINDER", NULL);
    c->zoneinfo = env_or("CSCHED_ZONEINFO", CS_TZDB_DIR_DEFAULT);
    c->auth = (struct cs_auth_paths){
        .tls_cert = env_or("CSCHED_TLS_CERT", NULL),
        .tls_key = env_or("CSCHED_TLS_KEY", NULL),
        .tls_client_ca = env_or("CSCHED_TLS_CLIENT_CA", NULL),
        .peer_ca = env_or("CSCHED_PEER_CA", NULL),
        .client_roles = env_or("CSCHED_TLS_CLIENT_ROLES", NULL),
        .tokens = env_or("CSCHED_TOKENS_FILE", NULL),
    };
    c->job_user = env_or("CSCHED_JOB_USER", NULL);
    c->advertise = env_or("CSCHED_ADVERTISE", NULL);
    struct raw_settings raw = {
        .state_dir = from_env("CSCHED_STATE_DIR", CS_DEFAULT_STATE_DIR),
        .max_running = from_env("CSCHED_MAX_RUNNING", NULL),
        .cluster_max_running = from_env("CSCHED_CLUSTER_MAX_RUNNING", NULL),
        .launch_threads = from_env("CSCHED_LAUNCH_THREADS", NULL),
        .health_watches = from_env("CSCHED_MAX_HEALTH_WATCHES", NULL),
        .streams = from_env("CSCHED_MAX_STREAMS", NULL),
        .level = from_env("CSCHED_LOG_LEVEL", NULL),
        .format = from_env("CSCHED_LOG_FORMAT", "text"),
        .runs = from_env("CSCHED_LOG_RUNS", "end"),
        .nice = from_env("CSCHED_NICE", NULL),
        .retention = from_env("CSCHED_RETENTION_DAYS", NULL),
        .audit_retention = from_env("CSCHED_AUDIT_RETENTION_DAYS", NULL),
        .replica_id = from_env("CSCHED_REPLICA_ID", NULL),
        .heartbeat = from_env("CSCHED_HEARTBEAT", NULL),
        .attempt_lease = from_env("CSCHED_ATTEMPT_LEASE", NULL),
        .drain_timeout = from_env("CSCHED_DRAIN_TIMEOUT", NULL),
        .limits = from_env("CSCHED_LIMITS_ENFORCEMENT", "strict"),
        .hook_retry = from_env("CSCHED_HOOK_RETRY_BASE_MS", NULL),
        .after_window = from_env("CSCHED_AFTER_WINDOW_SECONDS", NULL),
    };
    /* Flags win over the environment, so values are checked only after both. */
    int rc = read_flags(argc, argv, c, &raw, err);
    if (rc != 0 || c->help)
        return rc;
    return check_settings(&raw, c, err);
}
