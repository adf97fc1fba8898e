/* hook_command: what a command hook runs (docs/hooks.md, "Command hooks";
 * docs/design/0034-command-hooks.md). When a delivery is queued, the job
 * the command runs as is made from the job as it stands (its user, group,
 * env, secret_env, working_dir, resources and stop settings), the hook's
 * command or shell, and the event's CSCHED_* variables, and kept in the
 * delivery's row as JSON; so every attempt, after a restart too, runs the
 * same command as the same user. When the delivery is due, the minder's
 * launch is built from that row, as launch_build.c builds an attempt's.
 * Loop thread (memory only). */
#ifndef CS_HOOK_COMMAND_H
#define CS_HOOK_COMMAND_H

#include <stdint.h>

#include "attempt_limits.h"
#include "csched/v1/scheduler.pb-c.h"
#include "hook_body.h"
#include "launcher.h"
#include "store.h"
#include "util.h"

/* What every command hook's minder is started with; all borrowed for the
 * hooks' life. */
struct cs_hook_command_config {
    const char *state_dir;
    const char *minder_path;
    const char *lease_path; /* NULL: none */
    const char *job_user;   /* --job-user; NULL: runas.h's default */
    const struct cs_cgroup_parents *cgroups;
    char *const *base_env;   /* every command's base environment */
    char *const *server_env; /* cschedd's, for secret_env by variable */
};

/* The job the command of hook (of spec) runs as, told b's event, as JSON
 * (malloc'd). console_url may be NULL. */
char *cs_hook_command_new(const Csched__V1__Job *spec, const Csched__V1__Hook *hook,
                          const struct cs_hook_body *b);
/* The launch of due's next attempt (due->command holds what
 * cs_hook_command_new made), its directory named from now_unix_ms: 0 with
 * *out owned by the caller, or -EINVAL with err saying why (a row that is
 * not a job). */
int cs_hook_command_launch(const struct cs_hook_command_config *c,
                           const struct cs_store_hook_due *due, int64_t now_unix_ms,
                           struct cs_launch **out, struct cs_err *err);

#endif
