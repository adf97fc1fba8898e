/* api_logs: ReadLogs streams an attempt's stdout and stderr files in 64 KiB
 * chunks. Files are read with uv_fs_* (libuv's pool), one chunk ahead of the
 * client at most: the next read starts when the stream has drained.
 *
 * Without follow, or for an attempt that has ended, each file is read to its
 * end in turn (stdout, then stderr). Following a live attempt, the files are
 * read in rounds, each to its current end; after a round that found nothing
 * new, the next starts FOLLOW_POLL_MS later. The stream ends after a round
 * that found nothing and began once the attempt had ended: the minder, which
 * writes the files, has exited by then, so no last bytes are missed.
 *
 * A stream whose log was cut (the attempt has ended and kept less than its
 * command wrote) ends with one more chunk, with no data, saying so and how
 * much was written.
 *
 * On a shared database, an attempt whose directory is not on this machine
 * may have run on another replica's: its row names that replica, and, if
 * the attempt ended there, holds the tail of each stream (attempt_tail.h).
 * The stream then gives one chunk per stream from those tails, naming the
 * replica (LogChunk.replica), or fails naming it when no tail was kept.
 *
 * An attempt the active replica placed on another replica's machine that
 * is still running is read there: the call is relayed to that replica's
 * Worker.ReadLogs (cs_api_worker_read_logs), which reads its own files.
 * There no run is in memory: each round begins by reading the attempt's
 * note, which the minder writes once its command and the log files are
 * done; a note, or an attempt this machine no longer runs, is its end.
 *
 * Each open stream holds its chunk's buffer and up to two open files until
 * it ends, even for a client that reads nothing: the open streams are
 * listed, and bounded per caller and in all (api_common.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "attempt.h"
#include "minder_contract.h"
#include "note.h"
#include "placement.h"
#include "util.h"
#include "worker.h"

#define CHUNK_BYTES (64 * 1024)
#define FOLLOW_POLL_MS 200

struct log_file {
    Csched__V1__LogStream stream;
    uv_file fd; /* -1 while not open */
    int64_t offset;
    /* What the command wrote to the stream and what its log kept, once the
     * attempt has ended (0 before); whether a cut was told. */
    int64_t written_bytes, kept_bytes;
    bool cut_told;
};

struct cs_log_read {
    struct cs_log_read *prev, *next; /* in sched->log_reads */
    char who[CS_IDENTITY_NAME_MAX];  /* the caller, for its bound */
    struct cs_call *call;            /* NULL once the client has gone */
    struct cs_sched *sched;
    int64_t run_id;
    uint32_t attempt;
    struct log_file files[2];
    size_t n_files, current;
    bool dir_seen;           /* the attempt's directory is there, or need not be */
    bool never_started;      /* it ended with no minder: its directory may never have been made */
    char ended_message[256]; /* the attempt's message, when it has ended */
    bool following;          /* reading in rounds, for a live attempt */
    bool round_found;        /* this round has sent something */
    bool ended_before_round; /* the attempt had ended when this round began */
    uv_timer_t *pause;       /* between rounds; NULL unless following */
    /* The tails the database kept, read instead of the files of another
     * replica's machine; NULL until then. Owned. */
    struct cs_store_attempt_tail *tail;
    /* Read for the active replica on the machine the attempt was placed on:
     * its end is its note (note_due: to be read as the round begins). */
    bool on_worker, note_due;
    bool busy; /* a uv_fs request or the note's read is in flight, or the pause */
    uv_fs_t req;
    uv_work_t work;
    struct cs_note note;
    int note_rc;
    char buf[CHUNK_BYTES];
};

static void next_step(struct cs_log_read *r);

static void log_file_closed_cb(uv_fs_t *req)
{
    uv_fs_req_cleanup(req);
    free(req);
}

/* Closes f on libuv's pool (a close may flush, and nothing waits for it); f
 * forgets the fd at once. */
static void close_log_file(struct cs_log_read *r, struct log_file *f)
{
    uv_fs_t *req = cs_xmalloc(sizeof(*req));
    CS_ASSERT(uv_fs_close(r->sched->loop, req, f->fd, log_file_closed_cb) == 0);
    f->fd = -1;
}

static void handle_free_cb(uv_handle_t *handle)
{
    free(handle);
}

static void log_read_end(struct cs_log_read *r, int code, const char *message)
{
    if (r->call != NULL) {
        if (code == 0)
            cs_call_finish(r->call, GRPC_STATUS_OK, "");
        else
            cs_call_fail(r->call, code, "%s", message);
    }
    r->call = NULL;
    for (size_t i = 0; i < r->n_files; i++)
        if (r->files[i].fd >= 0)
            close_log_file(r, &r->files[i]);
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        r->sched->log_reads = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    if (r->pause != NULL)
        uv_close((uv_handle_t *)r->pause, handle_free_cb);
    cs_store_attempt_tail_free(r->tail);
    free(r);
}

/* Whether the attempt being read has ended: its run is no longer active, or
 * the attempt has its end time. */
static bool attempt_ended(const struct cs_log_read *r)
{
    const struct cs_run *run = cs_idmap_get(&r->sched->runs, r->run_id);
    return run == NULL || run->msg->attempts[r->attempt - 1]->ended_unix_ms != 0;
}

static void start_round(struct cs_log_read *r)
{
    r->current = 0;
    r->round_found = false;
    if (r->on_worker)
        r->note_due = true;
    else
        r->ended_before_round = attempt_ended(r);
}

static void pause_over_cb(uv_timer_t *timer)
{
    struct cs_log_read *r = timer->data;
    r->busy = false;
    start_round(r);
    next_step(r);
}

/* Waits FOLLOW_POLL_MS, then calls cb; cancel_cb cuts the wait short. */
static void pause_then(struct cs_log_read *r, uv_timer_cb cb)
{
    if (r->pause == NULL) {
        r->pause = cs_xmalloc(sizeof(*r->pause));
        CS_ASSERT(uv_timer_init(r->sched->loop, r->pause) == 0);
        r->pause->data = r;
    }
    r->busy = true;
    CS_ASSERT(uv_timer_start(r->pause, cb, FOLLOW_POLL_MS, 0) == 0);
}

/* Finishes r's request and gives its result: 0, or -ECANCELED when the
 * client has gone meanwhile and r has been ended (closing a file just opened). */
static int take_result(struct cs_log_read *r, uv_fs_t *req, ssize_t *result)
{
    *result = req->result;
    if (req->fs_type == UV_FS_OPEN && *result >= 0)
        r->files[r->current].fd = (uv_file)*result;
    uv_fs_req_cleanup(req);
    r->busy = false;
    if (r->call != NULL)
        return 0;
    log_read_end(r, 0, "");
    return -ECANCELED;
}

/* The attempt being read as the loop has it now (active, or among the runs
 * that ended last), or NULL. */
static const Csched__V1__Attempt *attempt_now(const struct cs_log_read *r)
{
    const struct cs_run *run = cs_idmap_get(&r->sched->runs, r->run_id);
    const Csched__V1__Run *msg =
        run != NULL ? run->msg : cs_ended_runs_get(&r->sched->ended_runs, r->run_id);
    return msg != NULL && r->attempt <= msg->n_attempts ? msg->attempts[r->attempt - 1] : NULL;
}

/* Takes what a, the attempt read, says of each stream's size. */
static void take_sizes(struct cs_log_read *r, const Csched__V1__Attempt *a)
{
    for (size_t i = 0; i < r->n_files; i++) {
        struct log_file *f = &r->files[i];
        bool err = f->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR;
        f->written_bytes = err ? a->stderr_written_bytes : a->stdout_written_bytes;
        f->kept_bytes = err ? a->stderr_kept_bytes : a->stdout_kept_bytes;
    }
}

/* At f's last end: if its log was cut, pushes the chunk that says so and
 * returns true (drained_cb goes on). */
static bool tell_cut(struct cs_log_read *r, struct log_file *f)
{
    const Csched__V1__Attempt *a = r->following ? attempt_now(r) : NULL;
    if (a != NULL)
        take_sizes(r, a);
    if (f->cut_told || f->kept_bytes >= f->written_bytes)
        return false;
    f->cut_told = true;
    Csched__V1__LogChunk chunk = CSCHED__V1__LOG_CHUNK__INIT;
    chunk.stream = f->stream;
    chunk.offset = f->offset;
    chunk.truncated = true;
    chunk.written_bytes = f->written_bytes;
    cs_call_push(r->call, &chunk.base);
    return true;
}

static void read_cb(uv_fs_t *req)
{
    struct cs_log_read *r = req->data;
    ssize_t n;
    if (take_result(r, req, &n) != 0)
        return;
    if (n < 0) {
        log_read_end(r, -EIO, "reading the log file failed");
        return;
    }
    struct log_file *f = &r->files[r->current];
    if (n == 0) {
        /* Its end for now: a followed file stays open for the next round. */
        if (!r->following)
            close_log_file(r, f);
        r->current++;
        /* Its last end: not followed, or the minder had exited before. */
        if ((!r->following || r->ended_before_round) && tell_cut(r, f))
            return;
        next_step(r);
        return;
    }
    Csched__V1__LogChunk chunk = CSCHED__V1__LOG_CHUNK__INIT;
    chunk.stream = f->stream;
    chunk.offset = f->offset;
    chunk.data.data = (uint8_t *)r->buf;
    chunk.data.len = (size_t)n;
    f->offset += n;
    r->round_found = true;
    cs_call_push(r->call, &chunk.base);
    /* drained_cb asks for the next chunk. */
}

static void open_cb(uv_fs_t *req)
{
    struct cs_log_read *r = req->data;
    ssize_t fd;
    if (take_result(r, req, &fd) != 0)
        return;
    if (fd == UV_ENOENT) {
        /* Not made (yet): the attempt did not start, or, followed, its
         * minder has not opened it; the next round looks again. */
        r->current++;
        next_step(r);
        return;
    }
    if (fd < 0) {
        log_read_end(r, -EIO, "opening the log file failed");
        return;
    }
    next_step(r);
}

static void attempt_dir(const struct cs_log_read *r, char *path, size_t size)
{
    /* A state dir too long for a path fails the open that follows. */
    (void)cs_minder_dir_format(path, size, r->sched->state_dir, r->run_id, r->attempt);
}

/* The attempt's directory is not here, and it is not another replica's. */
static void end_dir_missing(struct cs_log_read *r)
{
    char message[200 + sizeof(r->ended_message)];
    if (r->never_started)
        (void)snprintf(message, sizeof(message),
                       "attempt %u of run %lld has no output: its directory was never made "
                       "(the attempt ended: %s)",
                       r->attempt, (long long)r->run_id, r->ended_message);
    else
        (void)snprintf(message, sizeof(message),
                       "the output of attempt %u of run %lld is gone: its directory was "
                       "removed (cschedd removes those of attempts that ended over "
                       "--retention-days ago)",
                       r->attempt, (long long)r->run_id);
    log_read_end(r, -ENOENT, message);
}

/* The index of f's stream in the tails (0 stdout, 1 stderr). */
static int tail_index(const struct log_file *f)
{
    return f->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR;
}

/* Whether the database holds what the tail of f's stream is: its bytes, or
 * the knowledge that the stream's log kept none. */
static bool tail_known(const struct cs_store_attempt_tail *t, const struct log_file *f)
{
    int i = tail_index(f);
    return t->stored[i] || (t->sizes_known && t->kept_bytes[i] == 0);
}

static void stored_tail_cb(void *arg, int status, struct cs_store_attempt_tail *tail)
{
    struct cs_log_read *r = arg;
    r->busy = false;
    r->tail = tail; /* freed with r */
    if (r->call == NULL) {
        log_read_end(r, 0, "");
        return;
    }
    if (status != 0 && status != -ENOENT) {
        log_read_end(r, -ENOTCONN, "the database is unreachable");
        return;
    }
    const char *self = r->sched->replica_id != NULL ? r->sched->replica_id : "";
    if (tail == NULL || tail->replica[0] == '\0' || strcmp(tail->replica, self) == 0) {
        end_dir_missing(r);
        return;
    }
    for (size_t i = 0; i < r->n_files; i++) {
        if (tail_known(tail, &r->files[i]))
            continue;
        char message[400 + sizeof(r->ended_message)];
        (void)snprintf(message, sizeof(message),
                       "attempt %u of run %lld ran on replica %s, whose machine holds its "
                       "output, and this replica cannot read it; the database kept no tail of "
                       "it: %s",
                       r->attempt, (long long)r->run_id, tail->replica,
                       tail->sizes_known ? "the replica was lost before recording it"
                                         : "the attempt had not ended when the replica was lost");
        log_read_end(r, -ENOENT, message);
        return;
    }
    /* Chunks from the tails, one a stream (next_step). */
    r->current = 0;
    next_step(r);
}

/* On the machine it was placed on, an attempt has no directory until its
 * launch has made it: a follower of one still placed here looks again. */
static void worker_dir_missing(struct cs_log_read *r)
{
    if (r->following && cs_worker_runs(r->sched, r->run_id, r->attempt)) {
        pause_then(r, pause_over_cb);
        return;
    }
    char message[200];
    (void)snprintf(message, sizeof(message),
                   "attempt %u of run %lld has no directory on replica %s's machine", r->attempt,
                   (long long)r->run_id, r->sched->replica_id != NULL ? r->sched->replica_id : "");
    log_read_end(r, -ENOENT, message);
}

/* A missing directory is output that is gone, not output that is empty,
 * unless another replica's machine ran the attempt: the database says. */
static void dir_stat_cb(uv_fs_t *req)
{
    struct cs_log_read *r = req->data;
    ssize_t result;
    if (take_result(r, req, &result) != 0)
        return;
    if (result == UV_ENOENT && r->on_worker) {
        worker_dir_missing(r);
        return;
    }
    if (result == UV_ENOENT && (r->never_started || r->sched->lease_path == NULL)) {
        end_dir_missing(r);
        return;
    }
    if (result == UV_ENOENT) {
        r->busy = true;
        cs_store_attempt_tail_get(r->sched->store, r->run_id, r->attempt, stored_tail_cb, r);
        return;
    }
    r->dir_seen = true;
    next_step(r);
}

/* Pushes the chunk of f's stream kept in the database (drained_cb goes on). */
static void push_tail(struct cs_log_read *r, struct log_file *f)
{
    const struct cs_store_attempt_tail *t = r->tail;
    int i = tail_index(f);
    Csched__V1__LogChunk chunk = CSCHED__V1__LOG_CHUNK__INIT;
    chunk.stream = f->stream;
    chunk.offset =
        t->kept_bytes[i] > (int64_t)t->len[i] ? t->kept_bytes[i] - (int64_t)t->len[i] : 0;
    chunk.data.data = t->bytes[i];
    chunk.data.len = t->len[i];
    chunk.written_bytes = t->written_bytes[i];
    chunk.replica = t->replica;
    cs_call_push(r->call, &chunk.base);
}

/* After the last file of a round: the end, another round, or a pause. */
static void round_over(struct cs_log_read *r)
{
    if (!r->following || (!r->round_found && r->ended_before_round)) {
        log_read_end(r, 0, "");
        return;
    }
    if (r->round_found) {
        start_round(r);
        next_step(r);
        return;
    }
    pause_then(r, pause_over_cb);
}

static void note_read_work(uv_work_t *work)
{
    struct cs_log_read *r = CS_CONTAINER_OF(work, struct cs_log_read, work);
    char dir[4096];
    attempt_dir(r, dir, sizeof(dir));
    r->note_rc = cs_note_read(dir, &r->note);
}

/* The round's end is known: a note (whose sizes tell a cut), or an attempt
 * no longer running here without one (its minder was killed, or this
 * process started again and has not been asked for it yet). */
static void note_read_cb(uv_work_t *work, int status)
{
    struct cs_log_read *r = CS_CONTAINER_OF(work, struct cs_log_read, work);
    (void)status;
    r->busy = false;
    r->note_due = false;
    if (r->call == NULL) {
        log_read_end(r, 0, "");
        return;
    }
    r->ended_before_round =
        r->note_rc != -ENOENT || !cs_worker_runs(r->sched, r->run_id, r->attempt);
    if (r->note_rc == 0) {
        Csched__V1__Attempt a = CSCHED__V1__ATTEMPT__INIT;
        a.stdout_written_bytes = r->note.stdout_written_bytes;
        a.stdout_kept_bytes = r->note.stdout_kept_bytes;
        a.stderr_written_bytes = r->note.stderr_written_bytes;
        a.stderr_kept_bytes = r->note.stderr_kept_bytes;
        take_sizes(r, &a);
    }
    next_step(r);
}

static void next_step(struct cs_log_read *r)
{
    if (r->note_due) {
        r->busy = true;
        CS_ASSERT(uv_queue_work(r->sched->loop, &r->work, note_read_work, note_read_cb) == 0);
        return;
    }
    if (r->current >= r->n_files) {
        round_over(r);
        return;
    }
    if (r->tail != NULL) {
        push_tail(r, &r->files[r->current++]);
        return;
    }
    r->busy = true;
    r->req.data = r;
    if (!r->dir_seen) {
        char path[4096];
        attempt_dir(r, path, sizeof(path));
        CS_ASSERT(uv_fs_stat(r->sched->loop, &r->req, path, dir_stat_cb) == 0);
        return;
    }
    struct log_file *f = &r->files[r->current];
    if (f->fd < 0) {
        char dir[4000], path[4096];
        const char *file = f->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR
                               ? CS_ATTEMPT_STDERR_FILE
                               : CS_ATTEMPT_STDOUT_FILE;
        attempt_dir(r, dir, sizeof(dir));
        (void)snprintf(path, sizeof(path), "%s/%s", dir, file);
        CS_ASSERT(uv_fs_open(r->sched->loop, &r->req, path, O_RDONLY | O_CLOEXEC, 0, open_cb) == 0);
        return;
    }
    uv_buf_t buf = uv_buf_init(r->buf, sizeof(r->buf));
    CS_ASSERT(uv_fs_read(r->sched->loop, &r->req, f->fd, &buf, 1, f->offset, read_cb) == 0);
}

static void drained_cb(struct cs_call *call, void *ctx)
{
    struct cs_log_read *r = ctx;
    if (!r->busy && r->call != NULL)
        next_step(r);
}

static void cancel_cb(struct cs_call *call, void *ctx)
{
    struct cs_log_read *r = ctx;
    cs_call_finish(call, GRPC_STATUS_CANCELLED, "the client went away");
    r->call = NULL;
    /* Between rounds nothing is in flight: the pause is cut short. */
    if (!r->busy || (r->pause != NULL && uv_is_active((uv_handle_t *)r->pause)))
        log_read_end(r, 0, "");
}

static const struct cs_stream_ops log_ops = {.drained_cb = drained_cb, .cancel_cb = cancel_cb};

static void start_reading(struct cs_log_read *r, const Csched__V1__Run *run, uint32_t wanted,
                          bool follow);

/* The live attempt being read, when another replica's machine runs it (its
 * end asked for there, remote_attempt.h, or awaited past a lost replica's
 * deadline, cs_attempt_await_remote); else NULL. */
static const struct cs_attempt *remote_attempt(const struct cs_log_read *r)
{
    const struct cs_run *run = cs_idmap_get(&r->sched->runs, r->run_id);
    const struct cs_attempt *att = run != NULL ? run->attempt : NULL;
    return att != NULL && att->number == r->attempt && att->remote_replica[0] != '\0' ? att : NULL;
}

/* Hands the read of an attempt running on replica's machine to that
 * replica, which holds its files; r ends here. */
static void relay(struct cs_log_read *r, const char *replica, bool follow)
{
    const struct cs_room *room = cs_placement_room(r->sched, replica);
    if (!room->leased || room->address[0] == '\0' || r->sched->relay_cb == NULL) {
        char message[400];
        (void)snprintf(message, sizeof(message),
                       "attempt %u of run %lld runs on replica %s, whose lease ran out: its "
                       "output is on that replica's machine only, and the database keeps no "
                       "tail of an attempt that had not ended when its replica was lost",
                       r->attempt, (long long)r->run_id, replica);
        log_read_end(r, -EBUSY, message);
        return;
    }
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    req.run_id = r->run_id;
    req.attempt = r->attempt;
    req.stream =
        r->n_files == 1 ? r->files[0].stream : CSCHED__V1__LOG_STREAM__LOG_STREAM_UNSPECIFIED;
    req.follow = follow;
    struct cs_call *call = r->call;
    struct cs_sched *s = r->sched;
    r->call = NULL;
    log_read_end(r, 0, ""); /* frees r */
    s->relay_cb(s->remote_call_ctx, call, room->address, "/csched.v1.Worker/ReadLogs", &req.base);
}

/* Following a run that has not started the attempt wanted yet: looks again
 * until it has, or the run has ended without it. */
static void attempt_check_cb(uv_timer_t *timer)
{
    struct cs_log_read *r = timer->data;
    r->busy = false;
    const struct cs_run *run = cs_idmap_get(&r->sched->runs, r->run_id);
    if (run != NULL) {
        start_reading(r, run->msg, r->attempt, true);
        return;
    }
    char message[120];
    if (r->attempt == 0)
        (void)snprintf(message, sizeof(message),
                       "run %lld ended before any attempt started, so it has no logs",
                       (long long)r->run_id);
    else
        (void)snprintf(message, sizeof(message), "run %lld ended without an attempt %u",
                       (long long)r->run_id, r->attempt);
    log_read_end(r, -ENOENT, message);
}

/* r->attempt is the attempt wanted (0: the latest) until reading starts. A
 * follower of a run still active waits for that attempt to start. */
static void start_reading(struct cs_log_read *r, const Csched__V1__Run *run, uint32_t wanted,
                          bool follow)
{
    if ((run->n_attempts == 0 || wanted > run->n_attempts) && follow &&
        cs_idmap_get(&r->sched->runs, r->run_id) != NULL) {
        r->attempt = wanted;
        cs_call_set_stream_ops(r->call, &log_ops, r);
        pause_then(r, attempt_check_cb);
        return;
    }
    if (run->n_attempts == 0) {
        log_read_end(r, -ENOENT, "the run has no attempt yet, so no logs");
        return;
    }
    if (wanted > run->n_attempts) {
        char message[120];
        (void)snprintf(message, sizeof(message), "the run has %zu attempts; there is no attempt %u",
                       run->n_attempts, wanted);
        log_read_end(r, -ENOENT, message);
        return;
    }
    r->attempt = wanted != 0 ? wanted : (uint32_t)run->n_attempts;
    const Csched__V1__Attempt *a = run->attempts[r->attempt - 1];
    bool ended = a->ended_unix_ms != 0;
    const struct cs_attempt *remote = ended ? NULL : remote_attempt(r);
    if (remote != NULL) {
        relay(r, remote->remote_replica, follow);
        return;
    }
    /* The launcher makes the directory before it starts the minder: one
     * that ran had a directory, so only what never started may lack it. */
    r->never_started = ended && a->minder_pid == 0;
    (void)snprintf(r->ended_message, sizeof(r->ended_message), "%s",
                   a->message != NULL && a->message[0] != '\0' ? a->message : "no message");
    if (ended)
        take_sizes(r, a);
    /* Until it has ended, an attempt may not have made its directory yet. */
    r->dir_seen = !ended;
    r->following = follow && !ended;
    cs_call_set_stream_ops(r->call, &log_ops, r);
    start_round(r);
    next_step(r);
}

static void stored_run_cb(void *arg, int status, Csched__V1__Run *run)
{
    struct cs_log_read *r = arg;
    if (status != 0) {
        char message[80];
        (void)snprintf(message, sizeof(message), "run %lld does not exist", (long long)r->run_id);
        log_read_end(r, status == -ENOENT ? -ENOENT : -ENOTCONN,
                     status == -ENOENT ? message : "the database is unreachable");
        return;
    }
    /* A run only in the store has ended: there is nothing to follow. */
    start_reading(r, run, r->attempt, false);
    protobuf_c_message_free_unpacked(&run->base, NULL);
}

/* 0, or -EAGAIN once call has been failed for one stream too many. */
static int check_room(struct cs_sched *s, struct cs_call *call)
{
    const char *who = cs_call_identity(call)->name;
    size_t all = 0, mine = 0;
    for (const struct cs_log_read *r = s->log_reads; r != NULL; r = r->next) {
        all++;
        mine += strcmp(r->who, who) == 0;
    }
    return cs_api_stream_room(call, s, all, mine, "ReadLogs",
                              "end one (csched logs without -f reads to the end and stops)");
}

/* A read of req for call, listed; NULL when req is refused or the caller
 * has too many (call failed). */
static struct cs_log_read *log_read_new(struct cs_sched *s, struct cs_call *call,
                                        const Csched__V1__ReadLogsRequest *req)
{
    if (req->run_id <= 0) {
        cs_call_fail_field(call, -EINVAL, "run_id", "run_id %lld is not a run id: ids are positive",
                           (long long)req->run_id);
        return NULL;
    }
    if (req->stream < 0 || req->stream > CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR) {
        cs_call_fail_field(call, -EINVAL, "stream", "stream %d is not a LogStream",
                           (int)req->stream);
        return NULL;
    }
    if (check_room(s, call) != 0)
        return NULL;
    struct cs_log_read *r = cs_xcalloc(1, sizeof(*r));
    (void)snprintf(r->who, sizeof(r->who), "%s", cs_call_identity(call)->name);
    r->next = s->log_reads;
    if (s->log_reads != NULL)
        s->log_reads->prev = r;
    s->log_reads = r;
    r->call = call;
    r->sched = s;
    r->run_id = req->run_id;
    r->attempt = req->attempt;
    if (req->stream == CSCHED__V1__LOG_STREAM__LOG_STREAM_UNSPECIFIED) {
        r->files[r->n_files++].stream = CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT;
        r->files[r->n_files++].stream = CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR;
    } else {
        r->files[r->n_files++].stream = req->stream;
    }
    for (size_t i = 0; i < r->n_files; i++)
        r->files[i].fd = -1;
    return r;
}

void cs_api_read_logs(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ReadLogsRequest *req = (const Csched__V1__ReadLogsRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_log_read *r = log_read_new(s, call, req);
    if (r == NULL)
        return;
    struct cs_run *run = cs_idmap_get(&s->runs, req->run_id);
    const Csched__V1__Run *ended = cs_ended_runs_get(&s->ended_runs, req->run_id);
    if (run != NULL)
        start_reading(r, run->msg, req->attempt, req->follow);
    else if (ended != NULL)
        start_reading(r, ended, req->attempt, false); /* ended: nothing to follow */
    else
        cs_store_run_get(s->store, req->run_id, stored_run_cb, r);
}

void cs_api_worker_read_logs(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ReadLogsRequest *req = (const Csched__V1__ReadLogsRequest *)request;
    if (req->attempt == 0) {
        cs_call_fail_field(call, -EINVAL, "attempt",
                           "a worker reads a given attempt: the active replica names it");
        return;
    }
    struct cs_log_read *r = log_read_new(ctx, call, req);
    if (r == NULL)
        return;
    r->on_worker = true;
    r->following = req->follow;
    cs_call_set_stream_ops(call, &log_ops, r);
    start_round(r);
    next_step(r);
}
