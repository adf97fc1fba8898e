/* note_cached: see note_cached.h. Not a variant of cs_note_read (note.c):
 * that file is also the musl-built minder's, which has no preadv2. */
#include "note_cached.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int cs_note_read_cached(const char *dir, struct cs_note *out)
{
    /* One byte more than any valid note, to tell "too long" from "full". */
    char buf[CS_NOTE_MAX_BYTES + 1];
    char path[PATH_MAX];
    struct open_how how = {
        .flags = O_RDONLY | O_NOATIME | O_CLOEXEC,
        .resolve = RESOLVE_CACHED,
    };
    size_t len = 0;
    int rc = 0;

    int n = snprintf(path, sizeof(path), "%s/%s", dir, CS_NOTE_FILE);
    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
    if (fd < 0)
        return -errno;
    while (len < sizeof(buf)) {
        struct iovec iov = {.iov_base = buf + len, .iov_len = sizeof(buf) - len};
        ssize_t got = preadv2(fd, &iov, 1, (off_t)len, RWF_NOWAIT);
        if (got < 0) {
            rc = errno == EOPNOTSUPP ? -EAGAIN : -errno;
            break;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    if (rc == 0)
        rc = len == sizeof(buf) ? -EINVAL : cs_note_parse(buf, len, out);
    (void)close(fd); /* read-only fd: nothing to lose */
    return rc;
}
