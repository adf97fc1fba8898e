/* ready: the loop's side of the ready file (--ready-file): one write on
 * libuv's pool (ready_work.c), tried again every 100 ms while cschedd is
 * out of file descriptors (a restart adopting many minders, a flood of
 * clients), so that whoever waits for the file is not left waiting. Loop
 * thread only. */
#ifndef CS_READY_H
#define CS_READY_H

#include <stdbool.h>
#include <uv.h>

#include "ready_work.h"

struct cs_ready {
    struct cs_ready_write write;
    uv_timer_t retry;
    bool started;
    bool stopped;
    unsigned fd_waits;
};

/* Writes text (copied; cut at 299 bytes) to path, which must outlive r. */
void cs_ready_start(struct cs_ready *r, uv_loop_t *loop, const char *path, const char *text);
/* Stops trying; a write on the pool still finishes. Safe if never started. */
void cs_ready_stop(struct cs_ready *r);

#endif
