/* retention work: the file side of removing old attempt directories, run on
 * libuv's pool (see retention.h). No state; one call per sweep. */
#ifndef CS_RETENTION_WORK_H
#define CS_RETENTION_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct cs_sweep_result {
    size_t removed;  /* directories removed */
    size_t failed;   /* directories that could not be removed (the first error is kept) */
    int first_error; /* negative errno, 0 if none */
    bool more;       /* stopped at max_removed with more to look at */
};

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

#endif
