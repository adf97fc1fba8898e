/* retention: removes the directories of attempts that ended more than
 * --retention-days ago, so the state dir does not grow without end. Each
 * sweep runs on libuv's pool (retention_work.c) and skips every run that is
 * still active; the runs' and attempts' records stay in the database. The
 * first sweep runs shortly after start, once the unfinished runs are loaded,
 * then one every hour, more at once while a sweep leaves some behind. */
#ifndef CS_RETENTION_H
#define CS_RETENTION_H

#include <stdint.h>
#include <uv.h>

#include "sched_state.h"

#define CS_RETENTION_FIRST_MS (5 * 1000)
#define CS_RETENTION_EVERY_MS (60 * 60 * 1000)

struct cs_sweep;

struct cs_retention {
    struct cs_sched *sched;
    uv_timer_t timer;
    uint32_t days;
    struct cs_sweep *sweep; /* on the pool, or NULL */
};

/* Loop thread: starts sweeping; days 0 keeps every directory and starts
 * nothing. */
void cs_retention_start(struct cs_retention *r, struct cs_sched *s, uint32_t days);
/* Loop thread: stops; a sweep on the pool finishes on its own. Safe if never
 * started. */
void cs_retention_stop(struct cs_retention *r);

#endif
