/* attempt_tail work: reading the last bytes of an attempt's log files, on
 * libuv's pool. Each work item is its own attempt's, which the loop leaves
 * alone until the work's done callback. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attempt_tail.h"
#include "minder_contract.h"
#include "util.h"

int cs_attempt_tail_read(const char *path, size_t cap, uint8_t **bytes, size_t *len)
{
    *bytes = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? 0 : -errno;
    if (rc == 0 && !S_ISREG(st.st_mode))
        rc = -EINVAL;
    size_t size = rc == 0 ? (size_t)st.st_size : 0;
    size_t want = size < cap ? size : cap;
    uint8_t *buf = want > 0 ? cs_xmalloc(want) : NULL;
    size_t got = 0;
    /* The minder has exited: the file no longer grows, but a short read
     * (a file cut meanwhile) keeps what it found. */
    while (rc == 0 && got < want) {
        ssize_t n = pread(fd, buf + got, want - got, (off_t)(size - want + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = -errno;
        else if (n == 0)
            break;
        else
            got += (size_t)n;
    }
    (void)close(fd); /* read-only: nothing to lose */
    if (rc != 0 || got == 0) {
        free(buf);
        return rc;
    }
    *bytes = buf;
    *len = got;
    return 0;
}

void cs_attempt_tail_work(uv_work_t *work)
{
    struct cs_tail_work *w = CS_CONTAINER_OF(work, struct cs_tail_work, work);
    static const char *const files[2] = {CS_ATTEMPT_STDOUT_FILE, CS_ATTEMPT_STDERR_FILE};
    for (int i = 0; i < 2; i++) {
        char path[4096 + 32];
        (void)snprintf(path, sizeof(path), "%s/%s", w->dir, files[i]);
        w->rc[i] = cs_attempt_tail_read(path, CS_ATTEMPT_TAIL_BYTES, &w->bytes[i], &w->len[i]);
    }
}
