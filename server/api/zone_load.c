/* zone_load: zones read on the pool and put in the loop's cache (see
 * zone_load.h). Loop thread.
 *
 * A reread swaps a changed zone's table under the jobs that borrow it: the
 * old table is freed only once every schedule points to the new one, and
 * nothing else keeps a zone across loop turns. The jobs of a changed zone
 * are placed again in the due heap from their last decided slot, as an
 * UpdateJob does, so the next fire is the new data's. */
#define CS_LOG_COMPONENT "zones"
#include "zone_load.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "slots.h"
#include "zone_work.h"

/* The zone spec's schedule names, or NULL (none, or longer than a zone
 * name may be: such a job's schedule then fails to parse, saying so). */
static const char *spec_zone(const Csched__V1__Job *spec)
{
    const Csched__V1__Schedule *sc = spec->schedule;
    if (sc == NULL || sc->text[0] == '\0' || sc->time_zone[0] == '\0' ||
        strlen(sc->time_zone) > CS_TZ_NAME_MAX)
        return NULL;
    return sc->time_zone;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A read of the distinct names among names[0..n) (sorted here), with the
 * data's version when version is set, queued with after_cb. */
static void read_queue(struct cs_sched *s, const char **names, size_t n, bool version,
                       uv_after_work_cb after_cb, void *arg)
{
    size_t distinct = 0;

    qsort(names, n, sizeof(*names), compare_names);
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || strcmp(names[i], names[i - 1]) != 0;
    struct cs_zone_read *r = cs_zone_read_new(s->zones.dir, distinct, version);
    r->arg = arg;
    for (size_t i = 0, j = 0; i < n; i++)
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
            memcpy(r->names[j++], names[i], strlen(names[i]) + 1);
    CS_ASSERT(uv_queue_work(s->loop, &r->work, cs_zone_read_work, after_cb) == 0);
}

/* --- start --------------------------------------------------------------- */

/* A load and who waits for it. */
struct waiter {
    struct cs_sched *sched;
    cs_zone_load_cb cb;
    void *arg;
};

static void start_read_cb(uv_work_t *work, int status)
{
    struct cs_zone_read *r = work->data;
    struct waiter *st = r->arg;
    struct cs_sched *s = st->sched;
    struct cs_err stopping;

    if (status != 0 || s->stopping) {
        (void)cs_err_set(&stopping, -ECANCELED, "cschedd is stopping"); /* returns its code */
        st->cb(st->arg, -ECANCELED, &stopping);
        goto out_free;
    }
    for (size_t i = 0; i < r->n; i++) {
        if (r->tz[i] == NULL) {
            cs_log_warn("the jobs in time zone %s do not fire: %s", r->names[i], r->err[i].msg);
            continue;
        }
        cs_zones_add(&s->zones, r->tz[i]);
        r->tz[i] = NULL;
    }
    memcpy(s->zones.version, r->data_version, sizeof(s->zones.version));
    cs_log_info("%zu time zones read from %s (tzdata %s)", s->zones.n, s->zones.dir,
                s->zones.version);
    st->cb(st->arg, 0, NULL);
out_free:
    cs_zone_read_free(r);
    free(st);
}

void cs_zone_load_start(struct cs_sched *s, Csched__V1__Job *const *specs, size_t n,
                        cs_zone_load_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    const char **names = cs_xcalloc(n > 0 ? n : 1, sizeof(*names));
    size_t n_names = 0;
    struct waiter *st = cs_xmalloc(sizeof(*st));

    for (size_t i = 0; i < n; i++)
        if (spec_zone(specs[i]) != NULL)
            names[n_names++] = spec_zone(specs[i]);
    *st = (struct waiter){s, cb, arg};
    read_queue(s, names, n_names, true, start_read_cb, st);
    free(names);
}

/* --- one zone ------------------------------------------------------------ */

static void one_read_cb(uv_work_t *work, int status)
{
    struct cs_zone_read *r = work->data;
    struct waiter *one = r->arg;
    struct cs_err stopping;

    if (status != 0 || one->sched->stopping) {
        (void)cs_err_set(&stopping, -ECANCELED, "cschedd is stopping"); /* returns its code */
        one->cb(one->arg, -ECANCELED, &stopping);
    } else if (r->tz[0] == NULL) {
        one->cb(one->arg, r->err[0].code, &r->err[0]);
    } else {
        cs_zones_add(&one->sched->zones, r->tz[0]);
        r->tz[0] = NULL;
        one->cb(one->arg, 0, NULL);
    }
    cs_zone_read_free(r);
    free(one);
}

void cs_zone_load_one(struct cs_sched *s, const char *name, cs_zone_load_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    struct waiter *one = cs_xmalloc(sizeof(*one));
    struct cs_zone_read *r = cs_zone_read_new(s->zones.dir, 1, false);

    *one = (struct waiter){s, cb, arg};
    r->arg = one;
    /* cs_job_schedule_parse refused a name too long for the record. */
    (void)snprintf(r->names[0], sizeof(r->names[0]), "%s", name);
    CS_ASSERT(uv_queue_work(s->loop, &r->work, cs_zone_read_work, one_read_cb) == 0);
}

/* --- reread on SIGHUP ---------------------------------------------------- */

/* Points the schedules that borrow old to tz and places their jobs again:
 * how many there were. */
static size_t repoint(struct cs_sched *s, const struct cs_tz *old, const struct cs_tz *tz)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_jobs; i++) {
        struct cs_job *job = s->jobs[i];
        if (job->schedule == NULL || job->schedule->tz != old)
            continue;
        job->schedule->tz = tz;
        cs_slots_job_changed(s, job, job->slot.after_s);
        n++;
    }
    return n;
}

/* The jobs that did not fire for want of their zone, with it now read. */
static void parse_waiting(struct cs_sched *s)
{
    struct cs_err err;
    for (size_t i = 0; i < s->n_jobs; i++) {
        struct cs_job *job = s->jobs[i];
        const char *zone = spec_zone(job->spec);
        if (job->schedule != NULL || zone == NULL || cs_zones_find(&s->zones, zone) == NULL)
            continue;
        if (cs_job_schedule_parse(&s->zones, job->spec, &job->schedule, &err) != 0) {
            cs_log_debug("job %s still does not fire: %s", job->spec->name, err.msg);
            continue;
        }
        cs_log_info("job %s fires again: its time zone %s was read", job->spec->name, zone);
        cs_slots_job_changed(s, job, job->slot.after_s);
    }
}

static void apply(struct cs_sched *s, struct cs_zone_read *r)
{
    size_t changed = 0;

    for (size_t i = 0; i < r->n; i++) {
        const struct cs_tz *old = cs_zones_find(&s->zones, r->names[i]);
        if (r->tz[i] == NULL) {
            cs_log_warn("time zone %s could not be read again, %s: %s", r->names[i],
                        old != NULL ? "its jobs keep the data read before"
                                    : "its jobs still do not fire",
                        r->err[i].msg);
            continue;
        }
        if (old != NULL && cs_tz_same(old, r->tz[i]))
            continue;
        struct cs_tz *tz = r->tz[i];
        r->tz[i] = NULL;
        struct cs_tz *replaced = cs_zones_swap(&s->zones, tz);
        if (replaced == NULL)
            continue;
        changed++;
        cs_log_info("time zone %s changed: the next fires of its %zu jobs are computed again",
                    r->names[i], repoint(s, replaced, tz));
        cs_tz_free(replaced);
    }
    parse_waiting(s);
    cs_log_info("time zones read again from %s: tzdata %s (before: %s), %zu zones, %zu changed",
                s->zones.dir, r->data_version, s->zones.version, r->n, changed);
    memcpy(s->zones.version, r->data_version, sizeof(s->zones.version));
}

static void reread(struct cs_zone_reload *rl);

static void reread_cb(uv_work_t *work, int status)
{
    struct cs_zone_read *r = work->data;
    struct cs_zone_reload *rl = r->arg;

    rl->reading = false;
    if (status == 0 && !rl->sched->stopping)
        apply(rl->sched, r);
    cs_zone_read_free(r);
    if (rl->again && rl->watching && !rl->sched->stopping) {
        rl->again = false;
        reread(rl);
    }
}

static void reread(struct cs_zone_reload *rl)
{
    struct cs_sched *s = rl->sched;
    const char **names;
    size_t n = 0;

    if (rl->reading) {
        rl->again = true;
        return;
    }
    names = cs_xcalloc(s->zones.n + s->n_jobs + 1, sizeof(*names));
    for (size_t i = 0; i < s->zones.n; i++)
        names[n++] = cs_tz_name(s->zones.tz[i]);
    for (size_t i = 0; i < s->n_jobs; i++) {
        const char *zone = spec_zone(s->jobs[i]->spec);
        if (s->jobs[i]->schedule == NULL && zone != NULL)
            names[n++] = zone;
    }
    rl->reading = true;
    read_queue(s, names, n, true, reread_cb, rl);
    free(names);
}

static void sighup_cb(uv_signal_t *handle, int signum)
{
    struct cs_zone_reload *rl = handle->data;
    cs_log_info("received SIGHUP: reading the time zones again from %s", rl->sched->zones.dir);
    reread(rl);
}

int cs_zone_reload_start(struct cs_zone_reload *rl, struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    int rc;

    *rl = (struct cs_zone_reload){.sched = s};
    if ((rc = uv_signal_init(s->loop, &rl->sighup)) != 0)
        return rc;
    rl->sighup.data = rl;
    rl->watching = true;
    return uv_signal_start(&rl->sighup, sighup_cb, SIGHUP);
}

void cs_zone_reload_stop(struct cs_zone_reload *rl)
{
    CS_ASSERT_LOOP();
    if (rl->watching)
        uv_close((uv_handle_t *)&rl->sighup, NULL);
    rl->watching = false;
}
