/* audit: the rows of the audit trail (see audit.h). Which methods are
 * audited is access.h's table's to say. Loop thread. */
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

/* Refusals recorded per identity in a minute, at most: a caller with no
 * role is refused thousands of times a second, and each row is kept for
 * --audit-retention-days (for good by default), so its rows alone filled
 * the database's disk (18 MB in 10 s, 6 GB an hour). Past the budget one
 * row says so, and the first refusal of the next minute records how many
 * were left out. */
#define REFUSALS_PER_MINUTE 60
#define REFUSAL_WINDOW_MS 60000
/* Callers followed at once; one more takes the place of the one refused
 * longest ago. */
#define REFUSERS_MAX 64

struct refuser {
    char identity[CS_IDENTITY_NAME_MAX];
    uint64_t window_start_ms; /* uv_now */
    uint32_t recorded;        /* in this window */
    uint64_t left_out;        /* in this window */
};

/* The loop's, as every row is queued there. */
static struct refuser refusers[REFUSERS_MAX];

static struct refuser *refuser_of(const char *identity, uint64_t now_ms)
{
    struct refuser *oldest = &refusers[0];
    for (size_t i = 0; i < REFUSERS_MAX; i++) {
        if (strcmp(refusers[i].identity, identity) == 0)
            return &refusers[i];
        if (refusers[i].window_start_ms < oldest->window_start_ms)
            oldest = &refusers[i];
    }
    if (oldest->left_out > 0)
        cs_log_warn("%llu refusals of %s were not recorded in the audit trail (at most %d a "
                    "minute are)",
                    (unsigned long long)oldest->left_out, oldest->identity, REFUSALS_PER_MINUTE);
    *oldest = (struct refuser){.window_start_ms = now_ms};
    (void)snprintf(oldest->identity, sizeof(oldest->identity), "%s", identity);
    return oldest;
}

/* Records e, a refusal, within its caller's budget. */
static void record_refusal(struct cs_sched *sched, struct cs_audit_entry *e)
{
    uint64_t now_ms = uv_now(sched->loop);
    struct refuser *r = refuser_of(e->identity, now_ms);
    char note[256];

    if (now_ms - r->window_start_ms >= REFUSAL_WINDOW_MS) {
        if (r->left_out > 0) {
            (void)snprintf(note, sizeof(note),
                           "%llu more refusals of this caller in the minute before were not "
                           "recorded (at most %d a minute are)",
                           (unsigned long long)r->left_out, REFUSALS_PER_MINUTE);
            struct cs_audit_entry counted = *e;
            counted.message = note;
            cs_audit_record(sched, &counted, NULL);
        }
        r->window_start_ms = now_ms;
        r->recorded = 0;
        r->left_out = 0;
    }
    if (r->recorded > REFUSALS_PER_MINUTE) {
        r->left_out++;
        return;
    }
    if (r->recorded++ == REFUSALS_PER_MINUTE) {
        (void)snprintf(note, sizeof(note),
                       "this caller was refused %d times within a minute: more refusals are not "
                       "recorded until it ends, then how many",
                       REFUSALS_PER_MINUTE);
        e->message = note;
    }
    cs_audit_record(sched, e, NULL);
}

void cs_audit_refused_cb(void *arg, struct cs_call *call, grpc_status_code code,
                         const char *message)
{
    CS_ASSERT_LOOP();
    struct cs_sched *sched = arg;
    const char *method = short_name(call);
    if (!cs_access_changes(cs_call_method_path(call)) && code != GRPC_STATUS_PERMISSION_DENIED)
        return;
    if (!cs_store_is_accepting(sched->store)) {
        cs_log_debug("not recorded while the store refuses writes: %s by %s refused (%d)", method,
                     cs_call_identity(call)->name, (int)code);
        return;
    }
    struct cs_audit_entry e = {
        .method = method,
        .identity = cs_call_identity(call)->name,
        .job_name = "",
        .code = code,
        .message = message,
    };
    const ProtobufCMessage *req = cs_call_request_late(call);
    if (req != NULL)
        request_target(req, &e.job_name, &e.run_id);
    record_refusal(sched, &e);
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
