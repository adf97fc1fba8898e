/* launcher_thread: the launch threads' queue and wait. One queue guarded
 * by a mutex and a condition variable feeds them the launches: each thread
 * waits until it has something to do, then takes its share of the queue,
 * or the held launches come due, or its own launches that wait for fds
 * once their retry is due, as a group, and hands the group to its pipeline
 * (launch_group_thread.c); between groups it starts minders ahead
 * (ahead_minder.h) and sends away those past their time. All its signals
 * are blocked so that SIGTERM and SIGINT reach the loop thread; the minder
 * gets a clean mask. */
#define CS_LOG_COMPONENT "launch"
#include "launcher_thread.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "util.h"

/* Of a group, how many may need a mkdir (no copy made ahead): a mkdir
 * allocates an inode, and a group's first spawn waits for all of them. */
#define LAUNCH_MKDIR_MAX 16

/* A launch that still ran out of fds is tried again after this wait,
 * doubling from the first to the last for as long as none gets through. */
#define FD_RETRY_FIRST_MS 20
#define FD_RETRY_MAX_MS 1000

static int64_t mono_ms(void)
{
    return cs_now_mono_ns() / 1000000;
}

/* Waits on the launcher's condition until retry_at_ms (monotonic), or for
 * ever when it is 0. The lock is held. */
static void wait_until(struct cs_launcher *l, int64_t retry_at_ms)
{
    if (retry_at_ms == 0) {
        pthread_cond_wait(&l->wake, &l->lock);
        return;
    }
    struct timespec ts = {.tv_sec = retry_at_ms / 1000, .tv_nsec = retry_at_ms % 1000 * 1000000};
    (void)pthread_cond_timedwait(&l->wake, &l->lock, &ts); /* ETIMEDOUT is the point */
}

/* The earlier of two times, where 0 is none. */
static int64_t earliest(int64_t a_ms, int64_t b_ms)
{
    return a_ms == 0 || (b_ms != 0 && b_ms < a_ms) ? b_ms : a_ms;
}

/* The first held launch (there is one). The lock is held. */
static struct cs_launch *first_held(const struct cs_launcher *l)
{
    return CS_CONTAINER_OF(l->held.head, struct cs_launch, link);
}

/* Whether the first held launch is armed with its gate still shut. The
 * lock is held. */
static bool first_gate_shut(const struct cs_launcher *l)
{
    return cs_launch_state(first_held(l)) == CS_LAUNCH_ARMED;
}

/* Whether the first held launch is due. The lock is held. */
static bool held_due(const struct cs_launcher *l)
{
    return !cs_queue_is_empty(&l->held) && first_held(l)->due_unix_ms <= cs_now_unix_ms();
}

/* When the first held launch or gate is due, on the monotonic clock; 0:
 * none. The lock is held. */
static int64_t held_wake_ms(const struct cs_launcher *l)
{
    int64_t due_ms = earliest(cs_queue_is_empty(&l->held) ? 0 : first_held(l)->due_unix_ms,
                              cs_release_gates_first_due(&l->gates));
    if (due_ms == 0)
        return 0;
    int64_t wait_ms = due_ms - cs_now_unix_ms();
    return mono_ms() + (wait_ms > 0 ? wait_ms : 0);
}

/* How many queued launches this thread takes: an even share with the
 * threads that wait for work (so that a burst spreads over all of them),
 * up to a group. The lock is held. */
static size_t share_of(const struct cs_launcher *l)
{
    size_t share = (l->n_queued + l->n_idle) / (l->n_idle + 1);
    return share < CS_LAUNCH_GROUP_MAX ? share : CS_LAUNCH_GROUP_MAX;
}

/* Whether a thread has anything to do now: a launch queued or due, one
 * waiting for fds whose time has come, one to start ahead, a minder
 * started ahead to send away; or to end, at the stop, once nothing is held
 * or waits. The lock is held. */
static bool has_work(const struct cs_launcher *l, const struct cs_queue *waiting,
                     int64_t retry_at_ms, int64_t expire_at_ms)
{
    if (!cs_queue_is_empty(&l->queue) || held_due(l) || cs_launcher_gate_due(l))
        return true;
    if (!cs_queue_is_empty(waiting) && (l->stop || mono_ms() >= retry_at_ms))
        return true;
    if (expire_at_ms != 0 && mono_ms() >= expire_at_ms)
        return true;
    if (l->stop)
        return cs_queue_is_empty(&l->held);
    return !cs_queue_is_empty(&l->ahead_queue);
}

/* Takes the group a thread starts next: the held launches that are due,
 * or else those waiting for fds (when their time has come) and its share
 * of the queue. The lock is held. */
static size_t take_group(struct cs_launcher *l, struct cs_launch **group, struct cs_queue *waiting,
                         int64_t retry_at_ms)
{
    size_t n = 0;
    cs_launcher_open_gates(l);
    if (held_due(l)) {
        /* Due now: started and posted, the rest left to the others. An
         * armed one comes due a millisecond after the gates were opened:
         * its gate is opened first, as taken with it shut its minder would
         * read the end of file and give up. */
        while (n < CS_LAUNCH_GROUP_MAX && held_due(l)) {
            if (first_gate_shut(l))
                cs_launcher_open_gates(l);
            if (first_gate_shut(l))
                break; /* the clock went back: not due after all */
            group[n] = CS_CONTAINER_OF(cs_queue_pop(&l->held), struct cs_launch, link);
            CS_ASSERT(cs_launch_apply(group[n++], CS_LAUNCH_EV_GO) == 0);
        }
        if (held_due(l) && l->n_idle > 0)
            pthread_cond_signal(&l->wake);
        return n;
    }
    size_t share = share_of(l);
    /* The oldest first: those waiting for fds, when their time has come. */
    if (l->stop || mono_ms() >= retry_at_ms)
        while (n < CS_LAUNCH_GROUP_MAX && !cs_queue_is_empty(waiting))
            group[n++] = CS_CONTAINER_OF(cs_queue_pop(waiting), struct cs_launch, link);
    for (size_t taken = 0, mkdirs = 0; taken < share && n < CS_LAUNCH_GROUP_MAX;
         taken++, l->n_queued--) {
        struct cs_launch *next = CS_CONTAINER_OF(l->queue.head, struct cs_launch, link);
        mkdirs += !next->ahead_dir_made;
        if (mkdirs > LAUNCH_MKDIR_MAX)
            break;
        group[n] = CS_CONTAINER_OF(cs_queue_pop(&l->queue), struct cs_launch, link);
        CS_ASSERT(cs_launch_apply(group[n++], CS_LAUNCH_EV_TAKE) == 0);
    }
    /* A wake-up may have gone to this thread alone: the rest is the others'. */
    if (!cs_queue_is_empty(&l->queue) && l->n_idle > 0)
        pthread_cond_signal(&l->wake);
    return n;
}

void cs_launcher_thread_main(void *arg)
{
    struct cs_launcher *l = arg;
    struct cs_fd_reserve reserve;
    /* Launches out of fds, this thread's own: tried again at retry_at_ms. */
    struct cs_queue waiting;
    int64_t retry_at_ms = 0, retry_ms = FD_RETRY_FIRST_MS;
    /* When a minder started ahead is next due to be sent away; 0: none. */
    int64_t expire_at_ms = 0;
    sigset_t all;
    /* The name shows in top -H and /proc, so an operator can tell the threads apart. */
    pthread_setname_np(pthread_self(), "csched-launch");
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    cs_fd_reserve_init(&reserve);
    cs_queue_init(&waiting);

    pthread_mutex_lock(&l->lock);
    for (;;) {
        l->n_idle++;
        while (!has_work(l, &waiting, retry_at_ms, expire_at_ms))
            wait_until(
                l, earliest(earliest(cs_queue_is_empty(&waiting) ? 0 : retry_at_ms, expire_at_ms),
                            held_wake_ms(l)));
        l->n_idle--;
        if (cs_queue_is_empty(&l->queue) && cs_queue_is_empty(&waiting) &&
            cs_queue_is_empty(&l->held) && l->stop)
            break;
        if (expire_at_ms != 0 && mono_ms() >= expire_at_ms) {
            pthread_mutex_unlock(&l->lock);
            expire_at_ms = cs_ahead_minders_expire(&l->ahead, mono_ms());
            pthread_mutex_lock(&l->lock);
            continue;
        }
        /* Starts ahead come last: a start due now waits for none of them. */
        if (cs_queue_is_empty(&l->queue) && !held_due(l) && !cs_launcher_gate_due(l) && !l->stop &&
            !cs_queue_is_empty(&l->ahead_queue) &&
            (cs_queue_is_empty(&waiting) || mono_ms() < retry_at_ms)) {
            struct cs_launch *ahead =
                CS_CONTAINER_OF(cs_queue_pop(&l->ahead_queue), struct cs_launch, link);
            pthread_mutex_unlock(&l->lock);
            expire_at_ms =
                earliest(expire_at_ms, cs_ahead_minder_start(&l->ahead, l->minder_path, ahead));
            pthread_mutex_lock(&l->lock);
            continue;
        }
        bool final = l->stop;
        struct cs_launch *group[CS_LAUNCH_GROUP_MAX];
        size_t n = take_group(l, group, &waiting, retry_at_ms);
        pthread_mutex_unlock(&l->lock);
        if (cs_launch_group(l, &reserve, group, n, &waiting, final)) {
            retry_at_ms = mono_ms() + retry_ms;
            retry_ms = retry_ms * 2 < FD_RETRY_MAX_MS ? retry_ms * 2 : FD_RETRY_MAX_MS;
        } else if (cs_queue_is_empty(&waiting)) {
            retry_ms = FD_RETRY_FIRST_MS;
        }
        pthread_mutex_lock(&l->lock);
    }
    pthread_mutex_unlock(&l->lock);
    cs_fd_reserve_close(&reserve);
}
