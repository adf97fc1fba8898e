/* after: runs made by the ends of other jobs' runs (Job.after;
 * docs/dependencies.md, docs/design/0033-dependencies.md).
 *
 * A downstream job's runs are keyed by cause: the common origin of the
 * upstream runs, "slot:<ms>" (the slot time their schedules share) or
 * "run:<id>" (the triggered run that started the chain), carried on by
 * every run this makes (Run.cause). When an upstream run ends, the cause's
 * record gains that end, in the loop turn, and so the transaction, of the
 * end itself; once every upstream has ended as its entry asks, the run is
 * made in that same transaction, and the record says RAN with its id. An
 * upstream that ended otherwise, a paused downstream job, or a window that
 * passed decides it NOT_RUN with the reason. The record's key (job, cause)
 * in PostgreSQL makes it once per cause, through crashes and restarts: a
 * start takes back the records waiting or decided within the window, and
 * decides those whose upstreams have all ended meanwhile.
 *
 * Loop thread only. */
#ifndef CS_AFTER_H
#define CS_AFTER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "idmap.h"
#include "sched_state.h"

/* How long a cause waits for its upstreams, by default (a day); decided
 * causes are remembered as long, so that a late end makes no second run. */
#define CS_AFTER_WINDOW_MS_DEFAULT (24LL * 3600 * 1000)

struct cs_after {
    struct cs_sched *sched;
    struct cs_idmap causes; /* hash of (job, cause) -> struct cs_after_cause chain */
    size_t n_causes;
    int64_t window_ms;
    uv_timer_t timer; /* the window's look at the causes */
    bool loading;     /* their read is in flight */
    bool loaded;      /* the records of before this start are taken back */
    bool started;
    /* Who runs after whom: (upstream, downstream) name pairs sorted by
     * upstream, made again when the table of jobs has changed. */
    struct cs_after_edge *edges;
    size_t n_edges;
    uint64_t edges_generation;
    bool edges_made;
};

/* Sets a up on s (s->run_end_cb from now): 0 or a negative errno. */
int cs_after_init(struct cs_after *a, struct cs_sched *s, int64_t window_ms);
/* Takes back the records of before this start and arms the window's
 * timer, once this replica is the active one with its state loaded. */
void cs_after_start(struct cs_after *a);
/* Closes the timer and forgets every record. Safe if never started. */
void cs_after_stop(struct cs_after *a);

#endif
