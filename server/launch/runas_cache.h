/* runas cache: the launch threads' memory of who a job runs as, so that a
 * start does not repeat getpwnam_r and getgrouplist for the user the last
 * start already resolved. An entry is (user, group, default user) -> what
 * cs_runas_resolve made of it, and serves a start only while the passwd and
 * group files are as they were when it was looked up (device, inode, size,
 * mtime: a change applies at the next start) and for at most the cache's
 * ttl, which bounds how stale an answer from another NSS source (LDAP,
 * sssd, systemd) can be. A failed lookup is never kept. Safe from any
 * thread (one mutex, never held across a lookup); blocking (stat, NSS), so
 * never on the loop. */
#ifndef CS_RUNAS_CACHE_H
#define CS_RUNAS_CACHE_H

#include <stdint.h>

#include "runas.h"

/* The launch threads' bound for an entry's age. Files are checked at every
 * start; this is for what the files do not show (an LDAP or sssd user
 * removed, a group membership changed there): 2 s keeps such a change as
 * prompt as a person can notice, while at hundreds of starts a second the
 * lookup is still paid once per 2 s and user rather than at each start. */
#define CS_RUNAS_CACHE_TTL_MS 2000

/* What a miss calls: cs_runas_resolve, or a test's stand-in. */
typedef int (*cs_runas_resolve_fn)(const char *user, const char *group, const char *default_user,
                                   struct cs_runas *out, struct cs_err *err);

struct cs_runas_cache;

/* A cache over the given passwd and group files (copied), keeping entries
 * at most ttl_ms, looking misses up with resolve. Free with
 * cs_runas_cache_free. */
struct cs_runas_cache *cs_runas_cache_new(const char *passwd_path, const char *group_path,
                                          uint64_t ttl_ms, cs_runas_resolve_fn resolve);
void cs_runas_cache_free(struct cs_runas_cache *c);

/* As cs_runas_resolve (same arguments, results and errors), answered from
 * the cache when it holds a valid entry; out is the caller's either way
 * (cs_runas_clear). Costs two stat()s on a hit. */
int cs_runas_cache_resolve(struct cs_runas_cache *c, const char *user, const char *group,
                           const char *default_user, struct cs_runas *out, struct cs_err *err);

/* The process's cache over /etc/passwd and /etc/group with
 * CS_RUNAS_CACHE_TTL_MS and cs_runas_resolve, made at the first call and
 * kept until exit: the one the launch threads share. */
struct cs_runas_cache *cs_runas_cache_shared(void);

#endif
