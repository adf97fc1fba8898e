/* local_role: group names resolved at start; peers mapped to roles. */
#include "local_role.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* gid for text, a group name or a decimal gid: 0 or -ENOENT. */
static int resolve(const char *text, gid_t *gid)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0 && v < (gid_t)-1) {
        *gid = (gid_t)v;
        return 0;
    }
    char buf[16384];
    struct group gr, *found = NULL;
    if (getgrnam_r(text, &gr, buf, sizeof(buf), &found) != 0 || found == NULL)
        return -ENOENT;
    *gid = found->gr_gid;
    return 0;
}

int cs_local_roles_init(struct cs_local_roles *roles, const char *admin_group,
                        const char *operator_group, const char *viewer_group, struct cs_err *err)
{
    const struct {
        const char *text;
        const char *flag;
        enum cs_role role;
    } groups[] = {
        {admin_group, "--admin-group", CS_ROLE_ADMIN},
        {operator_group, "--operator-group", CS_ROLE_OPERATOR},
        {viewer_group, "--viewer-group", CS_ROLE_VIEWER},
    };

    memset(roles, 0, sizeof(*roles));
    roles->self_uid = geteuid();
    for (size_t i = 0; i < CS_ARRAY_LEN(groups); i++) {
        enum cs_role role = groups[i].role;
        if (groups[i].text == NULL || groups[i].text[0] == '\0')
            continue;
        if (resolve(groups[i].text, &roles->gid[role]) != 0)
            return cs_err_set(err, -ENOENT, "%s \"%s\": no such group", groups[i].flag,
                              groups[i].text);
        roles->has_gid[role] = true;
    }
    /* The default admin group is optional: without it, only root and
     * cschedd's own user are admins. */
    if (admin_group == NULL && resolve(CS_DEFAULT_ADMIN_GROUP, &roles->gid[CS_ROLE_ADMIN]) == 0)
        roles->has_gid[CS_ROLE_ADMIN] = true;
    return 0;
}

static bool in_group(gid_t want, gid_t gid, const gid_t *groups, size_t n)
{
    if (gid == want)
        return true;
    for (size_t i = 0; i < n; i++)
        if (groups[i] == want)
            return true;
    return false;
}

enum cs_role cs_local_role(const struct cs_local_roles *roles, uid_t uid, gid_t gid,
                           const gid_t *groups, size_t n)
{
    if (uid == 0 || uid == roles->self_uid)
        return CS_ROLE_ADMIN;
    for (enum cs_role role = CS_ROLE_ADMIN; role > CS_ROLE_NONE; role--)
        if (roles->has_gid[role] && in_group(roles->gid[role], gid, groups, n))
            return role;
    return CS_ROLE_NONE;
}
