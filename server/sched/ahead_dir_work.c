/* ahead_dir work: making and removing an attempt directory's ahead copy,
 * on libuv's pool. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ahead_dir.h"
#include "util.h"

/* Whether path is a directory with nothing in it (not following a link). */
static bool is_empty_dir(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    DIR *d = opendir(path);
    if (d == NULL)
        return false;
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d)) != NULL;)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    (void)closedir(d); /* read-only */
    return empty;
}

void cs_ahead_dir_work(uv_work_t *work)
{
    struct cs_ahead_work *w = CS_CONTAINER_OF(work, struct cs_ahead_work, work);
    if (w->remove) {
        w->rc = rmdir(w->path) == 0 || errno == ENOENT ? 0 : -errno;
        return;
    }
    w->rc = mkdir(w->path, 0700) == 0 ? 0 : -errno;
    /* Left by a crash before this run's start: never used, so as good as new. */
    if (w->rc == -EEXIST && is_empty_dir(w->path))
        w->rc = 0;
}
