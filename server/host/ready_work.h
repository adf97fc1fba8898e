/* ready_work: writes the ready file (--ready-file) on libuv's pool, so that
 * a slow disk never holds the loop: the bound address, written to a temp
 * file and renamed over the path, so a reader sees all of it or nothing. */
#ifndef CS_READY_WORK_H
#define CS_READY_WORK_H

#include <uv.h>

/* One write: the loop fills path and text, queues work with
 * cs_ready_write_work, and keeps the record until the after callback. */
struct cs_ready_write {
    uv_work_t work; /* work.data: this record */
    const char *path;
    char text[300];
    int rc; /* the pool's result: 0 or -errno */
};

/* Pool thread: writes text to path, into rc. A failure other than
 * -EMFILE/-ENFILE (tried again, ready.c) is logged: nothing waits on the
 * file but the person or script that asked. */
void cs_ready_write_work(uv_work_t *work);

#endif
