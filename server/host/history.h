/* history: deletes the database's history older than --retention-days (runs,
 * their attempts, slots, events), as retention.c removes the attempts'
 * directories, so that the database does not grow without end either. What
 * always stays is store_history.c's to say. One bounded batch at a time,
 * on the active replica only (the others would delete the same rows): the
 * first shortly after start, then one an hour, the next a second later
 * while a batch deleted a full one. */
#ifndef CS_HISTORY_H
#define CS_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "sched_state.h"

struct cs_history {
    struct cs_sched *sched;
    uv_timer_t timer;
    uint32_t days;
    bool stopped;
    int64_t before_unix_ms; /* the cutoff of the batch in flight */
};

/* Loop thread: starts; days 0 keeps everything and starts nothing. */
void cs_history_start(struct cs_history *h, struct cs_sched *s, uint32_t days);
/* Loop thread: stops; a batch in flight ends unheard. Safe if never
 * started. */
void cs_history_stop(struct cs_history *h);

#endif
