/* log_writer: the one thread that writes cschedd's log lines to stderr.
 * Every other thread, the loop's among them, only copies its line into a
 * buffer in memory; a stderr that blocks (a pipe nobody reads, a log file
 * on a journal that is busy, a stalled collector) then stalls this thread
 * alone, never the loop. When the buffer is full, lines are dropped and
 * counted, and a line saying how many follows the last one written before
 * them. Lines go out in the order they were put, whole, at most PIPE_BUF
 * bytes a write, so that nothing else writing to the same pipe splits one.
 *
 * Invariant: a line is written once, whole, or counted as dropped. */
#ifndef CS_LOG_WRITER_H
#define CS_LOG_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Room for lines waiting to be written, in each of the two halves (one
 * being filled while the other is written). */
#define CS_LOG_WRITER_BUFFER (512u * 1024u)

/* Formats the line that says n lines were dropped into buf (cap bytes, at
 * least 256); returns its length. Called on the writer thread. */
typedef size_t (*cs_log_dropped_fn)(char *buf, size_t cap, uint64_t n);

/* Starts the thread; until then, and after cs_log_writer_stop, lines are
 * written by their callers. 0 or a positive errno. */
int cs_log_writer_start(int fd, cs_log_dropped_fn dropped);

/* Queues a whole line for the thread. False when it is not running: the
 * caller writes the line itself. Any thread. */
bool cs_log_writer_put(const char *line, size_t len);

/* Waits up to timeout_ms for what was put before to be written: a crash's
 * last words. Whether it was. Any thread. */
bool cs_log_writer_flush(int timeout_ms);

/* Writes what waits (waiting up to timeout_ms for stderr) and stops the
 * thread. A stderr still blocked after that keeps its lines: the thread is
 * left to it, and later lines are dropped rather than block the exit. */
void cs_log_writer_stop(int timeout_ms);

/* Lines dropped since the start, for tests and the stats. */
uint64_t cs_log_writer_dropped(void);

#endif
