/* api_run: TriggerJob, GetRun, ListRuns, CancelRun. Active runs, and those
 * that ended last (ended_runs.h), are answered from memory; older finished
 * ones from the store. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "api.h"
#include "audit.h"
#include "dispatch.h"
#include "job.h"
#include "job_table.h"
#include "util.h"

#define IDEMPOTENCY_KEY_MAX 128

static Csched__V1__Run *run_copy(const struct cs_run *run)
{
    return (Csched__V1__Run *)cs_message_copy(&run->msg->base);
}

struct trigger {
    struct cs_call *call;
    struct cs_sched *sched;
    const Csched__V1__TriggerJobRequest *req; /* borrowed from the call */
};

static void trigger_now(struct cs_call *call, struct cs_sched *s,
                        const Csched__V1__TriggerJobRequest *req)
{
    struct cs_job *job = cs_job_find(s, req->job_name);
    if (job == NULL) {
        cs_call_fail(call, -ENOENT, "job %s does not exist", req->job_name);
        return;
    }
    const struct cs_identity *who = cs_call_identity(call);
    const char *refused =
        who->role >= CS_ROLE_ADMIN ? NULL : cs_job_trigger_env_refused(job->spec, req);
    if (refused != NULL) {
        /* A trigger's env can change what the command runs (LD_PRELOAD, PATH). */
        cs_call_fail(call, -EACCES,
                     "setting env %.64s on a trigger of %s needs role admin, or the job's "
                     "trigger_env naming it; %s has %s",
                     refused, req->job_name, who->name, cs_role_name(who->role));
        return;
    }
    if (req->idempotency_key[0] != '\0') {
        struct cs_run *same = cs_run_keys_find(&s->run_keys, req->job_name, req->idempotency_key);
        if (same != NULL) {
            Csched__V1__Run *copy = run_copy(same);
            cs_call_reply(call, &copy->base);
            protobuf_c_message_free_unpacked(&copy->base, NULL);
            return;
        }
    }
    if (cs_api_require_store(call, s) != 0)
        return;
    /* The reply is the run as committed: QUEUED, whatever happens next. */
    struct cs_reply_later *later = cs_api_reply_later(call, NULL);
    struct cs_store_mark mark = cs_store_mark_take(s->store);
    struct cs_run *run =
        cs_dispatch_trigger(s, job, req, cs_call_identity(call)->name, cs_api_reply_cb, later);
    cs_audit_change(s, call, &mark, job->spec->name, run->msg->id);
    later->msg = &run_copy(run)->base;
}

static void key_lookup_cb(void *arg, int status, Csched__V1__Run *found)
{
    struct trigger *t = arg;
    if (status == 0) {
        cs_call_reply(t->call, &found->base);
        protobuf_c_message_free_unpacked(&found->base, NULL);
    } else if (status == -ENOENT) {
        trigger_now(t->call, t->sched, t->req);
    } else {
        cs_api_fail_store(t->call, status, "looking up the idempotency key");
    }
    free(t);
}

void cs_api_trigger_job(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__TriggerJobRequest *req = (const Csched__V1__TriggerJobRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_err err;
    if (cs_run_request_validate(req, &err) != 0) {
        cs_call_fail_err(call, &err);
        return;
    }
    if (strlen(req->idempotency_key) > IDEMPOTENCY_KEY_MAX) {
        cs_call_fail_field(call, -EINVAL, "idempotency_key",
                           "idempotency_key is longer than %d bytes", IDEMPOTENCY_KEY_MAX);
        return;
    }
    if (cs_job_find(s, req->job_name) == NULL) {
        cs_call_fail(call, -ENOENT, "job %s does not exist", req->job_name);
        return;
    }
    if (req->idempotency_key[0] == '\0' ||
        cs_run_keys_find(&s->run_keys, req->job_name, req->idempotency_key) != NULL) {
        trigger_now(call, s, req);
        return;
    }
    /* The key may belong to a run that has already ended. */
    struct trigger *t = cs_xmalloc(sizeof(*t));
    t->call = call;
    t->sched = s;
    t->req = req;
    cs_store_run_find_by_key(s->store, req->job_name, req->idempotency_key, key_lookup_cb, t);
}

struct run_lookup {
    struct cs_call *call;
    int64_t run_id;
};

static struct run_lookup *run_lookup_new(struct cs_call *call, int64_t run_id)
{
    struct run_lookup *l = cs_xmalloc(sizeof(*l));
    l->call = call;
    l->run_id = run_id;
    return l;
}

static void fail_lookup(struct run_lookup *l, int status)
{
    if (status == -ENOENT)
        cs_call_fail(l->call, -ENOENT, "run %lld does not exist", (long long)l->run_id);
    else
        cs_api_fail_store(l->call, status, "reading the run");
}

static void stored_run_reply_cb(void *arg, int status, Csched__V1__Run *run)
{
    struct run_lookup *l = arg;
    if (status == 0) {
        cs_call_reply(l->call, &run->base);
        protobuf_c_message_free_unpacked(&run->base, NULL);
    } else {
        fail_lookup(l, status);
    }
    free(l);
}

/* 0, or -EINVAL once call has been failed for a run id that cannot be one. */
static int check_run_id(struct cs_call *call, int64_t id)
{
    if (id > 0)
        return 0;
    cs_call_fail_field(call, -EINVAL, "run_id", "run_id %lld is not a run id: ids are positive",
                       (long long)id);
    return -EINVAL;
}

void cs_api_get_run(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__GetRunRequest *req = (const Csched__V1__GetRunRequest *)request;
    struct cs_sched *s = ctx;
    if (check_run_id(call, req->run_id) != 0)
        return;
    struct cs_run *run = cs_idmap_get(&s->runs, req->run_id);
    const Csched__V1__Run *ended = cs_ended_runs_get(&s->ended_runs, req->run_id);
    if (run != NULL)
        cs_call_reply(call, &run->msg->base);
    else if (ended != NULL)
        cs_call_reply(call, &ended->base);
    else
        cs_store_run_get(s->store, req->run_id, stored_run_reply_cb,
                         run_lookup_new(call, req->run_id));
}

/* The page ends at the limit or at the store's byte budget: either way the
 * token says where the next one starts. */
static void runs_listed_cb(void *arg, int status, Csched__V1__Run **runs, size_t n, bool more)
{
    struct cs_call *call = arg;
    if (status != 0) {
        cs_api_fail_store(call, status, "listing runs");
        return;
    }
    cs_api_reply_id_page(call, &csched__v1__list_runs_response__descriptor, (void **)runs, n,
                         more && n > 0 ? runs[n - 1]->id : 0);
    cs_store_runs_free(runs, n);
}

/* Which jobs' runs a selector lets through, as the store's filter takes
 * them: the names of the matching jobs, or, when a job without labels
 * matches (and so do the runs of deleted jobs), the names of those that do
 * not, to exclude. Returns the names (owned by the caller, borrowing the
 * jobs' names), or NULL with *only_none when no run can match. */
static const char **selected_jobs(const struct cs_sched *s, const struct cs_label_selector *sel,
                                  struct cs_store_run_filter *filter, bool *only_none)
{
    Csched__V1__Job no_labels = CSCHED__V1__JOB__INIT;
    bool exclude = cs_label_selector_matches_job(sel, &no_labels);
    const char **names = cs_xcalloc(s->n_jobs + 1, sizeof(*names));
    size_t n = 0;
    for (size_t i = 0; i < s->n_jobs; i++)
        if (cs_label_selector_matches_job(sel, s->jobs[i]->spec) != exclude)
            names[n++] = s->jobs[i]->spec->name;
    filter->job_names = names;
    filter->n_job_names = n;
    filter->job_names_exclude = exclude;
    *only_none = !exclude && n == 0;
    return names;
}

void cs_api_list_runs(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ListRunsRequest *req = (const Csched__V1__ListRunsRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_store_run_filter filter = {.job_name = req->job_name,
                                         .state = req->state,
                                         .limit = cs_api_page_size(req->page_size),
                                         .since_unix_ms = req->since_unix_ms,
                                         .array_id = req->array_id};
    struct cs_label_selector sel;
    if (req->state < 0 || req->state > CSCHED__V1__RUN_STATE__RUN_STATE_LOST) {
        cs_call_fail_field(call, -EINVAL, "state", "state %d is not a RunState", (int)req->state);
        return;
    }
    if (req->since_unix_ms < 0) {
        cs_call_fail_field(call, -EINVAL, "since_unix_ms", "since_unix_ms %lld may not be negative",
                           (long long)req->since_unix_ms);
        return;
    }
    if (req->array_id < 0 ||
        (req->array_id > 0 && (req->job_name[0] != '\0' || req->label_selector[0] != '\0'))) {
        /* An array's runs are all of one job: a filter by job says nothing more. */
        cs_call_fail_field(call, -EINVAL, "array_id",
                           "array_id %lld: give a positive array id, without job_name or "
                           "label_selector",
                           (long long)req->array_id);
        return;
    }
    if (req->page_token[0] != '\0') {
        int64_t before = cs_api_token_id(req->page_token, s->next_run_id);
        if (before == 0) {
            cs_api_fail_token(call);
            return;
        }
        filter.before_id = before;
    }
    if (cs_api_selector_parse(call, req->label_selector, &sel) != 0)
        return;
    const char **names = NULL;
    bool only_none = false;
    if (sel.n_terms > 0 && req->job_name[0] != '\0') {
        struct cs_job *job = cs_job_find(s, req->job_name);
        Csched__V1__Job no_labels = CSCHED__V1__JOB__INIT;
        only_none = !cs_label_selector_matches_job(&sel, job != NULL ? job->spec : &no_labels);
    } else if (sel.n_terms > 0) {
        names = selected_jobs(s, &sel, &filter, &only_none);
    }
    if (only_none)
        cs_api_reply_id_page(call, &csched__v1__list_runs_response__descriptor, NULL, 0, 0);
    else
        cs_store_run_list(s->store, &filter, runs_listed_cb, call);
    free(names);
    cs_label_selector_free(&sel);
}

static void stored_run_cancel_cb(void *arg, int status, Csched__V1__Run *run)
{
    struct run_lookup *l = arg;
    if (status == 0) {
        cs_call_fail(l->call, -EBUSY, "run %lld has already ended (%s): there is nothing to cancel",
                     (long long)run->id, cs_run_state_proto_name(run->state));
        protobuf_c_message_free_unpacked(&run->base, NULL);
    } else {
        fail_lookup(l, status);
    }
    free(l);
}

/* The array's first run, read when none of its runs is active: an array
 * that has ended has nothing to cancel; a run of no array is no array. */
static void stored_array_cancel_cb(void *arg, int status, Csched__V1__Run *run)
{
    struct run_lookup *l = arg;
    if (status == 0 && run->array_id == run->id)
        cs_call_fail(l->call, -EBUSY, "array %lld has ended: none of its runs is left to cancel",
                     (long long)run->id);
    else if (status == 0 || status == -ENOENT)
        cs_call_fail(l->call, -ENOENT, "array %lld does not exist", (long long)l->run_id);
    else
        cs_api_fail_store(l->call, status, "reading the array's first run");
    if (status == 0)
        protobuf_c_message_free_unpacked(&run->base, NULL);
    free(l);
}

/* Those waiting at the array's gate first, so that no place given back
 * lets one through meanwhile; each group in id order, the order of the
 * gate's line and of the job's queue, so that each leaves from its head. */
static int by_gate_then_id(const void *a, const void *b)
{
    const struct cs_run *x = *(struct cs_run *const *)a, *y = *(struct cs_run *const *)b;
    if (x->array_waiting != y->array_waiting)
        return x->array_waiting ? -1 : 1;
    return (x->msg->id > y->msg->id) - (x->msg->id < y->msg->id);
}

/* Cancels every active run of the array, in one transaction (the audit
 * row ties them), and answers with the lowest-numbered as it is after. */
static void cancel_array(struct cs_call *call, struct cs_sched *s, int64_t array_id)
{
    size_t n = 0, cap = 0, pos = 0;
    struct cs_run **runs = NULL;
    void *value;
    while (cs_idmap_next(&s->runs, &pos, &value) != 0) {
        struct cs_run *run = value;
        if (run->msg->array_id != array_id)
            continue;
        if (n == cap) {
            cap = cap > 0 ? 2 * cap : 64;
            runs = cs_xrealloc(runs, cap * sizeof(*runs));
        }
        runs[n++] = run;
    }
    if (n == 0) {
        cs_store_run_get(s->store, array_id, stored_array_cancel_cb,
                         run_lookup_new(call, array_id));
        return;
    }
    if (cs_api_require_store(call, s) != 0) {
        free(runs);
        return;
    }
    qsort(runs, n, sizeof(*runs), by_gate_then_id);
    struct cs_reply_later *later = cs_api_reply_later(call, NULL);
    struct cs_store_mark mark = cs_store_mark_take(s->store);
    Csched__V1__Run *lowest = NULL;
    for (size_t i = 0; i < n; i++) {
        /* The last, committed last, answers for all, with the lowest. */
        Csched__V1__Run *copy = cs_dispatch_cancel(s, runs[i], i + 1 == n ? cs_api_reply_cb : NULL,
                                                   i + 1 == n ? later : NULL);
        if (lowest == NULL || copy->id < lowest->id) {
            Csched__V1__Run *higher = lowest;
            lowest = copy;
            copy = higher;
        }
        if (copy != NULL)
            protobuf_c_message_free_unpacked(&copy->base, NULL);
    }
    later->msg = &lowest->base;
    cs_audit_change(s, call, &mark, lowest->job_name, array_id);
    free(runs);
}

void cs_api_cancel_run(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__CancelRunRequest *req = (const Csched__V1__CancelRunRequest *)request;
    struct cs_sched *s = ctx;
    if (req->array_id != 0) {
        if (req->run_id != 0 || req->array_id < 0)
            cs_call_fail_field(call, -EINVAL, "array_id",
                               "array_id %lld: give a positive array id and no run_id",
                               (long long)req->array_id);
        else
            cancel_array(call, s, req->array_id);
        return;
    }
    if (check_run_id(call, req->run_id) != 0)
        return;
    struct cs_run *run = cs_idmap_get(&s->runs, req->run_id);
    if (run == NULL) {
        cs_store_run_get(s->store, req->run_id, stored_run_cancel_cb,
                         run_lookup_new(call, req->run_id));
        return;
    }
    if (cs_api_require_store(call, s) != 0)
        return;
    struct cs_reply_later *later = cs_api_reply_later(call, NULL);
    struct cs_store_mark mark = cs_store_mark_take(s->store);
    /* A queued run ends, and is freed, in the cancel: its copy names it. */
    Csched__V1__Run *copy = cs_dispatch_cancel(s, run, cs_api_reply_cb, later);
    later->msg = &copy->base;
    cs_audit_change(s, call, &mark, copy->job_name, copy->id);
}
