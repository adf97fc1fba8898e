/* config: cschedd's settings from flags, then environment variables, then
 * defaults. Parsed once at start, before the loop runs. */
#ifndef CS_CONFIG_H
#define CS_CONFIG_H

#include <stdint.h>

#include "auth.h"
#include "job.h"
#include "log.h"
#include "util.h"

#define CS_DEFAULT_SOCKET "/run/csched/csched.sock"
#ifndef CS_DEFAULT_CONSOLE_DIR
#define CS_DEFAULT_CONSOLE_DIR "/usr/share/csched/console"
#endif
#define CS_DEFAULT_HOOK_RETRY_BASE_MS 1000
#define CS_HOOK_RETRY_BASE_MAX_MS 600000
/* --after-window-seconds: a day by default, at most 30 days. */
#define CS_DEFAULT_AFTER_WINDOW_S 86400
#define CS_AFTER_WINDOW_MAX_S (30 * 86400)
#define CS_DEFAULT_STATE_DIR "/var/lib/csched"
#define CS_DEFAULT_MAX_RUNNING 64
/* Launch threads (launcher.h): 1 to CS_LAUNCH_THREADS_MAX. */
#define CS_DEFAULT_LAUNCH_THREADS 2
#define CS_LAUNCH_THREADS_MAX 16
#define CS_DEFAULT_NICE (-20)
#define CS_NICE_MIN (-20)
#define CS_NICE_MAX 19
/* What this many open health Watch streams hold: docs/operations.md,
 * "Health Watch streams". */
#define CS_DEFAULT_MAX_HEALTH_WATCHES 10000
#define CS_MAX_HEALTH_WATCHES_LIMIT 1000000
/* Event Watch streams, and ReadLogs streams, open at once, all callers
 * together: each of them is visited for every event or holds a 64 KiB
 * buffer. */
#define CS_DEFAULT_MAX_STREAMS 1024
#define CS_MAX_STREAMS_LIMIT 100000
#define CS_DEFAULT_RETENTION_DAYS 30
#define CS_RETENTION_DAYS_MAX 36500

/* Replicas (docs/operations.md, "Replicas"). */
#define CS_REPLICA_ID_MAX 63
#define CS_DEFAULT_HEARTBEAT_MS 2000
#define CS_HEARTBEAT_MIN_MS 100
#define CS_HEARTBEAT_MAX_MS 60000
#define CS_DEFAULT_ATTEMPT_LEASE_MS 60000
#define CS_ATTEMPT_LEASE_MAX_MS (24 * 3600 * 1000)
#define CS_DEFAULT_DRAIN_TIMEOUT_MS 25000
#define CS_DRAIN_TIMEOUT_MAX_MS (24 * 3600 * 1000)

struct cs_config {
    const char *socket_path;     /* the unix socket, always served */
    const char *listen;          /* TCP "host:port"; NULL: none */
    const char *metrics_listen;  /* the Prometheus endpoint's "host:port"; NULL: none */
    bool metrics_loopback;       /* metrics_listen is a loopback address: plain HTTP, no token */
    const char *http_listen;     /* the HTTP API's "host:port"; NULL: none */
    bool http_loopback;          /* http_listen is a loopback address: plain HTTP allowed */
    const char *console_dir;     /* the web console's files */
    const char *console_url;     /* the console's address, for hooks' links; NULL: none */
    uint32_t hook_retry_base_ms; /* a hook delivery's first retry wait */
    uint32_t after_window_s;     /* how long a cause waits for its upstreams */
    const char *default_hooks;   /* the server-wide hooks' JSON file; NULL: none */
    bool insecure_tcp;           /* TCP without TLS or authentication: everyone is admin */
    const char *admin_group;     /* NULL: CS_DEFAULT_ADMIN_GROUP if it exists; "": none */
    const char *operator_group;
    const char *viewer_group;
    const char *database_url; /* NULL: the embedded PostgreSQL */
    const char *state_dir;
    uint32_t max_running;
    /* --cluster-max-running: seeds the database's value where none is set */
    bool cluster_max_running_set;
    uint32_t cluster_max_running;
    unsigned launch_threads;     /* that start the minders */
    uint32_t max_health_watches; /* open at once, all callers together */
    uint32_t max_streams;        /* Watch, and ReadLogs, streams open at once, all callers */
    const char *ready_file;      /* NULL: none */
    const char *advertise;       /* other replicas' way here; NULL: the address served */
    const char *minder_path;     /* NULL: found beside cschedd */
    const char *zoneinfo;        /* the tz database's directory (tzdb.h) */
    enum cs_log_level log_level;
    enum cs_log_format log_format;
    enum cs_log_runs log_runs;     /* which run and attempt state changes get an info line */
    bool limits_warn;              /* --limits-enforcement warn (else strict) */
    int nice;                      /* of cschedd's session; 0: left as it is */
    uint32_t retention_days;       /* of ended attempts' directories; 0: forever */
    uint32_t audit_retention_days; /* of audit rows; 0: forever */
    struct cs_auth_paths auth;
    const char *job_user;   /* as root, for jobs without run_as_user; NULL: runas.h's */
    const char *replica_id; /* this replica's name in the database */
    char replica_host[CS_REPLICA_ID_MAX + 2]; /* the host name, when replica_id is it */
    int64_t heartbeat_ms;                     /* how often the lease is renewed */
    int64_t attempt_lease_ms;                 /* how long commands outlive a renewal */
    int64_t drain_timeout_ms;                 /* on SIGTERM, for running commands */
    bool poll_only;                           /* no LISTEN for the replicas' wake-ups */
    bool help;
};

/* Fills config from argv and the environment (CSCHED_SOCKET, CSCHED_LISTEN,
 * CSCHED_INSECURE_TCP, CSCHED_ADMIN_GROUP, CSCHED_OPERATOR_GROUP,
 * CSCHED_VIEWER_GROUP, CSCHED_DATABASE_URL, CSCHED_STATE_DIR, CSCHED_MAX_RUNNING,
 * CSCHED_LAUNCH_THREADS, CSCHED_MAX_HEALTH_WATCHES, CSCHED_MAX_STREAMS, CSCHED_LOG_LEVEL,
 * CSCHED_LOG_FORMAT, CSCHED_LOG_RUNS, * CSCHED_MINDER, CSCHED_NICE, CSCHED_RETENTION_DAYS,
 * CSCHED_AUDIT_RETENTION_DAYS, CSCHED_TLS_CERT, CSCHED_TLS_KEY, CSCHED_TLS_CLIENT_CA,
 * CSCHED_TLS_CLIENT_ROLES, CSCHED_TOKENS_FILE, CSCHED_JOB_USER, CSCHED_METRICS_LISTEN,
 * CSCHED_ZONEINFO, CSCHED_REPLICA_ID, CSCHED_HEARTBEAT, CSCHED_ATTEMPT_LEASE,
 * CSCHED_DRAIN_TIMEOUT). Strings
 * point into argv or environ. 0 or -EINVAL with err naming the flag; -EPERM when TCP would be
 * served without TLS and
 * --insecure-tcp was not given, or --metrics-listen beyond loopback without TLS and tokens. */
int cs_config_parse(int argc, char **argv, struct cs_config *config, struct cs_err *err);
void cs_config_usage(const char *prog);

#endif
