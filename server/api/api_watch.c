/* api_watch: the Watch stream, its events batched into WatchResponses by
 * cs_call_push_item. A watch with after_seq first replays the
 * committed events from the store, a page at a time as the client drains
 * them, then switches to live events. The switch is exact because the store
 * answers a read after every write queued before it has committed, and
 * publishes events in seq order: when a short page arrives, every event up to
 * last_published_seq was in it, and every later one will be published live. */
#define CS_LOG_COMPONENT "watch"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "event.h"
#include "job.h"
#include "log.h"
#include "util.h"

#define REPLAY_PAGE 512
/* A client further behind than this is cut off and told where to resume. */
#define MAX_BACKLOG 20000

struct cs_watch {
    struct cs_watch *prev, *next;
    struct cs_sched *sched;
    struct cs_call *call; /* NULL once the stream has ended */
    char *job_name;       /* NULL: every job */
    int64_t last_seq;     /* the last event sent (or skipped by the filter) */
    bool live;
    bool fetching;
};

static void unlink_watch(struct cs_watch *w)
{
    struct cs_sched *s = w->sched;
    if (w->prev != NULL)
        w->prev->next = w->next;
    else if (s->watches == w)
        s->watches = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

static void watch_free(struct cs_watch *w)
{
    free(w->job_name);
    free(w);
}

/* Ends the stream; the watch itself goes when no fetch holds it. */
static void watch_end(struct cs_watch *w, grpc_status_code code, const char *message)
{
    unlink_watch(w);
    if (w->call != NULL)
        cs_call_finish(w->call, code, message);
    w->call = NULL;
    if (!w->fetching)
        watch_free(w);
}

static bool wanted(const struct cs_watch *w, const Csched__V1__Event *ev)
{
    return w->job_name == NULL || strcmp(w->job_name, ev->job_name) == 0;
}

static void fetch_page(struct cs_watch *w);

static void on_page(void *arg, int status, Csched__V1__Event **events, size_t n)
{
    struct cs_watch *w = arg;
    w->fetching = false;
    if (w->call == NULL) {
        cs_store_events_free(events, n);
        watch_free(w);
        return;
    }
    if (status != 0) {
        cs_store_events_free(events, n);
        char message[160];
        (void)snprintf(message, sizeof(message),
                       "reading past events failed; reconnect with after_seq=%lld",
                       (long long)w->last_seq);
        watch_end(w, GRPC_STATUS_UNAVAILABLE, message);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        cs_call_push_item(w->call, &events[i]->base);
        w->last_seq = events[i]->seq;
    }
    cs_store_events_free(events, n);
    if (n < REPLAY_PAGE) {
        w->live = true;
        if (w->last_seq < w->sched->last_published_seq)
            w->last_seq = w->sched->last_published_seq;
    }
}

static void fetch_page(struct cs_watch *w)
{
    w->fetching = true;
    cs_store_event_list(w->sched->store, w->last_seq, w->job_name, REPLAY_PAGE, on_page, w);
}

static void on_drained(struct cs_call *call, void *ctx)
{
    struct cs_watch *w = ctx;
    if (!w->live && !w->fetching && w->call != NULL)
        fetch_page(w);
}

static void on_cancel(struct cs_call *call, void *ctx)
{
    struct cs_watch *w = ctx;
    watch_end(w, GRPC_STATUS_CANCELLED, "the client went away");
}

static const struct cs_stream_ops watch_ops = {.drained_cb = on_drained, .cancel_cb = on_cancel};

/* Each open Watch is visited for every event and may hold MAX_BACKLOG of
 * them (a few MB) for a client that does not read: 0, or -EAGAIN once call
 * has been failed for one too many. Walks the open streams, of which there
 * are at most --max-streams. */
static int check_room(struct cs_sched *s, struct cs_call *call)
{
    const char *who = cs_call_identity(call)->name;
    size_t all = 0, mine = 0;
    for (const struct cs_watch *w = s->watches; w != NULL; w = w->next) {
        all++;
        mine += strcmp(cs_call_identity(w->call)->name, who) == 0;
    }
    return cs_api_stream_room(call, s, all, mine, "Watch",
                              "close one (one stream with no job_name sees every job)");
}

static struct cs_watch *watch_new(struct cs_sched *s, struct cs_call *call)
{
    struct cs_watch *w = cs_xcalloc(1, sizeof(*w));
    w->sched = s;
    w->call = call;
    w->next = s->watches;
    if (s->watches != NULL)
        s->watches->prev = w;
    s->watches = w;
    cs_call_set_stream_ops(call, &watch_ops, w);
    return w;
}

void cs_api_watch(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__WatchRequest *req = (const Csched__V1__WatchRequest *)request;
    struct cs_sched *s = ctx;
    if (req->job_name[0] != '\0') {
        struct cs_err err;
        if (cs_job_name_validate(req->job_name, "job_name", &err) != 0) {
            cs_call_fail_err(call, &err);
            return;
        }
    }
    bool replay = req->start_case == CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ;
    if (replay && req->after_seq < 0) {
        cs_call_fail_field(call, -EINVAL, "after_seq",
                           "after_seq %lld is negative: use 0 to replay everything",
                           (long long)req->after_seq);
        return;
    }
    /* A seq this server never published comes from another database (one
     * restored or replaced): waiting for it would drop every event up to it
     * without a word. */
    if (replay && req->after_seq > s->last_published_seq) {
        cs_call_fail(
            call, -ERANGE,
            "after_seq %lld is past the last event, seq %lld: this server never sent it "
            "(was its database replaced?); watch from %lld, or from 0 to replay everything",
            (long long)req->after_seq, (long long)s->last_published_seq,
            (long long)s->last_published_seq);
        return;
    }
    /* The events up to it are gone (retention): a replay from before would
     * skip them without a word. */
    if (replay && req->after_seq < s->purged_event_seq) {
        cs_call_fail(call, -ERANGE,
                     "the events up to seq %lld were deleted by retention (--retention-days): "
                     "watch from after_seq=%lld, the oldest kept, or without after_seq from now",
                     (long long)s->purged_event_seq, (long long)s->purged_event_seq);
        return;
    }
    if (check_room(s, call) != 0)
        return;
    struct cs_watch *w = watch_new(s, call);
    w->job_name = req->job_name[0] != '\0' ? cs_xstrdup(req->job_name) : NULL;
    if (replay) {
        w->last_seq = req->after_seq;
        fetch_page(w);
    } else {
        w->live = true;
        w->last_seq = s->last_published_seq;
    }
}

/* The events' publish callback: hands a committed event to every open Watch. */
static void publish_cb(void *ctx, const Csched__V1__Event *ev)
{
    struct cs_sched *s = ctx;
    for (struct cs_watch *w = s->watches, *next; w != NULL; w = next) {
        next = w->next;
        if (!w->live || ev->seq <= w->last_seq)
            continue;
        if (cs_call_backlog(w->call) >= MAX_BACKLOG) {
            char message[160];
            (void)snprintf(message, sizeof(message),
                           "this watch fell %d events behind; reconnect with after_seq=%lld",
                           MAX_BACKLOG, (long long)w->last_seq);
            watch_end(w, GRPC_STATUS_RESOURCE_EXHAUSTED, message);
            continue;
        }
        if (wanted(w, ev))
            cs_call_push_item(w->call, &ev->base);
        w->last_seq = ev->seq;
    }
}

void cs_api_watch_init(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    cs_event_init(s, publish_cb, s);
}

void cs_api_watch_close_all(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    while (s->watches != NULL)
        watch_end(s->watches, GRPC_STATUS_UNAVAILABLE,
                  "the server is shutting down; reconnect with after_seq to resume");
}
