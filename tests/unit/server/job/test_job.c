/* Unit tests of job.c's validation: every rule of cs_job_validate and
 * cs_run_request_validate (the return code and a message that names the
 * field and the limit), and cs_message_copy. The table of jobs is tested in
 * test_job_table.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "job.h"
#include "job_limits.h"

/* A job that passes, built on the stack from borrowed strings. */
struct spec_buf {
    Csched__V1__Job job;
    char *argv[4];
    Csched__V1__Job__EnvEntry env[2], *env_ptrs[2];
    Csched__V1__Job__LabelsEntry labels[2], *label_ptrs[2];
};

static void spec_init(struct spec_buf *b)
{
    memset(b, 0, sizeof(*b));
    csched__v1__job__init(&b->job);
    b->job.name = "backup.nightly_1-a";
    b->argv[0] = "/usr/bin/backup";
    b->argv[1] = "--full";
    b->job.command = b->argv;
    b->job.n_command = 2;
    for (int i = 0; i < 2; i++) {
        csched__v1__job__env_entry__init(&b->env[i]);
        b->env_ptrs[i] = &b->env[i];
        csched__v1__job__labels_entry__init(&b->labels[i]);
        b->label_ptrs[i] = &b->labels[i];
    }
    b->env[0].key = "TZ";
    b->env[0].value = "UTC";
    b->job.env = b->env_ptrs;
    b->job.n_env = 1;
    b->labels[0].key = "team";
    b->labels[0].value = "ops";
    b->job.labels = b->label_ptrs;
    b->job.n_labels = 1;
}

static void check_valid(const struct spec_buf *b, const char *what)
{
    struct cs_err err = {0};
    int rc = cs_job_validate(&b->job, &err);

    if (rc != 0)
        fail_msg("%s: expected valid, got %d \"%s\"", what, rc, err.msg);
}

/* Rejected with -EINVAL, err.code set, and every needle in the message. */
static void check_invalid(const struct spec_buf *b, const char *what, const char *needle,
                          const char *needle2)
{
    struct cs_err err = {0};
    int rc = cs_job_validate(&b->job, &err);

    if (rc != -EINVAL)
        fail_msg("%s: expected %d, got %d \"%s\"", what, -EINVAL, rc, err.msg);
    if (err.code != -EINVAL)
        fail_msg("%s: err.code expected %d, got %d", what, -EINVAL, err.code);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("%s: expected \"%s\" in the message, got \"%s\"", what, needle, err.msg);
    if (needle2 != NULL && strstr(err.msg, needle2) == NULL)
        fail_msg("%s: expected \"%s\" in the message, got \"%s\"", what, needle2, err.msg);
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);

    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_job_valid(void **state)
{
    struct spec_buf b;

    spec_init(&b);
    check_valid(&b, "the base job");
    /* Shell instead of argv; later arguments may be empty. */
    b.job.n_command = 0;
    b.job.command = NULL;
    b.job.shell = "echo hi";
    check_valid(&b, "shell");
    spec_init(&b);
    b.argv[1] = "";
    check_valid(&b, "empty argv[1]");
    /* No env, no labels, no working dir. */
    spec_init(&b);
    b.job.n_env = b.job.n_labels = 0;
    check_valid(&b, "no env, no labels");
    /* NULL err is allowed. */
    assert_int_equal(cs_job_validate(&b.job, NULL), 0);
    b.job.name = "";
    assert_int_equal(cs_job_validate(&b.job, NULL), -EINVAL);
}

static void test_job_name_rules(void **state)
{
    struct spec_buf b;
    char *name_max = repeat('n', CS_JOB_NAME_MAX), *name_over = repeat('n', CS_JOB_NAME_MAX + 1);
    static const char *const good[] = {"a", "Z", "0", "_x", "9lives", "a.b-c_D", "x.", "x-"};
    static const char *const bad_chars[] = {"a b",  "a/b", "a@b",   "a:b", "caf\xc3\xa9",
                                            "a\tb", "a*",  "tab\n", "a=b", "a\\b"};

    spec_init(&b);
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        b.job.name = (char *)good[i];
        check_valid(&b, good[i]);
    }
    b.job.name = name_max;
    check_valid(&b, "a 128-byte name");

    b.job.name = "";
    check_invalid(&b, "empty name", "job.name", NULL);
    b.job.name = name_over;
    check_invalid(&b, "a 129-byte name", "job.name", "128");
    b.job.name = ".hidden";
    check_invalid(&b, "leading '.'", "job.name", NULL);
    b.job.name = "-rf";
    check_invalid(&b, "leading '-'", "job.name", NULL);
    b.job.name = ".";
    check_invalid(&b, "\".\"", "job.name", NULL);
    for (size_t i = 0; i < sizeof(bad_chars) / sizeof(bad_chars[0]); i++) {
        b.job.name = (char *)bad_chars[i];
        check_invalid(&b, bad_chars[i], "job.name", NULL);
    }
    free(name_max);
    free(name_over);
}

/* cs_job_name_validate names whichever field it is given. */
static void test_job_name_validate_field(void **state)
{
    struct cs_err err = {0};

    assert_int_equal(cs_job_name_validate("ok-name", "job_name", &err), 0);
    assert_int_equal(cs_job_name_validate("not ok", "job_name", &err), -EINVAL);
    if (strstr(err.msg, "job_name") == NULL)
        fail_msg("expected \"job_name\" in the message, got \"%s\"", err.msg);
    assert_int_equal(cs_job_name_validate("", "name", &err), -EINVAL);
    if (strncmp(err.msg, "name ", 5) != 0)
        fail_msg("expected the message to start with \"name \", got \"%s\"", err.msg);
}

static void test_job_command_rules(void **state)
{
    struct spec_buf b;

    spec_init(&b);
    b.job.n_command = 0;
    b.job.command = NULL;
    check_invalid(&b, "no command, no shell", "job.command", "job.shell");

    spec_init(&b);
    b.job.shell = "true";
    check_invalid(&b, "command and shell", "job.command", "job.shell");

    spec_init(&b);
    b.argv[0] = "";
    check_invalid(&b, "empty argv[0]", "job.command[0]", NULL);

    /* At the limit and one over. */
    spec_init(&b);
    char **argv = calloc(CS_JOB_ARGS_MAX + 1, sizeof(*argv));
    assert_non_null(argv);
    for (size_t i = 0; i <= CS_JOB_ARGS_MAX; i++)
        argv[i] = "x";
    b.job.command = argv;
    b.job.n_command = CS_JOB_ARGS_MAX;
    check_valid(&b, "4096 arguments");
    b.job.n_command = CS_JOB_ARGS_MAX + 1;
    check_invalid(&b, "4097 arguments", "job.command", "4096");
    free(argv);
}

static void test_job_working_dir(void **state)
{
    struct spec_buf b;

    spec_init(&b);
    b.job.working_dir = "/srv/backup";
    check_valid(&b, "absolute working_dir");
    b.job.working_dir = "/";
    check_valid(&b, "working_dir /");
    b.job.working_dir = "srv/backup";
    check_invalid(&b, "relative working_dir", "job.working_dir", NULL);
    b.job.working_dir = "./x";
    check_invalid(&b, "./x working_dir", "job.working_dir", NULL);
    b.job.working_dir = "~/x";
    check_invalid(&b, "~/x working_dir", "job.working_dir", NULL);
}

static void test_job_limits(void **state)
{
    struct spec_buf b;

    spec_init(&b);
    b.job.timeout_seconds = CS_JOB_TIMEOUT_MAX_S;
    b.job.max_attempts = CS_JOB_MAX_ATTEMPTS;
    b.job.retry_backoff_ms = CS_RETRY_BACKOFF_MAX_MS;
    b.job.max_running = CS_MAX_RUNNING_LIMIT;
    check_valid(&b, "every limit at its maximum");

    b.job.max_running = CS_MAX_RUNNING_LIMIT + 1;
    check_invalid(&b, "max_running over the server's limit", "job.max_running", "100000");
    b.job.max_running = UINT32_MAX;
    check_invalid(&b, "max_running UINT32_MAX", "job.max_running", "4294967295");
    b.job.max_running = 0;
    check_valid(&b, "max_running 0 (no per-job limit)");

    b.job.timeout_seconds = CS_JOB_TIMEOUT_MAX_S + 1;
    check_invalid(&b, "timeout over 7 days", "job.timeout_seconds", NULL);
    b.job.timeout_seconds = UINT32_MAX;
    check_invalid(&b, "timeout UINT32_MAX", "job.timeout_seconds", NULL);
    b.job.timeout_seconds = 0;

    b.job.max_attempts = CS_JOB_MAX_ATTEMPTS + 1;
    check_invalid(&b, "101 attempts", "job.max_attempts", "100");
    b.job.max_attempts = 0;
    check_valid(&b, "0 attempts (means 1)");

    b.job.retry_backoff_ms = CS_RETRY_BACKOFF_MAX_MS + 1;
    check_invalid(&b, "backoff over 10 minutes", "job.retry_backoff_ms", NULL);
    b.job.retry_backoff_ms = UINT32_MAX;
    check_invalid(&b, "backoff UINT32_MAX", "job.retry_backoff_ms", NULL);
}

static void test_job_env_keys(void **state)
{
    struct spec_buf b;
    char *key_max = repeat('K', 256), *key_over = repeat('K', 257);

    spec_init(&b);
    b.job.n_env = 2;
    b.env[1].key = "EMPTY_VALUE";
    b.env[1].value = "";
    check_valid(&b, "an empty value");
    b.env[1].key = key_max;
    check_valid(&b, "a 256-byte name");
    b.env[1].value = "a=b";
    check_valid(&b, "'=' in a value");

    b.env[1].key = "A=B";
    check_invalid(&b, "'=' in a name", "job.env", "=");
    b.env[1].key = "=";
    check_invalid(&b, "name \"=\"", "job.env", NULL);
    b.env[1].key = "";
    check_invalid(&b, "empty name", "job.env", NULL);
    b.env[1].key = key_over;
    check_invalid(&b, "a 257-byte name", "job.env", "256");

    /* The field name is the caller's, e.g. the trigger's env. */
    struct cs_err err = {0};
    assert_int_equal(cs_env_validate((struct cs_kv *const *)b.job.env, b.job.n_env, "env", &err),
                     -EINVAL);
    if (strncmp(err.msg, "env ", 4) != 0)
        fail_msg("expected the message to start with \"env \", got \"%s\"", err.msg);
    assert_int_equal(cs_env_validate(NULL, 0, "env", &err), 0);
    free(key_max);
    free(key_over);
}

static void test_job_labels(void **state)
{
    struct spec_buf b;
    char *key_max = repeat('k', 63), *key_over = repeat('k', 64);
    char *value_max = repeat('v', 256), *value_over = repeat('v', 257);

    spec_init(&b);
    b.job.n_labels = 2;
    b.labels[1].key = key_max;
    b.labels[1].value = value_max;
    check_valid(&b, "63-byte key, 256-byte value");
    b.labels[1].value = "";
    check_valid(&b, "an empty label value");

    b.labels[1].key = "";
    check_invalid(&b, "empty label key", "job.labels", NULL);
    b.labels[1].key = key_over;
    check_invalid(&b, "64-byte label key", "job.labels", "63");
    b.labels[1].key = "tier";
    b.labels[1].value = value_over;
    check_invalid(&b, "257-byte label value", "job.labels", "tier");
    free(key_max);
    free(key_over);
    free(value_max);
    free(value_over);
}

/* cs_message_copy is deep: the copy outlives the original's buffers. */
static void test_job_message_copy(void **state)
{
    struct spec_buf b;
    char name[] = "copied";

    spec_init(&b);
    b.job.name = name;
    b.job.max_running = 4;
    Csched__V1__Job *copy = (Csched__V1__Job *)cs_message_copy(&b.job.base);
    name[0] = 'X';
    assert_string_equal(copy->name, "copied");
    assert_int_equal(copy->n_command, 2);
    assert_string_equal(copy->command[1], "--full");
    assert_int_equal(copy->max_running, 4);
    assert_int_equal(copy->n_env, 1);
    assert_string_equal(copy->env[0]->value, "UTC");
    protobuf_c_message_free_unpacked(&copy->base, NULL);
}

/* Each argument, each variable and all of them together must fit one exec. */
static void test_job_validate_exec_size(void **state)
{
    struct spec_buf b;
    char *at_limit = repeat('x', CS_JOB_ARG_BYTES_MAX);
    char *over = repeat('x', CS_JOB_ARG_BYTES_MAX + 1);

    spec_init(&b);
    b.argv[1] = at_limit;
    check_valid(&b, "an argument at the limit");
    b.argv[1] = over;
    check_invalid(&b, "an argument over the limit", "job.command[1]", "131071");

    spec_init(&b);
    b.job.n_command = 0;
    b.job.shell = over;
    check_invalid(&b, "a shell line over the limit", "job.shell", NULL);

    spec_init(&b);
    b.env[0].value = over;
    check_invalid(&b, "a variable over the limit", "job.env[\"TZ\"]", NULL);

    spec_init(&b);
    b.argv[0] = at_limit;
    b.argv[1] = at_limit;
    b.argv[2] = at_limit;
    b.argv[3] = at_limit;
    b.job.n_command = 4;
    char *tz = repeat('t', CS_JOB_ARG_BYTES_MAX - 3); /* "TZ=" makes it the limit */
    b.env[0].value = tz;
    b.env[1].key = "MORE";
    b.env[1].value = repeat('y', CS_JOB_ARG_BYTES_MAX - 10);
    b.job.n_env = 2;
    check_valid(&b, "six arguments and variables at the limit");
    free(tz);
    free(b.env[1].value);
    free(over);
    free(at_limit);

    /* Nine arguments at the limit pass 1 MiB together. */
    char *args[9];
    spec_init(&b);
    for (int i = 0; i < 9; i++)
        args[i] = repeat('z', CS_JOB_ARG_BYTES_MAX);
    b.job.command = args;
    b.job.n_command = 9;
    check_invalid(&b, "arguments over 1 MiB together", "job.command and job.env", NULL);
    for (int i = 0; i < 9; i++)
        free(args[i]);
}

/* n map entries of type desc named V0, V1, ... with value; free with
 * free_entries. */
static struct cs_kv **make_entries(const ProtobufCMessageDescriptor *desc, size_t n,
                                   const char *value)
{
    struct cs_kv **ptrs = calloc(n ? n : 1, sizeof(*ptrs));

    assert_non_null(ptrs);
    for (size_t i = 0; i < n; i++) {
        ptrs[i] = calloc(1, sizeof(**ptrs));
        assert_non_null(ptrs[i]);
        protobuf_c_message_init(desc, ptrs[i]);
        ptrs[i]->key = malloc(24);
        assert_non_null(ptrs[i]->key);
        (void)snprintf(ptrs[i]->key, 24, "V%zu", i);
        ptrs[i]->value = (char *)value;
    }
    return ptrs;
}

static void free_entries(struct cs_kv **ptrs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ptrs[i]->key);
        free(ptrs[i]);
    }
    free(ptrs);
}

/* A job's env and its labels have limits on their entries, each named in
 * the message with the field. */
static void test_job_definition_limits(void **state)
{
    static const struct {
        const ProtobufCMessageDescriptor *desc;
        size_t max;
        const char *needle, *needle2;
    } maps[] = {
        {&csched__v1__job__env_entry__descriptor, CS_ENV_ENTRIES_MAX, "job.env has 1025 entries",
         "the limit is 1024"},
        {&csched__v1__job__labels_entry__descriptor, CS_JOB_LABELS_MAX, "job.labels has 65 entries",
         "the limit is 64"},
    };

    for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]); m++) {
        struct spec_buf b;
        struct cs_kv **entries = make_entries(maps[m].desc, maps[m].max + 1, "x");
        bool env = maps[m].desc == &csched__v1__job__env_entry__descriptor;

        spec_init(&b);
        if (env)
            b.job.env = (Csched__V1__Job__EnvEntry **)entries;
        else
            b.job.labels = (Csched__V1__Job__LabelsEntry **)entries;
        *(env ? &b.job.n_env : &b.job.n_labels) = maps[m].max;
        check_valid(&b, "entries at the limit");
        *(env ? &b.job.n_env : &b.job.n_labels) = maps[m].max + 1;
        check_invalid(&b, "one entry over the limit", maps[m].needle, maps[m].needle2);
        free_entries(entries, maps[m].max + 1);
    }
}

static void check_run_invalid(const Csched__V1__TriggerJobRequest *req, const char *what,
                              const char *needle, const char *needle2)
{
    struct cs_err err = {0};
    int rc = cs_run_request_validate(req, &err);

    if (rc != -EINVAL || err.code != -EINVAL)
        fail_msg("%s: expected %d, got %d \"%s\"", what, -EINVAL, rc, err.msg);
    if (strstr(err.msg, needle) == NULL || (needle2 != NULL && strstr(err.msg, needle2) == NULL))
        fail_msg("%s: expected \"%s\" and \"%s\" in the message, got \"%s\"", what, needle,
                 needle2 ? needle2 : "", err.msg);
}

/* A run's overrides: as many variables as a job, but 64 KiB in all. */
static void test_run_request_limits(void **state)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    struct cs_err err = {0};
    char *value = repeat('v', 40);
    struct cs_kv **env = make_entries(&csched__v1__trigger_job_request__env_entry__descriptor,
                                      CS_ENV_ENTRIES_MAX + 1, value);

    req.job_name = "nightly";
    assert_int_equal(cs_run_request_validate(&req, &err), 0);
    req.env = (Csched__V1__TriggerJobRequest__EnvEntry **)env;
    req.n_env = CS_ENV_ENTRIES_MAX;
    assert_int_equal(cs_run_request_validate(&req, &err), 0);
    req.n_env = CS_ENV_ENTRIES_MAX + 1;
    check_run_invalid(&req, "1025 variables", "env has 1025 entries", "the limit is 1024");
    req.job_name = "";
    check_run_invalid(&req, "no job name", "job_name", NULL);
    req.job_name = "nightly";

    /* 1024 variables of 40 bytes fit; of 80 they do not. */
    free(value);
    value = repeat('v', 80);
    for (size_t i = 0; i < CS_ENV_ENTRIES_MAX + 1; i++)
        env[i]->value = value;
    req.n_env = CS_ENV_ENTRIES_MAX;
    check_run_invalid(&req, "a run over 64 KiB", "the run's definition", "the limit is 65536");

    /* One variable over what one exec takes. */
    char *big = repeat('b', CS_JOB_ARG_BYTES_MAX);
    env[0]->value = big;
    req.n_env = 1;
    check_run_invalid(&req, "a variable over 128 KiB", "env[\"V0\"]", "131071");
    free(big);
    free(value);
    free_entries(env, CS_ENV_ENTRIES_MAX + 1);
}

/* The retry policy, the deadline and the kill settings, each bound named;
 * a not_before more than a year ahead. */
static void test_job_retry_and_stop_rules(void **state)
{
    struct spec_buf b;
    Csched__V1__RetryPolicy p = CSCHED__V1__RETRY_POLICY__INIT;
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;

    spec_init(&b);
    b.job.retry = &p;
    p.initial_backoff_ms = 300;
    p.max_backoff_ms = 1200;
    p.multiplier = 1;
    p.jitter = 1;
    p.retry_on = CSCHED__V1__RETRY_ON__RETRY_ON_TIMEOUT;
    b.job.kill_signal = "SIGUSR2";
    b.job.kill_grace_seconds = 3600;
    b.job.run_deadline_seconds = 30 * 24 * 3600;
    check_valid(&b, "a full policy");
    p.multiplier = 0.5;
    check_invalid(&b, "multiplier 0.5", "retry.multiplier: 0.5 is less than 1", NULL);
    p.multiplier = 101;
    check_invalid(&b, "multiplier 101", "retry.multiplier: 101", "1 to 100");
    p.multiplier = 2;
    p.jitter = 1.5;
    check_invalid(&b, "jitter 1.5", "retry.jitter: 1.5", "0 to 1");
    p.jitter = 0;
    p.max_backoff_ms = 100;
    check_invalid(&b, "max under initial", "retry.max_backoff_ms: 100", "initial_backoff_ms 300");
    p.max_backoff_ms = 0;
    p.initial_backoff_ms = CS_RETRY_BACKOFF_MAX_MS + 1;
    check_invalid(&b, "initial over 10 min", "retry.initial_backoff_ms", "600000");
    p.initial_backoff_ms = 0;
    p.retry_on = 4;
    check_invalid(&b, "retry_on 4", "retry.retry_on: 4", NULL);
    p.retry_on = 0;
    b.job.kill_signal = "KILL";
    check_invalid(&b, "kill_signal KILL", "job.kill_signal: \"KILL\"", "TERM, INT");
    b.job.kill_signal = "";
    b.job.kill_grace_seconds = 3601;
    check_invalid(&b, "grace over an hour", "job.kill_grace_seconds: 3601", NULL);
    b.job.kill_grace_seconds = 0;
    b.job.run_deadline_seconds = 30 * 24 * 3600 + 1;
    check_invalid(&b, "deadline over 30 days", "job.run_deadline_seconds", NULL);

    req.job_name = "nightly";
    req.not_before_unix_ms = cs_now_unix_ms() + 300LL * 24 * 3600 * 1000;
    struct cs_err err = {0};
    assert_int_equal(cs_run_request_validate(&req, &err), 0);
    req.not_before_unix_ms = cs_now_unix_ms() + CS_RUN_NOT_BEFORE_MAX_MS + 60000;
    check_run_invalid(&req, "two years ahead", "not_before_unix_ms", "a year");
}

/* The functions under test belong to the loop thread: this one is it. */
static int mark_loop_thread(void **state)
{
    cs_loop_thread_mark();
    return 0;
}

/* Each limit's bounds, named in the message as its field; and what a host
 * without the cgroups a limit needs does with it: strict refuses naming
 * it, warn lets it run. */
static void test_job_resource_limits(void **state)
{
    Csched__V1__ResourceLimits r = CSCHED__V1__RESOURCE_LIMITS__INIT;
    struct cs_cgroup_parents none = {0}, v1 = {.v1_memory = "/m", .v1_pids = "/p"};
    struct cs_err err;

    assert_int_equal(cs_job_limits_validate(NULL, &err), 0);
    assert_int_equal(cs_job_limits_validate(&r, &err), 0);
    r.memory_bytes = (1 << 20) - 1;
    assert_int_equal(cs_job_limits_validate(&r, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "job.resources.memory_bytes: 1048575 is out of range"));
    r.memory_bytes = 1 << 20;
    r.open_files = 2;
    assert_int_equal(cs_job_limits_validate(&r, &err), -EINVAL);
    assert_string_equal(err.field, "job.resources.open_files");
    r.open_files = 3;
    r.cpu_seconds = 30 * 86400 + 1;
    assert_int_equal(cs_job_limits_validate(&r, &err), -EINVAL);
    r.cpu_seconds = 1;
    assert_int_equal(cs_job_limits_validate(&r, &err), 0);

    r.pids = 10;
    assert_int_equal(cs_job_limits_check(&r, &none, true, &err), -EBUSY);
    assert_non_null(strstr(err.msg, "job.resources.pids cannot be enforced on this host"));
    assert_int_equal(cs_job_limits_check(&r, &none, false, &err), 0);
    assert_int_equal(cs_job_limits_check(&r, &v1, true, &err), 0);
    r.cpu_millis = 500;
    assert_int_equal(cs_job_limits_check(&r, &v1, true, &err), -EBUSY);
    assert_non_null(strstr(err.msg, "job.resources.cpu_millis"));
    assert_int_equal(cs_job_limits_check(NULL, &none, true, &err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_validate_exec_size),
        cmocka_unit_test(test_job_resource_limits),
        cmocka_unit_test(test_job_valid),
        cmocka_unit_test(test_job_name_rules),
        cmocka_unit_test(test_job_name_validate_field),
        cmocka_unit_test(test_job_command_rules),
        cmocka_unit_test(test_job_working_dir),
        cmocka_unit_test(test_job_limits),
        cmocka_unit_test(test_job_env_keys),
        cmocka_unit_test(test_job_labels),
        cmocka_unit_test(test_job_message_copy),
        cmocka_unit_test(test_job_definition_limits),
        cmocka_unit_test(test_run_request_limits),
        cmocka_unit_test(test_job_retry_and_stop_rules),
    };
    return cmocka_run_group_tests(tests, mark_loop_thread, NULL);
}
