/* testfile: a small file written whole by a test, for unit and integration
 * tests alike (a victim a planted link must not reach, a config, a
 * secret). Fails the cmocka test on any error. */
#ifndef CS_TESTFILE_H
#define CS_TESTFILE_H

#include <sys/resource.h>

/* Writes text to path, made or truncated with mode 0666 less the umask. */
void cs_test_write_text(const char *path, const char *text);

/* Lowers this process's soft RLIMIT_NOFILE to its lowest free fd, so that
 * no file may open (EMFILE); the limit it had goes into was, for
 * setrlimit to restore. */
void cs_test_no_more_fds(struct rlimit *was);

#endif
