/* api_health: the grpc.health.v1 Health service, open to every caller.
 * Check answers the serving status now; Watch sends it at once and again
 * whenever it changes, which a timer looks for every CS_HEALTH_POLL_MS
 * while a Watch is open. Health streams are listed apart from the event
 * Watch streams: they get no events, so the thousands a caller without a
 * role may open add nothing to what each event costs. Each one holds
 * memory, so at most max_watches are open at once: one more is refused
 * with RESOURCE_EXHAUSTED. Loop thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "grpc/health/v1/health.pb-c.h"
#include "util.h"

struct cs_health_watch {
    struct cs_health_watch *prev, *next;
    struct cs_health *health;
    struct cs_call *call;
    bool known; /* a service served here: follows its status */
};

struct cs_health {
    uv_timer_t timer;
    struct cs_health_watch *watches;
    size_t n_watches, max_watches;
    Grpc__Health__V1__HealthCheckResponse__ServingStatus sent; /* to the known watches */
};

/* "" is the whole server; the one named service is ours. */
static bool known_service(const char *name)
{
    return name[0] == '\0' || strcmp(name, "csched.v1.Scheduler") == 0;
}

/* Serving needs a database that answers (the store's watchdog takes a
 * frozen one for gone) and has room to write, a state dir that can be
 * written (dir_check), and the active replica, its state loaded (until
 * then every call but health's is UNAVAILABLE), not draining. */
static Grpc__Health__V1__HealthCheckResponse__ServingStatus serving(struct cs_sched *s)
{
    return s->loaded && cs_store_is_accepting(s->store) && cs_store_is_active(s->store) &&
                   !cs_store_is_out_of_space(s->store) && s->state_dir_status == 0 && !s->draining
               ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
               : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
}

void cs_api_health_check(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Grpc__Health__V1__HealthCheckRequest *req =
        (const Grpc__Health__V1__HealthCheckRequest *)request;
    if (!known_service(req->service)) {
        cs_call_fail(call, -ENOENT, "service %.100s is not served here", req->service);
        return;
    }
    Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    resp.status = serving(ctx);
    cs_call_reply(call, &resp.base);
}

static void push_status(struct cs_call *call,
                        Grpc__Health__V1__HealthCheckResponse__ServingStatus status)
{
    Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    resp.status = status;
    cs_call_push(call, &resp.base);
}

/* Sends the status to every watch of a known service when it has changed. */
static void poll_cb(uv_timer_t *timer)
{
    struct cs_sched *s = timer->data;
    struct cs_health *h = s->health;
    Grpc__Health__V1__HealthCheckResponse__ServingStatus now = serving(s);
    if (now == h->sent)
        return;
    h->sent = now;
    for (struct cs_health_watch *w = h->watches; w != NULL; w = w->next)
        if (w->known)
            push_status(w->call, now);
}

static void watch_remove(struct cs_health_watch *w)
{
    struct cs_health *h = w->health;
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        h->watches = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    free(w);
    h->n_watches--;
    if (h->watches == NULL)
        (void)uv_timer_stop(&h->timer);
}

static void on_cancel(struct cs_call *call, void *ctx)
{
    cs_call_finish(call, GRPC_STATUS_CANCELLED, "the client went away");
    watch_remove(ctx);
}

static const struct cs_stream_ops health_ops = {.cancel_cb = on_cancel};

void cs_api_health_watch(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Grpc__Health__V1__HealthCheckRequest *req =
        (const Grpc__Health__V1__HealthCheckRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_health *h = s->health;
    if (h->n_watches >= h->max_watches) {
        cs_call_fail(call, -EAGAIN,
                     "%zu health Watch streams are open, the most cschedd keeps "
                     "(--max-health-watches); close some, or use Check",
                     h->n_watches);
        return;
    }
    struct cs_health_watch *w = cs_xcalloc(1, sizeof(*w));
    w->health = h;
    w->call = call;
    w->known = known_service(req->service);
    if (h->watches == NULL) {
        h->sent = serving(s);
        CS_ASSERT(uv_timer_start(&h->timer, poll_cb, CS_HEALTH_POLL_MS, CS_HEALTH_POLL_MS) == 0);
    }
    w->next = h->watches;
    if (h->watches != NULL)
        h->watches->prev = w;
    h->watches = w;
    h->n_watches++;
    cs_call_set_stream_ops(call, &health_ops, w);
    push_status(
        call, w->known ? h->sent
                       : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN);
}

int cs_api_health_init(struct cs_sched *s, size_t max_watches)
{
    CS_ASSERT_LOOP();
    struct cs_health *h = cs_xcalloc(1, sizeof(*h));
    h->max_watches = max_watches;
    int rc = uv_timer_init(s->loop, &h->timer);
    if (rc != 0) {
        free(h);
        return rc;
    }
    h->timer.data = s;
    s->health = h;
    return 0;
}

static void timer_closed_cb(uv_handle_t *handle)
{
    free(CS_CONTAINER_OF((uv_timer_t *)handle, struct cs_health, timer));
}

void cs_api_health_close_all(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    struct cs_health *h = s->health;
    if (h == NULL)
        return;
    while (h->watches != NULL) {
        cs_call_finish(h->watches->call, GRPC_STATUS_UNAVAILABLE, "the server is shutting down");
        watch_remove(h->watches);
    }
    s->health = NULL;
    uv_close((uv_handle_t *)&h->timer, timer_closed_cb);
}
