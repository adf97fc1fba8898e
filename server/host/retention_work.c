/* retention work: scanning STATE_DIR/attempts and removing what has
 * expired, and STATE_DIR/hooks for the directories of hook deliveries
 * deleted with their runs. */
#include "retention_work.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "minder_contract.h"

/* The run of an attempt directory's name, or of its copy made ahead (one a
 * crash left behind goes with its run); 0 if it is neither. */
static int64_t run_of(const char *name)
{
    char plain[256];
    size_t len = strlen(name), suffix = strlen(CS_AHEAD_DIR_SUFFIX);
    if (len > suffix && len - suffix < sizeof(plain) &&
        strcmp(name + len - suffix, CS_AHEAD_DIR_SUFFIX) == 0) {
        memcpy(plain, name, len - suffix);
        plain[len - suffix] = '\0';
        name = plain;
    }
    int64_t run;
    uint32_t attempt;
    return cs_minder_dir_parse(name, &run, &attempt) == 0 ? run : 0;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void cs_retention_sort_ids(int64_t *ids, size_t n)
{
    qsort(ids, n, sizeof(*ids), cmp_id);
}

/* Whether the attempt in dir (a descriptor of attempts_dir, entry name)
 * ended before cutoff. */
static bool expired(int dir_fd, const char *name, time_t cutoff)
{
    char note[300];
    struct stat st;
    (void)snprintf(note, sizeof(note), "%s/%s", name, CS_NOTE_FILE);
    if (fstatat(dir_fd, note, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
        fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    return st.st_mtime < cutoff;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    int rc = type == FTW_DP ? rmdir(path) : unlink(path);
    return rc == 0 || errno == ENOENT ? 0 : -errno;
}

/* Removes the tree at dir/name, counted in res. */
static void remove_tree(const char *dir, const char *name, struct cs_sweep_result *res)
{
    char path[4096];
    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    /* Depth first, never following a link out of the directory. */
    int rc = nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (rc == 0) {
        res->removed++;
    } else {
        res->failed++;
        /* nftw's own failures are -1 with errno; the callback's, -errno. */
        if (res->first_error == 0)
            res->first_error = rc == -1 ? -errno : rc;
    }
}

struct cs_sweep_result cs_retention_sweep(const char *attempts_dir, const int64_t *active_runs,
                                          size_t n_active, time_t cutoff, size_t max_removed)
{
    struct cs_sweep_result res = {0};
    DIR *dir = opendir(attempts_dir);
    if (dir == NULL) {
        res.first_error = -errno;
        return res;
    }
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        int64_t run = run_of(e->d_name);
        /* bsearch must not be given a NULL array, even an empty one. */
        if (run == 0 ||
            (n_active > 0 && bsearch(&run, active_runs, n_active, sizeof(run), cmp_id) != NULL))
            continue;
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
            continue;
        if (!expired(dirfd(dir), e->d_name, cutoff))
            continue;
        /* Only removals count: a directory that cannot go must not keep
         * the sweep from those after it. */
        if (res.removed >= max_removed) {
            res.more = true;
            break;
        }
        remove_tree(attempts_dir, e->d_name, &res);
    }
    (void)closedir(dir);
    return res;
}

/* The delivery of a command hook's attempt directory's name,
 * "<delivery id>-<attempt>-<unix ms>"; 0 if it is not one. */
static int64_t delivery_of(const char *name)
{
    char *end;
    errno = 0;
    long long id = strtoll(name, &end, 10);
    return errno == 0 && end != name && *end == '-' && id > 0 ? (int64_t)id : 0;
}

struct cs_sweep_result cs_retention_remove_hook_dirs(const char *hooks_dir, const int64_t *ids,
                                                     size_t n)
{
    struct cs_sweep_result res = {0};
    DIR *dir = opendir(hooks_dir);
    if (dir == NULL) {
        /* No command hook ever ran here. */
        if (errno != ENOENT)
            res.first_error = -errno;
        return res;
    }
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        int64_t id = delivery_of(e->d_name);
        if (id != 0 && (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) &&
            bsearch(&id, ids, n, sizeof(id), cmp_id) != NULL)
            remove_tree(hooks_dir, e->d_name, &res);
    }
    (void)closedir(dir);
    return res;
}

void cs_retention_hook_dirs_work(uv_work_t *work)
{
    struct cs_hook_dirs *w = work->data;
    w->result = cs_retention_remove_hook_dirs(w->hooks_dir, w->ids, w->n);
}

void cs_retention_sweep_work(uv_work_t *work)
{
    struct cs_sweep *w = work->data;
    w->result = cs_retention_sweep(w->attempts_dir, w->active_runs, w->n_active, w->cutoff,
                                   CS_SWEEP_MAX_REMOVED);
}
