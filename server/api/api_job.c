/* api_job: CreateJob, UpdateJob, GetJob, ListJobs, DeleteJob. Jobs live in
 * the loop's sorted table; every change is written and answered on commit.
 * A job that names a run-as user or group, or a time zone no job uses yet,
 * is checked on the pool first. */
#define CS_LOG_COMPONENT "api"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "audit.h"
#include "dispatch.h"
#include "job.h"
#include "job_after.h"
#include "job_limits.h"
#include "job_table.h"
#include "log.h"
#include "pump.h"
#include "runas.h"
#include "util.h"
#include "zone_load.h"

#define JOB_TOKEN_PREFIX "after:"

/* Clears the output-only fields a client may have sent. */
static void clear_output(Csched__V1__Job *spec)
{
    for (size_t i = 0; i < spec->n_next_fires; i++)
        csched__v1__fire_time__free_unpacked(spec->next_fires[i], NULL);
    free(spec->next_fires);
    spec->next_fires = NULL;
    spec->n_next_fires = 0;
    spec->paused = false;
    spec->paused_unix_ms = 0;
    cs_message_set_str(&spec->pause_reason, "");
}

/* A stored copy of a client's job with the output fields set: made by call,
 * replacing old (NULL for a new job), whose pause it keeps. */
static Csched__V1__Job *spec_copy(const struct cs_call *call, const Csched__V1__Job *in,
                                  const Csched__V1__Job *old)
{
    Csched__V1__Job *spec = (Csched__V1__Job *)cs_message_copy(&in->base);
    const char *who = cs_call_identity(call)->name;
    clear_output(spec);
    if (old != NULL) {
        spec->paused = old->paused;
        spec->paused_unix_ms = old->paused_unix_ms;
        cs_message_set_str(&spec->pause_reason, old->pause_reason);
    }
    spec->version = old != NULL ? old->version + 1 : 1;
    spec->updated_unix_ms = cs_now_unix_ms();
    spec->created_unix_ms = old != NULL ? old->created_unix_ms : spec->updated_unix_ms;
    cs_message_set_str(&spec->created_by, old != NULL ? old->created_by : who);
    cs_message_set_str(&spec->updated_by, who);
    return spec;
}

void cs_api_put_job(struct cs_call *call, struct cs_sched *s, const Csched__V1__Job *spec,
                    cs_store_done_cb cb, void *arg)
{
    struct cs_store_mark mark = cs_store_mark_take(s->store);
    cs_store_job_put(s->store, spec, s->next_run_id, cb, arg);
    cs_audit_change(s, call, &mark, spec->name, 0);
}

struct job_created {
    struct cs_sched *sched;
    struct cs_reply_later *later; /* its msg: the job as created */
};

/* A new job whose row did not commit is not kept: its client is told it
 * was not made, and a restart would not find it. Unless it was deleted or
 * made again meanwhile, or has runs already (which it then keeps). */
static void job_created_cb(void *arg, int status)
{
    struct job_created *c = arg;
    const Csched__V1__Job *spec = (const Csched__V1__Job *)c->later->msg;
    /* At shutdown the jobs go with the server: nothing is left to undo. */
    struct cs_job *job =
        status != 0 && !c->sched->stopping ? cs_job_find(c->sched, spec->name) : NULL;
    if (job != NULL && job->spec->created_unix_ms == spec->created_unix_ms &&
        job->spec->version == spec->version) {
        if (job->active == 0) {
            cs_slots_job_removed(c->sched, job);
            cs_job_remove(c->sched, job);
        } else {
            cs_log_warn("job %s is kept though its row did not commit: it has %u runs", spec->name,
                        job->active);
        }
    }
    cs_api_reply_cb(c->later, status);
    free(c);
}

/* 0, or a negative errno once call has been failed with why. */
static int check_job(struct cs_call *call, const struct cs_sched *s, const Csched__V1__Job *job)
{
    struct cs_err err;
    if (job == NULL) {
        cs_call_fail_field(call, -EINVAL, "job", "job is required");
        return -EINVAL;
    }
    if (cs_job_validate(job, &err) != 0 || cs_job_after_validate(job, &err) != 0 ||
        cs_job_limits_check(job->resources, &s->cgroups, s->limits_strict, &err) != 0) {
        cs_call_fail_err(call, &err);
        return err.code;
    }
    return 0;
}

static const Csched__V1__Job *job_lookup(void *ctx, const char *name)
{
    const struct cs_job *job = cs_job_find(ctx, name);
    return job != NULL ? job->spec : NULL;
}

/* 0, or -EINVAL once call has been failed naming the cycle that job's
 * after list would close among the jobs as they stand. */
static int check_cycle(struct cs_call *call, struct cs_sched *s, const Csched__V1__Job *job)
{
    struct cs_err err;
    if (cs_job_after_find_cycle(job, job_lookup, s, &err) == 0)
        return 0;
    cs_call_fail_err(call, &err);
    return err.code;
}

/* CreateJob and UpdateJob once the job is valid and may run as it asks. */
typedef void (*job_change_fn)(struct cs_call *call, struct cs_sched *s, const Csched__V1__Job *job,
                              uint64_t expected_version);

/* A change waiting for a check on the pool. The request (and so job) is
 * borrowed until the call ends, which it does only once answered. */
struct job_change {
    struct cs_call *call;
    struct cs_sched *sched;
    const Csched__V1__Job *job;
    uint64_t expected_version;
    job_change_fn change;
};

/* A change waiting for its schedule's zone to be read on the pool. */
static void zone_read_cb(void *arg, int status, const struct cs_err *err)
{
    struct job_change *c = arg;
    if (status == 0)
        c->change(c->call, c->sched, c->job, c->expected_version);
    else if (status == -EINVAL)
        cs_call_fail_field(c->call, status, "job.schedule.time_zone", "job.schedule.time_zone: %s",
                           err->msg);
    else
        cs_call_fail(c->call, status, "job.schedule.time_zone: %s", err->msg);
    free(c);
}

/* 0 with job's parsed schedule in *schedule (NULL: none), or a negative
 * errno once call has been failed, or handed to the pool to read the
 * schedule's zone (-EAGAIN: change runs again once it is read). */
static int parse_schedule(struct cs_call *call, struct cs_sched *s, const Csched__V1__Job *job,
                          uint64_t expected_version, job_change_fn change,
                          struct cs_schedule **schedule)
{
    struct cs_err err;
    int rc = cs_job_schedule_parse(&s->zones, job, schedule, &err);
    if (rc == -EAGAIN) {
        struct job_change *c = cs_xmalloc(sizeof(*c));
        *c = (struct job_change){call, s, job, expected_version, change};
        cs_zone_load_one(s, job->schedule->time_zone, zone_read_cb, c);
    } else if (rc != 0) {
        cs_call_fail_err(call, &err);
    }
    return rc;
}

static void create_job(struct cs_call *call, struct cs_sched *s, const Csched__V1__Job *in,
                       uint64_t expected_version)
{
    struct cs_schedule *schedule;
    if (parse_schedule(call, s, in, expected_version, create_job, &schedule) != 0)
        return;
    if (cs_job_find(s, in->name) != NULL) {
        cs_call_fail(call, -EEXIST, "job %s already exists: use UpdateJob to change it", in->name);
        goto err_free_schedule;
    }
    if (check_cycle(call, s, in) != 0)
        goto err_free_schedule;
    if (cs_api_require_store(call, s) != 0)
        goto err_free_schedule;
    struct cs_job *job = cs_job_insert(s, spec_copy(call, in, NULL));
    job->schedule = schedule;
    cs_slots_job_changed(s, job, job->spec->created_unix_ms / 1000);
    struct job_created *c = cs_xmalloc(sizeof(*c));
    c->sched = s;
    c->later = cs_api_reply_later(call, cs_message_copy(&job->spec->base));
    cs_api_put_job(call, s, job->spec, job_created_cb, c);
    return;

err_free_schedule:
    free(schedule);
}

struct job_updated {
    struct cs_sched *sched;
    struct cs_reply_later *later; /* its msg: the job as updated */
    Csched__V1__Job *old;         /* the job before */
};

/* Puts the job's spec before an update back, with its schedule: 0, or
 * -EAGAIN when that schedule's zone was never read (its job did not fire). */
static int restore_spec(struct cs_sched *s, struct cs_job *job, Csched__V1__Job *old)
{
    struct cs_schedule *schedule;
    struct cs_err err;
    int rc = cs_job_schedule_parse(&s->zones, old, &schedule, &err);
    if (rc != 0)
        return rc;
    cs_job_replace_spec(s, job, old);
    free(job->schedule);
    job->schedule = schedule;
    cs_slots_job_changed(s, job, job->slot.after_s);
    cs_pump_job_changed(s, job);
    return 0;
}

/* An update whose row did not commit is undone, as its client is told it
 * was not made and a restart would not see it; unless the job changed
 * again meanwhile. */
static void job_updated_cb(void *arg, int status)
{
    struct job_updated *u = arg;
    const Csched__V1__Job *spec = (const Csched__V1__Job *)u->later->msg;
    struct cs_job *job =
        status != 0 && !u->sched->stopping ? cs_job_find(u->sched, spec->name) : NULL;
    if (job != NULL && job->spec->version == spec->version &&
        job->spec->updated_unix_ms == spec->updated_unix_ms) {
        if (restore_spec(u->sched, job, u->old) == 0)
            u->old = NULL;
        else
            cs_log_warn("job %s keeps version %llu though it did not commit: the zone of its "
                        "version before was never read",
                        spec->name, (unsigned long long)spec->version);
    }
    if (u->old != NULL)
        protobuf_c_message_free_unpacked(&u->old->base, NULL);
    cs_api_reply_cb(u->later, status);
    free(u);
}

static void update_job(struct cs_call *call, struct cs_sched *s, const Csched__V1__Job *in,
                       uint64_t expected_version)
{
    struct cs_schedule *schedule;
    if (parse_schedule(call, s, in, expected_version, update_job, &schedule) != 0)
        return;
    struct cs_job *job = cs_job_find(s, in->name);
    if (job == NULL) {
        cs_call_fail(call, -ENOENT, "job %s does not exist: use CreateJob to make it", in->name);
        goto err_free_schedule;
    }
    if (expected_version != 0 && expected_version != job->spec->version) {
        cs_call_fail(
            call, -EBUSY, "job %s is at version %llu, not the expected_version %llu: read it again",
            in->name, (unsigned long long)job->spec->version, (unsigned long long)expected_version);
        goto err_free_schedule;
    }
    if (check_cycle(call, s, in) != 0)
        goto err_free_schedule;
    if (cs_api_require_store(call, s) != 0)
        goto err_free_schedule;
    struct job_updated *u = cs_xmalloc(sizeof(*u));
    u->sched = s;
    u->old = (Csched__V1__Job *)cs_message_copy(&job->spec->base);
    cs_job_replace_spec(s, job, spec_copy(call, in, job->spec));
    free(job->schedule);
    job->schedule = schedule;
    /* A new schedule starts from now: the old one's slots are not missed. */
    int64_t now_s = job->spec->updated_unix_ms / 1000;
    cs_slots_job_changed(s, job, job->slot.after_s > now_s ? job->slot.after_s : now_s);
    /* Its own limit may have changed. */
    cs_pump_job_changed(s, job);
    u->later = cs_api_reply_later(call, cs_message_copy(&job->spec->base));
    cs_api_put_job(call, s, job->spec, job_updated_cb, u);
    return;

err_free_schedule:
    free(schedule);
}

static void runas_checked_cb(void *arg, const struct cs_err *err)
{
    struct job_change *c = arg;
    if (err->code != 0)
        cs_call_fail_err(c->call, err);
    else /* checked again: the table may have changed meanwhile */
        c->change(c->call, c->sched, c->job, c->expected_version);
    free(c);
}

/* Checks job, then its run-as user and group (NSS lookups, so on the pool,
 * when the job names any), then makes the change. */
static void change_job(struct cs_call *call, struct cs_sched *s, const Csched__V1__Job *job,
                       uint64_t expected_version, job_change_fn change)
{
    if (check_job(call, s, job) != 0)
        return;
    if (job->run_as_user[0] == '\0' && job->run_as_group[0] == '\0') {
        change(call, s, job, expected_version);
        return;
    }
    struct job_change *c = cs_xmalloc(sizeof(*c));
    *c = (struct job_change){call, s, job, expected_version, change};
    cs_runas_check(s->loop, job->run_as_user, job->run_as_group, s->job_user, runas_checked_cb, c);
}

void cs_api_create_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__CreateJobRequest *req = (const Csched__V1__CreateJobRequest *)request;
    change_job(call, ctx, req->job, 0, create_job);
}

void cs_api_update_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__UpdateJobRequest *req = (const Csched__V1__UpdateJobRequest *)request;
    change_job(call, ctx, req->job, req->expected_version, update_job);
}

/* A shallow copy of job's spec into *shown, with its next n fire times in
 * fires (pointed at by ptrs, their text in text): the stored spec keeps no
 * next_fires. n at most CS_JOB_NEXT_FIRES_MAX; one fire costs a table lookup. */
static void show_job(const struct cs_job *job, int64_t now_s, size_t n, Csched__V1__Job *shown,
                     Csched__V1__FireTime *fires, Csched__V1__FireTime **ptrs, char (*text)[40])
{
    *shown = *job->spec;
    if (job->schedule == NULL)
        return;
    shown->n_next_fires = cs_job_next_fires(job->schedule, now_s, fires, text, n);
    for (size_t i = 0; i < shown->n_next_fires; i++)
        ptrs[i] = &fires[i];
    shown->next_fires = ptrs;
}

void cs_api_get_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__GetJobRequest *req = (const Csched__V1__GetJobRequest *)request;
    struct cs_job *job = cs_api_find_job(call, ctx, req->name, "name");
    if (job == NULL)
        return;
    Csched__V1__Job shown;
    Csched__V1__FireTime fires[CS_JOB_NEXT_FIRES_MAX], *ptrs[CS_JOB_NEXT_FIRES_MAX];
    char text[CS_JOB_NEXT_FIRES_MAX][40];
    size_t n = req->next_fires == 0 ? CS_JOB_NEXT_FIRES : req->next_fires;
    show_job(job, cs_now_unix_ms() / 1000, n < CS_JOB_NEXT_FIRES_MAX ? n : CS_JOB_NEXT_FIRES_MAX,
             &shown, fires, ptrs, text);
    cs_call_reply(call, &shown.base);
}

/* A job of a ListJobs page, shown with its next fire time only. */
struct listed {
    Csched__V1__Job job;
    Csched__V1__FireTime fire, *fire_ptr;
    char text[1][40];
};

/* Jobs a ListJobs with a selector looks at at most, matching or not: the
 * page then ends early, its token after the last one looked at, so that one
 * call never holds the loop for a walk of a huge table. */
#define LIST_JOBS_SCAN_MAX 10000

/* Whether job is in state (ListJobsRequest.state), as the loop knows it. */
static bool job_in_state(const struct cs_job *job, Csched__V1__JobStateFilter state)
{
    Csched__V1__RunState last = job->last_ended;
    switch (state) {
    case CSCHED__V1__JOB_STATE_FILTER__JOB_STATE_FILTER_RUNNING:
        return job->slots > 0;
    case CSCHED__V1__JOB_STATE_FILTER__JOB_STATE_FILTER_PAUSED:
        return job->spec->paused;
    case CSCHED__V1__JOB_STATE_FILTER__JOB_STATE_FILTER_LAST_FAILED:
        return last == CSCHED__V1__RUN_STATE__RUN_STATE_FAILED ||
               last == CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT ||
               last == CSCHED__V1__RUN_STATE__RUN_STATE_LOST;
    case CSCHED__V1__JOB_STATE_FILTER__JOB_STATE_FILTER_NEVER_RUN:
        return last == CSCHED__V1__RUN_STATE__RUN_STATE_UNSPECIFIED && job->slots == 0;
    default:
        return true;
    }
}

/* What a ListJobs page holds: the jobs the selector and the state match. */
struct job_filter {
    struct cs_label_selector sel;
    Csched__V1__JobStateFilter state;
};

static bool job_filter_matches(const struct job_filter *f, const struct cs_job *job)
{
    return cs_label_selector_matches_job(&f->sel, job->spec) && job_in_state(job, f->state);
}

/* Reads req's filters into f; 0, or -EINVAL with the call failed. */
static int job_filter_parse(struct cs_call *call, const Csched__V1__ListJobsRequest *req,
                            struct job_filter *f)
{
    /* protobuf-c keeps a number no value of the enum has as it came. */
    if ((unsigned)req->state > CSCHED__V1__JOB_STATE_FILTER__JOB_STATE_FILTER_NEVER_RUN) {
        cs_call_fail_field(call, -EINVAL, "state",
                           "state %d is not a JobStateFilter: 0 (every job), 1 (running now), 2 "
                           "(paused), 3 (last run failed) or 4 (never run)",
                           (int)req->state);
        return -EINVAL;
    }
    f->state = req->state;
    return cs_api_selector_parse(call, req->label_selector, &f->sel);
}

void cs_api_list_jobs(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ListJobsRequest *req = (const Csched__V1__ListJobsRequest *)request;
    struct cs_sched *s = ctx;
    struct job_filter filter;
    uint32_t limit = cs_api_page_size(req->page_size);
    size_t start = 0;
    if (req->page_token[0] != '\0') {
        const char *after = req->page_token + strlen(JOB_TOKEN_PREFIX);
        if (strncmp(req->page_token, JOB_TOKEN_PREFIX, strlen(JOB_TOKEN_PREFIX)) != 0 ||
            cs_job_name_validate(after, "page_token", NULL) != 0) {
            cs_api_fail_token(call);
            return;
        }
        start = cs_job_index_after(s, after);
    }
    if (job_filter_parse(call, req, &filter) != 0)
        return;
    size_t max = s->n_jobs - start < limit ? s->n_jobs - start : limit;
    size_t end = s->n_jobs - start > LIST_JOBS_SCAN_MAX ? start + LIST_JOBS_SCAN_MAX : s->n_jobs;
    Csched__V1__ListJobsResponse resp = CSCHED__V1__LIST_JOBS_RESPONSE__INIT;
    Csched__V1__Job **jobs = cs_xcalloc(max ? max : 1, sizeof(*jobs));
    struct listed *listed = cs_xcalloc(max ? max : 1, sizeof(*listed));
    int64_t now_s = cs_now_unix_ms() / 1000;
    /* The page ends after the job that brings it to the byte budget. */
    size_t i = start, n = 0, bytes = 0;
    for (; i < end && n < max && bytes < CS_API_PAGE_BYTES; i++) {
        if (!job_filter_matches(&filter, s->jobs[i]))
            continue;
        struct listed *l = &listed[n];
        show_job(s->jobs[i], now_s, 1, &l->job, &l->fire, &l->fire_ptr, l->text);
        jobs[n] = &l->job;
        bytes += protobuf_c_message_get_packed_size(&jobs[n++]->base);
    }
    /* A token only if a matching job follows: the last page is never empty. */
    while (i < end && !job_filter_matches(&filter, s->jobs[i]))
        i++;
    resp.jobs = jobs;
    resp.n_jobs = n;
    char token[CS_JOB_NAME_MAX + 16] = "";
    if (i < s->n_jobs && i > start)
        (void)snprintf(token, sizeof(token), "%s%s", JOB_TOKEN_PREFIX, s->jobs[i - 1]->spec->name);
    resp.next_page_token = token;
    cs_call_reply(call, &resp.base);
    cs_label_selector_free(&filter.sel);
    free(listed);
    free(jobs);
}

void cs_api_delete_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__DeleteJobRequest *req = (const Csched__V1__DeleteJobRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_job *job = cs_api_find_job(call, s, req->name, "name");
    if (job == NULL)
        return;
    /* Runs its schedule made ahead for slots not yet due go with it. */
    struct cs_run **ahead = cs_xcalloc(job->active + 1, sizeof(*ahead));
    size_t n_ahead = cs_dispatch_runs_ahead(s, job, ahead, job->active);
    if (job->active > n_ahead) {
        cs_call_fail(call, -EBUSY,
                     "job %s has %u runs queued or running: cancel them or wait for them to end",
                     req->name, job->active - (uint32_t)n_ahead);
        goto out_free;
    }
    if (cs_api_require_store(call, s) != 0)
        goto out_free;
    for (size_t i = 0; i < n_ahead; i++)
        protobuf_c_message_free_unpacked(&cs_dispatch_cancel(s, ahead[i], NULL, NULL)->base, NULL);
    /* One whose minder was already on its way at its due time is cancelled, not gone. */
    if (job->active > 0) {
        cs_call_fail(call, -EBUSY, "job %s has a run starting now: wait for it to end", req->name);
        goto out_free;
    }
    Csched__V1__DeleteJobResponse *resp = cs_xmalloc(sizeof(*resp));
    csched__v1__delete_job_response__init(resp);
    struct cs_store_mark mark = cs_store_mark_take(s->store);
    cs_store_job_delete(s->store, req->name, cs_api_reply_cb,
                        cs_api_reply_later(call, &resp->base));
    cs_audit_change(s, call, &mark, req->name, 0);
    cs_slots_job_removed(s, job);
    cs_job_remove(s, job);
out_free:
    free(ahead);
}

void cs_api_jobs_restore(struct cs_sched *s, Csched__V1__Job *const *specs,
                         const Csched__V1__RunState *last_ended, size_t n)
{
    CS_ASSERT_LOOP();
    struct cs_err err;

    for (size_t i = 0; i < n; i++) {
        struct cs_job *job = cs_job_insert(s, (Csched__V1__Job *)cs_message_copy(&specs[i]->base));
        /* Slots before the job's last change belong to no schedule of it. */
        job->slot.after_s = job->spec->updated_unix_ms / 1000;
        if (last_ended != NULL)
            job->last_ended = last_ended[i];
        if (cs_job_schedule_parse(&s->zones, job->spec, &job->schedule, &err) != 0)
            cs_log_warn("job %s keeps its definition but does not fire: %s", job->spec->name,
                        err.msg);
    }
    cs_slots_start(s);
}
