/* secret_thread: resolving a launch's secret_env on the launch thread, just
 * before its minder is spawned: file reads stay off the loop, and they are
 * made as cschedd's own user, before the minder drops to the job's user
 * (which need not be able to read the file). Values live only in the
 * command's environment array, and are wiped when it is freed. */
#ifndef CS_SECRET_THREAD_H
#define CS_SECRET_THREAD_H

#include <stddef.h>

#include "secret.h"

/* Sets each secret in *envp (a NULL-terminated, malloc'd array of malloc'd
 * "NAME=VALUE" strings, reallocated as needed), replacing a variable of the
 * same name. A file is read whole (a regular file, at most
 * CS_JOB_ARG_BYTES_MAX bytes less the name, without NUL bytes); one trailing
 * newline is dropped. server_env is cschedd's environment at start. 0, or a
 * negative errno with msg naming the variable and its reference (never a
 * value); *envp is then left as it was, but for secrets already set. */
int cs_secrets_resolve(char ***envp, const struct cs_secret *secrets, size_t n,
                       char *const *server_env, char *msg, size_t cap);

#endif
