/* YAML job files for "csched apply -f": a mapping with one key, jobs, whose
 * value is a list of job mappings. Every error names the file, the line and
 * what is wrong; unknown keys are errors, so a typo never goes unnoticed.
 *
 * Single-threaded; uses libyaml's document API (the whole file is small).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cli.h"

/* The parse in progress: where errors go. */
struct jf {
    yaml_document_t *doc;
    const char *name;
    char *err;
    size_t errlen;
};

static int jf_error(struct jf *jf, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int jf_error(struct jf *jf, const yaml_node_t *node, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(jf->err, jf->errlen, "%s:%lu: %s", jf->name, (unsigned long)node->start_mark.line + 1,
             msg);
    return -EINVAL;
}

static const char *scalar(const yaml_node_t *node)
{
    return (const char *)node->data.scalar.value;
}

static int want_scalar(struct jf *jf, const yaml_node_t *node, const char *key)
{
    if (node->type != YAML_SCALAR_NODE)
        return jf_error(jf, node, "%s: must be a single value", key);
    return 0;
}

static int parse_u32(struct jf *jf, const yaml_node_t *node, const char *key, uint32_t *out)
{
    if (want_scalar(jf, node, key) != 0)
        return -EINVAL;
    if (cs_cli_parse_u32(scalar(node), out) != 0)
        return jf_error(jf, node, "%s: must be a whole number from 0 to 4294967295, not '%s'", key,
                        scalar(node));
    return 0;
}

static int parse_string(struct jf *jf, const yaml_node_t *node, const char *key, char **out)
{
    if (want_scalar(jf, node, key) != 0)
        return -EINVAL;
    cs_cli_set_string(out, scalar(node));
    return 0;
}

static int parse_command(struct jf *jf, const yaml_node_t *node, Csched__V1__Job *job)
{
    yaml_node_item_t *item;

    if (node->type != YAML_SEQUENCE_NODE)
        return jf_error(jf, node, "command: must be a list of strings (use shell: for a string)");
    for (item = node->data.sequence.items.start; item < node->data.sequence.items.top; item++) {
        yaml_node_t *arg = yaml_document_get_node(jf->doc, *item);

        if (arg->type != YAML_SCALAR_NODE)
            return jf_error(jf, arg, "command: each item must be a string");
        cs_cli_job_add_command(job, scalar(arg));
    }
    if (job->n_command == 0)
        return jf_error(jf, node, "command: must not be empty");
    return 0;
}

static int parse_map(struct jf *jf, const yaml_node_t *node, const char *key,
                     const ProtobufCMessageDescriptor *entry_desc, void ***entries, size_t *n)
{
    yaml_node_pair_t *pair;

    if (node->type != YAML_MAPPING_NODE)
        return jf_error(jf, node, "%s: must be a mapping of KEY: VALUE", key);
    for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, pair->value);

        if (k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE)
            return jf_error(jf, k, "%s: keys and values must be strings", key);
        if (scalar(k)[0] == '\0')
            return jf_error(jf, k, "%s: empty key", key);
        cs_cli_map_put(entry_desc, entries, n, scalar(k), scalar(v));
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
        if (scalar(k)[0] == '\0')
            return jf_error(jf, k, "secret_env: empty key");
        if (cs_cli_secret_put(job, scalar(k), scalar(v)) != 0)
            return jf_error(jf, v,
                            "secret_env: %s: the reference is file:/PATH or env:VAR, not '%s'",
                            scalar(k), scalar(v));
    }
    return 0;
}

static int parse_double(struct jf *jf, const yaml_node_t *node, const char *key, double *out)
{
    if (want_scalar(jf, node, key) != 0)
        return -EINVAL;
    if (cs_cli_parse_double(scalar(node), out) != 0)
        return jf_error(jf, node, "%s: must be a number, not '%s'", key, scalar(node));
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
        const char *key = k->type == YAML_SCALAR_NODE ? scalar(k) : "";
        int rc;

        if (strcmp(key, "initial_backoff_ms") == 0)
            rc = parse_u32(jf, v, "retry.initial_backoff_ms", &p->initial_backoff_ms);
        else if (strcmp(key, "max_backoff_ms") == 0)
            rc = parse_u32(jf, v, "retry.max_backoff_ms", &p->max_backoff_ms);
        else if (strcmp(key, "multiplier") == 0)
            rc = parse_double(jf, v, "retry.multiplier", &p->multiplier);
        else if (strcmp(key, "jitter") == 0)
            rc = parse_double(jf, v, "retry.jitter", &p->jitter);
        else if (strcmp(key, "retry_on") != 0)
            rc = jf_error(jf, k,
                          "retry: unknown key '%s' (known: initial_backoff_ms, max_backoff_ms, "
                          "multiplier, jitter, retry_on)",
                          key);
        else if (want_scalar(jf, v, "retry.retry_on") != 0)
            rc = -EINVAL;
        else if (cs_cli_parse_retry_on(scalar(v), &p->retry_on) != 0)
            rc = jf_error(jf, v, "retry.retry_on: must be failure, timeout or failure,timeout");
        else
            rc = 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A key of the job's schedule (cs_cli_schedule_set): 0, 1 if none, -EINVAL. */
static int schedule_key(struct jf *jf, const char *key, const yaml_node_t *v, Csched__V1__Job *job)
{
    char err[200];
    int rc;

    if (v->type != YAML_SCALAR_NODE)
        return cs_cli_schedule_set(job, key, "", err, sizeof(err)) == 1
                   ? 1
                   : jf_error(jf, v, "%s: must be a single value", key);
    rc = cs_cli_schedule_set(job, key, scalar(v), err, sizeof(err));
    return rc < 0 ? jf_error(jf, v, "%s", err) : rc;
}

/* Sets one key of a job. Returns 0 or -EINVAL. */
static int job_key(struct jf *jf, const char *key, const yaml_node_t *v, Csched__V1__Job *job)
{
    if (strcmp(key, "name") == 0)
        return parse_string(jf, v, key, &job->name);
    if (strcmp(key, "command") == 0)
        return parse_command(jf, v, job);
    if (strcmp(key, "shell") == 0)
        return parse_string(jf, v, key, &job->shell);
    if (strcmp(key, "working_dir") == 0)
        return parse_string(jf, v, key, &job->working_dir);
    if (strcmp(key, "run_as_user") == 0)
        return parse_string(jf, v, key, &job->run_as_user);
    if (strcmp(key, "run_as_group") == 0)
        return parse_string(jf, v, key, &job->run_as_group);
    if (strcmp(key, "env") == 0)
        return parse_map(jf, v, key, &csched__v1__job__env_entry__descriptor, (void ***)&job->env,
                         &job->n_env);
    if (strcmp(key, "secret_env") == 0)
        return parse_secret_env(jf, v, job);
    if (strcmp(key, "labels") == 0)
        return parse_map(jf, v, key, &csched__v1__job__labels_entry__descriptor,
                         (void ***)&job->labels, &job->n_labels);
    if (strcmp(key, "max_running") == 0)
        return parse_u32(jf, v, key, &job->max_running);
    if (strcmp(key, "timeout_seconds") == 0)
        return parse_u32(jf, v, key, &job->timeout_seconds);
    if (strcmp(key, "max_attempts") == 0)
        return parse_u32(jf, v, key, &job->max_attempts);
    if (strcmp(key, "retry_backoff_ms") == 0)
        return parse_u32(jf, v, key, &job->retry_backoff_ms);
    if (strcmp(key, "retry") == 0)
        return parse_retry(jf, v, cs_cli_job_retry(job));
    if (strcmp(key, "run_deadline_seconds") == 0)
        return parse_u32(jf, v, key, &job->run_deadline_seconds);
    if (strcmp(key, "kill_grace_seconds") == 0)
        return parse_u32(jf, v, key, &job->kill_grace_seconds);
    if (strcmp(key, "kill_signal") == 0)
        return parse_string(jf, v, key, &job->kill_signal);
    return schedule_key(jf, key, v, job);
}

/* Checks that no key of a mapping appears twice. */
static int check_unique_keys(struct jf *jf, const yaml_node_t *node)
{
    yaml_node_pair_t *a, *b;

    for (a = node->data.mapping.pairs.start; a < node->data.mapping.pairs.top; a++) {
        yaml_node_t *ka = yaml_document_get_node(jf->doc, a->key);

        for (b = node->data.mapping.pairs.start; b < a; b++) {
            yaml_node_t *kb = yaml_document_get_node(jf->doc, b->key);

            if (ka->type == YAML_SCALAR_NODE && kb->type == YAML_SCALAR_NODE &&
                strcmp(scalar(ka), scalar(kb)) == 0)
                return jf_error(jf, ka, "key '%s' appears twice", scalar(ka));
        }
    }
    return 0;
}

static int parse_job(struct jf *jf, const yaml_node_t *node, Csched__V1__Job **out)
{
    Csched__V1__Job *job;
    yaml_node_pair_t *pair;
    int rc;

    if (node->type != YAML_MAPPING_NODE)
        return jf_error(jf, node, "each item of jobs must be a mapping (name: ..., command: ...)");
    if (check_unique_keys(jf, node) != 0)
        return -EINVAL;
    job = cs_cli_job_new();
    for (pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(jf->doc, pair->value);

        if (k->type != YAML_SCALAR_NODE) {
            rc = jf_error(jf, k, "job keys must be strings");
            goto err_free;
        }
        rc = job_key(jf, scalar(k), v, job);
        if (rc > 0)
            rc = jf_error(jf, k,
                          "unknown key '%s' (known: name, command, shell, env, working_dir, "
                          "run_as_user, run_as_group, max_running, timeout_seconds, max_attempts, "
                          "retry_backoff_ms, retry, run_deadline_seconds, kill_grace_seconds, "
                          "kill_signal, labels, secret_env, schedule, time_zone, misfire, overlap, "
                          "jitter_seconds, max_catchup, starting_deadline_seconds)",
                          scalar(k));
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

/* Finds the jobs: list in the root mapping. */
static int find_jobs(struct jf *jf, yaml_node_t *root, yaml_node_t **out)
{
    yaml_node_pair_t *pair;

    *out = NULL;
    if (root == NULL) {
        snprintf(jf->err, jf->errlen, "%s: empty file: expected 'jobs:' with a list", jf->name);
        return -EINVAL;
    }
    if (root->type != YAML_MAPPING_NODE)
        return jf_error(jf, root, "expected a mapping with the key 'jobs'");
    if (check_unique_keys(jf, root) != 0)
        return -EINVAL;
    for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, pair->key);

        if (k->type != YAML_SCALAR_NODE || strcmp(scalar(k), "jobs") != 0)
            return jf_error(jf, k, "unknown key '%s' (the file holds only 'jobs')",
                            k->type == YAML_SCALAR_NODE ? scalar(k) : "?");
        *out = yaml_document_get_node(jf->doc, pair->value);
    }
    if (*out == NULL)
        return jf_error(jf, root, "missing key 'jobs'");
    if ((*out)->type != YAML_SEQUENCE_NODE)
        return jf_error(jf, *out, "jobs: must be a list of jobs");
    return 0;
}

static int parse_jobs(struct jf *jf, yaml_node_t *list, Csched__V1__Job ***jobs, size_t *n)
{
    size_t count = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    Csched__V1__Job **arr;
    size_t done = 0;

    if (count == 0)
        return jf_error(jf, list, "jobs: the list is empty");
    arr = cs_cli_xcalloc(count, sizeof(*arr));
    for (; done < count; done++) {
        yaml_node_t *node = yaml_document_get_node(jf->doc, list->data.sequence.items.start[done]);

        if (parse_job(jf, node, &arr[done]) != 0)
            goto err_free;
        for (size_t j = 0; j < done; j++) {
            if (strcmp(arr[j]->name, arr[done]->name) == 0) {
                jf_error(jf, node, "job '%s' appears twice", arr[done]->name);
                done++;
                goto err_free;
            }
        }
    }
    *jobs = arr;
    *n = count;
    return 0;

err_free:
    cs_cli_jobs_free(arr, done);
    return -EINVAL;
}

int cs_cli_jobfile_parse(const char *name, const char *text, size_t len, Csched__V1__Job ***jobs,
                         size_t *n, char *err, size_t errlen)
{
    struct jf jf = {.name = name, .err = err, .errlen = errlen};
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_node_t *list;
    int rc;

    *jobs = NULL;
    *n = 0;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, errlen, "%s:%lu: not valid YAML: %s", name,
                 (unsigned long)parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "syntax error");
        yaml_parser_delete(&parser);
        return -EINVAL;
    }
    jf.doc = &doc;
    rc = find_jobs(&jf, yaml_document_get_root_node(&doc), &list);
    if (rc == 0)
        rc = parse_jobs(&jf, list, jobs, n);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

int cs_cli_jobfile_load(const char *path, Csched__V1__Job ***jobs, size_t *n, char *err,
                        size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc;

    if (f == NULL) {
        rc = -errno;
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return rc;
    }
    for (;;) {
        size_t got;

        if (cap - len < 4096) {
            char *grown = realloc(buf, cap ? cap * 2 : 8192);

            if (grown == NULL) {
                rc = -ENOMEM;
                snprintf(err, errlen, "%s: out of memory", path);
                goto out_close;
            }
            buf = grown;
            cap = cap ? cap * 2 : 8192;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        rc = -EIO;
        snprintf(err, errlen, "cannot read %s", path);
        goto out_close;
    }
    rc = cs_cli_jobfile_parse(path, buf, len, jobs, n, err, errlen);
out_close:
    free(buf);
    if (f != stdin)
        fclose(f);
    return rc;
}

void cs_cli_jobs_free(Csched__V1__Job **jobs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        csched__v1__job__free_unpacked(jobs[i], NULL);
    free(jobs);
}
