/* hook_defaults: the server-wide default hooks (--default-hooks FILE),
 * which every job's runs are told to besides the job's own hooks: a JSON
 * file holding a csched.v1.Job whose only field is hooks, in the API's
 * JSON mapping (docs/hooks.md, "Default hooks"). */
#ifndef CS_HOOK_DEFAULTS_H
#define CS_HOOK_DEFAULTS_H

#include "csched/v1/scheduler.pb-c.h"
#include "util.h"

/* The file's most bytes. */
#define CS_HOOK_DEFAULTS_MAX_BYTES (1024 * 1024)

/* Reads and checks path (blocking: at start, before the loop runs): *out
 * the hooks (free with protobuf_c_message_free_unpacked), 0; or -errno
 * with err naming the file and what is wrong. */
int cs_hook_defaults_load(const char *path, Csched__V1__Job **out, struct cs_err *err);

#endif
