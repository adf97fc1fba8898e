/* local_role: the role of a peer on the unix socket, from its credentials
 * (uid, gid, supplementary groups as the kernel reports them at connect).
 * uid 0 and cschedd's own uid are admin; members of the admin, operator or
 * viewer group hold that role (the highest that applies); everyone else
 * holds none. Groups are resolved to gids once, at start; the mapping itself
 * is plain arithmetic, any thread. */
#ifndef CS_LOCAL_ROLE_H
#define CS_LOCAL_ROLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "identity.h"
#include "util.h"

/* The group cschedd makes its admins' when --admin-group is not given, if
 * a group of that name exists. */
#define CS_DEFAULT_ADMIN_GROUP "csched"

struct cs_local_roles {
    uid_t self_uid;
    /* Indexed by role (viewer, operator, admin); has_gid false: no such group. */
    gid_t gid[CS_ROLE_ADMIN + 1];
    bool has_gid[CS_ROLE_ADMIN + 1];
};

/* Resolves the group of each role (a name or a numeric gid; NULL: none,
 * except admin, which defaults to CS_DEFAULT_ADMIN_GROUP if it exists).
 * Looks names up in the group database (NSS): call at start, before the
 * loop runs. 0, or -ENOENT / -EINVAL with err naming the flag. */
int cs_local_roles_init(struct cs_local_roles *roles, const char *admin_group,
                        const char *operator_group, const char *viewer_group, struct cs_err *err);
/* The role of a peer with uid, primary gid and the n supplementary groups. */
enum cs_role cs_local_role(const struct cs_local_roles *roles, uid_t uid, gid_t gid,
                           const gid_t *groups, size_t n);

#endif
