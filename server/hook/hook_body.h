/* hook_body: the JSON body a webhook is POSTed (docs/hooks.md, "The
 * body"), made once when the delivery is queued, so that every attempt
 * sends the same bytes. Pure: any thread. */
#ifndef CS_HOOK_BODY_H
#define CS_HOOK_BODY_H

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

/* The body, malloc'd and NUL-terminated (no NUL inside: JSON escapes). */
char *cs_hook_body_new(const struct cs_hook_body *b);

#endif
