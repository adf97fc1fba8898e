/* priority: cschedd's own threads run ahead of the jobs it starts.
 *
 * Under load the jobs' processes outnumber the cores many times over, and the
 * kernel's fair scheduler then lets a waking thread wait 20-40 ms behind them
 * (measured with a bare 10 ms timer beside 40 starting jobs on 2 cores). The
 * loop would answer late, start runs late and see timeouts late. So the loop,
 * the launch thread and the gRPC bridge each take nice -20 for themselves,
 * with SCHED_RESET_ON_FORK so that every thread and process they create
 * (libuv's pool, gRPC's threads, every minder and so every job) starts back
 * at nice 0.
 *
 * Not a real-time policy: the loop calls into gRPC, which shares locks with
 * threads of normal priority, and a real-time thread spinning on a lock whose
 * holder cannot run made the loop later, not earlier (see
 * docs/architecture.md). A nice value keeps every thread running.
 *
 * Without CAP_SYS_NICE the request fails and the thread keeps nice 0; cschedd
 * logs that once and goes on. */
#ifndef CS_PRIORITY_H
#define CS_PRIORITY_H

#include <stdbool.h>

/* The nice value of cschedd's own threads under --priority high. */
#define CS_PRIORITY_HIGH_NICE (-20)

/* Set once at start, before any thread of ours exists: whether
 * cs_priority_raise_this_thread raises the thread at all. */
void cs_priority_enable(bool high);

/* Raises the calling thread if enabled. 0, or a negative errno (-EPERM
 * without the capability), already logged. */
int cs_priority_raise_this_thread(const char *thread_name);

#endif
