/* ready_work: the ready file, written on libuv's pool (see ready_work.h). */
#define CS_LOG_COMPONENT "cschedd"
#include "ready_work.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

void cs_ready_write_work(uv_work_t *work)
{
    struct cs_ready_write *w = work->data;
    char tmp[PATH_MAX];
    (void)snprintf(tmp, sizeof(tmp), "%s.tmp", w->path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fputs(w->text, f) < 0 || fclose(f) != 0 || rename(tmp, w->path) != 0)
        cs_log_error("writing the ready file %s failed: %s", w->path, strerror(errno));
}
