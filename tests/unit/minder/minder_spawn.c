/* The real csched-minder started by a test (minder_spawn.h). */
#include "minder_spawn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

pid_t cs_test_minder_spawn(const char *const *args, int fd)
{
    size_t n = 0;
    pid_t pid;

    while (args[n] != NULL)
        n++;
    const char **argv = calloc(n + 2, sizeof(*argv));
    assert_non_null(argv);
    argv[0] = "csched-minder";
    memcpy(argv + 1, args, n * sizeof(*argv));
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (fd >= 0 && dup2(fd, 3) != 3)
            _exit(98);
        execv(CS_MINDER_PATH, (char *const *)argv);
        _exit(99);
    }
    free(argv);
    return pid;
}
