/* env: merge environment sources, the last definition of a name winning,
 * and the environment of an attempt's command. Pure functions: any thread. */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static size_t name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq != NULL ? (size_t)(eq - entry) : strlen(entry);
}

/* True if a later entry (index > i) defines the same name as entries[i]. */
static bool overridden(char **entries, size_t n, size_t i)
{
    size_t len = name_len(entries[i]);
    for (size_t j = i + 1; j < n; j++)
        if (name_len(entries[j]) == len && memcmp(entries[j], entries[i], len) == 0)
            return true;
    return false;
}

char **cs_env_build(char *const *base, const struct cs_env_source *sources, size_t n_sources)
{
    size_t n = 0;
    while (base[n] != NULL)
        n++;
    size_t total = n;
    for (size_t s = 0; s < n_sources; s++)
        total += sources[s].n;

    char **all = cs_xmalloc((total + 1) * sizeof(*all));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        all[k++] = cs_xstrdup(base[i]);
    for (size_t s = 0; s < n_sources; s++) {
        for (size_t i = 0; i < sources[s].n; i++) {
            const struct cs_kv *kv = sources[s].entries[i];
            size_t len = strlen(kv->key) + strlen(kv->value) + 2;
            all[k] = cs_xmalloc(len);
            (void)snprintf(all[k++], len, "%s=%s", kv->key, kv->value);
        }
    }
    /* Keep only the last definition of each name, in order. */
    size_t out = 0;
    for (size_t i = 0; i < k; i++) {
        if (overridden(all, k, i))
            free(all[i]);
        else
            all[out++] = all[i];
    }
    all[out] = NULL;
    return all;
}

char **cs_env_build_attempt(char *const *base, const Csched__V1__Job *spec,
                            const Csched__V1__Run *run, uint32_t attempt)
{
    char run_id[24], number[12];
    (void)snprintf(run_id, sizeof(run_id), "%lld", (long long)run->id);
    (void)snprintf(number, sizeof(number), "%u", attempt);
    struct cs_kv vars[3] = {
        {.key = "CSCHED_RUN_ID", .value = run_id},
        {.key = "CSCHED_JOB_NAME", .value = run->job_name},
        {.key = "CSCHED_ATTEMPT", .value = number},
    };
    struct cs_kv *var_ptrs[3] = {&vars[0], &vars[1], &vars[2]};
    const struct cs_env_source sources[] = {
        {(struct cs_kv *const *)spec->env, spec->n_env},
        {(struct cs_kv *const *)run->env, run->n_env},
        {var_ptrs, 3},
    };
    return cs_env_build(base, sources, CS_ARRAY_LEN(sources));
}

char **cs_env_copy(char *const *env)
{
    return cs_env_build(env, NULL, 0);
}

char **cs_env_copy_without(char *const *env, const char *prefix)
{
    char **copy = cs_env_copy(env);
    size_t len = strlen(prefix), out = 0;
    for (size_t i = 0; copy[i] != NULL; i++) {
        if (strncmp(copy[i], prefix, len) == 0)
            free(copy[i]);
        else
            copy[out++] = copy[i];
    }
    copy[out] = NULL;
    return copy;
}

void cs_env_free(char **env)
{
    if (env == NULL)
        return;
    for (char **p = env; *p != NULL; p++)
        free(*p);
    free(env);
}
