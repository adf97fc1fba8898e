/* launch_release_thread: the thread that opens the release gates
 * (release_gate.h) at their due time. The launch threads open them too,
 * when one comes to a due launch first; but they make directories, sync
 * them and spawn minders, and a sync waits for the file system's journal,
 * which another workload's writes can make long. This thread does nothing
 * else, so a gate opens as late as a sleeping thread's wake-up and no
 * later. It ends at the stop; the launch threads open what is left.
 *
 * Where it may (root, or CAP_SYS_NICE, or an RLIMIT_RTPRIO), it runs as
 * SCHED_FIFO 1: the write that wakes a burst's minders keeps it on the
 * CPU a while, and a thread of cschedd's own woken meanwhile (a launch
 * thread's timer for the same due time) preempted it there, to get the
 * CPU back only behind the minders it had just woken. A real-time thread
 * is preempted by none of them; it sleeps but for those writes. The
 * figures are in the design records (docs/design/). */
#define CS_LOG_COMPONENT "launch"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "launcher_thread.h"
#include "log.h"
#include "util.h"

bool cs_launcher_gate_due(const struct cs_launcher *l)
{
    int64_t due_ms = cs_release_gates_first_due(&l->gates);
    return due_ms != 0 && due_ms <= cs_now_unix_ms();
}

void cs_launcher_open_gates(struct cs_launcher *l)
{
    if (!cs_launcher_gate_due(l))
        return;
    int64_t now_ms = cs_now_unix_ms();
    cs_release_gates_open(&l->gates, now_ms);
    int64_t released_ms = cs_now_unix_ms();
    for (struct cs_qlink *q = l->held.head; q != NULL; q = q->next) {
        struct cs_launch *launch = CS_CONTAINER_OF(q, struct cs_launch, link);
        if (launch->due_unix_ms > now_ms)
            break;
        if (cs_launch_state(launch) != CS_LAUNCH_ARMED)
            continue;
        launch->released_unix_ms = released_ms;
        CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_RELEASE) == 0);
    }
}

/* Waits on the release condition until the first gate is due, to the
 * microsecond, or for ever when none is shut. The lock is held. */
static void wait_for_gate(struct cs_launcher *l)
{
    int64_t due_ms = cs_release_gates_first_due(&l->gates);
    if (due_ms == 0) {
        pthread_cond_wait(&l->release_wake, &l->lock);
        return;
    }
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    int64_t wait_ns = due_ms * 1000000 - ((int64_t)real.tv_sec * 1000000000 + real.tv_nsec);
    int64_t at_ns = cs_now_mono_ns() + (wait_ns > 0 ? wait_ns : 0);
    struct timespec at = {.tv_sec = at_ns / 1000000000, .tv_nsec = at_ns % 1000000000};
    (void)pthread_cond_timedwait(&l->release_wake, &l->lock, &at); /* ETIMEDOUT is the point */
}

void cs_launcher_release_main(void *arg)
{
    struct cs_launcher *l = arg;
    sigset_t all;
    pthread_setname_np(pthread_self(), "csched-release");
    struct sched_param realtime = {.sched_priority = 1};
    int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &realtime);
    if (rc != 0)
        cs_log_info("the release thread runs under the normal policy, not SCHED_FIFO (%s): a "
                    "burst's release may wait for other threads",
                    strerror(rc));
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&l->lock);
    while (!l->stop) {
        if (!cs_launcher_gate_due(l)) {
            wait_for_gate(l);
            continue;
        }
        cs_launcher_open_gates(l);
        /* The launch threads take the released launches and post them. */
        if (l->n_idle > 0)
            pthread_cond_broadcast(&l->wake);
    }
    pthread_mutex_unlock(&l->lock);
}
