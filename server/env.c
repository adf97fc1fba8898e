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

/* Orders indexes into entries by name, then by position: the last of each
 * run of equal names is the definition that wins. */
static int by_name_then_index(const void *a, const void *b, void *arg)
{
    char **entries = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    size_t li = name_len(entries[i]), lj = name_len(entries[j]);
    int c = memcmp(entries[i], entries[j], li < lj ? li : lj);
    if (c == 0 && li != lj)
        c = li < lj ? -1 : 1;
    if (c == 0)
        c = i < j ? -1 : 1;
    return c;
}

static bool same_name(const char *a, const char *b)
{
    size_t len = name_len(a);
    return name_len(b) == len && memcmp(a, b, len) == 0;
}

/* Frees every entry a later one of the same name overrides and compacts the
 * rest in order; returns how many are left. A sort, not a scan per entry: an
 * attempt with thousands of variables must not stall the loop. */
static size_t drop_overridden(char **entries, size_t n)
{
    size_t *order = cs_xmalloc((n ? n : 1) * sizeof(*order));
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof(*order), by_name_then_index, entries);
    for (size_t i = 0; i + 1 < n; i++) {
        if (same_name(entries[order[i]], entries[order[i + 1]])) {
            free(entries[order[i]]);
            entries[order[i]] = NULL;
        }
    }
    free(order);
    size_t out = 0;
    for (size_t i = 0; i < n; i++)
        if (entries[i] != NULL)
            entries[out++] = entries[i];
    return out;
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
    all[drop_overridden(all, k)] = NULL;
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

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* PG* as a prefix rather than a list of libpq's variables: a list would
 * miss the next one libpq adds. */
bool cs_env_is_server_secret(const char *entry)
{
    size_t len = name_len(entry);
    if (strncmp(entry, "CSCHED_", 7) == 0 || strncmp(entry, "PG", 2) == 0)
        return true;
    return (len == 12 && memcmp(entry, "DATABASE_URL", 12) == 0) ||
           ends_with(entry, len, "_DATABASE_URL");
}

char **cs_env_base_for_jobs(char *const *env)
{
    char **copy = cs_env_copy(env);
    size_t out = 0;
    for (size_t i = 0; copy[i] != NULL; i++) {
        if (cs_env_is_server_secret(copy[i]))
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
    for (char **p = env; *p != NULL; p++) {
        explicit_bzero(*p, strlen(*p));
        free(*p);
    }
    free(env);
}
