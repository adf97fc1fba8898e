/* priority: the nice value of cschedd's own threads; see priority.h. */
#define CS_LOG_COMPONENT "priority"
#include "priority.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

static atomic_bool enabled;
static atomic_bool denial_logged;

void cs_priority_enable(bool high)
{
    atomic_store(&enabled, high);
}

int cs_priority_raise_this_thread(const char *thread_name)
{
    if (!atomic_load(&enabled))
        return 0;
    struct sched_param param = {.sched_priority = 0};
    /* On Linux, pid 0 and a tid name one thread, not the whole process. The
     * reset flag comes first: nothing made afterwards may inherit the nice. */
    if (sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &param) == 0 &&
        setpriority(PRIO_PROCESS, (id_t)gettid(), CS_PRIORITY_HIGH_NICE) == 0) {
        cs_log_debug("the %s thread runs at nice %d", thread_name, CS_PRIORITY_HIGH_NICE);
        return 0;
    }
    int rc = -errno;
    if (!atomic_exchange(&denial_logged, true))
        cs_log_warn("cannot run the %s thread ahead of the jobs (%s); it keeps nice 0. Grant "
                    "CAP_SYS_NICE, or pass --priority normal to silence this",
                    thread_name, strerror(-rc));
    return rc;
}
