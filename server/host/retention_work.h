/* retention work: the file side of removing old attempt directories (see
 * retention.h) and those of the hook deliveries that history retention
 * deleted (history.h), run on libuv's pool. No state; one call per sweep. */
#ifndef CS_RETENTION_WORK_H
#define CS_RETENTION_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

struct cs_sweep_result {
    size_t removed;  /* directories removed */
    size_t failed;   /* directories that could not be removed (the first error is kept) */
    int first_error; /* negative errno, 0 if none */
    bool more;       /* stopped at max_removed with more to look at */
};

/* Directories removed per sweep, so that one sweep never holds a pool thread
 * (which also reads the notes of ending attempts) for long. */
#define CS_SWEEP_MAX_REMOVED 256

struct cs_retention;

/* One sweep: made on the loop (retention.c) with what it needs, filled in
 * on the pool (result), freed on the loop in the work's after callback. */
struct cs_sweep {
    uv_work_t work;             /* work.data: this sweep */
    struct cs_retention *owner; /* NULL once the retention has stopped */
    char attempts_dir[4096];
    int64_t *active_runs; /* sorted */
    size_t n_active;
    time_t cutoff;
    struct cs_sweep_result result;
};

/* Pool thread: runs cs_retention_sweep for the sweep in work->data, at most
 * CS_SWEEP_MAX_REMOVED removals. */
void cs_retention_sweep_work(uv_work_t *work);

/* Sorts ids ascending, the order cs_retention_sweep wants active_runs in. */
void cs_retention_sort_ids(int64_t *ids, size_t n);

/* Removes from attempts_dir each directory "<run_id>-<attempt>" whose run is
 * not in active_runs (sorted ascending) and that ended before cutoff: its
 * status note was last changed before cutoff, or, for an attempt that left
 * no note, the directory itself was. Anything else in attempts_dir is left
 * alone. Stops after max_removed removals; a directory that cannot be
 * removed is counted in failed and the sweep goes on. */
struct cs_sweep_result cs_retention_sweep(const char *attempts_dir, const int64_t *active_runs,
                                          size_t n_active, time_t cutoff, size_t max_removed);

/* The directories of command hooks' deliveries to remove, those deleted
 * with their runs: made on the loop (history.c), run on the pool, freed on
 * the loop in the work's after callback. */
struct cs_hook_dirs {
    uv_work_t work; /* work.data: this removal */
    char hooks_dir[4096];
    int64_t *ids; /* sorted */
    size_t n;
    struct cs_sweep_result result;
};

/* Pool thread: runs cs_retention_remove_hook_dirs for work->data. */
void cs_retention_hook_dirs_work(uv_work_t *work);

/* Removes from hooks_dir each directory "<delivery id>-<attempt>-<ms>"
 * whose delivery is in ids (sorted ascending, n > 0); anything else is left
 * alone. A hooks_dir that does not exist has nothing to remove. */
struct cs_sweep_result cs_retention_remove_hook_dirs(const char *hooks_dir, const int64_t *ids,
                                                     size_t n);

#endif
