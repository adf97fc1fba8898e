/* slot_rules: the decision for one due slot; pure, any thread. */
#include "slot_rules.h"

#include <string.h>

#include "job_schedule.h"

/* FNV-1a of the job's name: its jitter differs from other jobs' and stays
 * the same across restarts. */
static uint64_t jitter_seed(const char *name)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

int64_t cs_slot_due_ms(const Csched__V1__Job *spec, int64_t slot_s)
{
    uint32_t max_s = spec->schedule != NULL ? spec->schedule->jitter_seconds : 0;
    int64_t jitter_s = max_s > 0 ? cs_schedule_jitter_s(jitter_seed(spec->name), slot_s, max_s) : 0;
    return (slot_s + jitter_s) * 1000;
}

bool cs_slot_deadline_passed(const Csched__V1__Schedule *schedule, int64_t due_ms, int64_t now_ms)
{
    return schedule != NULL && schedule->starting_deadline_seconds > 0 &&
           now_ms - due_ms > (int64_t)schedule->starting_deadline_seconds * 1000;
}

bool cs_slot_run_waits_on_deadline(const Csched__V1__Run *run)
{
    return run->slot_unix_ms != 0 && run->n_attempts == 0 &&
           strcmp(run->triggered_by, CS_SLOT_TRIGGERED_BY) == 0;
}

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
    if (cs_slot_deadline_passed(sc, f->due_ms, f->now_ms))
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
