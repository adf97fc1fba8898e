/* exit_watch: the ends of the minders, seen through their pidfds.
 *
 * One epoll set of our own holds the pidfd of every live minder, and one
 * uv_poll watches that set. A minder costs a single epoll_ctl (added with
 * EPOLLONESHOT; closing its pidfd takes it out of the set), where a uv_poll
 * per pidfd cost seven syscalls (a probe add and delete, FIONBIO, an
 * invalidating delete, add, delete, delete), and the minders that ended
 * since the loop last looked come out of one epoll_wait, at most 64 a
 * turn. Loop thread only. */
#ifndef CS_EXIT_WATCH_H
#define CS_EXIT_WATCH_H

#include <uv.h>

/* Called once per added pidfd whose process has ended, with what was given
 * to cs_exit_watch_add. It may add or close pidfds, but must not close
 * another pidfd still in the set. */
typedef void (*cs_exit_cb)(void *ctx);

struct cs_exit_watch {
    int epfd;
    uv_poll_t poll;
    cs_exit_cb exit_cb;
};

/* 0 or a negative errno. */
int cs_exit_watch_init(uv_loop_t *loop, struct cs_exit_watch *w, cs_exit_cb exit_cb);
/* Watches pidfd until its process ends (one call of exit_cb with ctx) or
 * the caller closes it (no call). 0 or a negative errno. */
int cs_exit_watch_add(struct cs_exit_watch *w, int pidfd, void *ctx);
/* Stops watching; the set goes once the loop has closed its handle. */
void cs_exit_watch_close(struct cs_exit_watch *w);

#endif
