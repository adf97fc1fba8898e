/* slot_rules: what becomes of a slot that has come due, as one pure
 * function of the facts about it (misfire, deadline, overlap, pause), so
 * the rules are tested without a loop, a clock or a database. Any thread,
 * constant time.
 *
 * The rules, in order: a paused job skips it (PAUSED). A slot is missed when
 * it came due before the server could see it (while down, due_ms <
 * missed_before_ms) or a later slot is due as well (the loop was late): SKIP
 * records it MISSED; RUN_ONCE and RUN_ALL run the newest 1 or max_catchup
 * missed slots and record the older ones SUPERSEDED. Then the starting
 * deadline (DEADLINE_PASSED; it holds while the run waits in the queue
 * too, see dispatch.c), then the overlap policy with a run still
 * active: FORBID skips, QUEUE_ONE skips when one already waits
 * (QUEUE_FULL), REPLACE cancels the active runs first, ALLOW just runs. */
#ifndef CS_SLOT_RULES_H
#define CS_SLOT_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "csched/v1/scheduler.pb-c.h"

struct cs_slot_facts {
    int64_t due_ms;           /* the slot plus its jitter */
    int64_t now_ms;           /* when it is decided */
    int64_t missed_before_ms; /* slots due before this went by unseen (the server's start) */
    uint32_t later_due;       /* later slots of the job already due, counted up to catchup */
    bool paused;
    const Csched__V1__Schedule *schedule; /* misfire, max_catchup, deadline, overlap */
    uint32_t active;                      /* the job's runs not yet ended */
    uint32_t queued;                      /* of which waiting to start */
};

struct cs_slot_decision {
    Csched__V1__SlotOutcome outcome;
    Csched__V1__SkipReason reason; /* when skipped */
    bool cancel_active;            /* REPLACE: cancel the job's active runs first */
    bool catchup;                  /* a missed slot run by the misfire policy */
};

/* How many of the newest missed slots the misfire policy runs: 0 (SKIP),
 * 1 (RUN_ONCE), max_catchup or its default (RUN_ALL). */
uint32_t cs_slot_catchup_limit(const Csched__V1__Schedule *schedule);

/* Who made a run of the schedule's own (Run.triggered_by); a backfill's
 * run names its caller instead. */
#define CS_SLOT_TRIGGERED_BY "schedule"

/* The due time of the job's slot at slot_s: the slot plus its jitter (the
 * same for the same job and slot across restarts), in ms. */
int64_t cs_slot_due_ms(const Csched__V1__Job *spec, int64_t slot_s);
/* Whether a slot due at due_ms is past the schedule's starting deadline at
 * now_ms (never without one). */
bool cs_slot_deadline_passed(const Csched__V1__Schedule *schedule, int64_t due_ms, int64_t now_ms);
/* Whether run is bound by its slot's starting deadline until it starts: a
 * run the schedule made, not yet attempted. Backfill runs are not (their
 * slots are past by design), nor retries (the run has started). */
bool cs_slot_run_waits_on_deadline(const Csched__V1__Run *run);

/* The rules above. */
struct cs_slot_decision cs_slot_decide(const struct cs_slot_facts *f);

/* "missed while cschedd was down", ... : a few words for the slot's message. */
const char *cs_slot_reason_text(Csched__V1__SkipReason reason);

#endif
