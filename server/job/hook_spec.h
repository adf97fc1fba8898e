/* hook_spec: what a valid job.hooks is (docs/hooks.md), and the defaults a
 * hook's unset fields mean. Pure functions: any thread. */
#ifndef CS_HOOK_SPEC_H
#define CS_HOOK_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "csched/v1/scheduler.pb-c.h"
#include "util.h"

#define CS_HOOKS_MAX 16
#define CS_HOOK_NAME_MAX 64
#define CS_HOOK_URL_MAX 2048
#define CS_HOOK_TIMEOUT_DEFAULT_MS 10000
#define CS_HOOK_TIMEOUT_MAX_MS 60000
/* A command runs as a job does, stopped by its minder on its timeout: it
 * may take as long as a day. */
#define CS_HOOK_COMMAND_TIMEOUT_MAX_MS (24 * 60 * 60 * 1000)
#define CS_HOOK_ATTEMPTS_DEFAULT 10
#define CS_HOOK_ATTEMPTS_MAX 100
#define CS_HOOK_COMMAND_ARGS_MAX 256
#define CS_HOOK_COMMAND_BYTES_MAX (64 * 1024)

/* Checks spec->hooks: at most CS_HOOKS_MAX; each a name (or none), events
 * each once, an https:// URL (http:// to a loopback address), a secret
 * reference as secret_env's, a CA file by an absolute path, or instead a
 * command or a shell (not both, within CS_HOOK_COMMAND_*), a timeout and
 * attempts within their limits. 0 or -EINVAL with err naming the field. */
int cs_hooks_validate(const Csched__V1__Job *spec, struct cs_err *err);
/* Whether hook runs a command (command or shell) rather than a POST. */
bool cs_hook_is_command(const Csched__V1__Hook *hook);
/* The name of spec->hooks[i]: its own, or "hook-<i+1>", in buf. */
const char *cs_hook_name(const Csched__V1__Hook *hook, size_t i, char *buf, size_t cap);
uint32_t cs_hook_timeout_ms(const Csched__V1__Hook *hook);
uint32_t cs_hook_max_attempts(const Csched__V1__Hook *hook);
/* Whether hook is told of event. */
bool cs_hook_wants(const Csched__V1__Hook *hook, Csched__V1__HookEvent event);
/* "started", "succeeded", ..., for the body and the CLI; "unknown" else. */
const char *cs_hook_event_name(Csched__V1__HookEvent event);

#endif
