/* dir_check: whether the state dir can be written, as a health input. Every
 * CS_DIR_CHECK_EVERY_MS a probe on libuv's pool (dir_check_work.c) creates a
 * small file in the attempts folder (where every minder writes), writes and
 * fsyncs it and removes it; a full disk (ENOSPC), a quota, a read-only or
 * failing file system each make it fail. The loop hears the result in the
 * work's after callback and passes it on when it changes. Loop thread only,
 * except the work function. */
#ifndef CS_DIR_CHECK_H
#define CS_DIR_CHECK_H

#include <stdbool.h>
#include <uv.h>

#define CS_DIR_CHECK_EVERY_MS 2000
/* The probe's file, in the folder checked; its leading dot keeps it out of
 * the attempt directories' names. */
#define CS_DIR_CHECK_FILE ".write-check"

/* The result, on the loop thread: status 0 (writable) or the negative errno
 * of the step that failed. Called when it changes (the state before the
 * first probe counts as writable). */
typedef void (*cs_dir_check_cb)(void *arg, int status);

struct cs_dir_probe;

struct cs_dir_check {
    uv_timer_t timer;
    char dir[4096];
    int status;                 /* the last result: 0 or -errno */
    struct cs_dir_probe *probe; /* on the pool, or NULL */
    cs_dir_check_cb changed_cb;
    void *arg;
};

/* Starts checking state_dir's attempts folder, the first probe at once.
 * The path is copied. 0, -ENAMETOOLONG if it does not fit, or a negative
 * errno from libuv. */
int cs_dir_check_start(struct cs_dir_check *c, uv_loop_t *loop, const char *state_dir,
                       cs_dir_check_cb changed_cb, void *arg);
/* Stops; a probe on the pool finishes on its own and reports nothing. Safe
 * if never started. */
void cs_dir_check_stop(struct cs_dir_check *c);

/* One probe, made on the loop and run on the pool (dir_check_work.c). */
struct cs_dir_probe {
    uv_work_t work;             /* work.data: this probe */
    struct cs_dir_check *owner; /* NULL once the check has stopped */
    char path[4096 + sizeof(CS_DIR_CHECK_FILE) + 1];
    int status;    /* the pool's result: 0 or -errno */
    char step[16]; /* what failed: "create", "write", "fsync", "remove" */
};

/* Pool thread: create, write, fsync and remove work->data's path. */
void cs_dir_check_work(uv_work_t *work);
/* Whether the probe's result says anything of the directory: not when it
 * failed for want of a free fd (a flood of clients), which leaves the last
 * verdict, and health, as they were. Any thread. */
bool cs_dir_probe_conclusive(const struct cs_dir_probe *p);

#endif
