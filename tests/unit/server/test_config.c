/* Unit tests of cschedd's configuration: each flag, each environment
 * variable, flags over the environment over defaults, and every invalid value
 * rejected with -EINVAL and a message that names the flag (or the variable
 * it came from). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "config.h"

static const char *const env_names[] = {
    "CSCHED_LISTEN",
    "CSCHED_DATABASE_URL",
    "CSCHED_STATE_DIR",
    "CSCHED_MAX_RUNNING",
    "CSCHED_LOG_LEVEL",
    "CSCHED_LOG_FORMAT",
    "CSCHED_LOG_RUNS",
    "CSCHED_MINDER",
    "CSCHED_NICE",
    "CSCHED_RETENTION_DAYS",
    "CSCHED_SOCKET",
    "CSCHED_INSECURE_TCP",
    "CSCHED_ADMIN_GROUP",
    "CSCHED_OPERATOR_GROUP",
    "CSCHED_VIEWER_GROUP",
    "CSCHED_TLS_CERT",
    "CSCHED_TLS_KEY",
    "CSCHED_TLS_CLIENT_CA",
    "CSCHED_TLS_CLIENT_ROLES",
    "CSCHED_TOKENS_FILE",
    "CSCHED_JOB_USER",
    "CSCHED_AUDIT_RETENTION_DAYS",
    "CSCHED_METRICS_LISTEN",
    "CSCHED_HTTP_LISTEN",
    "CSCHED_CONSOLE_DIR",
    "CSCHED_LAUNCH_THREADS",
    "CSCHED_MAX_HEALTH_WATCHES",
    "CSCHED_MAX_STREAMS",
    "CSCHED_REPLICA_ID",
    "CSCHED_HEARTBEAT",
    "CSCHED_ATTEMPT_LEASE",
    "CSCHED_DRAIN_TIMEOUT",
    "CSCHED_LIMITS_ENFORCEMENT",
};

static int clear_env(void **state)
{
    for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++)
        assert_int_equal(unsetenv(env_names[i]), 0);
    return 0;
}

/* Parses "cschedd" followed by the NULL-terminated arguments. getopt_long
 * permutes the pointer array, so it is rebuilt for every call. */
static int parse(struct cs_config *c, struct cs_err *err, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;

    argv[argc++] = "cschedd";
    va_start(ap, err);
    for (const char *a = va_arg(ap, const char *); a != NULL; a = va_arg(ap, const char *)) {
        assert_true(argc < 31);
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    argv[argc] = NULL;
    memset(err, 0, sizeof(*err));
    return cs_config_parse(argc, argv, c, err);
}

#define assert_str_or_null(got, want)                                                              \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        if ((g_ == NULL) != (w_ == NULL) || (g_ != NULL && strcmp(g_, w_) != 0))                   \
            fail_msg("%s: expected \"%s\", got \"%s\"", #got, w_ ? w_ : "(null)",                  \
                     g_ ? g_ : "(null)");                                                          \
    } while (0)

/* -EINVAL, err.code set and the name in the message. */
#define assert_rejected(rc, err, name)                                                             \
    do {                                                                                           \
        if ((rc) != -EINVAL)                                                                       \
            fail_msg("expected %d for %s, got %d \"%s\"", -EINVAL, name, (rc), (err).msg);         \
        assert_int_equal((err).code, -EINVAL);                                                     \
        if (strstr((err).msg, name) == NULL)                                                       \
            fail_msg("expected \"%s\" in the message, got \"%s\"", name, (err).msg);               \
    } while (0)

static void test_config_defaults(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_str_or_null(c.listen, NULL);
    assert_str_or_null(c.socket_path, CS_DEFAULT_SOCKET);
    assert_false(c.insecure_tcp);
    assert_str_or_null(c.admin_group, NULL);
    assert_str_or_null(c.operator_group, NULL);
    assert_str_or_null(c.viewer_group, NULL);
    assert_str_or_null(c.database_url, NULL);
    assert_str_or_null(c.state_dir, CS_DEFAULT_STATE_DIR);
    assert_int_equal(c.max_running, CS_DEFAULT_MAX_RUNNING);
    assert_int_equal(c.launch_threads, CS_DEFAULT_LAUNCH_THREADS);
    assert_str_or_null(c.ready_file, NULL);
    assert_str_or_null(c.minder_path, NULL);
    assert_int_equal(c.log_level, CS_LOG_INFO);
    assert_int_equal(c.log_format, CS_LOG_TEXT);
    assert_int_equal(c.log_runs, CS_LOG_RUNS_END);
    assert_int_equal(c.nice, CS_DEFAULT_NICE);
    assert_int_equal(c.retention_days, CS_DEFAULT_RETENTION_DAYS);
    assert_str_or_null(c.job_user, NULL);
    assert_int_equal(c.audit_retention_days, 0);
    assert_false(c.help);
    char host[CS_REPLICA_ID_MAX + 2];
    assert_int_equal(gethostname(host, sizeof(host)), 0);
    assert_string_equal(c.replica_id, host);
    assert_int_equal(c.heartbeat_ms, CS_DEFAULT_HEARTBEAT_MS);
    assert_int_equal(c.attempt_lease_ms, CS_DEFAULT_ATTEMPT_LEASE_MS);
    assert_int_equal(c.drain_timeout_ms, CS_DEFAULT_DRAIN_TIMEOUT_MS);
}

static void test_config_flags(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, "--insecure-tcp", "--listen", "0.0.0.0:7000", "--database-url",
                           "postgresql:///csched", "--state-dir", "/srv/csched", "--max-running",
                           "12", "--ready-file", "/run/csched.ready", "--minder",
                           "/opt/csched-minder", "--log-level", "debug", "--nice", "-3",
                           "--retention-days", "7", "--job-user", "builder",
                           "--audit-retention-days", "400", NULL),
                     0);
    assert_str_or_null(c.listen, "0.0.0.0:7000");
    assert_str_or_null(c.database_url, "postgresql:///csched");
    assert_str_or_null(c.state_dir, "/srv/csched");
    assert_int_equal(c.max_running, 12);
    assert_str_or_null(c.ready_file, "/run/csched.ready");
    assert_str_or_null(c.minder_path, "/opt/csched-minder");
    assert_int_equal(c.log_level, CS_LOG_DEBUG);
    assert_int_equal(c.nice, -3);
    assert_int_equal(c.retention_days, 7);
    assert_str_or_null(c.job_user, "builder");
    assert_int_equal(c.audit_retention_days, 400);
    assert_false(c.help);

    /* --flag=value works as well, and the last of a repeated flag wins. */
    assert_int_equal(parse(&c, &err, "--max-running=3", "--log-level=error", "--max-running", "5",
                           "--listen=[::1]:0", "--insecure-tcp", NULL),
                     0);
    assert_int_equal(c.max_running, 5);
    assert_int_equal(c.log_level, CS_LOG_ERROR);
    assert_str_or_null(c.listen, "[::1]:0");

    /* An empty --database-url means the embedded PostgreSQL. */
    assert_int_equal(parse(&c, &err, "--database-url", "", NULL), 0);
    assert_str_or_null(c.database_url, NULL);
}

static void test_config_limits(void **state)
{
    struct cs_config c;
    struct cs_err err;
    char text[16];

    assert_int_equal(parse(&c, &err, "--max-running", "1", NULL), 0);
    assert_int_equal(c.max_running, 1);
    (void)snprintf(text, sizeof(text), "%d", CS_MAX_RUNNING_LIMIT);
    assert_int_equal(parse(&c, &err, "--max-running", text, NULL), 0);
    assert_int_equal(c.max_running, CS_MAX_RUNNING_LIMIT);
    /* Unset unless given; 0 is a value (none), stored as any other. */
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_false(c.cluster_max_running_set);
    assert_int_equal(parse(&c, &err, "--cluster-max-running", "0", NULL), 0);
    assert_true(c.cluster_max_running_set);
    assert_int_equal(c.cluster_max_running, 0);
    assert_int_equal(parse(&c, &err, "--cluster-max-running", "200", NULL), 0);
    assert_int_equal(c.cluster_max_running, 200);
    (void)snprintf(text, sizeof(text), "%d", CS_MAX_RUNNING_LIMIT + 1);
    assert_int_equal(parse(&c, &err, "--cluster-max-running", text, NULL), -EINVAL);
    assert_non_null(strstr(err.msg, "--cluster-max-running"));
    for (int i = 0; i < 4; i++) {
        static const char *const levels[] = {"error", "warn", "info", "debug"};
        assert_int_equal(parse(&c, &err, "--log-level", levels[i], NULL), 0);
        assert_int_equal(c.log_level, (enum cs_log_level)i);
    }
    static const int nices[] = {CS_NICE_MIN, -1, 0, 5, CS_NICE_MAX};
    for (size_t i = 0; i < sizeof(nices) / sizeof(nices[0]); i++) {
        (void)snprintf(text, sizeof(text), "%d", nices[i]);
        assert_int_equal(parse(&c, &err, "--nice", text, NULL), 0);
        assert_int_equal(c.nice, nices[i]);
    }
    static const uint32_t days[] = {0, 1, CS_RETENTION_DAYS_MAX};
    for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++) {
        (void)snprintf(text, sizeof(text), "%u", days[i]);
        assert_int_equal(parse(&c, &err, "--retention-days", text, NULL), 0);
        assert_int_equal(c.retention_days, days[i]);
    }
}

static void test_config_help(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, "--help", NULL), 0);
    assert_true(c.help);
    assert_int_equal(parse(&c, &err, "-h", NULL), 0);
    assert_true(c.help);
    /* Help wins over what follows, even if it is wrong. */
    assert_int_equal(parse(&c, &err, "--help", "--max-running", "0", NULL), 0);
    assert_true(c.help);
}

static void test_config_env(void **state)
{
    struct cs_config c;
    struct cs_err err;

    setenv("CSCHED_LISTEN", "127.0.0.1:6000", 1);
    setenv("CSCHED_INSECURE_TCP", "1", 1);
    setenv("CSCHED_DATABASE_URL", "host=/tmp dbname=cs", 1);
    setenv("CSCHED_STATE_DIR", "/var/tmp/cs", 1);
    setenv("CSCHED_MAX_RUNNING", "7", 1);
    setenv("CSCHED_LOG_LEVEL", "warn", 1);
    setenv("CSCHED_MINDER", "/usr/libexec/csched-minder", 1);
    setenv("CSCHED_NICE", "-15", 1);
    setenv("CSCHED_RETENTION_DAYS", "0", 1);
    setenv("CSCHED_JOB_USER", "65534", 1);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_str_or_null(c.job_user, "65534");
    assert_str_or_null(c.listen, "127.0.0.1:6000");
    assert_str_or_null(c.database_url, "host=/tmp dbname=cs");
    assert_str_or_null(c.state_dir, "/var/tmp/cs");
    assert_int_equal(c.max_running, 7);
    assert_int_equal(c.log_level, CS_LOG_WARN);
    assert_str_or_null(c.minder_path, "/usr/libexec/csched-minder");
    assert_int_equal(c.nice, -15);
    assert_int_equal(c.retention_days, 0);
    assert_str_or_null(c.ready_file, NULL);
}

/* An empty variable counts as unset. */
static void test_config_env_empty_is_unset(void **state)
{
    struct cs_config c;
    struct cs_err err;

    for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++)
        setenv(env_names[i], "", 1);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_str_or_null(c.listen, NULL);
    assert_str_or_null(c.socket_path, CS_DEFAULT_SOCKET);
    assert_str_or_null(c.database_url, NULL);
    assert_str_or_null(c.state_dir, CS_DEFAULT_STATE_DIR);
    assert_int_equal(c.max_running, CS_DEFAULT_MAX_RUNNING);
    assert_int_equal(c.log_level, CS_LOG_INFO);
    assert_str_or_null(c.minder_path, NULL);
    assert_int_equal(c.nice, CS_DEFAULT_NICE);
    assert_int_equal(c.retention_days, CS_DEFAULT_RETENTION_DAYS);
}

static void test_config_flag_over_env(void **state)
{
    struct cs_config c;
    struct cs_err err;

    setenv("CSCHED_LISTEN", "127.0.0.1:6000", 1);
    setenv("CSCHED_INSECURE_TCP", "1", 1);
    setenv("CSCHED_DATABASE_URL", "host=/tmp dbname=cs", 1);
    setenv("CSCHED_STATE_DIR", "/var/tmp/cs", 1);
    setenv("CSCHED_MAX_RUNNING", "7", 1);
    setenv("CSCHED_LOG_LEVEL", "warn", 1);
    setenv("CSCHED_MINDER", "/usr/libexec/csched-minder", 1);
    assert_int_equal(parse(&c, &err, "--listen", "127.0.0.1:7000", "--database-url",
                           "postgresql://db/cs", "--state-dir", "/srv/cs", "--max-running", "9",
                           "--log-level", "error", "--minder", "/opt/m", NULL),
                     0);
    assert_str_or_null(c.listen, "127.0.0.1:7000");
    assert_str_or_null(c.database_url, "postgresql://db/cs");
    assert_str_or_null(c.state_dir, "/srv/cs");
    assert_int_equal(c.max_running, 9);
    assert_int_equal(c.log_level, CS_LOG_ERROR);
    assert_str_or_null(c.minder_path, "/opt/m");

    /* An empty --database-url overrides the variable too. */
    assert_int_equal(parse(&c, &err, "--database-url", "", NULL), 0);
    assert_str_or_null(c.database_url, NULL);

    /* A flag for one setting leaves the others to the environment. */
    assert_int_equal(parse(&c, &err, "--max-running", "2", NULL), 0);
    assert_int_equal(c.max_running, 2);
    assert_str_or_null(c.listen, "127.0.0.1:6000");
    assert_int_equal(c.log_level, CS_LOG_WARN);
}

/* The replica's settings, by flag and by environment, and each refusal
 * naming what was wrong. */
static void test_config_replica(void **state)
{
    struct cs_config c;
    struct cs_err err;
    (void)state;

    assert_int_equal(parse(&c, &err, "--replica-id", "csched-1", "--heartbeat", "500ms",
                           "--attempt-lease", "2m", "--drain-timeout", "0s", NULL),
                     0);
    assert_string_equal(c.replica_id, "csched-1");
    assert_int_equal(c.heartbeat_ms, 500);
    assert_int_equal(c.attempt_lease_ms, 120000);
    assert_int_equal(c.drain_timeout_ms, 0);
    assert_int_equal(setenv("CSCHED_REPLICA_ID", "r.2_b", 1), 0);
    assert_int_equal(setenv("CSCHED_HEARTBEAT", "3s", 1), 0);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_string_equal(c.replica_id, "r.2_b");
    assert_int_equal(c.heartbeat_ms, 3000);

    static const char *const bad_ids[] = {"a b", "a/b", "",
                                          "x"
                                          "0123456789012345678901234567890123456789012345678901234"
                                          "56789abc"};
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
        int rc = parse(&c, &err, "--replica-id", bad_ids[i], NULL);
        assert_rejected(rc, err, "--replica-id");
    }
    static const char *const bad_durations[] = {"2",  "s",    "-1s",  "1.5s",
                                                "2h", "99ms", "2mss", "99999999999999999999s"};
    for (size_t i = 0; i < sizeof(bad_durations) / sizeof(bad_durations[0]); i++) {
        int rc = parse(&c, &err, "--heartbeat", bad_durations[i], NULL);
        assert_rejected(rc, err, "--heartbeat");
    }
    /* Commands must outlive the replica's own lease. */
    int rc = parse(&c, &err, "--heartbeat", "2s", "--attempt-lease", "5s", NULL);
    assert_rejected(rc, err, "--attempt-lease");
}

static void test_config_bad_max_running(void **state)
{
    static const char *const bad[] = {"0",
                                      "-1",
                                      "-0",
                                      "abc",
                                      "",
                                      "5x",
                                      "1.5",
                                      "0x10",
                                      "100001",
                                      "4294967297",
                                      "99999999999999999999999"};
    struct cs_config c;
    struct cs_err err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = parse(&c, &err, "--max-running", bad[i], NULL);
        assert_rejected(rc, err, "--max-running");
        /* The message quotes the value, so a person sees what was wrong. */
        if (bad[i][0] != '\0' && strstr(err.msg, bad[i]) == NULL)
            fail_msg("expected \"%s\" in the message, got \"%s\"", bad[i], err.msg);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (bad[i][0] == '\0')
            continue; /* empty is unset: the default */
        setenv("CSCHED_MAX_RUNNING", bad[i], 1);
        int rc = parse(&c, &err, NULL);
        assert_rejected(rc, err, "CSCHED_MAX_RUNNING");
    }
}

/* Every one of n bad values is refused from the flag, and env_bad from the
 * variable, each with a message naming where it came from. */
static void assert_refused(const char *flag, const char *variable, const char *const *bad, size_t n,
                           const char *env_bad)
{
    struct cs_config c;
    struct cs_err err;

    for (size_t i = 0; i < n; i++) {
        int rc = parse(&c, &err, flag, bad[i], NULL);
        assert_rejected(rc, err, flag);
    }
    setenv(variable, env_bad, 1);
    int rc = parse(&c, &err, NULL);
    assert_rejected(rc, err, variable);
}

static void test_config_bad_log_level(void **state)
{
    static const char *const bad[] = {"", "verbose", "INFO", "Debug", "warning", "info ", "0"};
    assert_refused("--log-level", "CSCHED_LOG_LEVEL", bad, sizeof(bad) / sizeof(bad[0]), "trace");
}

/* --log-format and --log-runs, from the flag and the environment, the flag
 * winning; anything but their words refused. */
static void test_config_log_style(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, "--log-format", "json", "--log-runs", "false", NULL), 0);
    assert_int_equal(c.log_format, CS_LOG_JSON);
    assert_int_equal(c.log_runs, CS_LOG_RUNS_NONE);
    setenv("CSCHED_LOG_FORMAT", "json", 1);
    setenv("CSCHED_LOG_RUNS", "none", 1);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_int_equal(c.log_format, CS_LOG_JSON);
    assert_int_equal(c.log_runs, CS_LOG_RUNS_NONE);
    assert_int_equal(parse(&c, &err, "--log-format", "text", "--log-runs", "true", NULL), 0);
    assert_int_equal(c.log_format, CS_LOG_TEXT);
    assert_int_equal(c.log_runs, CS_LOG_RUNS_ALL);
    assert_int_equal(parse(&c, &err, "--log-runs", "all", NULL), 0);
    assert_int_equal(c.log_runs, CS_LOG_RUNS_ALL);
    assert_int_equal(parse(&c, &err, "--log-runs", "end", NULL), 0);
    assert_int_equal(c.log_runs, CS_LOG_RUNS_END);
    unsetenv("CSCHED_LOG_FORMAT");
    unsetenv("CSCHED_LOG_RUNS");

    static const char *const bad_format[] = {"", "JSON", "logfmt", "text "};
    assert_refused("--log-format", "CSCHED_LOG_FORMAT", bad_format,
                   sizeof(bad_format) / sizeof(bad_format[0]), "yaml");
    unsetenv("CSCHED_LOG_FORMAT");
    static const char *const bad_runs[] = {"", "1", "yes", "TRUE", "off", "End", "ends"};
    assert_refused("--log-runs", "CSCHED_LOG_RUNS", bad_runs,
                   sizeof(bad_runs) / sizeof(bad_runs[0]), "no");
}

/* --limits-enforcement: strict unless warn is asked for, by the flag or the
 * environment, the flag winning; anything else refused. */
static void test_config_limits_enforcement(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_false(c.limits_warn);
    assert_int_equal(parse(&c, &err, "--limits-enforcement", "warn", NULL), 0);
    assert_true(c.limits_warn);
    setenv("CSCHED_LIMITS_ENFORCEMENT", "warn", 1);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_true(c.limits_warn);
    assert_int_equal(parse(&c, &err, "--limits-enforcement", "strict", NULL), 0);
    assert_false(c.limits_warn);
    unsetenv("CSCHED_LIMITS_ENFORCEMENT");

    static const char *const bad[] = {"", "STRICT", "off", "warn "};
    assert_refused("--limits-enforcement", "CSCHED_LIMITS_ENFORCEMENT", bad,
                   sizeof(bad) / sizeof(bad[0]), "none");
    unsetenv("CSCHED_LIMITS_ENFORCEMENT");
}

static void test_config_bad_nice(void **state)
{
    static const char *const bad[] = {
        "-21", "20", "", "ten", "-5x", " -5", "1.5", "-", "99999999999999999999"};
    assert_refused("--nice", "CSCHED_NICE", bad, sizeof(bad) / sizeof(bad[0]), "-40");
}

static void test_config_bad_retention_days(void **state)
{
    static const char *const bad[] = {"-1", "36501", "", "month", "7d", "+7", " 7", "1.5"};
    assert_refused("--retention-days", "CSCHED_RETENTION_DAYS", bad, sizeof(bad) / sizeof(bad[0]),
                   "forever");
}

/* --launch-threads: 1 to 16 from the flag or the environment, the flag
 * winning; anything else refused, naming where it came from. */
static void test_config_launch_threads(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, "--launch-threads", "1", NULL), 0);
    assert_int_equal(c.launch_threads, 1);
    assert_int_equal(parse(&c, &err, "--launch-threads=16", NULL), 0);
    assert_int_equal(c.launch_threads, CS_LAUNCH_THREADS_MAX);
    setenv("CSCHED_LAUNCH_THREADS", "3", 1);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_int_equal(c.launch_threads, 3);
    assert_int_equal(parse(&c, &err, "--launch-threads", "2", NULL), 0);
    assert_int_equal(c.launch_threads, 2);
    unsetenv("CSCHED_LAUNCH_THREADS");

    static const char *const bad[] = {"0", "17", "-1", "", "four", "4x", "+4", " 4", "1.5"};
    assert_refused("--launch-threads", "CSCHED_LAUNCH_THREADS", bad, sizeof(bad) / sizeof(bad[0]),
                   "100");
    assert_rejected(parse(&c, &err, "--launch-threads", "17", NULL), err, "from 1 to 16");
}

/* --max-health-watches: 10000 unless the flag or the environment says,
 * 1 to 1000000. */
static void test_config_max_health_watches(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_int_equal(c.max_health_watches, CS_DEFAULT_MAX_HEALTH_WATCHES);
    assert_int_equal(parse(&c, &err, "--max-health-watches", "1", NULL), 0);
    assert_int_equal(c.max_health_watches, 1);
    setenv("CSCHED_MAX_HEALTH_WATCHES", "1000000", 1);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_int_equal(c.max_health_watches, CS_MAX_HEALTH_WATCHES_LIMIT);
    unsetenv("CSCHED_MAX_HEALTH_WATCHES");

    static const char *const bad[] = {"0", "1000001", "-1", "", "many", "1e3"};
    assert_refused("--max-health-watches", "CSCHED_MAX_HEALTH_WATCHES", bad,
                   sizeof(bad) / sizeof(bad[0]), "none");
}

/* --max-streams: 1024 unless the flag or the environment says, 1 to
 * 100000. */
static void test_config_max_streams(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_int_equal(c.max_streams, 1024);
    assert_int_equal(parse(&c, &err, "--max-streams", "1", NULL), 0);
    assert_int_equal(c.max_streams, 1);
    setenv("CSCHED_MAX_STREAMS", "100000", 1);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_int_equal(c.max_streams, CS_MAX_STREAMS_LIMIT);
    unsetenv("CSCHED_MAX_STREAMS");

    static const char *const bad[] = {"0", "100001", "-1", "", "many", "1e3"};
    assert_refused("--max-streams", "CSCHED_MAX_STREAMS", bad, sizeof(bad) / sizeof(bad[0]),
                   "none");
}

static void test_config_bad_audit_retention_days(void **state)
{
    static const char *const bad[] = {"-1", "36501", "", "year", "+7", "1.5"};
    assert_refused("--audit-retention-days", "CSCHED_AUDIT_RETENTION_DAYS", bad,
                   sizeof(bad) / sizeof(bad[0]), "forever");
}

static void test_config_bad_state_dir(void **state)
{
    struct cs_config c;
    struct cs_err err;
    int rc;

    rc = parse(&c, &err, "--state-dir", "var/lib/csched", NULL);
    assert_rejected(rc, err, "--state-dir");
    rc = parse(&c, &err, "--state-dir", "", NULL);
    assert_rejected(rc, err, "--state-dir");
    rc = parse(&c, &err, "--state-dir", "./state", NULL);
    assert_rejected(rc, err, "--state-dir");
    setenv("CSCHED_STATE_DIR", "relative", 1);
    rc = parse(&c, &err, NULL);
    if (rc != -EINVAL || strstr(err.msg, "relative") == NULL)
        fail_msg("CSCHED_STATE_DIR=relative: expected %d naming the value, got %d \"%s\"", -EINVAL,
                 rc, err.msg);
    /* A flag makes the variable's value irrelevant. */
    assert_int_equal(parse(&c, &err, "--state-dir", "/srv", NULL), 0);
    assert_str_or_null(c.state_dir, "/srv");
}

static void test_config_unknown_and_extra(void **state)
{
    struct cs_config c;
    struct cs_err err;
    int rc;

    rc = parse(&c, &err, "--bogus", NULL);
    assert_int_equal(rc, -EINVAL);
    assert_int_equal(err.code, -EINVAL);
    assert_true(err.msg[0] != '\0');
    rc = parse(&c, &err, "-x", NULL);
    assert_int_equal(rc, -EINVAL);

    rc = parse(&c, &err, "serve", NULL);
    assert_rejected(rc, err, "serve");
    /* getopt_long moves operands to the end; the message still names it. */
    rc = parse(&c, &err, "extra", "--max-running", "4", NULL);
    assert_rejected(rc, err, "extra");
}

/* The unix socket is served always; its path, and the groups of each role,
 * come from flags over the environment. */
static void test_config_socket_and_groups(void **state)
{
    struct cs_config c;
    struct cs_err err;

    setenv("CSCHED_SOCKET", "/tmp/env.sock", 1);
    setenv("CSCHED_VIEWER_GROUP", "staff", 1);
    assert_int_equal(parse(&c, &err, "--admin-group", "wheel", "--operator-group", "1234", NULL),
                     0);
    assert_str_or_null(c.socket_path, "/tmp/env.sock");
    assert_str_or_null(c.admin_group, "wheel");
    assert_str_or_null(c.operator_group, "1234");
    assert_str_or_null(c.viewer_group, "staff");
    assert_int_equal(parse(&c, &err, "--socket", "/run/x/cs.sock", "--admin-group", "", NULL), 0);
    assert_str_or_null(c.socket_path, "/run/x/cs.sock");
    assert_str_or_null(c.admin_group, "");
    assert_rejected(parse(&c, &err, "--socket", "cs.sock", NULL), err, "--socket");
}

/* TCP without TLS or authentication only on --insecure-tcp (or
 * CSCHED_INSECURE_TCP=1): otherwise -EPERM, with a message that names the
 * flag to pass. */
static void test_config_tcp_needs_insecure_flag(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, "--listen", "0.0.0.0:50051", NULL), -EPERM);
    assert_int_equal(err.code, -EPERM);
    assert_non_null(strstr(err.msg, "--listen 0.0.0.0:50051 would serve TCP without TLS"));
    assert_non_null(strstr(err.msg, "pass --insecure-tcp"));
    setenv("CSCHED_LISTEN", "127.0.0.1:1", 1);
    assert_int_equal(parse(&c, &err, NULL), -EPERM);
    assert_int_equal(parse(&c, &err, "--insecure-tcp", NULL), 0);
    assert_true(c.insecure_tcp);
    setenv("CSCHED_INSECURE_TCP", "1", 1);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_str_or_null(c.listen, "127.0.0.1:1");
    /* An empty --listen turns TCP off again. */
    unsetenv("CSCHED_INSECURE_TCP");
    assert_int_equal(parse(&c, &err, "--listen", "", NULL), 0);
    assert_str_or_null(c.listen, NULL);
}

/* Server bug (config.c, cs_config_parse): a flag given without its value
 * (the last argument is "--max-running") reaches the default case as '?' and
 * the message is "unknown option; see --help", which names no flag and calls
 * a known flag unknown. The message should name the flag whose value is
 * missing. */
static void test_config_missing_value_names_flag(void **state)
{
    static const char *const flags[] = {
        "--listen",           "--database-url", "--state-dir",   "--max-running",
        "--ready-file",       "--minder",       "--log-level",   "--nice",
        "--retention-days",   "--socket",       "--admin-group", "--operator-group",
        "--viewer-group",     "--tls-cert",     "--tls-key",     "--tls-client-ca",
        "--tls-client-roles", "--tokens-file",  "--job-user",    "--audit-retention-days",
        "--metrics-listen",   "--http-listen",  "--console-dir"};
    struct cs_config c;
    struct cs_err err;

    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        int rc = parse(&c, &err, flags[i], NULL);
        assert_rejected(rc, err, flags[i]);
    }
}

/* The TLS files from flags and variables; each file needs what it rests on. */
static void test_config_tls(void **state)
{
    struct cs_config c;
    struct cs_err err;
    int rc;

    assert_int_equal(setenv("CSCHED_TOKENS_FILE", "/etc/t", 1), 0);
    assert_int_equal(parse(&c, &err, "--listen", ":1", "--tls-cert", "/c", "--tls-key", "/k",
                           "--tls-client-ca", "/ca", "--tls-client-roles", "/r", NULL),
                     0);
    assert_str_or_null(c.auth.tls_cert, "/c");
    assert_str_or_null(c.auth.tls_key, "/k");
    assert_str_or_null(c.auth.tls_client_ca, "/ca");
    assert_str_or_null(c.auth.client_roles, "/r");
    assert_str_or_null(c.auth.tokens, "/etc/t");
    rc = parse(&c, &err, "--tls-cert", "/c", NULL);
    assert_rejected(rc, err, "--tls-key");
    rc = parse(&c, &err, NULL);
    assert_rejected(rc, err, "--tokens-file");
    assert_int_equal(unsetenv("CSCHED_TOKENS_FILE"), 0);
    rc = parse(&c, &err, "--tls-client-ca", "/ca", NULL);
    assert_rejected(rc, err, "--tls-cert");
    rc = parse(&c, &err, "--tls-cert", "/c", "--tls-key", "/k", "--tls-client-roles", "/r", NULL);
    assert_rejected(rc, err, "--tls-client-ca");
    /* TLS is for the TCP listener, and it is not plaintext. */
    rc = parse(&c, &err, "--tls-cert", "/c", "--tls-key", "/k", NULL);
    assert_rejected(rc, err, "--listen");
    rc = parse(&c, &err, "--listen", ":1", "--insecure-tcp", "--tls-cert", "/c", "--tls-key", "/k",
               NULL);
    assert_rejected(rc, err, "--insecure-tcp");
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_null(c.auth.tls_cert);
}

/* The metrics endpoint: off by default; on loopback as it is; beyond it
 * only with TLS and tokens, or --insecure-tcp. */
static void test_config_metrics_listen(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_null(c.metrics_listen);
    assert_int_equal(parse(&c, &err, "--metrics-listen", "127.0.0.1:9464", NULL), 0);
    assert_str_or_null(c.metrics_listen, "127.0.0.1:9464");
    assert_true(c.metrics_loopback);
    assert_int_equal(setenv("CSCHED_METRICS_LISTEN", "[::1]:0", 1), 0);
    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_true(c.metrics_loopback);
    assert_int_equal(parse(&c, &err, "--metrics-listen", "0.0.0.0:9464", NULL), -EPERM);
    assert_non_null(strstr(err.msg, "--metrics-listen 0.0.0.0:9464 is beyond loopback"));
    assert_int_equal(parse(&c, &err, "--metrics-listen", "0.0.0.0:9464", "--insecure-tcp", NULL),
                     0);
    assert_false(c.metrics_loopback);
    assert_int_equal(parse(&c, &err, "--metrics-listen", "0.0.0.0:1", "--tls-cert", "/c",
                           "--tls-key", "/k", NULL),
                     -EPERM);
    /* TLS for the endpoint alone: no --listen needed. */
    assert_int_equal(parse(&c, &err, "--metrics-listen", "0.0.0.0:1", "--tls-cert", "/c",
                           "--tls-key", "/k", "--tokens-file", "/t", NULL),
                     0);
    int rc = parse(&c, &err, "--metrics-listen", "metrics.example:1", NULL);
    assert_rejected(rc, err, "--metrics-listen");
    assert_int_equal(unsetenv("CSCHED_METRICS_LISTEN"), 0);
}

/* The HTTP API knows callers only by token: it needs --tokens-file always,
 * and TLS beyond loopback unless --insecure-tcp; on loopback the tokens
 * need no TLS. */
static void test_config_http_listen(void **state)
{
    struct cs_config c;
    struct cs_err err;

    assert_int_equal(parse(&c, &err, NULL), 0);
    assert_null(c.http_listen);
    assert_string_equal(c.console_dir, CS_DEFAULT_CONSOLE_DIR);
    assert_int_equal(parse(&c, &err, "--http-listen", "127.0.0.1:8080", NULL), -EINVAL);
    assert_non_null(strstr(err.msg, "--http-listen needs --tokens-file"));
    assert_int_equal(parse(&c, &err, "--http-listen", "127.0.0.1:8080", "--tokens-file", "/t",
                           "--console-dir", "/srv/console", NULL),
                     0);
    assert_true(c.http_loopback);
    assert_string_equal(c.console_dir, "/srv/console");
    assert_int_equal(parse(&c, &err, "--http-listen", "0.0.0.0:8080", "--tokens-file", "/t", NULL),
                     -EPERM);
    assert_non_null(strstr(err.msg, "--http-listen 0.0.0.0:8080 is beyond loopback"));
    assert_int_equal(parse(&c, &err, "--http-listen", "0.0.0.0:8080", "--tokens-file", "/t",
                           "--insecure-tcp", NULL),
                     0);
    assert_int_equal(parse(&c, &err, "--http-listen", "0.0.0.0:8080", "--tokens-file", "/t",
                           "--tls-cert", "/c", "--tls-key", "/k", NULL),
                     0);
    /* Without the HTTP API, tokens still need TLS. */
    assert_int_equal(parse(&c, &err, "--tokens-file", "/t", NULL), -EINVAL);
    int rc = parse(&c, &err, "--http-listen", "nowhere", "--tokens-file", "/t", NULL);
    assert_rejected(rc, err, "--http-listen");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_config_defaults, clear_env),
        cmocka_unit_test_setup(test_config_flags, clear_env),
        cmocka_unit_test_setup(test_config_limits, clear_env),
        cmocka_unit_test_setup(test_config_help, clear_env),
        cmocka_unit_test_setup(test_config_env, clear_env),
        cmocka_unit_test_setup(test_config_env_empty_is_unset, clear_env),
        cmocka_unit_test_setup(test_config_flag_over_env, clear_env),
        cmocka_unit_test_setup(test_config_bad_max_running, clear_env),
        cmocka_unit_test_setup(test_config_bad_log_level, clear_env),
        cmocka_unit_test_setup(test_config_log_style, clear_env),
        cmocka_unit_test_setup(test_config_limits_enforcement, clear_env),
        cmocka_unit_test_setup(test_config_bad_nice, clear_env),
        cmocka_unit_test_setup(test_config_bad_retention_days, clear_env),
        cmocka_unit_test_setup(test_config_launch_threads, clear_env),
        cmocka_unit_test_setup(test_config_max_health_watches, clear_env),
        cmocka_unit_test_setup(test_config_max_streams, clear_env),
        cmocka_unit_test_setup(test_config_bad_audit_retention_days, clear_env),
        cmocka_unit_test_setup(test_config_bad_state_dir, clear_env),
        cmocka_unit_test_setup(test_config_unknown_and_extra, clear_env),
        cmocka_unit_test_setup(test_config_missing_value_names_flag, clear_env),
        cmocka_unit_test_setup(test_config_socket_and_groups, clear_env),
        cmocka_unit_test_setup(test_config_tcp_needs_insecure_flag, clear_env),
        cmocka_unit_test_setup(test_config_tls, clear_env),
        cmocka_unit_test_setup(test_config_metrics_listen, clear_env),
        cmocka_unit_test_setup(test_config_http_listen, clear_env),
        cmocka_unit_test_setup(test_config_replica, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
