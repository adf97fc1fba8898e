/* api_job: CreateJob, UpdateJob, GetJob, ListJobs, DeleteJob. Jobs live in
 * the loop's sorted table; every change is written and answered on commit. */
#define CS_LOG_COMPONENT "api"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "job.h"
#include "log.h"
#include "pump.h"
#include "util.h"
#include "zone_work.h"

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

/* The pause of the stored spec old, carried over to its replacement. */
static void keep_pause(Csched__V1__Job *spec, const Csched__V1__Job *old)
{
    spec->paused = old->paused;
    spec->paused_unix_ms = old->paused_unix_ms;
    cs_message_set_str(&spec->pause_reason, old->pause_reason);
}

/* A stored copy of a client's job with the output fields set. */
static Csched__V1__Job *spec_copy(const Csched__V1__Job *in, uint64_t version,
                                  int64_t created_unix_ms)
{
    Csched__V1__Job *spec = (Csched__V1__Job *)cs_message_copy(&in->base);
    clear_output(spec);
    spec->version = version;
    spec->updated_unix_ms = cs_now_unix_ms();
    spec->created_unix_ms = created_unix_ms != 0 ? created_unix_ms : spec->updated_unix_ms;
    return spec;
}

static void reply_job_on_commit(struct cs_call *call, struct cs_sched *s,
                                const Csched__V1__Job *spec)
{
    void *later = cs_api_reply_later(call, cs_message_copy(&spec->base));
    cs_store_job_put(s->store, spec, cs_api_reply_cb, later);
}

/* A CreateJob or UpdateJob waiting for its schedule's zone to be opened
 * on the pool; then its handler runs again, on a copy of the request. */
struct zone_wait {
    struct cs_zone_open open;
    struct cs_call *call;
    struct cs_sched *sched;
    ProtobufCMessage *request;
    cs_method_handler_cb handler_cb;
};

static void zone_opened_cb(uv_work_t *work, int status)
{
    struct zone_wait *w = work->data;
    if (status == 0 && w->open.rc == 0) {
        cs_zones_add(&w->sched->zones, w->open.tz);
        w->handler_cb(w->call, w->request, w->sched);
    } else {
        cs_call_fail(w->call, status != 0 ? status : w->open.rc, "job.schedule.time_zone: %s",
                     status != 0 ? "cschedd is stopping" : w->open.err.msg);
    }
    protobuf_c_message_free_unpacked(w->request, NULL);
    free(w);
}

/* 0 with the job's parsed schedule in *schedule (NULL: none), or a
 * negative errno once call has been failed with why, or handed on to wait
 * for its zone (-EAGAIN: handler_cb runs again on request later). */
static int check_job(struct cs_call *call, struct cs_sched *s, const ProtobufCMessage *request,
                     const Csched__V1__Job *job, cs_method_handler_cb handler_cb,
                     struct cs_schedule **schedule)
{
    struct cs_err err;
    int rc;
    if (job == NULL) {
        cs_call_fail(call, -EINVAL, "job is required");
        return -EINVAL;
    }
    rc = cs_job_validate(job, &err);
    if (rc == 0)
        rc = cs_job_schedule_parse(&s->zones, job, false, schedule, &err);
    if (rc == -EAGAIN) {
        struct zone_wait *w = cs_xcalloc(1, sizeof(*w));
        *w = (struct zone_wait){.call = call,
                                .sched = s,
                                .handler_cb = handler_cb,
                                .request = cs_message_copy(request)};
        (void)snprintf(w->open.name, sizeof(w->open.name), "%s", job->schedule->time_zone);
        w->open.work.data = w;
        CS_ASSERT(uv_queue_work(s->loop, &w->open.work, cs_zone_open_work, zone_opened_cb) == 0);
    } else if (rc != 0) {
        cs_call_fail(call, err.code, "%s", err.msg);
    }
    return rc;
}

void cs_api_create_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__CreateJobRequest *req = (const Csched__V1__CreateJobRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_schedule *schedule;
    if (check_job(call, s, request, req->job, cs_api_create_job, &schedule) != 0)
        return;
    if (cs_job_find(s, req->job->name) != NULL) {
        cs_call_fail(call, -EEXIST, "job %s already exists: use UpdateJob to change it",
                     req->job->name);
        goto err_free_schedule;
    }
    if (cs_api_require_store(call, s) != 0)
        goto err_free_schedule;
    struct cs_job *job = cs_job_insert(s, spec_copy(req->job, 1, 0));
    job->schedule = schedule;
    cs_slots_job_changed(s, job, job->spec->created_unix_ms / 1000);
    reply_job_on_commit(call, s, job->spec);
    return;

err_free_schedule:
    free(schedule);
}

void cs_api_update_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__UpdateJobRequest *req = (const Csched__V1__UpdateJobRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_schedule *schedule;
    if (check_job(call, s, request, req->job, cs_api_update_job, &schedule) != 0)
        return;
    struct cs_job *job = cs_job_find(s, req->job->name);
    if (job == NULL) {
        cs_call_fail(call, -ENOENT, "job %s does not exist: use CreateJob to make it",
                     req->job->name);
        goto err_free_schedule;
    }
    if (req->expected_version != 0 && req->expected_version != job->spec->version) {
        cs_call_fail(call, -EBUSY,
                     "job %s is at version %llu, not the expected_version %llu: read it again",
                     req->job->name, (unsigned long long)job->spec->version,
                     (unsigned long long)req->expected_version);
        goto err_free_schedule;
    }
    if (cs_api_require_store(call, s) != 0)
        goto err_free_schedule;
    Csched__V1__Job *spec = spec_copy(req->job, job->spec->version + 1, job->spec->created_unix_ms);
    keep_pause(spec, job->spec);
    cs_job_replace_spec(job, spec);
    free(job->schedule);
    job->schedule = schedule;
    /* A new schedule starts from now: the old one's slots are not missed. */
    int64_t now_s = job->spec->updated_unix_ms / 1000;
    cs_slots_job_changed(s, job, job->slot.after_s > now_s ? job->slot.after_s : now_s);
    /* Its own limit may have changed. */
    cs_pump_job_changed(s, job);
    reply_job_on_commit(call, s, job->spec);
    return;

err_free_schedule:
    free(schedule);
}

void cs_api_get_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__GetJobRequest *req = (const Csched__V1__GetJobRequest *)request;
    struct cs_job *job = cs_api_find_job(call, ctx, req->name, "name");
    if (job == NULL)
        return;
    /* A shallow copy: the stored spec keeps no next_fires. */
    Csched__V1__Job shown = *job->spec;
    Csched__V1__FireTime fires[CS_JOB_NEXT_FIRES], *fire_ptrs[CS_JOB_NEXT_FIRES];
    char text[CS_JOB_NEXT_FIRES][40];
    if (job->schedule != NULL) {
        shown.n_next_fires = cs_job_next_fires(job->schedule, cs_now_unix_ms() / 1000, fires, text,
                                               CS_JOB_NEXT_FIRES);
        for (size_t i = 0; i < shown.n_next_fires; i++)
            fire_ptrs[i] = &fires[i];
        shown.next_fires = fire_ptrs;
    }
    cs_call_reply(call, &shown.base);
}

void cs_api_list_jobs(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ListJobsRequest *req = (const Csched__V1__ListJobsRequest *)request;
    struct cs_sched *s = ctx;
    uint32_t limit = cs_api_page_size(req->page_size);
    size_t start = 0;
    if (req->page_token[0] != '\0') {
        const char *after = req->page_token + strlen(JOB_TOKEN_PREFIX);
        if (strncmp(req->page_token, JOB_TOKEN_PREFIX, strlen(JOB_TOKEN_PREFIX)) != 0 ||
            cs_job_name_validate(after, "page_token", NULL) != 0) {
            cs_call_fail(call, -EINVAL,
                         "page_token is not one this server gave out: pass next_page_token "
                         "from the previous response, or nothing for the first page");
            return;
        }
        start = cs_job_index_after(s, after);
    }
    size_t max = s->n_jobs - start < limit ? s->n_jobs - start : limit;
    Csched__V1__ListJobsResponse resp = CSCHED__V1__LIST_JOBS_RESPONSE__INIT;
    Csched__V1__Job **jobs = cs_xcalloc(max ? max : 1, sizeof(*jobs));
    /* The page ends after the job that brings it to the byte budget. */
    size_t n = 0, bytes = 0;
    while (n < max && bytes < CS_API_PAGE_BYTES) {
        jobs[n] = s->jobs[start + n]->spec;
        bytes += protobuf_c_message_get_packed_size(&jobs[n++]->base);
    }
    resp.jobs = jobs;
    resp.n_jobs = n;
    char token[CS_JOB_NAME_MAX + 16] = "";
    if (start + n < s->n_jobs)
        (void)snprintf(token, sizeof(token), "%s%s", JOB_TOKEN_PREFIX, jobs[n - 1]->name);
    resp.next_page_token = token;
    cs_call_reply(call, &resp.base);
    free(jobs);
}

void cs_api_jobs_restore(struct cs_sched *s, Csched__V1__Job *const *specs, size_t n)
{
    CS_ASSERT_LOOP();
    struct cs_err err;

    for (size_t i = 0; i < n; i++) {
        struct cs_job *job = cs_job_insert(s, (Csched__V1__Job *)cs_message_copy(&specs[i]->base));
        /* Slots before the job's last change belong to no schedule of it. */
        job->slot.after_s = job->spec->updated_unix_ms / 1000;
        if (cs_job_schedule_parse(&s->zones, job->spec, true, &job->schedule, &err) != 0)
            cs_log_warn("job %s keeps its definition but does not fire: %s", job->spec->name,
                        err.msg);
    }
    cs_slots_start(s);
}

void cs_api_delete_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__DeleteJobRequest *req = (const Csched__V1__DeleteJobRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_job *job = cs_api_find_job(call, s, req->name, "name");
    if (job == NULL)
        return;
    if (job->active > 0) {
        cs_call_fail(call, -EBUSY,
                     "job %s has %u runs queued or running: cancel them or wait for them to end",
                     req->name, job->active);
        return;
    }
    if (cs_api_require_store(call, s) != 0)
        return;
    Csched__V1__DeleteJobResponse *resp = cs_xmalloc(sizeof(*resp));
    csched__v1__delete_job_response__init(resp);
    cs_store_job_delete(s->store, req->name, cs_api_reply_cb,
                        cs_api_reply_later(call, &resp->base));
    cs_slots_job_removed(s, job);
    cs_job_remove(s, job);
}
