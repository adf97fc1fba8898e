/* Logging for cschedd: one line per call on stderr, as text ("ts level
 * component: message key=value ...", with <N> syslog prefixes when stderr is
 * the journal) or as one JSON object per line. Safe from any thread; each
 * line is built in a stack buffer and written whole with a single write(2),
 * so lines from threads never interleave. The settings are made once at
 * start. The loop thread's info and debug lines may be gathered until the
 * end of its turn (cs_log_gather_start). */
#ifndef CS_LOG_H
#define CS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

enum cs_log_level {
    CS_LOG_ERROR = 0,
    CS_LOG_WARN = 1,
    CS_LOG_INFO = 2,
    CS_LOG_DEBUG = 3,
};

enum cs_log_format {
    CS_LOG_TEXT = 0,
    CS_LOG_JSON = 1,
};

/* Sets the most verbose level written (default CS_LOG_INFO). Call before
 * starting threads. */
void cs_log_set_level(enum cs_log_level level);

/* Sets the format (default text) and whether run and attempt state changes
 * are logged (default yes). Text lines get journald's <N> level prefixes
 * when JOURNAL_STREAM names stderr. Call before starting threads; reads the
 * environment and fstat()s stderr once. */
void cs_log_configure(enum cs_log_format format, bool runs);

/* From now on the calling thread, the loop's, gathers its info and debug
 * lines and writes them at the end of each loop turn (a uv_prepare handle,
 * unref'd: start it before any other prepare handle, so it runs last) or
 * when PIPE_BUF bytes are waiting; an error or a warning writes what waits
 * and itself at once. 0 or a negative errno from libuv. */
int cs_log_gather_start(uv_loop_t *loop);
/* Writes what waits and closes the handle: before the loop's last run. */
void cs_log_gather_stop(void);
/* Writes what the calling thread has gathered, if it gathers: for a crash's
 * last words, which must not leave the turn's lines behind. */
void cs_log_write_gathered(void);

/* Parses "error", "warn", "info" or "debug"; returns 0 or -EINVAL. */
int cs_log_level_parse(const char *name, enum cs_log_level *out);
/* Parses "text" or "json"; returns 0 or -EINVAL. */
int cs_log_format_parse(const char *name, enum cs_log_format *out);

bool cs_log_enabled(enum cs_log_level level);
/* Whether run and attempt state changes are logged (at info). */
bool cs_log_runs_enabled(void);

/* One key/value of a line: a string (escaped on output) or an integer. */
struct cs_log_field {
    const char *key; /* a plain identifier, written as it is */
    const char *str; /* NULL: the value is num */
    int64_t num;
};
#define CS_LOG_STR(k, v) ((struct cs_log_field){.key = (k), .str = (v) != NULL ? (v) : ""})
#define CS_LOG_INT(k, v) ((struct cs_log_field){.key = (k), .num = (int64_t)(v)})

void cs_log_write(enum cs_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As cs_log_write, with the n fields after the message. */
void cs_log_write_fields(enum cs_log_level level, const char *component,
                         const struct cs_log_field *fields, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Each source file defines CS_LOG_COMPONENT (e.g. "store") before including
 * this header, or gets "cschedd". */
#ifndef CS_LOG_COMPONENT
#define CS_LOG_COMPONENT "cschedd"
#endif

#define cs_log_error(...) cs_log_write(CS_LOG_ERROR, CS_LOG_COMPONENT, __VA_ARGS__)
#define cs_log_warn(...) cs_log_write(CS_LOG_WARN, CS_LOG_COMPONENT, __VA_ARGS__)
#define cs_log_info(...) cs_log_write(CS_LOG_INFO, CS_LOG_COMPONENT, __VA_ARGS__)
#define cs_log_debug(...)                                                                          \
    do {                                                                                           \
        if (cs_log_enabled(CS_LOG_DEBUG))                                                          \
            cs_log_write(CS_LOG_DEBUG, CS_LOG_COMPONENT, __VA_ARGS__);                             \
    } while (0)

#endif
