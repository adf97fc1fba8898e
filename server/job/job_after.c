/* job_after: the rules of a job's after list and the cycles it may close
 * (docs/dependencies.md). Pure code, any thread. */
#include "job_after.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

int cs_job_after_validate(const Csched__V1__Job *spec, struct cs_err *err)
{
    if (spec->n_after > CS_JOB_AFTER_MAX)
        return cs_err_set(err, -EINVAL, "job.after has %zu entries, at most %d", spec->n_after,
                          CS_JOB_AFTER_MAX);
    for (size_t i = 0; i < spec->n_after; i++) {
        const Csched__V1__Dependency *d = spec->after[i];
        char field[64];
        snprintf(field, sizeof(field), "job.after[%zu].job", i);
        int rc = cs_job_name_validate(d->job, field, err);
        if (rc != 0)
            return rc;
        if (strcmp(d->job, spec->name) == 0)
            return cs_err_set(err, -EINVAL, "job.after[%zu].job: a job cannot run after itself", i);
        if ((unsigned)d->on > CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY)
            return cs_err_set(err, -EINVAL,
                              "job.after[%zu].on: %d is none of succeeded, failed, any", i, d->on);
        for (size_t j = 0; j < i; j++)
            if (strcmp(spec->after[j]->job, d->job) == 0)
                return cs_err_set(err, -EINVAL, "job.after names %s twice (entries %zu and %zu)",
                                  d->job, j, i);
    }
    return 0;
}

/* The depth-first walk up the after lists from one job. path holds the
 * names from the start down to the job being walked. */
struct walk {
    const Csched__V1__Job *spec;
    cs_job_lookup_fn lookup;
    void *ctx;
    const char *path[CS_JOB_AFTER_MAX * 4];
    size_t depth;
    /* Jobs already walked through without finding the start: a diamond is
     * walked once per job, not once per path. */
    const char **done;
    size_t n_done, cap_done;
};

static const Csched__V1__Job *job_of(struct walk *w, const char *name)
{
    return strcmp(name, w->spec->name) == 0 ? w->spec : w->lookup(w->ctx, name);
}

static bool was_done(const struct walk *w, const char *name)
{
    for (size_t i = 0; i < w->n_done; i++)
        if (strcmp(w->done[i], name) == 0)
            return true;
    return false;
}

/* Whether the walk from name (path[depth - 1]) comes back to the start. */
static bool closes(struct walk *w, const char *name)
{
    const Csched__V1__Job *job = job_of(w, name);
    if (job == NULL)
        return false;
    for (size_t i = 0; i < job->n_after; i++) {
        const char *up = job->after[i]->job;
        if (strcmp(up, w->spec->name) == 0) {
            w->path[w->depth++] = up;
            return true;
        }
        /* Deeper than any list of distinct jobs the table could hold a
         * cycle in would be a cycle elsewhere, not through the start. */
        if (was_done(w, up) || w->depth == sizeof(w->path) / sizeof(w->path[0]) - 1)
            continue;
        w->path[w->depth++] = up;
        if (closes(w, up))
            return true;
        w->depth--;
    }
    if (w->n_done == w->cap_done) {
        w->cap_done = w->cap_done ? 2 * w->cap_done : 16;
        w->done = cs_xrealloc(w->done, w->cap_done * sizeof(*w->done));
    }
    w->done[w->n_done++] = name;
    return false;
}

int cs_job_after_find_cycle(const Csched__V1__Job *spec, cs_job_lookup_fn lookup, void *ctx,
                            struct cs_err *err)
{
    struct walk w = {.spec = spec, .lookup = lookup, .ctx = ctx};
    w.path[w.depth++] = spec->name;
    bool cycle = closes(&w, spec->name);
    free(w.done);
    if (!cycle)
        return 0;
    char text[200];
    size_t len = 0;
    for (size_t i = 0; i < w.depth && len < sizeof(text); i++) {
        int n = snprintf(text + len, sizeof(text) - len, "%s%s", i ? " -> " : "", w.path[i]);
        len += n > 0 ? (size_t)n : 0;
    }
    return cs_err_field(err, -EINVAL, "job.after",
                        "job.after would close a cycle: %s (each runs after the next)", text);
}

bool cs_job_after_met(Csched__V1__DependencyOn on, Csched__V1__RunState state, bool started)
{
    switch (on) {
    case CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_FAILED:
        return state == CSCHED__V1__RUN_STATE__RUN_STATE_FAILED ||
               state == CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT ||
               state == CSCHED__V1__RUN_STATE__RUN_STATE_LOST;
    case CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY:
        return started || state != CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED;
    default:
        return state == CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
    }
}

const char *cs_job_after_on_name(Csched__V1__DependencyOn on)
{
    switch (on) {
    case CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_FAILED:
        return "failed";
    case CSCHED__V1__DEPENDENCY_ON__DEPENDENCY_ON_ANY:
        return "any";
    default:
        return "succeeded";
    }
}
