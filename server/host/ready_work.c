/* ready_work: the ready file, written on libuv's pool (see ready_work.h).
 *
 * The temp file gets a name of mkstemp's, made with O_EXCL: the ready file
 * often lives in a shared folder such as /tmp, where a fixed name (PATH.tmp)
 * could be a link another user put there for us to write through. The
 * rename then replaces whatever is at the path itself, a link included,
 * without following it. */
#define CS_LOG_COMPONENT "cschedd"
#include "ready_work.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

void cs_ready_write_work(uv_work_t *work)
{
    struct cs_ready_write *w = work->data;
    char tmp[PATH_MAX];
    size_t len = strlen(w->text);
    int rc =
        snprintf(tmp, sizeof(tmp), "%s.XXXXXX", w->path) < (int)sizeof(tmp) ? 0 : -ENAMETOOLONG;
    int fd = rc == 0 ? mkstemp(tmp) : -1;

    if (rc == 0 && fd < 0)
        rc = -errno;
    /* Readable by the scripts that wait for it, as a file made with 0644. */
    if (rc == 0 && (fchmod(fd, 0644) != 0 || write(fd, w->text, len) != (ssize_t)len))
        rc = errno != 0 ? -errno : -EIO;
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, w->path) != 0)
        rc = -errno;
    if (rc != 0 && rc != -EMFILE && rc != -ENFILE)
        cs_log_error("writing the ready file %s failed: %s", w->path, strerror(-rc));
    if (rc != 0 && fd >= 0)
        (void)unlink(tmp);
    w->rc = rc;
}
