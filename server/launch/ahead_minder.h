/* ahead_minder: minders started ahead of their attempt. A run that starts
 * within CS_AHEAD_DIR_HORIZON_MS (a slot decided ahead, a short retry
 * backoff; the runs whose directory is made ahead, ahead_dir.h) has its
 * next attempt's minder started by a launch thread while it waits. Exec'd
 * with -w (minder_contract.h), that minder waits on a socket and touches
 * nothing until it reads one byte. At the start, the launch thread that
 * takes the attempt finds it by its directory and, if it was started with
 * the very argv and environment the start builds now, tells it to go: one
 * write instead of a spawn, after the directory is made and synced as for
 * any start; a launch held for its due time arms it instead, with the gate
 * that releases it at that time (release_gate.h). Otherwise (the job
 * changed meanwhile, a run's deadline shortened the timeout, secrets to
 * read) it is sent away and a minder is spawned as ever.
 *
 * Sending one away closes its socket and kills it (it has done nothing),
 * and the thread reaps it. cschedd's end, SIGKILL included, closes every
 * such socket: the minder exits at end of file, so one started ahead never
 * outlives cschedd without its go. One not taken within CS_AHEAD_MINDER_LINGER_MS of
 * its due time is sent away.
 *
 * Launch threads, and the loop at the launcher's stop; the table has its
 * own lock, and every call is O(1) but the expiry's pass over the table. */
#ifndef CS_AHEAD_MINDER_H
#define CS_AHEAD_MINDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "launcher.h"

/* How long past its due time a minder started ahead waits to be taken. */
#define CS_AHEAD_MINDER_LINGER_MS 2000
/* The most minders waiting at once; each holds one fd of cschedd's. */
#define CS_AHEAD_MINDER_MAX 1024
#define CS_AHEAD_MINDER_BUCKETS 512

struct cs_ahead_minder;

struct cs_ahead_minders {
    pthread_mutex_t lock;
    struct cs_ahead_minder *buckets[CS_AHEAD_MINDER_BUCKETS]; /* by directory */
    size_t n, max;
    /* For the log at the stop: how many went, and how many were sent away. */
    uint64_t n_went, n_sent_away;
};

/* max: CS_AHEAD_MINDER_MAX, or less where cschedd has few fds to spare. */
void cs_ahead_minders_init(struct cs_ahead_minders *table);
/* Sends every waiting minder away and reaps it (at the launcher's stop,
 * its threads joined). */
void cs_ahead_minders_free(struct cs_ahead_minders *table);

/* Starts the minder of launch (an ahead launch: its dir, argv, envp and
 * user, due at launch->due_unix_ms) and keeps it waiting; launch is the
 * table's from now on, and freed if it cannot start or is not needed
 * (secrets to read, the table full, fds short, its due time past).
 * Returns when it is to be sent away (CLOCK_MONOTONIC ms), or 0. */
int64_t cs_ahead_minder_start(struct cs_ahead_minders *table, const char *minder_path,
                              struct cs_launch *launch);
/* The start of launch (its directory made and synced, its user resolved,
 * no minder yet): the minder started ahead for its directory, if one waits
 * with the same argv and environment, is told to go (or, if armed, its
 * gate has opened: it went). 0 with launch->pid set,
 * or -ENOENT (none such; one that differs is sent away): spawn one. */
int cs_ahead_minder_go(struct cs_ahead_minders *table, struct cs_launch *launch);
/* A launch held for its due time (the launcher's lock held, as it is
 * while the gate is shut): the minder started ahead for its directory, if
 * one waits with the same argv and environment, is armed with gate_fd
 * (release_gate.h) and goes by itself when the gate opens. Returns whether
 * it was; one that differs is killed, and a minder is spawned at the due
 * time. */
bool cs_ahead_minder_arm(struct cs_ahead_minders *table, const struct cs_launch *launch,
                         int gate_fd);
/* A held launch taken back (the launcher's lock held, its gate still
 * shut): the minder started ahead for dir is killed at once, and reaped
 * at its expiry. */
void cs_ahead_minder_take_back(struct cs_ahead_minders *table, const char *dir);
/* Sends away the minders past their time. Returns when the next one is
 * (CLOCK_MONOTONIC ms), or 0 when none waits. */
int64_t cs_ahead_minders_expire(struct cs_ahead_minders *table, int64_t now_mono_ms);

#endif
