/* The real csched-minder (CS_MINDER_PATH, given to each test that compiles
 * this) started by a test, as cschedd's launch thread starts it. */
#ifndef CS_TEST_MINDER_SPAWN_H
#define CS_TEST_MINDER_SPAWN_H

#include <sys/types.h>

/* Execs the minder with args (NULL-terminated, without argv[0]) in a
 * forked child; fd, unless -1, becomes its fd 3 (the wait socket of -w).
 * Returns the child's pid (asserts). */
pid_t cs_test_minder_spawn(const char *const *args, int fd);

#endif
