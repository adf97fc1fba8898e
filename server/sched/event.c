/* event: builds each Event, writes it, and publishes it after its commit. */
#include "event.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* One allocation per event, its strings' copies after it: seven events a
 * run made three mallocs each. */
struct emitted {
    struct cs_sched *sched;
    Csched__V1__Event event; /* its strings point into text */
    cs_store_done_cb cb;
    void *arg;
    char text[]; /* the job name, then the message, each NUL-terminated */
};

static void committed_cb(void *arg, int status, int64_t seq)
{
    struct emitted *e = arg;
    struct cs_sched *s = e->sched;
    if (e->cb != NULL)
        e->cb(e->arg, status);
    if (status == 0) {
        e->event.seq = seq; /* on a shared database, the one it has there */
        s->last_published_seq = e->event.seq;
        if (s->publish_cb != NULL)
            s->publish_cb(s->publish_ctx, &e->event);
    }
    free(e);
}

void cs_event_init(struct cs_sched *sched, cs_event_publish_cb publish_cb, void *ctx)
{
    CS_ASSERT_LOOP();
    sched->publish_cb = publish_cb;
    sched->publish_ctx = ctx;
}

/* Builds the event of run (attempt NULL) or of attempt going to state at
 * at_unix_ms, writes it and publishes it after its commit. The outcome and
 * message are those of the state it is in, if state is that one. */
static void emit(struct cs_sched *sched, const struct cs_run *run,
                 const Csched__V1__Attempt *attempt, Csched__V1__RunState state, int64_t at_unix_ms,
                 bool recovered, cs_store_done_cb cb, void *arg)
{
    bool current = state == (attempt != NULL ? attempt->state : run->msg->state);
    const char *message = !current ? "" : attempt != NULL ? attempt->message : run->msg->message;
    size_t name_len = strlen(run->msg->job_name) + 1, message_len = strlen(message) + 1;
    struct emitted *e = cs_xmalloc(sizeof(*e) + name_len + message_len);
    Csched__V1__Event init = CSCHED__V1__EVENT__INIT;
    e->event = init;
    e->sched = sched;
    e->cb = cb;
    e->arg = arg;
    memcpy(e->text, run->msg->job_name, name_len);
    memcpy(e->text + name_len, message, message_len);
    e->event.seq = sched->next_seq++; /* or, on a shared database, its place in this loop's order */
    e->event.at_unix_ms = at_unix_ms;
    e->event.run_id = run->msg->id;
    e->event.job_name = e->text;
    e->event.message = e->text + name_len;
    e->event.state = state;
    e->event.recovered = recovered;
    if (attempt != NULL)
        e->event.attempt = attempt->number;
    if (current)
        cs_outcome_set_event(&e->event, attempt != NULL ? cs_outcome_of_attempt(attempt)
                                                        : cs_outcome_of_run(run->msg));
    sched->ops->event_put_cb(sched->store, &e->event, committed_cb, e);
    if (attempt == NULL && sched->run_hook_cb != NULL)
        sched->run_hook_cb(sched->run_hook_ctx, run->job->spec, run->msg, state, false);
}

void cs_event_emit(struct cs_sched *sched, const struct cs_run *run,
                   const Csched__V1__Attempt *attempt, cs_store_done_cb cb, void *arg)
{
    CS_ASSERT_LOOP();
    emit(sched, run, attempt, attempt != NULL ? attempt->state : run->msg->state, cs_now_unix_ms(),
         false, cb, arg);
}

void cs_event_emit_recovered(struct cs_sched *sched, const struct cs_run *run,
                             const Csched__V1__Attempt *attempt, Csched__V1__RunState state,
                             int64_t at_unix_ms)
{
    CS_ASSERT_LOOP();
    emit(sched, run, attempt, state, at_unix_ms > 0 ? at_unix_ms : cs_now_unix_ms(), true, NULL,
         NULL);
}
