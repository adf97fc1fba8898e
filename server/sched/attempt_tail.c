/* attempt_tail: the loop's side of keeping attempts' tails (see
 * attempt_tail.h): the line of attempts whose tails are to be read, the
 * reads handed to the pool, and the writes of what they found. */
#define CS_LOG_COMPONENT "dispatch"
#include "attempt_tail.h"

#include <stdlib.h>
#include <string.h>

#include "attempt.h"
#include "log.h"
#include "util.h"

static void tail_free(struct cs_tail_work *w)
{
    free(w->bytes[0]);
    free(w->bytes[1]);
    free(w->dir);
    free(w);
}

static void read_done_cb(uv_work_t *work, int status);

/* Hands the next ones in line to the pool while there is room. */
static void start_reads(struct cs_sched *s)
{
    struct cs_qlink *next;
    while (s->tails_inflight < CS_ATTEMPT_TAIL_INFLIGHT &&
           (next = cs_queue_pop(&s->tails_waiting)) != NULL) {
        struct cs_tail_work *w = CS_CONTAINER_OF(next, struct cs_tail_work, link);
        s->tails_inflight++;
        CS_ASSERT(uv_queue_work(s->loop, &w->work, cs_attempt_tail_work, read_done_cb) == 0);
    }
}

/* w is done with, read or written: its room goes to the next in line. */
static void tail_done(struct cs_tail_work *w)
{
    struct cs_sched *s = w->sched;
    cs_attempt_tail_kept_cb kept_cb = w->kept_cb;
    int64_t run_id = w->run_id;
    uint32_t number = w->number;
    tail_free(w);
    if (s->tails_closed)
        return;
    if (kept_cb != NULL)
        kept_cb(s, run_id, number);
    CS_ASSERT(s->tails_inflight > 0);
    s->tails_inflight--;
    start_reads(s);
}

static void written_cb(void *arg, int status)
{
    struct cs_tail_work *w = arg;
    /* Not kept: ReadLogs elsewhere then says no tail was recorded. A batch
     * refused by the database was logged by the store. */
    if (status != 0)
        cs_log_debug("run %lld attempt %u: its output's tail was not recorded: %s",
                     (long long)w->run_id, w->number, strerror(-status));
    tail_done(w);
}

/* A stream whose file could not be read is left NULL in its row. */
static const uint8_t *found(const struct cs_tail_work *w, int i)
{
    static const uint8_t empty[1];
    if (w->rc[i] != 0)
        return NULL;
    return w->bytes[i] != NULL ? w->bytes[i] : empty;
}

static void read_done_cb(uv_work_t *work, int status)
{
    struct cs_tail_work *w = CS_CONTAINER_OF(work, struct cs_tail_work, work);
    struct cs_sched *s = w->sched;
    if (s->tails_closed || status != 0) {
        tail_done(w);
        return;
    }
    for (int i = 0; i < 2; i++)
        if (w->rc[i] != 0)
            cs_log_debug("run %lld attempt %u: reading the tail of %s/%s failed: %s",
                         (long long)w->run_id, w->number, w->dir, i == 0 ? "stdout" : "stderr",
                         strerror(-w->rc[i]));
    if (w->rc[0] != 0 && w->rc[1] != 0) {
        tail_done(w);
        return;
    }
    /* The store copies the bytes: they go now, the room when it commits. */
    s->ops->attempt_tail_put_cb(s->store, w->run_id, w->number, found(w, 0), w->len[0], found(w, 1),
                                w->len[1], written_cb, w);
    for (int i = 0; i < 2; i++) {
        free(w->bytes[i]);
        w->bytes[i] = NULL;
    }
}

bool cs_attempt_tail_keep(struct cs_sched *s, const struct cs_attempt *att,
                          const Csched__V1__Attempt *a, cs_attempt_tail_kept_cb kept_cb)
{
    CS_ASSERT_LOOP();
    /* With the embedded database, the files and the database are on one
     * machine: whatever loses one loses the other, so a copy saves nothing. */
    /* An attempt placed elsewhere: its replica keeps its tails. */
    if (s->lease_path == NULL || s->ops->attempt_tail_put_cb == NULL || s->tails_closed ||
        att->remote != NULL || att->note_rc != 0 ||
        (a->stdout_kept_bytes == 0 && a->stderr_kept_bytes == 0))
        return false;
    struct cs_tail_work *w = cs_xcalloc(1, sizeof(*w));
    w->sched = s;
    w->run_id = att->run_id;
    w->number = att->number;
    w->kept_cb = kept_cb;
    w->dir = cs_xstrdup(att->dir);
    cs_queue_push(&s->tails_waiting, &w->link);
    start_reads(s);
    return true;
}

void cs_attempt_tail_close(struct cs_sched *s)
{
    CS_ASSERT_LOOP();
    s->tails_closed = true;
    for (struct cs_qlink *l; (l = cs_queue_pop(&s->tails_waiting)) != NULL;)
        tail_free(CS_CONTAINER_OF(l, struct cs_tail_work, link));
}
