/* exit_watch: an epoll set of pidfds behind one uv_poll; see exit_watch.h. */
#include "exit_watch.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "util.h"

/* Ends taken per loop turn. The set stays readable while more wait, so
 * they come in the next turns, with timers and other I/O between. */
#define EXITS_PER_TURN 64

static void readable_cb(uv_poll_t *poll, int status, int events)
{
    struct cs_exit_watch *w = poll->data;
    struct epoll_event ev[EXITS_PER_TURN];
    (void)events;
    CS_ASSERT(status == 0); /* an epoll set never reports an error */
    int n = epoll_wait(w->epfd, ev, EXITS_PER_TURN, 0);
    for (int i = 0; i < n; i++)
        w->exit_cb(ev[i].data.ptr);
}

int cs_exit_watch_init(uv_loop_t *loop, struct cs_exit_watch *w, cs_exit_cb exit_cb)
{
    CS_ASSERT_LOOP();
    w->exit_cb = exit_cb;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->epfd < 0)
        return -errno;
    int rc = uv_poll_init(loop, &w->poll, w->epfd);
    if (rc == 0) {
        w->poll.data = w;
        rc = uv_poll_start(&w->poll, UV_READABLE, readable_cb);
        if (rc == 0)
            return 0;
        uv_close((uv_handle_t *)&w->poll, NULL);
    }
    (void)close(w->epfd);
    return rc;
}

int cs_exit_watch_add(struct cs_exit_watch *w, int pidfd, void *ctx)
{
    CS_ASSERT_LOOP();
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.ptr = ctx};
    return epoll_ctl(w->epfd, EPOLL_CTL_ADD, pidfd, &ev) == 0 ? 0 : -errno;
}

static void closed_cb(uv_handle_t *handle)
{
    struct cs_exit_watch *w = handle->data;
    (void)close(w->epfd);
}

void cs_exit_watch_close(struct cs_exit_watch *w)
{
    CS_ASSERT_LOOP();
    uv_close((uv_handle_t *)&w->poll, closed_cb);
}
