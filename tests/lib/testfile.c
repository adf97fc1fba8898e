/* testfile: see testfile.h. */
#include "testfile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

void cs_test_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fail_msg("cannot make %s", path);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

void cs_test_no_more_fds(struct rlimit *was)
{
    int fd = dup(0);
    assert_true(fd >= 0);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, was), 0);
    struct rlimit none = *was;
    none.rlim_cur = (rlim_t)fd;
    (void)close(fd);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
}
