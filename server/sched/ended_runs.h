/* ended_runs: the runs that ended last, as their end was committed, so that
 * GetRun and ReadLogs of a run that has just ended (what a client asks once
 * Watch or its polling saw the end) need no database read.
 *
 * A run is immutable once its terminal state has committed, so a copy kept
 * here never goes stale. It is added only from that commit's callback:
 * until then GetRun reads the store, whose read follows the write on the
 * same connection. The oldest go first, past CS_ENDED_RUNS_MAX runs or
 * CS_ENDED_RUNS_BYTES of their encoded size. Loop thread only. */
#ifndef CS_ENDED_RUNS_H
#define CS_ENDED_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "csched/v1/scheduler.pb-c.h"
#include "idmap.h"

enum {
    CS_ENDED_RUNS_MAX = 4096,
    CS_ENDED_RUNS_BYTES = 8 * 1024 * 1024,
};

struct cs_ended_runs {
    struct cs_idmap by_id;
    Csched__V1__Run **ring; /* oldest at head; CS_ENDED_RUNS_MAX entries */
    size_t *sizes;          /* encoded size of each, for the byte budget */
    size_t head, count;
    size_t bytes, max_bytes;
};

/* max_bytes bounds the encoded size of the runs kept (tests pass less). */
void cs_ended_runs_init(struct cs_ended_runs *e, size_t max_bytes);
/* Frees every run kept. */
void cs_ended_runs_close(struct cs_ended_runs *e);
/* Keeps run (taking it over), dropping the oldest to make room; a run larger
 * than the whole budget, one already kept, or one whose commit is answered
 * after the close (during the shutdown), is freed at once. */
void cs_ended_runs_add(struct cs_ended_runs *e, Csched__V1__Run *run);
/* Drops the runs that ended before before_unix_ms, whose rows retention
 * may delete (they are the oldest: runs are kept in the order they end). */
void cs_ended_runs_drop_ended_before(struct cs_ended_runs *e, int64_t before_unix_ms);
/* Forgets the run with this id, whose row was deleted, if it is kept. */
void cs_ended_runs_forget(struct cs_ended_runs *e, int64_t id);
/* The run with this id if it is kept, else NULL. Valid until the next add. */
const Csched__V1__Run *cs_ended_runs_get(const struct cs_ended_runs *e, int64_t id);

#endif
