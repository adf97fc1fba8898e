/* Internals of the test harness shared by its files: starting processes
 * (optionally as another user, with their output to a log file), bounded
 * waits, directory removal, and the registry of live clusters and daemons
 * that cs_test_fail cleans up. */
#ifndef CS_TESTLIB_INT_H
#define CS_TESTLIB_INT_H

#include <stdbool.h>
#include <sys/types.h>

#include "testlib.h"

struct cs_test__spawn {
    /* argv[0] is an absolute path; NULL-terminated. */
    const char *const *argv;
    /* When true the child drops to uid/gid (no supplementary groups). */
    bool set_user;
    uid_t uid;
    gid_t gid;
    /* stdout and stderr are appended to this file; NULL inherits them. */
    const char *log_path;
    /* Signal the child gets when the thread that started it exits; 0 = none. */
    int pdeath_signal;
    /* When true the child leads a session of its own, as a service manager
     * starts a daemon (see docs/operations.md, "Its own session"). */
    bool new_session;
};

/* cs_test__spawn starts s->argv and stores its pid. Uses fork + exec because
 * posix_spawn cannot change the user or set a parent-death signal; the child
 * makes only async-signal-safe calls. Returns 0 or a negative errno (also for
 * an exec that failed in the child). */
int cs_test__spawn(const struct cs_test__spawn *s, pid_t *pid_out);

/* cs_test__wait waits up to timeout_ms for pid to end and reaps it. Stores
 * the wait status in *wstatus. Returns 0, -ETIMEDOUT (still running, not
 * reaped) or a negative errno. */
int cs_test__wait(pid_t pid, int timeout_ms, int *wstatus);

/* cs_test__exit_code turns a wait status into 0 / exit code / 128 + signal. */
int cs_test__exit_code(int wstatus);

/* cs_test__run spawns, waits up to timeout_ms (killing on timeout) and
 * returns the exit code as cs_test__exit_code, or a negative errno. */
int cs_test__run(const struct cs_test__spawn *s, int timeout_ms);

/* cs_test__each_process calls process_cb with the pid of every process in
 * /proc (those that end meanwhile may be missed or named). Returns 0 or a
 * negative errno if /proc cannot be read. */
typedef void (*cs_test__process_cb)(pid_t pid, void *arg);
int cs_test__each_process(cs_test__process_cb process_cb, void *arg);

/* cs_test__print_tail prints the last max_bytes of a log file to stderr
 * under a header naming it. */
void cs_test__print_tail(const char *what, const char *path, long max_bytes);

/* The registry of live resources for cs_test_fail. Adding past 32 of a kind
 * is ignored (the resource then only misses the emergency cleanup). */
void cs_test__register_pg(struct cs_testpg *pg);
void cs_test__unregister_pg(struct cs_testpg *pg);
void cs_test__register_testd(struct cs_testd *d);
void cs_test__unregister_testd(struct cs_testd *d);

/* Emergency cleanups called by cs_test_fail: print what helps, kill, remove
 * the directory unless kept. They do not free. */
void cs_test__testpg_abandon(struct cs_testpg *pg);
void cs_test__testd_abandon(struct cs_testd *d);

#endif
