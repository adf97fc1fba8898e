/* minder_drop: the privilege drop of a command the minder starts as another
 * user, between fork and exec: setgroups, setgid, setuid, in that order (each
 * needs the privilege the next one gives up), each checked, and then a check
 * that the privilege is really gone. The calls go through a table, so a unit
 * test can make any step fail. libc only; async-signal-safe (it runs in the
 * forked child). */
#ifndef CS_MINDER_DROP_H
#define CS_MINDER_DROP_H

#include <stddef.h>
#include <sys/types.h>

struct cs_drop_ops {
    int (*setgroups)(size_t n, const gid_t *groups);
    int (*setgid)(gid_t gid);
    int (*setuid)(uid_t uid);
};

/* The real system calls. */
extern const struct cs_drop_ops cs_drop_sys;

/* Becomes uid, with gid and the n supplementary groups (n may be 0: none).
 * 0, or -errno with *step naming what failed ("setgroups", "setgid",
 * "setuid", or "setuid(0) after the drop" when root could be taken back,
 * -EPERM). Nothing after a failure runs: the caller must not exec. */
int cs_drop_privileges(const struct cs_drop_ops *ops, uid_t uid, gid_t gid, const gid_t *groups,
                       size_t n, const char **step);

#endif
