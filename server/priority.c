/* priority: cschedd's nice value and its jobs'; see priority.h. */
#define CS_LOG_COMPONENT "priority"
#include "priority.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

int cs_priority_raise(void)
{
    /* On Linux a nice value belongs to one thread: the tid names it. */
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), CS_PRIORITY_HIGH_NICE) == 0) {
        cs_log_debug("running at nice %d", CS_PRIORITY_HIGH_NICE);
        return 0;
    }
    int rc = -errno;
    cs_log_warn("cannot run ahead of the jobs at nice %d (%s); staying at nice %d. Grant "
                "CAP_SYS_NICE, or pass --priority normal to silence this",
                CS_PRIORITY_HIGH_NICE, strerror(-rc), getpriority(PRIO_PROCESS, 0));
    return rc;
}

int cs_priority_children_start_normal(void)
{
    struct sched_param param = {.sched_priority = 0};
    /* pid 0: the calling thread only. */
    if (sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &param) == 0)
        return 0;
    int rc = -errno;
    cs_log_warn("cannot make the minders start at nice 0: %s", strerror(-rc));
    return rc;
}
