/* job: what a valid job spec and trigger request are. Pure code. */
#include "job.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hook_spec.h"
#include "job_limits.h"
#include "minder_contract.h"
#include "secret.h"

int cs_job_name_validate(const char *name, const char *field, struct cs_err *err)
{
    size_t len = strlen(name);
    if (len == 0)
        return cs_err_field(err, -EINVAL, field, "%s is empty: a job name is required", field);
    if (len > CS_JOB_NAME_MAX)
        return cs_err_field(err, -EINVAL, field, "%s is %zu bytes long; the limit is %d", field,
                            len, CS_JOB_NAME_MAX);
    if (name[0] == '.' || name[0] == '-')
        return cs_err_field(err, -EINVAL, field, "%s \"%s\" must not start with '.' or '-'", field,
                            name);
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return cs_err_set(
                err, -EINVAL,
                "%s has a character not allowed at byte %zu: use only A-Z a-z 0-9 . _ -", field, i);
    }
    return 0;
}

int cs_env_validate(struct cs_kv *const *env, size_t n, const char *field, struct cs_err *err)
{
    if (n > CS_ENV_ENTRIES_MAX)
        return cs_err_field(err, -EINVAL, field, "%s has %zu entries; the limit is %d", field, n,
                            CS_ENV_ENTRIES_MAX);
    for (size_t i = 0; i < n; i++) {
        const char *key = env[i]->key;
        size_t key_len = strlen(key);
        if (key[0] == '\0')
            return cs_err_field(err, -EINVAL, field, "%s has an empty variable name", field);
        if (key_len > CS_ENV_KEY_BYTES_MAX)
            return cs_err_field(err, -EINVAL, field, "%s variable name is longer than %d bytes",
                                field, CS_ENV_KEY_BYTES_MAX);
        if (strchr(key, '=') != NULL)
            return cs_err_field(err, -EINVAL, field, "%s variable name \"%.64s\" contains '='",
                                field, key);
        size_t len = key_len + 1 + strlen(env[i]->value);
        if (len > CS_JOB_ARG_BYTES_MAX)
            return cs_err_set(err, -EINVAL, "%s[\"%.64s\"] is %zu bytes; the limit is %d", field,
                              key, len, CS_JOB_ARG_BYTES_MAX);
    }
    return 0;
}

static int validate_array(const Csched__V1__TriggerJobRequest *req, struct cs_err *err)
{
    if (req->array_size > CS_RUN_ARRAY_SIZE_MAX)
        return cs_err_field(err, -EINVAL, "array_size",
                            "array_size %u is more than %d runs: split the work into several "
                            "arrays",
                            req->array_size, CS_RUN_ARRAY_SIZE_MAX);
    if (req->array_size == 0 && (req->array_max_running != 0 || req->array_first_index != 0))
        return cs_err_field(err, -EINVAL, "array_size",
                            "array_max_running and array_first_index need an array_size (1 to %d)",
                            CS_RUN_ARRAY_SIZE_MAX);
    if (req->array_size > 0 && req->array_first_index > UINT32_MAX - (req->array_size - 1))
        return cs_err_field(err, -EINVAL, "array_first_index",
                            "array_first_index %u with array_size %u goes past the last index, "
                            "%u",
                            req->array_first_index, req->array_size, UINT32_MAX);
    return 0;
}

int cs_run_request_validate(const Csched__V1__TriggerJobRequest *req, struct cs_err *err)
{
    int rc = cs_job_name_validate(req->job_name, "job_name", err);
    if (rc == 0)
        rc = cs_env_validate((struct cs_kv *const *)req->env, req->n_env, "env", err);
    if (rc != 0)
        return rc;
    /* A time past means now; far ahead is a mistake (seconds for ms?). */
    if (req->not_before_unix_ms > cs_now_unix_ms() + CS_RUN_NOT_BEFORE_MAX_MS)
        return cs_err_field(err, -EINVAL, "not_before_unix_ms",
                            "not_before_unix_ms: %lld is more than a year ahead (at most 366 days)",
                            (long long)req->not_before_unix_ms);
    rc = validate_array(req, err);
    if (rc != 0)
        return rc;
    size_t size = protobuf_c_message_get_packed_size(&req->base);
    if (size > CS_RUN_REQUEST_BYTES_MAX)
        return cs_err_set(err, -EINVAL,
                          "the run's definition (job_name, env, idempotency_key) is %zu bytes "
                          "encoded; the limit is %d",
                          size, CS_RUN_REQUEST_BYTES_MAX);
    return 0;
}

static int validate_labels(const Csched__V1__Job *spec, struct cs_err *err)
{
    if (spec->n_labels > CS_JOB_LABELS_MAX)
        return cs_err_set(err, -EINVAL, "job.labels has %zu entries; the limit is %d",
                          spec->n_labels, CS_JOB_LABELS_MAX);
    for (size_t i = 0; i < spec->n_labels; i++) {
        const char *key = spec->labels[i]->key;
        if (key[0] == '\0' || strlen(key) > 63)
            return cs_err_set(err, -EINVAL, "job.labels keys must be 1 to 63 bytes long");
        if (strlen(spec->labels[i]->value) > 256)
            return cs_err_set(err, -EINVAL, "job.labels[\"%s\"] is longer than 256 bytes", key);
    }
    return 0;
}

/* What the kernel will accept in one exec: each argument and variable under
 * MAX_ARG_STRLEN, and all of them together well under ARG_MAX (the server's
 * own environment is added at start). */
static int validate_exec_size(const Csched__V1__Job *spec, struct cs_err *err)
{
    size_t total = strlen(spec->shell) + 1;
    if (total - 1 > CS_JOB_ARG_BYTES_MAX)
        return cs_err_set(err, -EINVAL, "job.shell is %zu bytes; the limit is %d", total - 1,
                          CS_JOB_ARG_BYTES_MAX);
    for (size_t i = 0; i < spec->n_command; i++) {
        size_t len = strlen(spec->command[i]);
        if (len > CS_JOB_ARG_BYTES_MAX)
            return cs_err_set(err, -EINVAL, "job.command[%zu] is %zu bytes; the limit is %d", i,
                              len, CS_JOB_ARG_BYTES_MAX);
        total += len + 1;
    }
    for (size_t i = 0; i < spec->n_env; i++)
        total += strlen(spec->env[i]->key) + strlen(spec->env[i]->value) + 2;
    if (total > CS_JOB_EXEC_BYTES_MAX)
        return cs_err_set(err, -EINVAL,
                          "job.command and job.env come to %zu bytes; the limit is %d", total,
                          CS_JOB_EXEC_BYTES_MAX);
    return 0;
}

/* trigger_env: names as env's, none twice, at most CS_TRIGGER_ENV_MAX. */
static int validate_trigger_env(const Csched__V1__Job *spec, struct cs_err *err)
{
    if (spec->n_trigger_env > CS_TRIGGER_ENV_MAX)
        return cs_err_set(err, -EINVAL, "job.trigger_env has %zu names; the limit is %d",
                          spec->n_trigger_env, CS_TRIGGER_ENV_MAX);
    for (size_t i = 0; i < spec->n_trigger_env; i++) {
        const char *name = spec->trigger_env[i];
        if (name[0] == '\0' || strlen(name) > CS_ENV_KEY_BYTES_MAX || strchr(name, '=') != NULL)
            return cs_err_set(err, -EINVAL,
                              "job.trigger_env[%zu] \"%.64s\" is not a variable name: 1-%d bytes "
                              "without '='",
                              i, name, CS_ENV_KEY_BYTES_MAX);
        for (size_t j = 0; j < i; j++)
            if (strcmp(spec->trigger_env[j], name) == 0)
                return cs_err_set(err, -EINVAL, "job.trigger_env names \"%.64s\" twice", name);
    }
    return 0;
}

const char *cs_job_trigger_env_refused(const Csched__V1__Job *spec,
                                       const Csched__V1__TriggerJobRequest *req)
{
    for (size_t i = 0; i < req->n_env; i++) {
        bool named = false;
        for (size_t j = 0; j < spec->n_trigger_env && !named; j++)
            named = strcmp(spec->trigger_env[j], req->env[i]->key) == 0;
        if (!named)
            return req->env[i]->key;
    }
    return NULL;
}

/* The signals a job may name as its kill_signal, as minder_contract allows. */
static const struct {
    const char *name;
    int signo;
} stop_signals[] = {
    {"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},
    {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
};

/* The number of a kill_signal name ("" is TERM, "SIG" may lead), or 0. */
static int stop_signal_number(const char *name)
{
    if (name[0] == '\0')
        return SIGTERM;
    if (strncmp(name, "SIG", 3) == 0)
        name += 3;
    for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
        if (strcmp(name, stop_signals[i].name) == 0)
            return stop_signals[i].signo;
    return 0;
}

int cs_job_kill_signal(const Csched__V1__Job *spec)
{
    int signo = stop_signal_number(spec->kill_signal);
    return signo != 0 ? signo : SIGTERM;
}

uint64_t cs_job_kill_grace_ms(const Csched__V1__Job *spec)
{
    return spec->kill_grace_seconds > 0 ? (uint64_t)spec->kill_grace_seconds * 1000
                                        : CS_MINDER_KILL_GRACE_MS;
}

static int validate_retry(const Csched__V1__RetryPolicy *p, struct cs_err *err)
{
    if (p->initial_backoff_ms > CS_RETRY_BACKOFF_MAX_MS)
        return cs_err_set(err, -EINVAL, "job.retry.initial_backoff_ms: %u is over the limit of %d",
                          p->initial_backoff_ms, CS_RETRY_BACKOFF_MAX_MS);
    if (p->max_backoff_ms > CS_RETRY_MAX_BACKOFF_LIMIT_MS)
        return cs_err_set(err, -EINVAL,
                          "job.retry.max_backoff_ms: %u is over the limit of %d (a day)",
                          p->max_backoff_ms, CS_RETRY_MAX_BACKOFF_LIMIT_MS);
    if (p->max_backoff_ms > 0 && p->max_backoff_ms < p->initial_backoff_ms)
        return cs_err_set(err, -EINVAL,
                          "job.retry.max_backoff_ms: %u is less than initial_backoff_ms %u",
                          p->max_backoff_ms, p->initial_backoff_ms);
    /* Written so that NaN fails each test. */
    if (!(p->multiplier == 0 || (p->multiplier >= 1 && p->multiplier <= 100)))
        return cs_err_set(err, -EINVAL, "job.retry.multiplier: %g is %s", p->multiplier,
                          p->multiplier < 1 ? "less than 1" : "not from 1 to 100");
    if (!(p->jitter >= 0 && p->jitter <= 1))
        return cs_err_set(err, -EINVAL, "job.retry.jitter: %g is not a fraction from 0 to 1",
                          p->jitter);
    if (p->retry_on < CSCHED__V1__RETRY_ON__RETRY_ON_UNSPECIFIED ||
        p->retry_on > CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE_AND_TIMEOUT)
        return cs_err_set(err, -EINVAL, "job.retry.retry_on: %d is not a RetryOn",
                          (int)p->retry_on);
    return 0;
}

static int validate_history(const Csched__V1__History *h, struct cs_err *err)
{
    if (h == NULL)
        return 0;
    if (h->keep_succeeded > CS_HISTORY_KEEP_MAX || h->keep_failed > CS_HISTORY_KEEP_MAX)
        return cs_err_set(err, -EINVAL, "job.history.keep_%s %u is over the limit of %d",
                          h->keep_succeeded > CS_HISTORY_KEEP_MAX ? "succeeded" : "failed",
                          h->keep_succeeded > CS_HISTORY_KEEP_MAX ? h->keep_succeeded
                                                                  : h->keep_failed,
                          CS_HISTORY_KEEP_MAX);
    if (h->ttl_seconds_after_finished > CS_HISTORY_TTL_MAX_S)
        return cs_err_set(err, -EINVAL,
                          "job.history.ttl_seconds_after_finished %u is over the limit of %u "
                          "(100 years)",
                          h->ttl_seconds_after_finished, CS_HISTORY_TTL_MAX_S);
    return 0;
}

/* The retry policy, the run's deadline and how its attempts are stopped. */
static int validate_stopping(const Csched__V1__Job *spec, struct cs_err *err)
{
    if (spec->retry != NULL) {
        int rc = validate_retry(spec->retry, err);
        if (rc != 0)
            return rc;
    }
    if (spec->run_deadline_seconds > CS_JOB_RUN_DEADLINE_MAX_S)
        return cs_err_set(err, -EINVAL,
                          "job.run_deadline_seconds: %u is over the limit of %d (30 days)",
                          spec->run_deadline_seconds, CS_JOB_RUN_DEADLINE_MAX_S);
    if (spec->kill_grace_seconds > CS_JOB_KILL_GRACE_MAX_S)
        return cs_err_set(err, -EINVAL,
                          "job.kill_grace_seconds: %u is over the limit of %d (an hour)",
                          spec->kill_grace_seconds, CS_JOB_KILL_GRACE_MAX_S);
    if (stop_signal_number(spec->kill_signal) == 0)
        return cs_err_set(
            err, -EINVAL,
            "job.kill_signal: \"%.32s\" is not one of TERM, INT, HUP, QUIT, USR1, USR2",
            spec->kill_signal);
    return 0;
}

/* A user or group as the system spells one: a name (no ':', ',', '/',
 * spaces or control characters, not starting with '-') or a number. Whether
 * it exists is checked off the loop (runas.h). */
static int validate_account(const char *name, const char *field, struct cs_err *err)
{
    size_t len = strlen(name);
    if (len > 255)
        return cs_err_field(err, -EINVAL, field, "%s is %zu bytes long; the limit is 255", field,
                            len);
    if (name[0] == '-')
        return cs_err_field(err, -EINVAL, field, "%s \"%.64s\" must not start with '-'", field,
                            name);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c == 0x7f || c == ':' || c == ',' || c == '/')
            return cs_err_set(err, -EINVAL,
                              "%s has a character not allowed in a user or group name at byte %zu",
                              field, i);
    }
    return 0;
}

int cs_job_validate(const Csched__V1__Job *spec, struct cs_err *err)
{
    int rc = cs_job_name_validate(spec->name, "job.name", err);
    if (rc != 0)
        return rc;
    bool has_shell = spec->shell[0] != '\0';
    if (spec->n_command == 0 && !has_shell)
        return cs_err_set(err, -EINVAL,
                          "job %s has no command: set job.command (argv) or job.shell", spec->name);
    if (spec->n_command > 0 && has_shell)
        return cs_err_set(err, -EINVAL,
                          "job %s sets both job.command and job.shell: set exactly one",
                          spec->name);
    if (spec->n_command > CS_JOB_ARGS_MAX)
        return cs_err_set(err, -EINVAL, "job.command has %zu arguments; the limit is %d",
                          spec->n_command, CS_JOB_ARGS_MAX);
    if (spec->n_command > 0 && spec->command[0][0] == '\0')
        return cs_err_set(err, -EINVAL, "job.command[0] is empty: it names the program to run");
    if (spec->working_dir[0] != '\0' && spec->working_dir[0] != '/')
        return cs_err_set(err, -EINVAL, "job.working_dir \"%.100s\" must be an absolute path",
                          spec->working_dir);
    if (spec->timeout_seconds > CS_JOB_TIMEOUT_MAX_S)
        return cs_err_set(err, -EINVAL, "job.timeout_seconds %u is over the limit of %d (7 days)",
                          spec->timeout_seconds, CS_JOB_TIMEOUT_MAX_S);
    if (spec->max_attempts > CS_JOB_MAX_ATTEMPTS)
        return cs_err_set(err, -EINVAL, "job.max_attempts %u is over the limit of %d",
                          spec->max_attempts, CS_JOB_MAX_ATTEMPTS);
    if (spec->retry_backoff_ms > CS_RETRY_BACKOFF_MAX_MS)
        return cs_err_set(err, -EINVAL, "job.retry_backoff_ms %u is over the limit of %d",
                          spec->retry_backoff_ms, CS_RETRY_BACKOFF_MAX_MS);
    /* The server's own limit on runs at once: more would only read as one. */
    if (spec->max_running > CS_MAX_RUNNING_LIMIT)
        return cs_err_set(err, -EINVAL, "job.max_running %u is over the limit of %d",
                          spec->max_running, CS_MAX_RUNNING_LIMIT);
    rc = cs_env_validate((struct cs_kv *const *)spec->env, spec->n_env, "job.env", err);
    if (rc == 0)
        rc = validate_exec_size(spec, err);
    if (rc == 0)
        rc = validate_labels(spec, err);
    if (rc == 0)
        rc = validate_trigger_env(spec, err);
    if (rc == 0)
        rc = validate_account(spec->run_as_user, "job.run_as_user", err);
    if (rc == 0)
        rc = validate_account(spec->run_as_group, "job.run_as_group", err);
    if (rc == 0)
        rc = cs_secret_env_validate(spec, err);
    if (rc == 0)
        rc = validate_stopping(spec, err);
    if (rc == 0)
        rc = validate_history(spec->history, err);
    if (rc == 0)
        rc = cs_job_limits_validate(spec->resources, err);
    if (rc == 0)
        rc = cs_hooks_validate(spec, err);
    return rc;
}

ProtobufCMessage *cs_message_copy(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = cs_xmalloc(len ? len : 1);
    protobuf_c_message_pack(msg, buf);
    ProtobufCMessage *copy = protobuf_c_message_unpack(msg->descriptor, NULL, len, buf);
    free(buf);
    CS_ASSERT(copy != NULL);
    return copy;
}

void cs_message_set_str(char **field, const char *value)
{
    if (*field != NULL && *field != protobuf_c_empty_string)
        free(*field);
    *field = cs_xstrdup(value);
}
