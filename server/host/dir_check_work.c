/* dir_check work: the probe's file calls, on libuv's pool (see
 * dir_check.h). Each probe is its own record, which the loop leaves alone
 * until the work's after callback. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dir_check.h"

/* A block's worth: a full file system refuses it where it might still take
 * a few bytes into a partly used block. */
#define PROBE_BYTES 4096

static int fail(struct cs_dir_probe *p, const char *step)
{
    (void)snprintf(p->step, sizeof(p->step), "%s", step);
    return -errno;
}

void cs_dir_check_work(uv_work_t *work)
{
    struct cs_dir_probe *p = work->data;
    static const char zeros[PROBE_BYTES];
    int fd = open(p->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        p->status = fail(p, "create");
        return;
    }
    ssize_t n = write(fd, zeros, sizeof(zeros));
    if (n < 0)
        p->status = fail(p, "write");
    else if (n < (ssize_t)sizeof(zeros)) {
        errno = ENOSPC; /* a short write: the file system took only part */
        p->status = fail(p, "write");
    } else if (fsync(fd) < 0)
        p->status = fail(p, "fsync");
    if (close(fd) < 0 && p->status == 0)
        p->status = fail(p, "close");
    if (unlink(p->path) < 0 && p->status == 0)
        p->status = fail(p, "remove");
}

bool cs_dir_probe_conclusive(const struct cs_dir_probe *p)
{
    return p->status != -EMFILE && p->status != -ENFILE;
}
