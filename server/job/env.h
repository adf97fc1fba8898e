/* env: builds the environment of a command from the server's own, the job's,
 * the trigger's overrides and csched's own variables; later sources win. */
#ifndef CS_ENV_H
#define CS_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "job.h"

struct cs_env_source {
    struct cs_kv *const *entries;
    size_t n;
};

/* Returns a NULL-terminated "KEY=VALUE" array, owned by the caller (each
 * string and the array malloc'd). base is a NULL-terminated environ. */
char **cs_env_build(char *const *base, const struct cs_env_source *sources, size_t n_sources);
/* The environment of attempt number attempt of run (of the job spec):
 * base, then the job's env, then the run's overrides, then CSCHED_RUN_ID,
 * CSCHED_JOB_NAME and CSCHED_ATTEMPT. base's names must be unique, as in
 * what cs_env_base_for_jobs returns: only the few definitions over it are
 * sorted. Owned by the caller, as above. */
char **cs_env_build_attempt(char *const *base, const Csched__V1__Job *spec,
                            const Csched__V1__Run *run, uint32_t attempt);
/* Copies a NULL-terminated environ. */
char **cs_env_copy(char *const *env);
/* The base environment of every command: env (cschedd's own) less what
 * may carry the server's database credentials: CSCHED_* (its settings),
 * PG* (every libpq variable: PGPASSWORD, PGPASSFILE, PGSERVICE, ...) and
 * DATABASE_URL or any name ending in _DATABASE_URL. A job that needs one of
 * these names sets it in its own env. */
char **cs_env_base_for_jobs(char *const *env);
/* Whether the variable (a NAME or a NAME=VALUE entry) is one of those
 * cs_env_base_for_jobs leaves out. */
bool cs_env_is_server_secret(const char *entry);
/* Frees env (NULL is fine), wiping each string first: a command's
 * environment may hold a secret's value. */
void cs_env_free(char **env);

#endif
