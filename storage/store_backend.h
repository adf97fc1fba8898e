/* store_backend: the database backend that serves cschedd gets cschedd's
 * priority when it runs on this machine.
 *
 * Every state change waits for a commit by that one backend process, and
 * PostgreSQL makes each backend lead a session of its own. With autogroup
 * scheduling the kernel shares the CPU between sessions first, so the
 * backend got the share of one job while cschedd's session is weighed like
 * dozens (server/priority.h): under load from the jobs each commit waited
 * in the run queue. The backend's session is given cschedd's nice value,
 * through /proc/PID/autogroup, as cschedd's own.
 *
 * Only a backend proven local is touched: the connection is a unix socket,
 * the process listening on it (SO_PEERCRED: the postmaster) is the
 * backend's parent, and the backend leads its session (so the session
 * changed is the backend's alone, never the postmaster's or ours). A TCP
 * connection, or a pid that names another process here (a server in
 * another pid namespace, a remote one), is left alone.
 * Loop thread: procfs reads and writes only. */
#ifndef CS_STORE_BACKEND_H
#define CS_STORE_BACKEND_H

#include <sys/types.h>

/* Sets the session nice value of backend, the process serving the unix
 * socket fd, once it is proven to be the child of the process listening on
 * it and to lead a session of its own. Returns 0, -EREMOTE when fd is not a
 * unix socket, -ESRCH when backend is not such a child (or is gone), or the
 * errno of the write (-EPERM, -EACCES: no right to it; -ENOENT: no
 * autogroup scheduling). */
int cs_store_backend_nice(int fd, pid_t backend, int nice);

#endif
