/* launcher_thread: the launch thread's half of the launcher, and the state
 * both halves share. Private to launcher.c and launcher_thread.c. */
#ifndef CS_LAUNCHER_THREAD_H
#define CS_LAUNCHER_THREAD_H

#include <pthread.h>
#include <stdbool.h>

#include "launcher.h"

struct cs_launcher {
    uv_loop_t *loop;
    const char *minder_path;
    cs_launch_done_cb done_cb;
    void *ctx;
    struct cs_mailbox done_box; /* the thread posts each finished launch */
    uv_thread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct cs_queue queue; /* of struct cs_launch, guarded by lock */
    bool stop;             /* guarded by lock */
    cs_launcher_stopped_cb stopped_cb;
    void *stopped_arg;
};

/* The launch thread (arg is the launcher): spawns what is queued until
 * stop is set and the queue is empty. */
void cs_launcher_thread_main(void *arg);

#endif
