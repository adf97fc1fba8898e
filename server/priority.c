/* priority: cschedd's nice value and its jobs'; see priority.h. */
#define CS_LOG_COMPONENT "priority"
#include "priority.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"

int cs_priority_current(void)
{
    /* On Linux a nice value belongs to one thread: the tid names it. -1 is
     * a valid answer, and the call cannot fail for the calling thread. */
    return getpriority(PRIO_PROCESS, (id_t)gettid());
}

int cs_priority_raise(int *jobs_nice)
{
    *jobs_nice = cs_priority_current();
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), CS_PRIORITY_HIGH_NICE) == 0) {
        cs_log_debug("running at nice %d, jobs at %d", CS_PRIORITY_HIGH_NICE, *jobs_nice);
        return 0;
    }
    int rc = -errno;
    cs_log_warn("cannot run ahead of the jobs at nice %d (%s); staying at nice %d. Grant "
                "CAP_SYS_NICE, or pass --priority normal to silence this",
                CS_PRIORITY_HIGH_NICE, strerror(-rc), *jobs_nice);
    return rc;
}
