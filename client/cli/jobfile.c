/* One job of a YAML job file for "csched apply -f": a mapping of the job's
 * settable fields. Every error names the file, the line and what is wrong;
 * unknown keys are errors, so a typo never goes unnoticed, and types are
 * strict: a number written as a quoted string is refused.
 *
 * Single-threaded; uses libyaml's document API (jobfile_docs.c loads it).
 */
#include "jobfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static int parse_command(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job)
{
    int rc = jf_strings(jf, node, "command", " (use shell: for a string)", &job->command,
                        &job->n_command);
    if (rc == 0 && job->n_command == 0)
        return jf_error(jf, node, "command: must not be empty");
    return rc;
}

static int parse_map(struct jf *jf, const yaml_node_t *node, const char *key,
                     const ProtobufCMessageDescriptor *entry_desc, void ***entries, size_t *n)
{
    yaml_node_pair_t *pair;

    if (node->type != YAML_MAPPING_NODE)
        return jf_error(jf, node, "%s: must be a mapping of KEY: VALUE", key);
    /* Each entry is matched against those before it (a later one wins). */
    if (node->data.mapping.pairs.top - node->data.mapping.pairs.start > JF_MAP_ENTRIES_MAX)
        return jf_error(jf, node, "%s: more than %d entries, more than the server takes", key,
                        JF_MAP_ENTRIES_MAX);
    for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, pair->value);

        if (k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE)
            return jf_error(jf, k, "%s: keys and values must be strings", key);
        if (jf_scalar(k)[0] == '\0')
            return jf_error(jf, k, "%s: empty key", key);
        cs_cli_map_put(entry_desc, entries, n, jf_scalar(k), jf_scalar(v));
    }
    return 0;
}

/* secret_env: NAME: file:/PATH or NAME: env:VAR, as --secret-env takes. */
static int parse_secret_env(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job)
{
    yaml_node_pair_t *pair;

    if (node->type != YAML_MAPPING_NODE)
        return jf_error(jf, node, "secret_env: must be a mapping of NAME: file:/PATH or env:VAR");
    for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, pair->value);

        if (k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE)
            return jf_error(jf, k, "secret_env: keys and values must be strings");
        if (jf_scalar(k)[0] == '\0')
            return jf_error(jf, k, "secret_env: empty key");
        if (cs_cli_secret_put(job, jf_scalar(k), jf_scalar(v)) != 0)
            return jf_error(jf, v,
                            "secret_env: %s: the reference is file:/PATH or env:VAR, not '%s'",
                            jf_scalar(k), jf_scalar(v));
    }
    return 0;
}

static int parse_double(struct jf *jf, const yaml_node_t *node, const char *key, double *out)
{
    if (jf_want_number(jf, node, key) != 0)
        return -EINVAL;
    if (cs_cli_parse_double(jf_scalar(node), out) != 0)
        return jf_error(jf, node, "%s: must be a number, not '%s'", key, jf_scalar(node));
    return 0;
}

/* The retry: mapping of a job. Returns 0 or -EINVAL. */
static int parse_retry(struct jf *jf, const yaml_node_t *node, Csched__V1__RetryPolicy *p)
{
    yaml_node_pair_t *pair;

    if (node->type != YAML_MAPPING_NODE)
        return jf_error(jf, node, "retry: must be a mapping (initial_backoff_ms: ..., ...)");
    for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, pair->value);
        const char *key = k->type == YAML_SCALAR_NODE ? jf_scalar(k) : "";
        int rc;

        if (strcmp(key, "initial_backoff_ms") == 0)
            rc = jf_u32(jf, v, "retry.initial_backoff_ms", &p->initial_backoff_ms);
        else if (strcmp(key, "max_backoff_ms") == 0)
            rc = jf_u32(jf, v, "retry.max_backoff_ms", &p->max_backoff_ms);
        else if (strcmp(key, "multiplier") == 0)
            rc = parse_double(jf, v, "retry.multiplier", &p->multiplier);
        else if (strcmp(key, "jitter") == 0)
            rc = parse_double(jf, v, "retry.jitter", &p->jitter);
        else if (strcmp(key, "retry_on") != 0)
            rc = jf_error(jf, k,
                          "retry: unknown key '%s' (known: initial_backoff_ms, max_backoff_ms, "
                          "multiplier, jitter, retry_on)",
                          key);
        else if (jf_want_scalar(jf, v, "retry.retry_on") != 0)
            rc = -EINVAL;
        else if (cs_cli_parse_retry_on(jf_scalar(v), &p->retry_on) != 0)
            rc = jf_error(jf, v, "retry.retry_on: must be failure, timeout or failure,timeout");
        else
            rc = 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int parse_history(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job)
{
    yaml_node_pair_t *pair;

    if (node->type != YAML_MAPPING_NODE)
        return jf_error(jf, node, "history: must be a mapping (keep_succeeded: ..., ...)");
    if (job->history == NULL) {
        job->history = cs_cli_xmalloc(sizeof(*job->history));
        csched__v1__history__init(job->history);
    }
    for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, pair->value);
        const char *key = k->type == YAML_SCALAR_NODE ? jf_scalar(k) : "";
        int rc;

        if (strcmp(key, "keep_succeeded") == 0)
            rc = jf_u32(jf, v, "history.keep_succeeded", &job->history->keep_succeeded);
        else if (strcmp(key, "keep_failed") == 0)
            rc = jf_u32(jf, v, "history.keep_failed", &job->history->keep_failed);
        else if (strcmp(key, "ttl_seconds_after_finished") == 0)
            rc = jf_u32(jf, v, "history.ttl_seconds_after_finished",
                        &job->history->ttl_seconds_after_finished);
        else
            rc = jf_error(jf, k,
                          "history: unknown key '%s' (known: keep_succeeded, keep_failed, "
                          "ttl_seconds_after_finished)",
                          key);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* resources: the limits of each attempt (ResourceLimits, docs/limits.md). */
static int parse_resources(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job)
{
    yaml_node_pair_t *pair;

    if (node->type != YAML_MAPPING_NODE)
        return jf_error(jf, node, "resources: must be a mapping (memory_bytes: ..., ...)");
    if (job->resources == NULL) {
        job->resources = cs_cli_xmalloc(sizeof(*job->resources));
        csched__v1__resource_limits__init(job->resources);
    }
    Csched__V1__ResourceLimits *r = job->resources;
    for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, pair->value);
        const char *key = k->type == YAML_SCALAR_NODE ? jf_scalar(k) : "";
        int rc;

        if (strcmp(key, "memory_bytes") == 0)
            rc = jf_u64(jf, v, "resources.memory_bytes", &r->memory_bytes);
        else if (strcmp(key, "cpu_seconds") == 0)
            rc = jf_u64(jf, v, "resources.cpu_seconds", &r->cpu_seconds);
        else if (strcmp(key, "pids") == 0)
            rc = jf_u32(jf, v, "resources.pids", &r->pids);
        else if (strcmp(key, "open_files") == 0)
            rc = jf_u32(jf, v, "resources.open_files", &r->open_files);
        else if (strcmp(key, "file_size") == 0)
            rc = jf_u64(jf, v, "resources.file_size", &r->file_size);
        else if (strcmp(key, "cpu_millis") == 0)
            rc = jf_u32(jf, v, "resources.cpu_millis", &r->cpu_millis);
        else
            rc = jf_error(jf, k,
                          "resources: unknown key '%s' (known: memory_bytes, cpu_seconds, pids, "
                          "open_files, file_size, cpu_millis)",
                          key);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A key of the job's schedule (cs_cli_schedule_set): 0, -ENOENT if key is
 * none of the schedule's, or -EINVAL. */
static int schedule_key(struct jf *jf, const char *key, const yaml_node_t *v, Csched__V1__Job *job)
{
    struct cs_cli_err err;
    int rc;

    if (strcmp(key, "jitter_seconds") == 0 || strcmp(key, "max_catchup") == 0 ||
        strcmp(key, "starting_deadline_seconds") == 0) {
        if (jf_want_number(jf, v, key) != 0)
            return -EINVAL;
    }
    if (v->type != YAML_SCALAR_NODE)
        return cs_cli_schedule_set(job, key, "", &err) == CS_CLI_FLAG_NOT_MINE
                   ? -ENOENT
                   : jf_error(jf, v, "%s: must be a single value", key);
    rc = cs_cli_schedule_set(job, key, jf_scalar(v), &err);
    if (rc == CS_CLI_FLAG_NOT_MINE)
        return -ENOENT;
    return rc < 0 ? jf_error(jf, v, "%s", err.msg) : 0;
}

/* Sets one key of a job. Returns 0, -ENOENT for a key it does not know, or
 * -EINVAL. */
static int job_key(struct jf *jf, const char *key, const yaml_node_t *v, Csched__V1__Job *job)
{
    if (strcmp(key, "name") == 0)
        return jf_string(jf, v, key, &job->name);
    if (strcmp(key, "command") == 0)
        return parse_command(jf, v, job);
    if (strcmp(key, "shell") == 0)
        return jf_string(jf, v, key, &job->shell);
    if (strcmp(key, "working_dir") == 0)
        return jf_string(jf, v, key, &job->working_dir);
    if (strcmp(key, "run_as_user") == 0)
        return jf_string(jf, v, key, &job->run_as_user);
    if (strcmp(key, "run_as_group") == 0)
        return jf_string(jf, v, key, &job->run_as_group);
    if (strcmp(key, "env") == 0)
        return parse_map(jf, v, key, &csched__v1__job__env_entry__descriptor, (void ***)&job->env,
                         &job->n_env);
    if (strcmp(key, "secret_env") == 0)
        return parse_secret_env(jf, v, job);
    if (strcmp(key, "trigger_env") == 0)
        return jf_strings(jf, v, key, "", &job->trigger_env, &job->n_trigger_env);
    if (strcmp(key, "labels") == 0)
        return parse_map(jf, v, key, &csched__v1__job__labels_entry__descriptor,
                         (void ***)&job->labels, &job->n_labels);
    if (strcmp(key, "max_running") == 0)
        return jf_u32(jf, v, key, &job->max_running);
    if (strcmp(key, "timeout_seconds") == 0)
        return jf_u32(jf, v, key, &job->timeout_seconds);
    if (strcmp(key, "max_attempts") == 0)
        return jf_u32(jf, v, key, &job->max_attempts);
    if (strcmp(key, "retry_backoff_ms") == 0)
        return jf_u32(jf, v, key, &job->retry_backoff_ms);
    if (strcmp(key, "retry") == 0)
        return parse_retry(jf, v, cs_cli_job_retry(job));
    if (strcmp(key, "run_deadline_seconds") == 0)
        return jf_u32(jf, v, key, &job->run_deadline_seconds);
    if (strcmp(key, "kill_grace_seconds") == 0)
        return jf_u32(jf, v, key, &job->kill_grace_seconds);
    if (strcmp(key, "kill_signal") == 0)
        return jf_string(jf, v, key, &job->kill_signal);
    if (strcmp(key, "history") == 0)
        return parse_history(jf, v, job);
    if (strcmp(key, "resources") == 0)
        return parse_resources(jf, v, job);
    if (strcmp(key, "hooks") == 0)
        return jf_parse_hooks(jf, v, job);
    if (strcmp(key, "after") == 0)
        return jf_parse_after(jf, v, job);
    return schedule_key(jf, key, v, job);
}

int jf_parse_job(struct jf *jf, const yaml_node_t *node, Csched__V1__Job **out)
{
    Csched__V1__Job *job;
    yaml_node_pair_t *pair;
    int rc;

    if (node->type != YAML_MAPPING_NODE)
        return jf_error(jf, node, "a job must be a mapping (name: ..., command: ...)");
    if (jf_unique_keys(jf, node) != 0)
        return -EINVAL;
    job = cs_cli_job_new();
    for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, pair->value);

        if (k->type != YAML_SCALAR_NODE) {
            rc = jf_error(jf, k, "job keys must be strings");
            goto err_free;
        }
        rc = job_key(jf, jf_scalar(k), v, job);
        if (rc == -ENOENT)
            rc = jf_error(
                jf, k,
                "unknown key '%s' (known: name, command, shell, env, working_dir, "
                "run_as_user, run_as_group, max_running, timeout_seconds, max_attempts, "
                "retry_backoff_ms, retry, run_deadline_seconds, kill_grace_seconds, "
                "kill_signal, labels, secret_env, trigger_env, history, resources, hooks, after, "
                "schedule, "
                "time_zone, misfire, "
                "overlap, "
                "jitter_seconds, max_catchup, starting_deadline_seconds)",
                jf_scalar(k));
        if (rc != 0)
            goto err_free;
    }
    if (job->name[0] == '\0') {
        rc = jf_error(jf, node, "job without a name");
        goto err_free;
    }
    if ((job->n_command > 0) == (job->shell[0] != '\0')) {
        rc =
            jf_error(jf, node, "job '%s': give exactly one of command (a list) or shell (a string)",
                     job->name);
        goto err_free;
    }
    *out = job;
    return 0;

err_free:
    csched__v1__job__free_unpacked(job, NULL);
    return rc;
}
