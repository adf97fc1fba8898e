/* slot_rules: the decision for one due slot; pure, any thread. */
#include "slot_rules.h"

#include "job_schedule.h"

uint32_t cs_slot_catchup_limit(const Csched__V1__Schedule *schedule)
{
    switch (schedule->misfire) {
    case CSCHED__V1__MISFIRE__MISFIRE_RUN_ONCE:
        return 1;
    case CSCHED__V1__MISFIRE__MISFIRE_RUN_ALL:
        return schedule->max_catchup > 0 ? schedule->max_catchup : CS_SCHEDULE_CATCHUP_DEFAULT;
    default:
        return 0;
    }
}

static struct cs_slot_decision skipped(Csched__V1__SkipReason reason)
{
    return (struct cs_slot_decision){.outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED,
                                     .reason = reason};
}

struct cs_slot_decision cs_slot_decide(const struct cs_slot_facts *f)
{
    const Csched__V1__Schedule *sc = f->schedule;
    struct cs_slot_decision d = {.outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED};

    if (f->paused)
        return skipped(CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED);
    if (f->due_ms < f->missed_before_ms || f->later_due > 0) {
        uint32_t limit = cs_slot_catchup_limit(sc);
        if (limit == 0)
            return skipped(CSCHED__V1__SKIP_REASON__SKIP_REASON_MISSED);
        if (f->later_due >= limit)
            return skipped(CSCHED__V1__SKIP_REASON__SKIP_REASON_SUPERSEDED);
        d.catchup = true;
    }
    if (sc->starting_deadline_seconds > 0 &&
        f->now_ms - f->due_ms > (int64_t)sc->starting_deadline_seconds * 1000)
        return skipped(CSCHED__V1__SKIP_REASON__SKIP_REASON_DEADLINE_PASSED);
    if (f->active == 0)
        return d;
    switch (sc->overlap) {
    case CSCHED__V1__OVERLAP__OVERLAP_FORBID:
        return skipped(CSCHED__V1__SKIP_REASON__SKIP_REASON_OVERLAP_FORBIDDEN);
    case CSCHED__V1__OVERLAP__OVERLAP_QUEUE_ONE:
        if (f->queued > 0)
            return skipped(CSCHED__V1__SKIP_REASON__SKIP_REASON_QUEUE_FULL);
        return d;
    case CSCHED__V1__OVERLAP__OVERLAP_REPLACE:
        d.cancel_active = true;
        return d;
    default:
        return d;
    }
}

const char *cs_slot_reason_text(Csched__V1__SkipReason reason)
{
    switch (reason) {
    case CSCHED__V1__SKIP_REASON__SKIP_REASON_MISSED:
        return "missed: it came due while cschedd was down or too busy, and misfire is skip";
    case CSCHED__V1__SKIP_REASON__SKIP_REASON_OVERLAP_FORBIDDEN:
        return "a run of the job was still active and overlap is forbid";
    case CSCHED__V1__SKIP_REASON__SKIP_REASON_DEADLINE_PASSED:
        return "it could not start within starting_deadline_seconds";
    case CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED:
        return "the job was paused";
    case CSCHED__V1__SKIP_REASON__SKIP_REASON_SUPERSEDED:
        return "missed, and a newer slot ran in its place (misfire run_once, or past max_catchup)";
    case CSCHED__V1__SKIP_REASON__SKIP_REASON_QUEUE_FULL:
        return "a run of the job was already waiting and overlap is queue_one";
    default:
        return "";
    }
}
