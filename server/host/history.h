/* history: deletes the database's history older than --retention-days (runs,
 * their attempts, hook deliveries, dependency causes, slots, events), as
 * retention.c removes the attempts' directories, so that the database does
 * not grow without end either, and each job's runs past its own limits
 * (csched.v1.History), with the directories of their command hooks'
 * deliveries and the causes that name them. What always stays is
 * store_history.c's to say. Rounds of bounded batches (one for the age,
 * one per job with limits, one of the walk of the causes past the window
 * of --after-window-seconds), on the active replica only (the others would
 * delete the same rows): the first shortly after start, then one an hour,
 * the next a second after a round in which a batch was full. */
#ifndef CS_HISTORY_H
#define CS_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "sched_state.h"
#include "store.h"

struct cs_history {
    struct cs_sched *sched;
    uv_timer_t timer;
    uint32_t days;
    bool stopped;
    int64_t before_unix_ms; /* the age's cutoff in the round in flight */
    size_t pending;         /* batches of the round not yet back, and one */
    bool full;              /* a batch of the round was full: more to go */
    uint64_t job_runs;      /* runs deleted past their jobs' limits this round */
    uint64_t causes;        /* causes deleted with those runs or by the walk this round */
    /* Where the walk of the causes past the window stands; from the start
     * again after each start (store_history.c). */
    struct cs_store_cause_key causes_from;
};

/* Loop thread: starts; days 0 deletes nothing by age (the jobs' own limits
 * still hold). */
void cs_history_start(struct cs_history *h, struct cs_sched *s, uint32_t days);
/* Loop thread: stops; a batch in flight ends unheard. Safe if never
 * started. */
void cs_history_stop(struct cs_history *h);

#endif
