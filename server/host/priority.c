/* priority: sets the nice value of cschedd's session (see priority.h). */
#include "priority.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The kernel's switch; a missing file means no autogroup support at all. */
static bool autogroup_enabled(void)
{
    char c = '0';
    int fd = open("/proc/sys/kernel/sched_autogroup_enabled", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, &c, 1);
    (void)close(fd);
    return n == 1 && c == '1';
}

int cs_priority_set_session_nice(int nice, struct cs_err *err)
{
    /* A service manager may grant CAP_SYS_NICE as an ambient capability for
     * this one write; minders and jobs must not inherit it, or a job could
     * renice itself ahead of cschedd. Fails harmlessly where it was never
     * granted. */
    (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_NICE, 0, 0);
    if (nice == 0)
        return 0;
    if (getsid(0) != getpid())
        return cs_err_set(err, -ENOTTY,
                          "cschedd does not lead its session, so its priority over its jobs is "
                          "left as it is; start it with setsid(1), systemd or Kubernetes");
    if (!autogroup_enabled())
        return cs_err_set(err, -ENOSYS,
                          "the kernel does not group by session (sched_autogroup_enabled is off "
                          "or missing); give cschedd's cgroup a higher cpu weight instead");
    int rc = 0;
    int fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
    } else {
        char text[16];
        int len = snprintf(text, sizeof(text), "%d", nice);
        rc = write(fd, text, (size_t)len) == len ? 0 : -errno;
        (void)close(fd);
    }
    if (rc == -EPERM || rc == -EACCES)
        return cs_err_set(err, -EPERM,
                          "setting cschedd's session to nice %d needs CAP_SYS_NICE; without it "
                          "cschedd gets no more CPU than one of its jobs",
                          nice);
    if (rc != 0)
        return cs_err_set(err, rc, "cannot set cschedd's session to nice %d: %s", nice,
                          strerror(-rc));
    return 0;
}
