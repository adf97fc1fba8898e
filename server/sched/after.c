/* after: runs made by the ends of other jobs' runs (after.h says how, and
 * why once per cause). Loop thread only. */
#define CS_LOG_COMPONENT "after"
#include "after.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "job.h"
#include "job_after.h"
#include "job_table.h"
#include "log.h"
#include "store.h"
#include "util.h"

/* One upstream-downstream pair; names borrowed from the jobs' specs, good
 * while the table of jobs has not changed (edges_make). */
struct cs_after_edge {
    const char *up, *down;
};

/* A cause the loop keeps: waiting, or decided within the window. */
struct cs_after_cause {
    Csched__V1__DependencyCause *msg; /* owned */
    struct cs_after_cause *next;      /* in its hash's chain */
};

/* FNV-1a over job, a zero byte and cause: the idmap's id, never 0. */
static int64_t key_of(const char *job, const char *cause)
{
    uint64_t h = 14695981039346656037ULL;
    for (const char *p = job;; p++) {
        h = (h ^ (uint8_t)*p) * 1099511628211ULL;
        if (*p == '\0')
            break;
    }
    for (const char *p = cause; *p != '\0'; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ULL;
    int64_t key = (int64_t)(h >> 1);
    return key != 0 ? key : 1;
}

static struct cs_after_cause *cause_find(struct cs_after *a, const char *job, const char *cause)
{
    for (struct cs_after_cause *c = cs_idmap_get(&a->causes, key_of(job, cause)); c != NULL;
         c = c->next)
        if (strcmp(c->msg->job_name, job) == 0 && strcmp(c->msg->cause, cause) == 0)
            return c;
    return NULL;
}

/* Keeps msg (owned from now), which no cause kept has the key of. */
static struct cs_after_cause *cause_add(struct cs_after *a, Csched__V1__DependencyCause *msg)
{
    int64_t key = key_of(msg->job_name, msg->cause);
    struct cs_after_cause *c = cs_xmalloc(sizeof(*c));
    c->msg = msg;
    c->next = cs_idmap_remove(&a->causes, key);
    cs_idmap_put(&a->causes, key, c);
    a->n_causes++;
    return c;
}

static void cause_drop(struct cs_after *a, struct cs_after_cause *c)
{
    int64_t key = key_of(c->msg->job_name, c->msg->cause);
    struct cs_after_cause *head = cs_idmap_remove(&a->causes, key);
    if (head == c)
        head = c->next;
    else
        for (struct cs_after_cause *p = head; p != NULL; p = p->next)
            if (p->next == c) {
                p->next = c->next;
                break;
            }
    if (head != NULL)
        cs_idmap_put(&a->causes, key, head);
    csched__v1__dependency_cause__free_unpacked(c->msg, NULL);
    free(c);
    a->n_causes--;
}

static int edge_cmp(const void *x, const void *y)
{
    const struct cs_after_edge *a = x, *b = y;
    int c = strcmp(a->up, b->up);
    return c != 0 ? c : strcmp(a->down, b->down);
}

/* The pairs again, if the table of jobs changed since they were made. */
static void edges_make(struct cs_after *a)
{
    struct cs_sched *s = a->sched;
    if (a->edges_made && a->edges_generation == s->jobs_generation)
        return;
    size_t n = 0;
    for (size_t i = 0; i < s->n_jobs; i++)
        n += s->jobs[i]->spec->n_after;
    free(a->edges);
    a->edges = n > 0 ? cs_xmalloc(n * sizeof(*a->edges)) : NULL;
    a->n_edges = 0;
    for (size_t i = 0; i < s->n_jobs; i++) {
        const Csched__V1__Job *spec = s->jobs[i]->spec;
        for (size_t j = 0; j < spec->n_after; j++)
            a->edges[a->n_edges++] = (struct cs_after_edge){spec->after[j]->job, spec->name};
    }
    /* No job with an after list: no array, and qsort may not be given NULL. */
    if (a->n_edges > 1)
        qsort(a->edges, a->n_edges, sizeof(*a->edges), edge_cmp);
    a->edges_generation = s->jobs_generation;
    a->edges_made = true;
}

/* The first pair whose upstream is up, with how many there are in *n. */
static size_t edges_from(const struct cs_after *a, const char *up, size_t *n)
{
    size_t lo = 0, hi = a->n_edges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(a->edges[mid].up, up) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < a->n_edges && strcmp(a->edges[end].up, up) == 0)
        end++;
    *n = end - lo;
    return lo;
}

/* The cause run carries to the jobs after its own. */
static void cause_of(const Csched__V1__Run *run, char *buf, size_t len)
{
    if (run->cause[0] != '\0')
        snprintf(buf, len, "%s", run->cause);
    else if (run->slot_unix_ms != 0)
        snprintf(buf, len, "slot:%lld", (long long)run->slot_unix_ms);
    else
        snprintf(buf, len, "run:%lld", (long long)run->id);
}

static const Csched__V1__DependencyUpstream *upstream_find(const Csched__V1__DependencyCause *c,
                                                           const char *job)
{
    for (size_t i = 0; i < c->n_upstreams; i++)
        if (strcmp(c->upstreams[i]->job, job) == 0)
            return c->upstreams[i];
    return NULL;
}

/* Appends a copy of u to c's upstreams. */
static void upstream_append(Csched__V1__DependencyCause *c, const Csched__V1__DependencyUpstream *u)
{
    c->upstreams = cs_xrealloc(c->upstreams, (c->n_upstreams + 1) * sizeof(*c->upstreams));
    c->upstreams[c->n_upstreams++] = (Csched__V1__DependencyUpstream *)cs_message_copy(&u->base);
}

/* "failed" for RUN_STATE_FAILED: how people read a run's state. */
static void state_word(Csched__V1__RunState state, char *buf, size_t len)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&csched__v1__run_state__descriptor, (int)state);
    const char *name = v != NULL ? v->name : "RUN_STATE_?";
    snprintf(buf, len, "%s", strncmp(name, "RUN_STATE_", 10) == 0 ? name + 10 : name);
    for (char *p = buf; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
}

static void decide_not_run(Csched__V1__DependencyCause *c, const char *reason)
{
    c->outcome = CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_NOT_RUN;
    cs_message_set_str(&c->reason, reason);
    c->decided_unix_ms = cs_now_unix_ms();
}

/* Makes down's run for c, in this loop turn: its row is written with the
 * upstream runs that caused it and the cause it carries on. */
static void make_run(struct cs_sched *s, struct cs_job *down, Csched__V1__DependencyCause *c)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    struct cs_run *run = cs_dispatch_trigger(s, down, &req, "after", NULL, NULL);
    Csched__V1__Run *msg = run->msg;
    const Csched__V1__Job *spec = down->spec;
    msg->caused_by_run_ids = cs_xcalloc(spec->n_after, sizeof(*msg->caused_by_run_ids));
    msg->n_caused_by_run_ids = spec->n_after;
    for (size_t i = 0; i < spec->n_after; i++)
        msg->caused_by_run_ids[i] = upstream_find(c, spec->after[i]->job)->run_id;
    cs_message_set_str(&msg->cause, c->cause);
    /* The row again, now with its causes: a batch keeps a run's last put. */
    s->ops->run_put_cb(s->store, msg, NULL, NULL);
    c->outcome = CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_RAN;
    c->run_id = msg->id;
    c->decided_unix_ms = cs_now_unix_ms();
    cs_log_debug("run %lld of %s made after %zu upstream runs for %s", (long long)msg->id,
                 spec->name, spec->n_after, c->cause);
}

/* Decides c for down when it can: an upstream that ended as its entry does
 * not ask decides it not run at once; every upstream ended as asked makes
 * the run (or not, with down paused). Not before the records of before
 * this start are back: one of them may have decided c already. */
static bool decide(struct cs_after *a, struct cs_job *down, Csched__V1__DependencyCause *c)
{
    const Csched__V1__Job *spec = down->spec;
    size_t ended = 0;
    char reason[512], word[32];
    if (!a->loaded || c->outcome != CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_WAITING)
        return false;
    for (size_t i = 0; i < spec->n_after; i++) {
        const Csched__V1__Dependency *d = spec->after[i];
        const Csched__V1__DependencyUpstream *u = upstream_find(c, d->job);
        if (u == NULL)
            continue;
        if (!cs_job_after_met(d->on, u->state, u->started)) {
            state_word(u->state, word, sizeof(word));
            snprintf(reason, sizeof(reason), "upstream %s's run %lld %s%s; %s runs after it %s",
                     d->job, (long long)u->run_id, u->started ? "ended " : "",
                     u->started ? word : "was cancelled before it started (its slot skipped)",
                     spec->name, cs_job_after_on_name(d->on));
            decide_not_run(c, reason);
            return true;
        }
        ended++;
    }
    if (ended < spec->n_after)
        return false;
    if (spec->paused) {
        snprintf(reason, sizeof(reason), "job %s was paused when its upstreams had ended",
                 spec->name);
        decide_not_run(c, reason);
        return true;
    }
    make_run(a->sched, down, c);
    return true;
}

static Csched__V1__DependencyCause *cause_new(const char *job, const char *cause)
{
    Csched__V1__DependencyCause *c = cs_xmalloc(sizeof(*c));
    csched__v1__dependency_cause__init(c);
    c->job_name = cs_xstrdup(job);
    c->cause = cs_xstrdup(cause);
    c->reason = cs_xstrdup("");
    c->outcome = CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_WAITING;
    c->created_unix_ms = cs_now_unix_ms();
    return c;
}

/* The sched's run_end_cb: run's end counts for every job after its job. */
static void run_ended(struct cs_sched *s, const struct cs_run *run, const struct cs_store_mark *tie)
{
    struct cs_after *a = s->after;
    const Csched__V1__Run *r = run->msg;
    size_t n;
    edges_make(a);
    size_t i = edges_from(a, r->job_name, &n);
    if (n == 0)
        return;
    char cause[64];
    cause_of(r, cause, sizeof(cause));
    Csched__V1__DependencyUpstream u = CSCHED__V1__DEPENDENCY_UPSTREAM__INIT;
    u.job = r->job_name;
    u.run_id = r->id;
    u.state = r->state;
    u.started = r->started_unix_ms > 0;
    for (; n > 0; i++, n--) {
        struct cs_job *down = cs_job_find(s, a->edges[i].down);
        struct cs_after_cause *c = cause_find(a, down->spec->name, cause);
        if (c == NULL)
            c = cause_add(a, cause_new(down->spec->name, cause));
        if (c->msg->outcome != CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_WAITING ||
            upstream_find(c->msg, r->job_name) != NULL) {
            cs_log_debug("run %lld of %s: %s's cause %s has had it, or is decided: nothing more",
                         (long long)r->id, r->job_name, down->spec->name, cause);
            continue;
        }
        upstream_append(c->msg, &u);
        (void)decide(a, down, c->msg);
        cs_store_after_put(s->store, c->msg, &u, tie, NULL, NULL);
    }
}

/* Decides c, if it can, and writes it with what that made. */
static void decide_and_put(struct cs_after *a, struct cs_after_cause *c)
{
    struct cs_job *down = cs_job_find(a->sched, c->msg->job_name);
    struct cs_store_mark tie = cs_store_mark_take(a->sched->store);
    if (down != NULL && decide(a, down, c->msg))
        cs_store_after_put(a->sched->store, c->msg, NULL, &tie, NULL, NULL);
}

/* The causes kept, in an array the caller frees: a walk that may drop. */
static struct cs_after_cause **causes_all(struct cs_after *a, size_t *n)
{
    struct cs_after_cause **all = cs_xmalloc((a->n_causes + 1) * sizeof(*all));
    size_t pos = 0, k = 0;
    void *v;
    while (cs_idmap_next(&a->causes, &pos, &v) != 0)
        for (struct cs_after_cause *c = v; c != NULL; c = c->next)
            all[k++] = c;
    *n = k;
    return all;
}

/* Merges what the database had into what this start saw meanwhile. */
static void take_back(struct cs_after *a, Csched__V1__DependencyCause *stored)
{
    struct cs_after_cause *c = cause_find(a, stored->job_name, stored->cause);
    if (c == NULL) {
        (void)cause_add(a, stored);
        return;
    }
    if (stored->outcome != CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_WAITING) {
        Csched__V1__DependencyCause *seen = c->msg;
        c->msg = stored;
        stored = seen;
    } else {
        for (size_t i = 0; i < stored->n_upstreams; i++)
            if (upstream_find(c->msg, stored->upstreams[i]->job) == NULL)
                upstream_append(c->msg, stored->upstreams[i]);
    }
    csched__v1__dependency_cause__free_unpacked(stored, NULL);
}

static void timer_cb(uv_timer_t *timer);

static void arm(struct cs_after *a, uint64_t ms)
{
    CS_ASSERT(uv_timer_start(&a->timer, timer_cb, ms, 0) == 0);
}

/* How often the window is looked at: a quarter of it, within [0.1 s, 1 min]. */
static uint64_t look_every_ms(const struct cs_after *a)
{
    int64_t every = a->window_ms / 4;
    return (uint64_t)(every < 100 ? 100 : every > 60000 ? 60000 : every);
}

static void loaded_cb(void *arg, int status, Csched__V1__DependencyCause **causes, size_t n)
{
    struct cs_after *a = arg;
    a->loading = false;
    if (!a->started) {
        cs_store_after_causes_free(causes, n);
        return;
    }
    if (status != 0) {
        cs_log_warn("the dependency causes could not be read (%d): trying again in a second",
                    status);
        arm(a, 1000);
        return;
    }
    for (size_t i = 0; i < n; i++)
        take_back(a, causes[i]);
    free(causes);
    a->loaded = true;
    size_t k;
    struct cs_after_cause **all = causes_all(a, &k);
    for (size_t i = 0; i < k; i++)
        decide_and_put(a, all[i]);
    free(all);
    cs_log_info("dependency causes taken back: %zu waiting or decided within the window",
                a->n_causes);
    arm(a, look_every_ms(a));
}

static void load(struct cs_after *a)
{
    a->loading = true;
    cs_store_after_load(a->sched->store, cs_now_unix_ms() - a->window_ms, loaded_cb, a);
}

/* The window's look: a cause that waited past it is decided not run; one
 * decided before it is forgotten. */
static void look(struct cs_after *a)
{
    int64_t now = cs_now_unix_ms();
    size_t k;
    struct cs_after_cause **all = causes_all(a, &k);
    for (size_t i = 0; i < k; i++) {
        Csched__V1__DependencyCause *c = all[i]->msg;
        if (c->outcome == CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_WAITING &&
            now - c->created_unix_ms >= a->window_ms) {
            char reason[512];
            size_t len = (size_t)snprintf(
                reason, sizeof(reason), "the window passed: %llds after the first upstream's end,",
                (long long)(a->window_ms / 1000));
            const struct cs_job *down = cs_job_find(a->sched, c->job_name);
            for (size_t j = 0; down != NULL && j < down->spec->n_after && len < sizeof(reason); j++)
                if (upstream_find(c, down->spec->after[j]->job) == NULL)
                    len += (size_t)snprintf(reason + len, sizeof(reason) - len, " %s",
                                            down->spec->after[j]->job);
            if (len < sizeof(reason))
                snprintf(reason + len, sizeof(reason) - len, " had not ended");
            decide_not_run(c, reason);
            cs_store_after_put(a->sched->store, c, NULL, NULL, NULL, NULL);
        } else if (c->outcome != CSCHED__V1__DEPENDENCY_OUTCOME__DEPENDENCY_OUTCOME_WAITING &&
                   now - c->decided_unix_ms >= a->window_ms) {
            cause_drop(a, all[i]);
        }
    }
    free(all);
}

static void timer_cb(uv_timer_t *timer)
{
    struct cs_after *a = timer->data;
    if (!a->loaded) {
        if (!a->loading)
            load(a);
        return;
    }
    look(a);
    arm(a, look_every_ms(a));
}

int cs_after_init(struct cs_after *a, struct cs_sched *s, int64_t window_ms)
{
    memset(a, 0, sizeof(*a));
    a->sched = s;
    a->window_ms = window_ms > 0 ? window_ms : CS_AFTER_WINDOW_MS_DEFAULT;
    cs_idmap_init(&a->causes);
    int rc = uv_timer_init(s->loop, &a->timer);
    if (rc != 0)
        return rc;
    a->timer.data = a;
    s->after = a;
    s->run_end_cb = run_ended;
    return 0;
}

void cs_after_start(struct cs_after *a)
{
    a->started = true;
    load(a);
}

void cs_after_stop(struct cs_after *a)
{
    if (a->sched == NULL)
        return;
    a->started = false;
    a->sched->run_end_cb = NULL;
    a->sched->after = NULL;
    uv_timer_stop(&a->timer);
    uv_close((uv_handle_t *)&a->timer, NULL);
    size_t k;
    struct cs_after_cause **all = causes_all(a, &k);
    for (size_t i = 0; i < k; i++)
        cause_drop(a, all[i]);
    free(all);
    cs_idmap_close(&a->causes);
    free(a->edges);
    a->edges = NULL;
    a->sched = NULL;
}
