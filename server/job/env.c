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

/* One definition of the merge: a whole "NAME=VALUE" entry of the base
 * (value NULL) or a source's key and value. The name's length is measured
 * once, not at each comparison of the sort. */
struct def {
    const char *name;
    const char *value;
    size_t name_len;
    size_t pos; /* its place in the order of base and sources */
};

static int by_name(const void *a, const void *b)
{
    const struct def *x = a, *y = b;
    int c = memcmp(x->name, y->name, x->name_len < y->name_len ? x->name_len : y->name_len);
    if (c == 0 && x->name_len != y->name_len)
        c = x->name_len < y->name_len ? -1 : 1;
    return c;
}

/* Orders definitions by name, then by position: the last of each run of
 * equal names is the definition that wins. */
static int by_name_then_pos(const void *a, const void *b)
{
    const struct def *x = a, *y = b;
    int c = by_name(a, b);
    if (c == 0)
        c = x->pos < y->pos ? -1 : 1;
    return c;
}

static char *def_entry(const struct def *d)
{
    if (d->value == NULL)
        return cs_xstrdup(d->name);
    size_t value_len = strlen(d->value);
    char *entry = cs_xmalloc(d->name_len + value_len + 2);
    memcpy(entry, d->name, d->name_len);
    entry[d->name_len] = '=';
    memcpy(entry + d->name_len + 1, d->value, value_len + 1);
    return entry;
}

/* Appends to all, from out on, the definition of defs (n of them, at
 * positions 0 to n - 1, sorted by by_name_then_pos) that wins for each
 * name, in the order of their positions, and the NULL that ends all; frees
 * defs. A sort, not a scan per definition: an attempt with thousands of
 * variables must not stall the loop. */
static char **end_with_winners(char **all, size_t out, struct def *defs, size_t n)
{
    const struct def **wins = cs_xcalloc(n ? n : 1, sizeof(*wins));
    for (size_t i = 0; i < n; i++)
        if (i + 1 == n || by_name(&defs[i], &defs[i + 1]) != 0)
            wins[defs[i].pos] = &defs[i];
    for (size_t p = 0; p < n; p++)
        if (wins[p] != NULL)
            all[out++] = def_entry(wins[p]);
    all[out] = NULL;
    free(wins);
    free(defs);
    return all;
}

static size_t count(char *const *base)
{
    size_t n = 0;
    while (base[n] != NULL)
        n++;
    return n;
}

/* Appends the definitions of the sources to defs from position n on;
 * returns the new count. */
static size_t add_sources(struct def *defs, size_t n, const struct cs_env_source *sources,
                          size_t n_sources)
{
    for (size_t s = 0; s < n_sources; s++) {
        for (size_t i = 0; i < sources[s].n; i++, n++) {
            const struct cs_kv *kv = sources[s].entries[i];
            defs[n] = (struct def){kv->key, kv->value, strlen(kv->key), n};
        }
    }
    return n;
}

static size_t count_sources(const struct cs_env_source *sources, size_t n_sources)
{
    size_t n = 0;
    for (size_t s = 0; s < n_sources; s++)
        n += sources[s].n;
    return n;
}

char **cs_env_build(char *const *base, const struct cs_env_source *sources, size_t n_sources)
{
    size_t n_base = count(base), total = n_base + count_sources(sources, n_sources);
    struct def *defs = cs_xmalloc((total ? total : 1) * sizeof(*defs));
    for (size_t i = 0; i < n_base; i++)
        defs[i] = (struct def){base[i], NULL, name_len(base[i]), i};
    size_t n = add_sources(defs, n_base, sources, n_sources);
    qsort(defs, n, sizeof(*defs), by_name_then_pos);
    /* By position, to keep the order of base and sources. */
    return end_with_winners(cs_xmalloc((n + 1) * sizeof(char *)), 0, defs, n);
}

/* As cs_env_build for a base whose names are unique: only the sources'
 * few definitions are sorted, and each entry of the base is looked up among
 * them; an attempt pays that, not a sort of the whole environment. */
static char **build_over_unique(char *const *base, const struct cs_env_source *sources,
                                size_t n_sources)
{
    size_t n_base = count(base), k = count_sources(sources, n_sources);
    struct def *defs = cs_xmalloc((k ? k : 1) * sizeof(*defs));
    add_sources(defs, 0, sources, n_sources);
    qsort(defs, k, sizeof(*defs), by_name_then_pos);
    char **all = cs_xmalloc((n_base + k + 1) * sizeof(*all));
    size_t out = 0;
    for (size_t i = 0; i < n_base; i++) {
        struct def d = {base[i], NULL, name_len(base[i]), 0};
        if (bsearch(&d, defs, k, sizeof(*defs), by_name) == NULL)
            all[out++] = cs_xstrdup(base[i]);
    }
    return end_with_winners(all, out, defs, k);
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
    return build_over_unique(base, sources, CS_ARRAY_LEN(sources));
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
