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

static void on_committed(void *arg, int status)
{
    struct emitted *e = arg;
    if (e->cb != NULL)
        e->cb(e->arg, status);
    if (status == 0) {
        e->sched->last_published_seq = e->event.seq;
        cs_watch_publish(e->sched, &e->event);
    }
    free(e->job_name);
    free(e->message);
    free(e);
}

void cs_event_emit(struct cs_sched *sched, const struct cs_run *run,
                   const Csched__V1__Attempt *attempt, cs_store_done_cb cb, void *arg)
{
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
        if (attempt->outcome_case == CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE) {
            e->event.outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
            e->event.exit_code = attempt->exit_code;
        } else if (attempt->outcome_case == CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL) {
            e->event.outcome_case = CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL;
            e->event.term_signal = attempt->term_signal;
        }
    } else {
        e->event.state = run->msg->state;
        e->message = cs_xstrdup(run->msg->message);
        if (run->msg->outcome_case == CSCHED__V1__RUN__OUTCOME_EXIT_CODE) {
            e->event.outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
            e->event.exit_code = run->msg->exit_code;
        } else if (run->msg->outcome_case == CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL) {
            e->event.outcome_case = CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL;
            e->event.term_signal = run->msg->term_signal;
        }
    }
    e->event.message = e->message;
    cs_store_event_put(sched->store, &e->event, on_committed, e);
}
