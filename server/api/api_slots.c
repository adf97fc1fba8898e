/* api_slots: PauseJob, ResumeJob, BackfillJob and ListSlots, the methods of
 * a job's schedule. Loop thread. A pause is part of the stored job, so it
 * outlives a restart; the slots it skips are recorded PAUSED as they come
 * (slots.c), and ResumeJob runs the newest of them as the misfire policy
 * says, read back from the store. */
#define CS_LOG_COMPONENT "api"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "audit.h"
#include "dispatch.h"
#include "job.h"
#include "job_table.h"
#include "log.h"
#include "util.h"

#define SLOT_TOKEN_PREFIX "before:"
#define PAUSE_REASON_MAX 256
/* Runs one BackfillJob call makes at most. */
#define BACKFILL_MAX 1000

/* A pause or a resume waiting for its commit, with the job's pause as it
 * was before. */
struct pause_change {
    struct cs_sched *sched;
    struct cs_reply_later *later; /* its msg: the job as changed */
    bool paused;                  /* before */
    int64_t paused_unix_ms;       /* before */
    char *pause_reason;           /* before */
    uint32_t catchup;             /* resume: the paused slots to read back once committed */
};

/* The slots skipped while the job was paused, newest first: the misfire
 * policy runs the newest of them. */
struct resume {
    struct cs_sched *sched;
    char *job_name;
};

static void paused_slots_cb(void *arg, int status, Csched__V1__Slot **slots, size_t n)
{
    struct resume *r = arg;
    struct cs_job *job = cs_job_find(r->sched, r->job_name);
    int64_t now_ms = cs_now_unix_ms();
    uint32_t later = 0;

    if (status != 0)
        cs_log_warn("job %s resumed without catch-up: its slots cannot be read", r->job_name);
    /* Oldest first, each decided as a missed slot with `later` newer ones. */
    for (size_t i = n; job != NULL && !job->spec->paused && i-- > 0;) {
        if (slots[i]->skip_reason != CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED)
            continue;
        later = 0;
        for (size_t k = 0; k < i; k++)
            later += slots[k]->skip_reason == CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED;
        struct cs_slot_facts f = {
            .due_ms = slots[i]->due_unix_ms,
            .now_ms = now_ms,
            .missed_before_ms = now_ms,
            .later_due = later,
            .schedule = job->spec->schedule,
            .active = job->active,
            .queued = cs_queue_is_empty(&job->queue) ? 0 : 1,
        };
        struct cs_slot_decision d = cs_slot_decide(&f);
        if (d.outcome == CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED)
            cs_slots_record(r->sched, job, slots[i]->slot_unix_ms / 1000, now_ms, &d, NULL);
    }
    cs_store_slots_free(slots, n);
    free(r->job_name);
    free(r);
}

/* Reads back the slots job skipped since its pause of paused_unix_ms, at
 * most limit, and runs those its misfire policy says. */
static void catch_up(struct cs_sched *s, const char *job_name, int64_t paused_unix_ms,
                     uint32_t limit)
{
    struct resume *r = cs_xmalloc(sizeof(*r));
    *r = (struct resume){s, cs_xstrdup(job_name)};
    struct cs_store_slot_filter filter = {
        .job_name = job_name,
        .from_unix_ms = paused_unix_ms,
        .outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED,
        .limit = limit,
    };
    cs_store_slot_list(s->store, &filter, paused_slots_cb, r);
}

/* A pause or resume whose row did not commit is undone, as its client is
 * told it was not made and a restart would not see it; unless the job or
 * its pause changed again meanwhile. A resume that committed catches up. */
static void pause_changed_cb(void *arg, int status)
{
    struct pause_change *c = arg;
    const Csched__V1__Job *spec = (const Csched__V1__Job *)c->later->msg;
    struct cs_job *job = c->sched->stopping ? NULL : cs_job_find(c->sched, spec->name);
    bool same = job != NULL && job->spec->version == spec->version &&
                job->spec->created_unix_ms == spec->created_unix_ms &&
                job->spec->paused == spec->paused &&
                job->spec->paused_unix_ms == spec->paused_unix_ms &&
                strcmp(job->spec->pause_reason, spec->pause_reason) == 0;

    if (status != 0 && same) {
        job->spec->paused = c->paused;
        job->spec->paused_unix_ms = c->paused_unix_ms;
        cs_message_set_str(&job->spec->pause_reason, c->pause_reason);
    } else if (status == 0 && same && c->catchup > 0) {
        catch_up(c->sched, spec->name, c->paused_unix_ms, c->catchup);
    }
    cs_api_reply_cb(c->later, status);
    free(c->pause_reason);
    free(c);
}

/* Keeps job's pause as it is now, then queues its row: the reply, or the
 * undo, once it has committed or failed. */
static struct pause_change *pause_change_new(struct cs_sched *s, const struct cs_job *job)
{
    struct pause_change *c = cs_xcalloc(1, sizeof(*c));
    c->sched = s;
    c->paused = job->spec->paused;
    c->paused_unix_ms = job->spec->paused_unix_ms;
    c->pause_reason = cs_xstrdup(job->spec->pause_reason);
    return c;
}

static void pause_change_put(struct cs_call *call, struct pause_change *c, const struct cs_job *job)
{
    c->later = cs_api_reply_later(call, cs_message_copy(&job->spec->base));
    cs_api_put_job(call, c->sched, job->spec, pause_changed_cb, c);
}

void cs_api_pause_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__PauseJobRequest *req = (const Csched__V1__PauseJobRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_job *job = cs_api_find_job(call, s, req->name, "name");

    if (job == NULL)
        return;
    if (strlen(req->reason) > PAUSE_REASON_MAX) {
        cs_call_fail_field(call, -EINVAL, "reason", "reason is longer than %d bytes",
                           PAUSE_REASON_MAX);
        return;
    }
    if (cs_api_require_store(call, s) != 0)
        return;
    struct pause_change *c = pause_change_new(s, job);
    /* Pausing again keeps the first moment: the misfire policy counts from it. */
    if (!job->spec->paused)
        job->spec->paused_unix_ms = cs_now_unix_ms();
    job->spec->paused = true;
    cs_message_set_str(&job->spec->pause_reason, req->reason);
    cs_dispatch_job_paused(s, job);
    pause_change_put(call, c, job);
}

void cs_api_resume_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ResumeJobRequest *req = (const Csched__V1__ResumeJobRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_job *job = cs_api_find_job(call, s, req->name, "name");

    if (job == NULL || cs_api_require_store(call, s) != 0)
        return;
    struct pause_change *c = pause_change_new(s, job);
    /* The catch-up waits for the commit: a resume undone runs nothing. */
    if (job->spec->paused && job->schedule != NULL)
        c->catchup = cs_slot_catchup_limit(job->spec->schedule);
    job->spec->paused = false;
    job->spec->paused_unix_ms = 0;
    cs_message_set_str(&job->spec->pause_reason, "");
    pause_change_put(call, c, job);
}

/* The slots of job in [from_s, to_s], at most BACKFILL_MAX + 1 of them, into
 * *out (malloc'd): how many. */
static size_t backfill_slots(const struct cs_job *job, int64_t from_s, int64_t to_s, int64_t **out)
{
    int64_t *slots = cs_xmalloc((BACKFILL_MAX + 1) * sizeof(*slots));
    struct cs_fire fire = {.at_s = from_s - 1};
    size_t n = 0;

    while (n <= BACKFILL_MAX && cs_schedule_next(job->schedule, fire.at_s, &fire) == 0 &&
           fire.at_s <= to_s)
        slots[n++] = fire.at_s;
    *out = slots;
    return n;
}

struct backfill {
    struct cs_call *call;
    struct cs_sched *sched;
    char *job_name;
    int64_t *slots; /* ascending */
    size_t n;       /* at most BACKFILL_MAX + 1: one past says more remain */
};

static void backfill_started_cb(void *arg, int status, Csched__V1__Slot **started, size_t n_started)
{
    struct backfill *b = arg;
    struct cs_job *job = cs_job_find(b->sched, b->job_name);
    Csched__V1__BackfillJobResponse resp = CSCHED__V1__BACKFILL_JOB_RESPONSE__INIT;
    struct cs_slot_decision d = {.outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED};
    size_t n = b->n > BACKFILL_MAX ? BACKFILL_MAX : b->n;
    int64_t now_ms = cs_now_unix_ms();

    if (status != 0) {
        cs_api_fail_store(b->call, status, "reading the started slots");
        goto out;
    }
    if (job == NULL) {
        cs_call_fail(b->call, -ENOENT, "job %s was deleted", b->job_name);
        goto out;
    }
    /* The runs and their audit row commit together, as a trigger's do. */
    struct cs_store_mark mark = cs_store_mark_take(b->sched->store);
    /* started is newest first, the range oldest first: one merge. */
    for (size_t i = 0, k = n_started; i < n; i++) {
        while (k > 0 && started[k - 1]->slot_unix_ms < b->slots[i] * 1000)
            k--;
        if (k > 0 && started[k - 1]->slot_unix_ms == b->slots[i] * 1000) {
            resp.already_started++;
            continue;
        }
        cs_slots_record(b->sched, job, b->slots[i], now_ms, &d, cs_call_identity(b->call)->name);
        resp.runs_created++;
    }
    /* A call that made no run changed nothing, as a trigger answered with
     * its key's run: no row. */
    if (resp.runs_created > 0)
        cs_audit_change(b->sched, b->call, &mark, b->job_name, 0);
    resp.more = b->n > BACKFILL_MAX;
    resp.resume_from_unix_ms = resp.more ? b->slots[BACKFILL_MAX] * 1000 : 0;
    cs_call_reply(b->call, &resp.base);
out:
    cs_store_slots_free(started, n_started);
    free(b->slots);
    free(b->job_name);
    free(b);
}

void cs_api_backfill_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__BackfillJobRequest *req = (const Csched__V1__BackfillJobRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_job *job = cs_api_find_job(call, s, req->name, "name");

    if (job == NULL)
        return;
    if (job->schedule == NULL) {
        cs_call_fail_field(call, -EINVAL, "name",
                           "job %s has no schedule: it has no slots to backfill", req->name);
        return;
    }
    /* Slots after the last one decided are the engine's, not the past's. */
    int64_t to_s = req->to_unix_ms / 1000;
    if (to_s > job->slot.after_s)
        to_s = job->slot.after_s;
    if (req->from_unix_ms <= 0 || req->from_unix_ms > req->to_unix_ms) {
        cs_call_fail_field(call, -EINVAL, "from_unix_ms",
                           "from_unix_ms must be > 0 and at most to_unix_ms");
        return;
    }
    /* Slots older than the retention are deleted, started or not: their
     * runs would be made again. */
    int64_t kept_from = cs_now_unix_ms() - (int64_t)s->retention_days * 24 * 60 * 60 * 1000;
    if (s->retention_days > 0 && req->from_unix_ms < kept_from) {
        char kept[32];
        time_t kept_s = (time_t)(kept_from / 1000 + 1);
        struct tm tm;
        (void)strftime(kept, sizeof(kept), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&kept_s, &tm));
        cs_call_fail(call, -ERANGE,
                     "from_unix_ms %lld is older than the history kept (--retention-days %u): "
                     "the slots before %s are deleted, started or not, so their runs would be "
                     "made again; backfill from %s (%lld) or later, or raise --retention-days",
                     (long long)req->from_unix_ms, s->retention_days, kept, kept,
                     (long long)(kept_s * 1000));
        return;
    }
    if (cs_api_require_store(call, s) != 0)
        return;
    struct backfill *b = cs_xmalloc(sizeof(*b));
    *b = (struct backfill){.call = call, .sched = s, .job_name = cs_xstrdup(req->name)};
    /* The first slot at or after from, rounded up to a whole second. */
    b->n = backfill_slots(job, (req->from_unix_ms + 999) / 1000, to_s, &b->slots);
    struct cs_store_slot_filter filter = {
        .job_name = req->name,
        .from_unix_ms = req->from_unix_ms,
        .to_unix_ms = b->n > 0 ? b->slots[b->n - 1] * 1000 : req->from_unix_ms,
        .outcome = CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED,
        .limit = BACKFILL_MAX + 1,
    };
    cs_store_slot_list(s->store, &filter, backfill_started_cb, b);
}

struct list_slots {
    struct cs_call *call;
    uint32_t limit;
};

static void list_slots_cb(void *arg, int status, Csched__V1__Slot **slots, size_t n)
{
    struct list_slots *l = arg;
    Csched__V1__ListSlotsResponse resp = CSCHED__V1__LIST_SLOTS_RESPONSE__INIT;
    char token[64] = "";

    if (status != 0) {
        cs_api_fail_store(l->call, status, "reading the slots");
        goto out;
    }
    /* The store read one slot past the page: a token only if it is there. */
    resp.slots = slots;
    resp.n_slots = n > l->limit ? l->limit : n;
    if (n > l->limit)
        (void)snprintf(token, sizeof(token), "%s%lld", SLOT_TOKEN_PREFIX,
                       (long long)slots[l->limit - 1]->slot_unix_ms);
    resp.next_page_token = token;
    cs_call_reply(l->call, &resp.base);
out:
    cs_store_slots_free(slots, n);
    free(l);
}

/* Whether req's job (a deleted one has no labels) matches its selector;
 * false once call has been ended, with no slots or for a bad selector. */
static bool job_selected(struct cs_call *call, struct cs_sched *s,
                         const Csched__V1__ListSlotsRequest *req)
{
    struct cs_label_selector sel;
    if (cs_api_selector_parse(call, req->label_selector, &sel) != 0)
        return false;
    struct cs_job *job = cs_job_find(s, req->job_name);
    Csched__V1__Job no_labels = CSCHED__V1__JOB__INIT;
    bool selected = cs_label_selector_matches_job(&sel, job != NULL ? job->spec : &no_labels);
    cs_label_selector_free(&sel);
    if (!selected) {
        Csched__V1__ListSlotsResponse none = CSCHED__V1__LIST_SLOTS_RESPONSE__INIT;
        cs_call_reply(call, &none.base);
    }
    return selected;
}

void cs_api_list_slots(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ListSlotsRequest *req = (const Csched__V1__ListSlotsRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_store_slot_filter filter = {
        .job_name = req->job_name,
        .from_unix_ms = req->from_unix_ms,
        .to_unix_ms = req->to_unix_ms,
        .outcome = req->outcome,
        .limit = cs_api_page_size(req->page_size),
    };
    struct cs_err err;

    if (cs_job_name_validate(req->job_name, "job_name", &err) != 0) {
        cs_call_fail_err(call, &err);
        return;
    }
    /* Checked here: the database stores the outcome as a smallint, and a
     * value out of its range would fail the query as if the database had. */
    if (req->outcome < 0 || req->outcome > CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED) {
        cs_call_fail_field(call, -EINVAL, "outcome", "outcome %d is not a SlotOutcome",
                           (int)req->outcome);
        return;
    }
    if (req->from_unix_ms < 0 || req->to_unix_ms < 0) {
        cs_call_fail_field(call, -EINVAL, req->from_unix_ms < 0 ? "from_unix_ms" : "to_unix_ms",
                           "from_unix_ms and to_unix_ms may not be negative");
        return;
    }
    if (req->from_unix_ms != 0 && req->to_unix_ms != 0 && req->to_unix_ms < req->from_unix_ms) {
        cs_call_fail_field(call, -EINVAL, "to_unix_ms",
                           "to_unix_ms %lld is before from_unix_ms %lld",
                           (long long)req->to_unix_ms, (long long)req->from_unix_ms);
        return;
    }
    if (req->page_token[0] != '\0') {
        /* Digits only, as the replies write them: strtoll alone took a
         * sign, blanks and a number past its range (as its maximum). */
        int64_t before = 0;
        if (strncmp(req->page_token, SLOT_TOKEN_PREFIX, strlen(SLOT_TOKEN_PREFIX)) == 0)
            before = cs_api_token_id(req->page_token + strlen(SLOT_TOKEN_PREFIX), INT64_MAX);
        if (before <= 0) {
            cs_api_fail_token(call);
            return;
        }
        if (filter.to_unix_ms == 0 || filter.to_unix_ms >= before)
            filter.to_unix_ms = before - 1;
    }
    if (!job_selected(call, s, req))
        return;
    struct list_slots *l = cs_xmalloc(sizeof(*l));
    *l = (struct list_slots){call, filter.limit};
    filter.limit++;
    cs_store_slot_list(s->store, &filter, list_slots_cb, l);
}
