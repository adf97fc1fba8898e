/* The real csched-minder started by a test (minder_spawn.h). */
#include "minder_spawn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

pid_t cs_test_minder_spawn(const char *const *args, int fd)
{
    const char *argv[32] = {"csched-minder"};
    size_t n = 1;
    pid_t pid;

    while (*args != NULL) {
        assert_true(n < sizeof(argv) / sizeof(argv[0]) - 1);
        argv[n++] = *args++;
    }
    argv[n] = NULL;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (fd >= 0 && dup2(fd, 3) != 3)
            _exit(98);
        execv(CS_MINDER_PATH, (char *const *)argv);
        _exit(99);
    }
    return pid;
}
