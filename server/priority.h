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
 * PostgreSQL, whose commits every state change waits for). So does each
 * minder, for the moment from its spawn to its first instructions: the launch
 * thread waits for that child to exec (posix_spawn is vfork-like), and a
 * child at nice 0 kept it waiting behind the jobs. The minder's first act is
 * to take the jobs' nice value (-n), which its command inherits: the nice
 * cschedd itself was started with.
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
 * the nice value alone. *jobs_nice gets the nice value the thread had: the
 * one jobs run at. 0 or a negative errno. */
int cs_priority_raise(int *jobs_nice);

/* The calling thread's nice value. */
int cs_priority_current(void);

#endif
