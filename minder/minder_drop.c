/* minder_drop: setgroups, setgid, setuid through a table of calls (see
 * minder_drop.h). The child of a fork runs it, so it only makes system calls.
 * libc only. */
#include "minder_drop.h"

#include <errno.h>
#include <grp.h>
#include <unistd.h>

const struct cs_drop_ops cs_drop_sys = {
    .setgroups = setgroups,
    .setgid = setgid,
    .setuid = setuid,
};

int cs_drop_privileges(const struct cs_drop_ops *ops, uid_t uid, gid_t gid, const gid_t *groups,
                       size_t n, const char **step)
{
    /* Groups first: once the uid is gone, they could no longer be changed. */
    *step = "setgroups";
    if (ops->setgroups(n, groups) != 0)
        return -errno;
    *step = "setgid";
    if (ops->setgid(gid) != 0)
        return -errno;
    *step = "setuid";
    if (ops->setuid(uid) != 0)
        return -errno;
    /* setuid() as root sets all three uids; were one kept (a kernel or libc
     * that only set the effective one), root could be taken back. */
    *step = "setuid(0) after the drop";
    if (uid != 0 && ops->setuid(0) == 0)
        return -EPERM;
    *step = NULL;
    return 0;
}
