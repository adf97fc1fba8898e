/* priority: cschedd's share of the CPU against the jobs it runs.
 *
 * Every minder starts a session of its own, and with autogroup scheduling
 * (on in most distributions' kernels) Linux shares the CPU between sessions
 * first: cschedd's loop, launch thread and gRPC threads together would get
 * no more than any one job. During a burst the loop then waits behind the
 * jobs for many milliseconds at a time. Lowering the nice value of
 * cschedd's own session (/proc/self/autogroup) puts it ahead of its jobs;
 * the jobs' sessions keep nice 0 among themselves. */
#ifndef CS_PRIORITY_H
#define CS_PRIORITY_H

#include "util.h"

/* Sets the nice value of the session cschedd leads (0: leaves it) and
 * takes CAP_SYS_NICE out of the ambient set its children would inherit.
 * Call before starting any thread or process. Returns 0, or a negative
 * errno with err saying why it could not and what to do: -ENOTTY when the
 * process does not lead its session (changing the session of the shell that
 * started it would outlive cschedd), -ENOSYS when the kernel has no
 * autogroup scheduling, -EPERM without CAP_SYS_NICE. */
int cs_priority_set_session_nice(int nice, struct cs_err *err);

#endif
