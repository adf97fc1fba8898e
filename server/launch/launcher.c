/* launcher: the loop's half of the launcher (see launcher.h): it queues
 * launches for the threads, hands the finished ones to done_cb from the
 * mailbox, and stops the threads at shutdown. Loop thread, except
 * cs_launch_free. */
#define CS_LOG_COMPONENT "launch"
#include "launcher.h"

#include <stdlib.h>
#include <time.h>

#include "launcher_thread.h"
#include "log.h"
#include "util.h"

static void mail_cb(struct cs_mailbox *box, struct cs_queue *mails)
{
    struct cs_launcher *l = box->data;
    for (struct cs_qlink *m; (m = cs_queue_pop(mails)) != NULL;)
        l->done_cb(CS_CONTAINER_OF(m, struct cs_launch, mail.link), l->ctx);
}

static void launcher_free(struct cs_launcher *l)
{
    for (struct cs_qlink *q; (q = cs_queue_pop(&l->ahead_queue)) != NULL;)
        cs_launch_free(CS_CONTAINER_OF(q, struct cs_launch, link));
    cs_ahead_minders_free(&l->ahead);
    cs_release_gates_free(&l->gates);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->wake);
    pthread_cond_destroy(&l->release_wake);
    free(l->threads);
    free(l);
}

static void closed_cb(uv_handle_t *handle)
{
    struct cs_launcher *l = CS_MAILBOX_OF(handle)->data;
    cs_launcher_stopped_cb stopped_cb = l->stopped_cb;
    void *arg = l->stopped_arg;
    launcher_free(l);
    if (stopped_cb != NULL)
        stopped_cb(arg);
}

/* Sets stop, wakes every thread and joins them: each launch thread
 * finishes what it took and what is queued first. */
static void stop_threads(struct cs_launcher *l, unsigned n_started)
{
    pthread_mutex_lock(&l->lock);
    l->stop = true;
    pthread_cond_broadcast(&l->wake);
    pthread_cond_signal(&l->release_wake);
    pthread_mutex_unlock(&l->lock);
    CS_ASSERT(uv_thread_join(&l->release_thread) == 0);
    for (unsigned i = 0; i < n_started; i++)
        CS_ASSERT(uv_thread_join(&l->threads[i]) == 0);
}

struct cs_launcher *cs_launcher_start(uv_loop_t *loop, const char *minder_path, unsigned n_threads,
                                      cs_launch_done_cb done_cb, void *ctx)
{
    CS_ASSERT_LOOP();
    CS_ASSERT(n_threads >= 1);
    struct cs_launcher *l = cs_xcalloc(1, sizeof(*l));
    l->loop = loop;
    l->minder_path = minder_path;
    l->done_cb = done_cb;
    l->ctx = ctx;
    l->threads = cs_xcalloc(n_threads, sizeof(*l->threads));
    cs_queue_init(&l->queue);
    cs_queue_init(&l->ahead_queue);
    cs_queue_init(&l->held);
    cs_ahead_minders_init(&l->ahead);
    CS_ASSERT(pthread_mutex_init(&l->lock, NULL) == 0);
    /* The launch threads' timed waits count in monotonic time. */
    pthread_condattr_t attr;
    CS_ASSERT(pthread_condattr_init(&attr) == 0);
    CS_ASSERT(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0);
    CS_ASSERT(pthread_cond_init(&l->wake, &attr) == 0);
    CS_ASSERT(pthread_cond_init(&l->release_wake, &attr) == 0);
    (void)pthread_condattr_destroy(&attr); /* frees nothing on Linux */
    if (cs_mailbox_init(loop, &l->done_box, mail_cb, l) != 0)
        goto err_free;
    int rc = uv_thread_create(&l->release_thread, cs_launcher_release_main, l);
    if (rc != 0) {
        cs_log_error("uv_thread_create(release) failed: %s", uv_strerror(rc));
        cs_mailbox_close(&l->done_box, closed_cb); /* frees the launcher */
        return NULL;
    }
    for (; l->n_threads < n_threads; l->n_threads++) {
        rc = uv_thread_create(&l->threads[l->n_threads], cs_launcher_thread_main, l);
        if (rc != 0) {
            cs_log_error("uv_thread_create(launch) failed: %s", uv_strerror(rc));
            goto err_stop;
        }
    }
    return l;

err_stop:
    /* Nothing was queued yet: the threads started end at once. */
    stop_threads(l, l->n_threads);
    /* The launcher is freed once the handle is closed. */
    cs_mailbox_close(&l->done_box, closed_cb);
    return NULL;
err_free:
    launcher_free(l);
    return NULL;
}

void cs_launcher_submit(struct cs_launcher *l, struct cs_launch *launch)
{
    CS_ASSERT_LOOP();
    launch->pid = -1;
    launch->pidfd = -1;
    pthread_mutex_lock(&l->lock);
    CS_ASSERT(cs_launch_apply(launch, CS_LAUNCH_EV_SUBMIT) == 0);
    cs_queue_push(&l->queue, &launch->link);
    l->n_queued++;
    pthread_cond_signal(&l->wake);
    pthread_mutex_unlock(&l->lock);
}

enum cs_revoke cs_launcher_revoke(struct cs_launcher *l, struct cs_launch *launch)
{
    CS_ASSERT_LOOP();
    /* Only a launch with a due time is taken back: one without is as good
     * as started. */
    if (launch->due_unix_ms == 0)
        return CS_REVOKE_TOO_LATE;
    pthread_mutex_lock(&l->lock);
    /* Queued or held, it stays so while the lock is held. */
    enum cs_launch_state was = cs_launch_state(launch);
    enum cs_revoke rc;
    if (cs_launch_apply(launch, CS_LAUNCH_EV_REVOKE) != 0) {
        rc = CS_REVOKE_TOO_LATE; /* being started, or its gate opened */
    } else if (cs_launch_state(launch) != CS_LAUNCH_TAKEN_BACK) {
        /* REVOKING, which the thread may already have ended: TAKEN_BACK,
         * whence no event leads, is the only state read safely here. */
        rc = CS_REVOKE_PENDING;
    } else {
        bool queued = was == CS_LAUNCH_QUEUED;
        cs_queue_remove(queued ? &l->queue : &l->held, &launch->link);
        l->n_queued -= queued;
        /* Killed before its gate opens, which needs this lock. */
        if (!queued)
            cs_ahead_minder_take_back(&l->ahead, launch->dir);
        rc = CS_REVOKE_DONE;
    }
    pthread_mutex_unlock(&l->lock);
    return rc;
}

void cs_launcher_submit_ahead(struct cs_launcher *l, struct cs_launch *launch)
{
    CS_ASSERT_LOOP();
    launch->pid = -1;
    launch->pidfd = -1;
    pthread_mutex_lock(&l->lock);
    cs_queue_push(&l->ahead_queue, &launch->link);
    pthread_cond_signal(&l->wake);
    pthread_mutex_unlock(&l->lock);
}

void cs_launcher_stop(struct cs_launcher *l, cs_launcher_stopped_cb stopped_cb, void *arg)
{
    CS_ASSERT_LOOP();
    /* The threads finish what is queued (a few spawns at most) and end. */
    stop_threads(l, l->n_threads);
    /* Deliver the last results before closing the mailbox. */
    cs_mailbox_drain(&l->done_box);
    l->stopped_cb = stopped_cb;
    l->stopped_arg = arg;
    cs_mailbox_close(&l->done_box, closed_cb);
}
