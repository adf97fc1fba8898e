/* The log writer thread and the double buffer it drains: callers append to
 * the filling half under the lock; the thread swaps the halves and writes
 * the full one without it, so a slow write never holds up a caller. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log_writer.h"

/* How long the thread lets lines gather after each pass: at most this late
 * a line is, and a caller's put costs no system call while lines flow. */
#define LINGER_NS 5000000L

enum state {
    STATE_DIRECT,  /* no thread: callers write */
    STATE_RUNNING, /* the thread writes */
    STATE_STUCK,   /* stopped while stderr blocked: lines are dropped */
};

struct half {
    char buf[CS_LOG_WRITER_BUFFER];
    size_t len;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;    /* the thread: lines to write, or stop */
    pthread_cond_t written; /* flushers: the thread finished a pass */
    struct half halves[2];
    struct half *filling; /* guarded by lock */
    enum state state;     /* guarded by lock */
    bool stopping;        /* guarded by lock */
    bool waiting;         /* guarded by lock: the thread waits for work */
    bool writing;         /* guarded by lock: the thread holds the other half */
    uint64_t dropped;     /* guarded by lock: since the last note of it */
    uint64_t dropped_all; /* guarded by lock */
    int fd;
    cs_log_dropped_fn dropped_line;
    pthread_t thread;
} w = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
    .written = PTHREAD_COND_INITIALIZER,
};

/* Writes all of buf, retrying short writes; a failure has nowhere to be
 * reported and loses the rest. */
static void write_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(w.fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

/* Whole lines, at most PIPE_BUF bytes a write: a write that size to a pipe
 * is never interleaved with another writer's. Every line fits in one. */
static void write_lines(const char *buf, size_t len)
{
    while (len > 0) {
        size_t n = len;
        if (n > PIPE_BUF) {
            const char *nl = memrchr(buf, '\n', PIPE_BUF);
            n = nl != NULL ? (size_t)(nl - buf) + 1 : PIPE_BUF;
        }
        write_all(buf, n);
        buf += n;
        len -= n;
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    sigset_t all;
    /* Signals are the loop's to take. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&w.lock);
    for (;;) {
        while (w.filling->len == 0 && w.dropped == 0 && !w.stopping) {
            w.waiting = true;
            pthread_cond_wait(&w.work, &w.lock);
        }
        w.waiting = false;
        if (w.filling->len == 0 && w.dropped == 0)
            break; /* stopping, and nothing waits */
        struct half *full = w.filling;
        w.filling = full == &w.halves[0] ? &w.halves[1] : &w.halves[0];
        /* Lines dropped came after every line of full, and before any put
         * into the new half. */
        uint64_t dropped = w.dropped;
        w.dropped = 0;
        w.writing = true;
        pthread_mutex_unlock(&w.lock);

        write_lines(full->buf, full->len);
        full->len = 0;
        if (dropped > 0) {
            char note[512];
            write_all(note, w.dropped_line(note, sizeof(note), dropped));
        }
        /* Lines that come meanwhile go out with the next pass, and their
         * callers wake nobody: while lines flow, the writer wakes itself. */
        const struct timespec linger = {0, LINGER_NS};
        (void)nanosleep(&linger, NULL);

        pthread_mutex_lock(&w.lock);
        w.writing = false;
        pthread_cond_broadcast(&w.written);
    }
    pthread_mutex_unlock(&w.lock);
    return NULL;
}

int cs_log_writer_start(int fd, cs_log_dropped_fn dropped)
{
    pthread_mutex_lock(&w.lock);
    w.fd = fd;
    w.dropped_line = dropped;
    w.filling = &w.halves[0];
    w.stopping = false;
    int rc = pthread_create(&w.thread, NULL, writer_main, NULL);
    if (rc == 0) {
        /* The name shows in top -H and /proc. */
        (void)pthread_setname_np(w.thread, "csched-log");
        w.state = STATE_RUNNING;
    }
    pthread_mutex_unlock(&w.lock);
    return rc;
}

bool cs_log_writer_put(const char *line, size_t len)
{
    pthread_mutex_lock(&w.lock);
    if (w.state == STATE_DIRECT) {
        pthread_mutex_unlock(&w.lock);
        return false;
    }
    struct half *h = w.filling;
    /* Once a line is dropped, the half takes no more: a shorter line must
     * not jump the gap that the note of the dropped ones marks. */
    if (w.state == STATE_STUCK || w.dropped > 0 || len > sizeof(h->buf) - h->len) {
        w.dropped++;
        w.dropped_all++;
    } else {
        memcpy(h->buf + h->len, line, len);
        h->len += len;
        if (w.waiting) {
            w.waiting = false; /* one wake-up is enough */
            pthread_cond_signal(&w.work);
        }
    }
    pthread_mutex_unlock(&w.lock);
    return true;
}

/* Whether w.written came within the deadline; false once it has passed. */
static bool wait_written(const struct timespec *deadline)
{
    return pthread_cond_timedwait(&w.written, &w.lock, deadline) != ETIMEDOUT;
}

static struct timespec deadline_in(int timeout_ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t); /* pthread_cond_timedwait's clock */
    t.tv_sec += timeout_ms / 1000;
    t.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* Waits, holding the lock, until every line put before the call is
 * written: the pass after the one that takes them. */
static bool drained(int timeout_ms)
{
    struct timespec deadline = deadline_in(timeout_ms);
    while (w.filling->len > 0 || w.dropped > 0 || w.writing) {
        if (!wait_written(&deadline))
            return false;
    }
    return true;
}

bool cs_log_writer_flush(int timeout_ms)
{
    pthread_mutex_lock(&w.lock);
    bool done = w.state != STATE_RUNNING || drained(timeout_ms);
    pthread_mutex_unlock(&w.lock);
    return done;
}

void cs_log_writer_stop(int timeout_ms)
{
    pthread_mutex_lock(&w.lock);
    if (w.state != STATE_RUNNING) {
        pthread_mutex_unlock(&w.lock);
        return;
    }
    bool done = drained(timeout_ms);
    w.stopping = true;
    pthread_cond_signal(&w.work);
    w.state = done ? STATE_DIRECT : STATE_STUCK;
    pthread_mutex_unlock(&w.lock);
    if (done)
        (void)pthread_join(w.thread, NULL);
    else
        (void)pthread_detach(w.thread); /* blocked in write: the exit ends it */
}

uint64_t cs_log_writer_dropped(void)
{
    pthread_mutex_lock(&w.lock);
    uint64_t n = w.dropped_all;
    pthread_mutex_unlock(&w.lock);
    return n;
}
