/* audit: the rows of the audit trail (see audit.h): changes, refusals within
 * their budget (audit_budget.h) and the summaries of the rest, expiry.
 * Which methods are audited is access.h's table's to say. Loop thread. */
#define CS_LOG_COMPONENT "audit"
#include "audit.h"

#include <stdio.h>
#include <string.h>

#include "access.h"
#include "identity.h"
#include "job.h"
#include "log.h"
#include "utf8.h"
#include "util.h"

/* The field of msg named name, if it is a single one of type, else NULL. */
static const ProtobufCFieldDescriptor *field_of(const ProtobufCMessage *msg, const char *name,
                                                ProtobufCType type)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
    return f != NULL && f->type == type && f->label != PROTOBUF_C_LABEL_REPEATED ? f : NULL;
}

#define FIELD_AT(msg, f, type) (*(type const *)((const char *)(msg) + (f)->offset))

/* The job and the run req names, by the fields the API names them with in
 * every request: job_name, name (a job's), job (its name) and run_id. Read
 * by name rather than per method, so that a method added later has its
 * refusals' target too. */
static void request_target(const ProtobufCMessage *req, const char **job_name, int64_t *run_id)
{
    const ProtobufCFieldDescriptor *f;
    if ((f = field_of(req, "job_name", PROTOBUF_C_TYPE_STRING)) != NULL ||
        (f = field_of(req, "name", PROTOBUF_C_TYPE_STRING)) != NULL) {
        *job_name = FIELD_AT(req, f, char *);
    } else if ((f = field_of(req, "job", PROTOBUF_C_TYPE_MESSAGE)) != NULL) {
        const ProtobufCMessage *job = FIELD_AT(req, f, ProtobufCMessage *);
        if (job != NULL && (f = field_of(job, "name", PROTOBUF_C_TYPE_STRING)) != NULL)
            *job_name = FIELD_AT(job, f, char *);
    }
    if ((f = field_of(req, "run_id", PROTOBUF_C_TYPE_INT64)) != NULL)
        *run_id = FIELD_AT(req, f, int64_t);
    if (*job_name == NULL)
        *job_name = "";
}

/* "CreateJob" of "/csched.v1.Scheduler/CreateJob". */
static const char *short_name(const struct cs_call *call)
{
    const char *path = cs_call_method_path(call);
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

void cs_audit_record(struct cs_sched *sched, const struct cs_audit_entry *entry,
                     const struct cs_store_mark *tie)
{
    CS_ASSERT_LOOP();
    Csched__V1__AuditEntry row = CSCHED__V1__AUDIT_ENTRY__INIT;
    /* A refused call's job name is the client's, of any length: past a
     * btree entry's limit the row, and the batch it shares, would fail.
     * No job has a longer name. One byte more than kept tells the clip
     * whether the cut falls inside a character. */
    char job_name[CS_JOB_NAME_MAX + 2];
    (void)snprintf(job_name, sizeof(job_name), "%s",
                   entry->job_name != NULL ? entry->job_name : "");
    cs_utf8_clip(job_name, CS_JOB_NAME_MAX);
    row.id = sched->next_audit_id++;
    row.at_unix_ms = cs_now_unix_ms();
    row.method = (char *)entry->method;
    row.identity = (char *)entry->identity;
    row.job_name = job_name;
    row.run_id = entry->run_id;
    row.code = (int32_t)entry->code;
    row.message = (char *)(entry->message != NULL ? entry->message : "");
    cs_store_audit_put(sched->store, &row, tie, NULL, NULL);
}

void cs_audit_change(struct cs_sched *sched, const struct cs_call *call,
                     const struct cs_store_mark *since, const char *job_name, int64_t run_id)
{
    CS_ASSERT_LOOP();
    struct cs_audit_entry e = {
        .method = short_name(call),
        .identity = cs_call_identity(call)->name,
        .job_name = job_name,
        .run_id = run_id,
        .code = GRPC_STATUS_OK,
    };
    cs_audit_record(sched, &e, since);
}

static void summary_cb(void *arg, const struct cs_audit_summary *summary)
{
    struct cs_audit_refusals *r = arg;
    char note[CS_IDENTITY_NAME_MAX + 200];
    if (summary->last_unknown == NULL)
        (void)snprintf(note, sizeof(note),
                       "%llu more refusals of this caller within a minute were not recorded (at "
                       "most %d a minute are)",
                       (unsigned long long)summary->left_out, CS_AUDIT_BUDGET_PER_CALLER);
    else
        (void)snprintf(note, sizeof(note),
                       "%llu more refusals of callers without an identity within a minute were not "
                       "recorded (at most %d a minute are, of all of them together); the last was "
                       "of %s",
                       (unsigned long long)summary->left_out, CS_AUDIT_BUDGET_UNKNOWN,
                       summary->last_unknown);
    if (!r->recording || !cs_store_is_accepting(r->sched->store)) {
        cs_log_warn("%s: %s (not in the audit trail %s)", summary->identity, note,
                    r->recording ? "while the store refuses writes"
                                 : "of a replica that does not hold the state");
        return;
    }
    struct cs_audit_entry e = {
        .method = summary->method,
        .identity = summary->identity,
        .job_name = "",
        .code = (grpc_status_code)summary->code,
        .message = note,
    };
    cs_audit_record(r->sched, &e, NULL);
}

static void minute_ended_cb(uv_timer_t *timer);

/* Arms the timer for the end of the minute, when its summaries are due. */
static void time_summaries(struct cs_audit_refusals *r)
{
    uint64_t due = cs_audit_budget_due_ms(&r->budget), now = uv_now(r->sched->loop);
    if (due == 0 || r->timing || r->stopped)
        return;
    r->timing = true;
    CS_ASSERT(uv_timer_start(&r->timer, minute_ended_cb, due > now ? due - now : 0, 0) == 0);
}

static void minute_ended_cb(uv_timer_t *timer)
{
    struct cs_audit_refusals *r = timer->data;
    r->timing = false;
    cs_audit_budget_roll(&r->budget, uv_now(r->sched->loop), summary_cb, r);
    time_summaries(r);
}

void cs_audit_refusals_start(struct cs_audit_refusals *r, struct cs_sched *sched)
{
    CS_ASSERT_LOOP();
    memset(r, 0, sizeof(*r));
    r->sched = sched;
    cs_audit_budget_init(&r->budget, uv_now(sched->loop));
    CS_ASSERT(uv_timer_init(sched->loop, &r->timer) == 0);
    r->timer.data = r;
}

void cs_audit_refusals_record(struct cs_audit_refusals *r)
{
    CS_ASSERT_LOOP();
    r->recording = true;
}

void cs_audit_refusals_stop(struct cs_audit_refusals *r)
{
    CS_ASSERT_LOOP();
    if (r->sched == NULL || r->stopped)
        return;
    r->stopped = true;
    /* The minute ends early: what it left out is told before the store closes. */
    cs_audit_budget_end(&r->budget, summary_cb, r);
    uv_close((uv_handle_t *)&r->timer, NULL);
}

void cs_audit_refused_cb(void *arg, struct cs_call *call, grpc_status_code code,
                         const char *message)
{
    CS_ASSERT_LOOP();
    struct cs_audit_refusals *r = arg;
    const struct cs_identity *who = cs_call_identity(call);
    const char *method = short_name(call);
    if (!cs_access_changes(cs_call_method_path(call)) && code != GRPC_STATUS_PERMISSION_DENIED)
        return;
    if (r->recording && !cs_store_is_accepting(r->sched->store)) {
        cs_log_debug("not recorded while the store refuses writes: %s by %s refused (%d)", method,
                     who->name, (int)code);
        return;
    }
    struct cs_audit_refusal refusal = {who->name, who->known, method, (int)code};
    bool recorded =
        cs_audit_budget_take(&r->budget, &refusal, uv_now(r->sched->loop), summary_cb, r);
    time_summaries(r);
    if (!recorded)
        return;
    if (!r->recording) {
        cs_log_info("refused on a replica that does not hold the state (not in the audit "
                    "trail): %s by %s: %s (%d)",
                    method, who->name, message, (int)code);
        return;
    }
    struct cs_audit_entry e = {
        .method = method,
        .identity = who->name,
        .job_name = "",
        .code = code,
        .message = message,
    };
    /* Unpacked only now, for a refusal recorded: one left out costs nothing. */
    const ProtobufCMessage *req = cs_call_request_late(call);
    if (req != NULL)
        request_target(req, &e.job_name, &e.run_id);
    cs_audit_record(r->sched, &e, NULL);
}

/* The first expiry, shortly after start; then one an hour, and the next a
 * second later when one deleted a full batch. */
#define EXPIRE_FIRST_MS (5 * 1000)
#define EXPIRE_EVERY_MS (60 * 60 * 1000)
#define EXPIRE_AGAIN_MS 1000

static void expiry_timer_cb(uv_timer_t *timer);

static void expired_cb(void *arg, int status, int64_t n)
{
    struct cs_audit_expiry *x = arg;
    if (x->stopped)
        return;
    if (status == 0 && n > 0)
        cs_log_info("deleted %lld audit rows older than %u days", (long long)n, x->days);
    uint64_t next =
        status == 0 && n >= CS_STORE_AUDIT_EXPIRE_ROWS ? EXPIRE_AGAIN_MS : EXPIRE_EVERY_MS;
    CS_ASSERT(uv_timer_start(&x->timer, expiry_timer_cb, next, 0) == 0);
}

static void expiry_timer_cb(uv_timer_t *timer)
{
    struct cs_audit_expiry *x = timer->data;
    int64_t before = cs_now_unix_ms() - (int64_t)x->days * 24 * 60 * 60 * 1000;
    cs_store_audit_expire(x->sched->store, before, expired_cb, x);
}

void cs_audit_expiry_start(struct cs_audit_expiry *x, struct cs_sched *sched, uint32_t days)
{
    CS_ASSERT_LOOP();
    memset(x, 0, sizeof(*x));
    x->sched = sched;
    x->days = days;
    if (days == 0)
        return;
    CS_ASSERT(uv_timer_init(sched->loop, &x->timer) == 0);
    x->timer.data = x;
    CS_ASSERT(uv_timer_start(&x->timer, expiry_timer_cb, EXPIRE_FIRST_MS, 0) == 0);
}

void cs_audit_expiry_stop(struct cs_audit_expiry *x)
{
    CS_ASSERT_LOOP();
    if (x->sched == NULL || x->days == 0 || x->stopped)
        return;
    x->stopped = true;
    uv_close((uv_handle_t *)&x->timer, NULL);
}
