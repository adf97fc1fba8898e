/* event: builds each Event, writes it, and publishes it after its commit. */
#include "event.h"

#include <stdlib.h>

#include "util.h"

struct emitted {
    struct cs_sched *sched;
    Csched__V1__Event event; /* strings borrowed from the copies below */
    char *job_name;
    char *message;
    cs_store_done_cb cb;
    void *arg;
};

static void committed_cb(void *arg, int status)
{
    struct emitted *e = arg;
    struct cs_sched *s = e->sched;
    if (e->cb != NULL)
        e->cb(e->arg, status);
    if (status == 0) {
        s->last_published_seq = e->event.seq;
        if (s->publish_cb != NULL)
            s->publish_cb(s->publish_ctx, &e->event);
    }
    free(e->job_name);
    free(e->message);
    free(e);
}

void cs_event_init(struct cs_sched *sched, cs_event_publish_cb publish_cb, void *ctx)
{
    CS_ASSERT_LOOP();
    sched->publish_cb = publish_cb;
    sched->publish_ctx = ctx;
}

void cs_event_emit(struct cs_sched *sched, const struct cs_run *run,
                   const Csched__V1__Attempt *attempt, cs_store_done_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    struct emitted *e = cs_xmalloc(sizeof(*e));
    Csched__V1__Event init = CSCHED__V1__EVENT__INIT;
    e->event = init;
    e->sched = sched;
    e->cb = cb;
    e->arg = arg;
    e->job_name = cs_xstrdup(run->msg->job_name);
    e->event.seq = sched->next_seq++;
    e->event.at_unix_ms = cs_now_unix_ms();
    e->event.run_id = run->msg->id;
    e->event.job_name = e->job_name;
    if (attempt != NULL) {
        e->event.attempt = attempt->number;
        e->event.state = attempt->state;
        e->message = cs_xstrdup(attempt->message);
        cs_outcome_set_event(&e->event, cs_outcome_of_attempt(attempt));
    } else {
        e->event.state = run->msg->state;
        e->message = cs_xstrdup(run->msg->message);
        cs_outcome_set_event(&e->event, cs_outcome_of_run(run->msg));
    }
    e->event.message = e->message;
    sched->ops->event_put_cb(sched->store, &e->event, committed_cb, e);
}
