/* api_fires: ListFires, every fire of the jobs' schedules in a window, a page
 * of jobs by name (the console's timeline). Computed from the schedules in
 * memory on the loop, in bounded pages: FIRES_PER_JOB_MAX a job, a page
 * ending after the job that brings it to FIRES_PER_PAGE_MAX or once
 * SCAN_MAX jobs have been looked at. Loop thread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "job.h"
#include "job_table.h"
#include "label_selector.h"
#include "util.h"

#define TOKEN_PREFIX "fires:"
#define DAY_MS (24 * 3600 * 1000LL)
#define WINDOW_MAX_MS (7 * DAY_MS)
/* A fire a minute for 24 hours: more than a timeline can draw apart. */
#define FIRES_PER_JOB_MAX 1440
/* With SCAN_MAX, what bounds the loop's time in one call: a page of 20,160
 * fires took 2-3 ms, the call's round trip included (docs/http.md), and
 * its reply 118 KiB. A
 * page may then hold no job yet have a token (none of those looked at
 * fires in the window). */
#define FIRES_PER_PAGE_MAX 20000
#define SCAN_MAX 10000

/* The first fire of job at or after from_ms and before to_ms into *fire:
 * whether there is one. A paused job fires none. */
static bool first_fire(const struct cs_job *job, int64_t from_ms, int64_t to_ms,
                       struct cs_fire *fire)
{
    /* Strictly after the second before from_ms. */
    int64_t after_s = (from_ms + 999) / 1000 - 1;
    return job->schedule != NULL && !job->spec->paused &&
           cs_schedule_next(job->schedule, after_s, fire) == 0 && fire->at_s * 1000 < to_ms;
}

/* job's fires in [from_ms, to_ms) into msg, their times into at (room for
 * FIRES_PER_JOB_MAX): how many. */
static size_t job_fires(const struct cs_job *job, int64_t from_ms, int64_t to_ms,
                        Csched__V1__JobFires *msg, int64_t *at)
{
    csched__v1__job_fires__init(msg);
    msg->job_name = job->spec->name;
    msg->at_unix_ms = at;
    struct cs_fire fire;
    size_t n = 0;
    if (!first_fire(job, from_ms, to_ms, &fire))
        return 0;
    do {
        if (n == FIRES_PER_JOB_MAX) {
            msg->truncated = true;
            break;
        }
        at[n++] = fire.at_s * 1000;
    } while (cs_schedule_next(job->schedule, fire.at_s, &fire) == 0 && fire.at_s * 1000 < to_ms);
    msg->n_at_unix_ms = n;
    return n;
}

/* The window of req into *from_ms, *to_ms: 0, or -EINVAL with the call failed. */
static int window(struct cs_call *call, const Csched__V1__ListFiresRequest *req, int64_t *from_ms,
                  int64_t *to_ms)
{
    *from_ms = req->from_unix_ms != 0 ? req->from_unix_ms : cs_now_unix_ms();
    *to_ms = req->to_unix_ms != 0 ? req->to_unix_ms : *from_ms + DAY_MS;
    if (*from_ms < 0 || *to_ms <= *from_ms || *to_ms - *from_ms > WINDOW_MAX_MS) {
        cs_call_fail_field(call, -EINVAL, "to_unix_ms",
                           "to_unix_ms must be after from_unix_ms (or now), by 7 days at most");
        return -EINVAL;
    }
    return 0;
}

void cs_api_list_fires(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ListFiresRequest *req = (const Csched__V1__ListFiresRequest *)request;
    struct cs_sched *s = ctx;
    int64_t from_ms, to_ms;
    size_t start = 0;
    if (window(call, req, &from_ms, &to_ms) != 0)
        return;
    if (req->page_token[0] != '\0') {
        const char *after = req->page_token + strlen(TOKEN_PREFIX);
        if (strncmp(req->page_token, TOKEN_PREFIX, strlen(TOKEN_PREFIX)) != 0 ||
            cs_job_name_validate(after, "page_token", NULL) != 0) {
            cs_api_fail_token(call);
            return;
        }
        start = cs_job_index_after(s, after);
    }
    struct cs_label_selector sel;
    if (cs_api_selector_parse(call, req->label_selector, &sel) != 0)
        return;
    size_t max = cs_api_page_size(req->page_size);
    size_t end = s->n_jobs - start > SCAN_MAX ? start + SCAN_MAX : s->n_jobs;
    Csched__V1__JobFires **jobs = cs_xcalloc(max, sizeof(*jobs));
    Csched__V1__JobFires *msgs = cs_xcalloc(max, sizeof(*msgs));
    /* A job starts below FIRES_PER_PAGE_MAX and adds FIRES_PER_JOB_MAX at most. */
    int64_t *at = cs_xmalloc((FIRES_PER_PAGE_MAX + FIRES_PER_JOB_MAX) * sizeof(*at));
    size_t i = start, n = 0, fires = 0;
    for (; i < end && n < max && fires < FIRES_PER_PAGE_MAX; i++) {
        if (!cs_label_selector_matches_job(&sel, s->jobs[i]->spec))
            continue;
        size_t got = job_fires(s->jobs[i], from_ms, to_ms, &msgs[n], at + fires);
        if (got == 0)
            continue;
        fires += got;
        jobs[n] = &msgs[n];
        n++;
    }
    /* A token only if a job that fires follows: the last page is never
     * empty. One first fire a job looked at. */
    struct cs_fire fire;
    while (i < end && !(cs_label_selector_matches_job(&sel, s->jobs[i]->spec) &&
                        first_fire(s->jobs[i], from_ms, to_ms, &fire)))
        i++;
    Csched__V1__ListFiresResponse resp = CSCHED__V1__LIST_FIRES_RESPONSE__INIT;
    resp.jobs = jobs;
    resp.n_jobs = n;
    char token[CS_JOB_NAME_MAX + 16] = "";
    if (i < s->n_jobs)
        (void)snprintf(token, sizeof(token), "%s%s", TOKEN_PREFIX, s->jobs[i - 1]->spec->name);
    resp.next_page_token = token;
    cs_call_reply(call, &resp.base);
    cs_label_selector_free(&sel);
    free(at);
    free(msgs);
    free(jobs);
}
