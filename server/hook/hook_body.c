/* hook_body: a webhook's JSON body (see hook_body.h), made with jansson. */
#include "hook_body.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook_spec.h"
#include "util.h"

const char *cs_hook_state_name(Csched__V1__RunState state)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&csched__v1__run_state__descriptor, (int)state);
    /* "RUN_STATE_FAILED" reads "FAILED", as the CLI shows it. */
    return v == NULL ? "UNKNOWN" : v->name + strlen("RUN_STATE_");
}

/* An integer, or JSON null when the run has none of that outcome. */
static json_t *outcome(const Csched__V1__Run *run, Csched__V1__Run__OutcomeCase which, int32_t v)
{
    return run->outcome_case == which ? json_integer(v) : json_null();
}

static json_t *run_object(const Csched__V1__Run *run)
{
    json_t *o = json_object();
    CS_ASSERT(o != NULL);
    json_object_set_new(o, "id", json_integer(run->id));
    json_object_set_new(o, "state", json_string(cs_hook_state_name(run->state)));
    json_object_set_new(o, "attempts", json_integer((json_int_t)run->n_attempts));
    json_object_set_new(o, "exit_code",
                        outcome(run, CSCHED__V1__RUN__OUTCOME_EXIT_CODE, run->exit_code));
    json_object_set_new(o, "term_signal",
                        outcome(run, CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL, run->term_signal));
    json_object_set_new(o, "message", json_string(run->message));
    json_object_set_new(o, "triggered_by", json_string(run->triggered_by));
    json_object_set_new(o, "slot_unix_ms", json_integer(run->slot_unix_ms));
    json_object_set_new(o, "created_unix_ms", json_integer(run->created_unix_ms));
    json_object_set_new(o, "started_unix_ms", json_integer(run->started_unix_ms));
    json_object_set_new(o, "ended_unix_ms", json_integer(run->ended_unix_ms));
    return o;
}

void cs_hook_console_link(const char *console_url, int64_t run_id, char *buf, size_t cap)
{
    size_t n = strlen(console_url);
    const char *slash = n > 0 && console_url[n - 1] == '/' ? "" : "/";
    (void)snprintf(buf, cap, "%s%sruns/%lld", console_url, slash, (long long)run_id);
}

char *cs_hook_body_new(const struct cs_hook_body *b)
{
    json_t *o = json_object();
    CS_ASSERT(o != NULL);
    json_object_set_new(o, "delivery", json_string(b->delivery));
    json_object_set_new(o, "event", json_string(cs_hook_event_name(b->event)));
    json_object_set_new(o, "job", json_string(b->run->job_name));
    json_object_set_new(o, "hook", json_string(b->hook_name));
    json_object_set_new(o, "at_unix_ms", json_integer(b->at_unix_ms));
    json_object_set_new(o, "run", run_object(b->run));
    if (b->console_url != NULL) {
        char link[2048];
        cs_hook_console_link(b->console_url, b->run->id, link, sizeof(link));
        json_object_set_new(o, "console_url", json_string(link));
    }
    char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    CS_ASSERT(text != NULL);
    json_decref(o);
    return text;
}
