/* secret: what a valid secret_env is, and the launch's copy of it (see
 * secret.h). Pure functions: any thread. */
#include "secret.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "job.h"

static bool is_var_name(const char *s)
{
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    for (const char *p = s + 1; *p != '\0'; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            return false;
    return strlen(s) <= CS_ENV_KEY_BYTES_MAX;
}

int cs_secret_ref_validate(const char *field, const Csched__V1__SecretRef *ref, struct cs_err *err)
{
    if (ref == NULL || ref->source_case == CSCHED__V1__SECRET_REF__SOURCE__NOT_SET)
        return cs_err_set(err, -EINVAL, "%s names no source: set file or server_env", field);
    if (ref->source_case == CSCHED__V1__SECRET_REF__SOURCE_FILE) {
        if (ref->file[0] != '/')
            return cs_err_set(err, -EINVAL, "%s.file \"%.100s\" must be an absolute path", field,
                              ref->file);
        if (strlen(ref->file) >= CS_SECRET_PATH_MAX)
            return cs_err_set(err, -EINVAL, "%s.file is longer than %d bytes", field,
                              CS_SECRET_PATH_MAX - 1);
        return 0;
    }
    if (!is_var_name(ref->server_env))
        return cs_err_set(err, -EINVAL,
                          "%s.server_env \"%.100s\" is not a variable name: "
                          "use letters, digits and '_', not starting with a digit",
                          field, ref->server_env);
    if (cs_env_is_server_secret(ref->server_env))
        return cs_err_set(err, -EINVAL,
                          "%s.server_env %s is one of cschedd's own "
                          "settings or database credentials (CSCHED_*, PG*, *DATABASE_URL), "
                          "which no job is given",
                          field, ref->server_env);
    return 0;
}

/* Whether key is also in env (n entries). */
static bool in_env(const Csched__V1__Job *spec, const char *key)
{
    for (size_t i = 0; i < spec->n_env; i++)
        if (strcmp(spec->env[i]->key, key) == 0)
            return true;
    return false;
}

int cs_secret_env_validate(const Csched__V1__Job *spec, struct cs_err *err)
{
    if (spec->n_secret_env > CS_SECRET_ENV_MAX)
        return cs_err_set(err, -EINVAL, "job.secret_env has %zu entries; the limit is %d",
                          spec->n_secret_env, CS_SECRET_ENV_MAX);
    for (size_t i = 0; i < spec->n_secret_env; i++) {
        const char *key = spec->secret_env[i]->key;
        if (key[0] == '\0')
            return cs_err_set(err, -EINVAL, "job.secret_env has an empty variable name");
        if (strlen(key) > CS_ENV_KEY_BYTES_MAX)
            return cs_err_set(err, -EINVAL, "job.secret_env variable name is longer than %d bytes",
                              CS_ENV_KEY_BYTES_MAX);
        if (strchr(key, '=') != NULL)
            return cs_err_set(err, -EINVAL, "job.secret_env variable name \"%.64s\" contains '='",
                              key);
        if (strncmp(key, "CSCHED_", 7) == 0)
            return cs_err_set(err, -EINVAL,
                              "job.secret_env variable %.64s: names starting with CSCHED_ are "
                              "csched's own",
                              key);
        if (in_env(spec, key))
            return cs_err_set(err, -EINVAL,
                              "job.secret_env variable %.64s is also in job.env: set it in one "
                              "of them",
                              key);
        for (size_t j = 0; j < i; j++)
            if (strcmp(spec->secret_env[j]->key, key) == 0)
                return cs_err_set(err, -EINVAL, "job.secret_env has variable %.64s twice", key);
        char field[96];
        (void)snprintf(field, sizeof(field), "job.secret_env[\"%.64s\"]", key);
        int rc = cs_secret_ref_validate(field, spec->secret_env[i]->value, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

struct cs_secret *cs_secrets_copy(const Csched__V1__Job *spec, size_t *n)
{
    *n = spec->n_secret_env;
    if (*n == 0)
        return NULL;
    struct cs_secret *out = cs_xcalloc(*n, sizeof(*out));
    for (size_t i = 0; i < *n; i++) {
        const Csched__V1__SecretRef *ref = spec->secret_env[i]->value;
        out[i].name = cs_xstrdup(spec->secret_env[i]->key);
        out[i].is_file = ref->source_case == CSCHED__V1__SECRET_REF__SOURCE_FILE;
        out[i].ref = cs_xstrdup(out[i].is_file ? ref->file : ref->server_env);
    }
    return out;
}

void cs_secrets_free(struct cs_secret *secrets, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(secrets[i].name);
        free(secrets[i].ref);
    }
    free(secrets);
}

void cs_secret_describe(const struct cs_secret *secret, char *buf, size_t cap)
{
    (void)snprintf(buf, cap, "%s:%s", secret->is_file ? "file" : "env", secret->ref);
}
