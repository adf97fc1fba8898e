/* launcher_thread: the launch threads' half of the launcher, and the state
 * all of them share. Private to launcher.c and launcher_thread.c. */
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
    struct cs_mailbox done_box; /* the threads post each finished launch */
    uv_thread_t *threads;       /* n_threads of them, all started */
    unsigned n_threads;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    /* Guarded by lock: the launches not yet taken (n_queued of them), how
     * many threads wait for work, and whether to stop. */
    struct cs_queue queue;
    size_t n_queued;
    unsigned n_idle;
    bool stop;
    cs_launcher_stopped_cb stopped_cb;
    void *stopped_arg;
};

/* A launch thread (arg is the launcher): spawns its share of what is queued
 * until stop is set and the queue is empty. */
void cs_launcher_thread_main(void *arg);

#endif
