/* hook_body: the JSON body a webhook is POSTed (docs/hooks.md, "The
 * body"), made once when the delivery is queued, so that every attempt
 * sends the same bytes. Pure: any thread. */
#ifndef CS_HOOK_BODY_H
#define CS_HOOK_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "csched/v1/scheduler.pb-c.h"

struct cs_hook_body {
    const char *delivery; /* the delivery's key, the same on every attempt */
    const char *hook_name;
    Csched__V1__HookEvent event;
    const Csched__V1__Run *run;
    int64_t at_unix_ms;
    const char *console_url; /* NULL: no "console_url" */
};

/* The run's page in the web console: console_url, then "/runs/ID". */
void cs_hook_console_link(const char *console_url, int64_t run_id, char *buf, size_t cap);
/* "FAILED" for RUN_STATE_FAILED, as the CLI and the body show it. */
const char *cs_hook_state_name(Csched__V1__RunState state);

/* The body, malloc'd and NUL-terminated (no NUL inside: JSON escapes). */
char *cs_hook_body_new(const struct cs_hook_body *b);

#endif
