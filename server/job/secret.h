/* secret: a job's secret_env, references to values read when an attempt
 * starts (from a file, or from cschedd's environment as it was at start),
 * never stored or returned. This is what a valid reference is, and the
 * copy of a job's references that travels with a launch; secret_thread.c
 * resolves them on the launch thread. Pure functions: any thread. */
#ifndef CS_SECRET_H
#define CS_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#include "csched/v1/scheduler.pb-c.h"
#include "util.h"

#define CS_SECRET_ENV_MAX 64
#define CS_SECRET_PATH_MAX 4096

/* One reference, as a launch carries it (strings owned). */
struct cs_secret {
    char *name; /* the variable the command sees */
    bool is_file;
    char *ref; /* an absolute path, or a variable of cschedd's environment */
};

/* Checks spec->secret_env: at most CS_SECRET_ENV_MAX entries; names as env's
 * and not CSCHED_*, each once, and not also in spec->env; each reference
 * set: a file by an absolute path, or a well-formed variable name that is
 * not one of cschedd's settings or credentials (cs_env_is_server_secret).
 * 0 or -EINVAL with err naming the entry. */
int cs_secret_env_validate(const Csched__V1__Job *spec, struct cs_err *err);
/* Checks one reference, named field in the message: a file by an absolute
 * path, or a variable name as above. 0 or -EINVAL. */
int cs_secret_ref_validate(const char *field, const Csched__V1__SecretRef *ref, struct cs_err *err);
/* Copies spec's references for a launch: *n of them, NULL when none. */
struct cs_secret *cs_secrets_copy(const Csched__V1__Job *spec, size_t *n);
void cs_secrets_free(struct cs_secret *secrets, size_t n);
/* "file:/path" or "env:VAR", for messages: the reference, never a value. */
void cs_secret_describe(const struct cs_secret *secret, char *buf, size_t cap);

#endif
