/* attempt_tail: the tail of what an attempt that ran on this machine wrote,
 * kept in the database when it is shared, so that another replica can still
 * give it through ReadLogs once this machine is gone (docs/operations.md,
 * "Replicas"). At the attempt's end, the last CS_ATTEMPT_TAIL_BYTES of each
 * log file are read on libuv's pool (attempt_tail_work.c), then written with
 * the store (fenced as every batch is). The end waits for neither: a tail
 * commits after its attempt's end, and one not yet committed when the
 * replica stops or is lost is not kept.
 *
 * Loop thread only, but for the pool's own file. Invariant: at most
 * CS_ATTEMPT_TAIL_INFLIGHT tails are being read or waiting for their commit,
 * each holding up to two tails' bytes (in the work, then in the store's
 * queue); the ends past that wait in line with their directory alone. */
#ifndef CS_ATTEMPT_TAIL_H
#define CS_ATTEMPT_TAIL_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "queue.h"
#include "sched_state.h"

/* The bytes kept of each stream: one ReadLogs chunk, so a stream's tail is
 * sent whole in one message; the last few hundred lines of a log, where the
 * error that ended a command usually is; and at most 128 KiB a row for the
 * database (less once TOAST has compressed it). */
#define CS_ATTEMPT_TAIL_BYTES (64 * 1024)
/* Tails in flight at once: 32 x 128 KiB bounds their memory to 4 MiB, which
 * is also one batch's parameter bytes. */
#define CS_ATTEMPT_TAIL_INFLIGHT 32

struct cs_attempt;

/* Called once an attempt's tails were written, or could not be (logged). */
typedef void (*cs_attempt_tail_kept_cb)(struct cs_sched *sched, int64_t run_id, uint32_t number);

/* After att has ended (a, its message, filled from its note): keeps the
 * tails of its streams if the database is shared (lease_path set), its note
 * was read (the sizes are known) and it wrote something. True when it
 * does: kept_cb (NULL: none) follows, unless the server stops first. */
bool cs_attempt_tail_keep(struct cs_sched *sched, const struct cs_attempt *att,
                          const Csched__V1__Attempt *a, cs_attempt_tail_kept_cb kept_cb);

/* The server stops: the tails in line are dropped, and those on the pool or
 * waiting for their commit free themselves when they come back. */
void cs_attempt_tail_close(struct cs_sched *sched);

/* One attempt's tails, in line, on the pool, then waiting for their commit. */
struct cs_tail_work {
    uv_work_t work;
    struct cs_qlink link; /* in line */
    struct cs_sched *sched;
    int64_t run_id;
    uint32_t number;
    cs_attempt_tail_kept_cb kept_cb;
    char *dir; /* owned */
    /* The pool's results, by stream (0 stdout, 1 stderr): owned bytes (NULL
     * when empty or unread) and 0 or a negative errno. */
    uint8_t *bytes[2];
    size_t len[2];
    int rc[2];
};
void cs_attempt_tail_work(uv_work_t *work);

/* Reads the last cap bytes of the regular file at path (not following a
 * link) into *bytes (malloc'd; NULL when the file is empty), their length
 * into *len. 0 or a negative errno (-ENOENT: no such file). Blocks: the pool
 * only. */
int cs_attempt_tail_read(const char *path, size_t cap, uint8_t **bytes, size_t *len);

#endif
