/* priority: cschedd runs ahead of the jobs it starts.
 *
 * Under load the jobs' processes outnumber the cores many times over, and the
 * kernel's fair scheduler then lets a waking thread wait 20-40 ms behind them
 * (measured with a bare 10 ms timer beside 40 starting jobs on 2 cores). The
 * loop would answer late, start runs late and see timeouts late. So the main
 * thread takes nice -20 before it makes any other thread: every thread of
 * cschedd inherits it (libuv's pool and gRPC's threads included, so the loop
 * never waits on a lock or a condition variable behind a thread of lower
 * priority), and so do the processes those threads start (the embedded
 * PostgreSQL, whose commits every state change waits for). The launch thread
 * alone sets SCHED_RESET_ON_FORK, so every minder, and so every job, starts
 * at nice 0.
 *
 * Not a real-time policy: the loop calls into gRPC, which shares locks with
 * its own threads, and a real-time thread spinning on a lock whose holder
 * cannot get a core made the loop later, not earlier (see
 * docs/architecture.md). A nice value keeps every thread running. */
#ifndef CS_PRIORITY_H
#define CS_PRIORITY_H

/* The nice value of cschedd's threads under --priority high. */
#define CS_PRIORITY_HIGH_NICE (-20)

/* Sets the calling thread, and so every thread it makes afterwards, to
 * CS_PRIORITY_HIGH_NICE. Without CAP_SYS_NICE it logs a warning and leaves
 * the nice value alone. 0 or a negative errno. */
int cs_priority_raise(void);

/* Makes every thread and process the calling thread creates from now on
 * start at nice 0 if this thread's nice is negative (SCHED_RESET_ON_FORK).
 * Needs no privilege. 0 or a negative errno, logged. */
int cs_priority_children_start_normal(void);

#endif
