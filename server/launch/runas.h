/* runas: who a job's command runs as. cs_runas_resolve turns a job's
 * run_as_user and run_as_group (names or numeric ids) into the ids, the
 * supplementary groups and HOME/USER/LOGNAME; those lookups are NSS calls
 * (files, LDAP, sssd: they may block on the network), so it runs only off
 * the loop: in the launch threads for each start (runas_work.c, through
 * runas_cache.h's cache of recent answers), and on libuv's pool for the
 * check at CreateJob/UpdateJob (cs_runas_check, whose loop half is
 * runas.c). Invariant: under a root cschedd every command
 * drops to a user, the default job user unless run_as_user names one; under
 * any other uid nothing changes user, and a job that asks for another is
 * refused. */
#ifndef CS_RUNAS_H
#define CS_RUNAS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "util.h"

/* The default job user under a root cschedd when --job-user is not given:
 * this user if it exists (deploy/install-deps.sh makes it), else "nobody". */
#define CS_RUNAS_DEFAULT_USER "csched-job"
#define CS_RUNAS_FALLBACK_USER "nobody"
#define CS_RUNAS_NAME_MAX 256

struct cs_runas {
    bool drop; /* false: the command runs as cschedd itself */
    uid_t uid;
    gid_t gid;
    uint32_t *groups; /* malloc'd, n_groups of them (supplementary) */
    size_t n_groups;
    char user[CS_RUNAS_NAME_MAX]; /* for USER and LOGNAME */
    char home[4096];              /* for HOME */
};

/* Blocking (NSS), never on the loop. Resolves user and group ("" for
 * unset) for this process's euid: as root, user "" is default_user (NULL:
 * CS_RUNAS_DEFAULT_USER, else CS_RUNAS_FALLBACK_USER); a group given makes
 * it the only group, else the user's own groups are used. Not as root, only
 * cschedd's own user and group are accepted. 0 with out filled (free with
 * cs_runas_clear), -EINVAL (no such user or group; err names the field),
 * -EBUSY (cschedd cannot switch users; err says why), or -EMFILE/-ENFILE
 * (a lookup ran out of fds: try again). */
int cs_runas_resolve(const char *user, const char *group, const char *default_user,
                     struct cs_runas *out, struct cs_err *err);
void cs_runas_clear(struct cs_runas *r);

/* Sets HOME, USER and LOGNAME in *envp (a malloc'd NULL-terminated array as
 * cs_env_build makes) to r's user, replacing what was there. */
void cs_runas_set_env(char ***envp, const struct cs_runas *r);

/* The result of a check, on the loop thread: err->code 0 when the job may
 * run as asked. */
typedef void (*cs_runas_checked_cb)(void *arg, const struct cs_err *err);

/* Loop thread: checks user and group (copied; default_user borrowed until
 * done_cb) with cs_runas_resolve on libuv's pool, then calls done_cb on the
 * loop. Field names in messages are job.run_as_user and job.run_as_group. */
void cs_runas_check(uv_loop_t *loop, const char *user, const char *group, const char *default_user,
                    cs_runas_checked_cb done_cb, void *arg);

/* One check, made on the loop and run on the pool (runas_work.c). */
struct cs_runas_probe {
    uv_work_t work; /* work.data: this probe */
    char *user, *group;
    const char *default_user;
    struct cs_err err;
    cs_runas_checked_cb done_cb;
    void *arg;
};

/* Pool thread: resolves work->data's user and group into its err. */
void cs_runas_check_work(uv_work_t *work);

#endif
