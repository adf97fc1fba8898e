/* Logging for cschedd: one line per call on stderr, as text ("ts level
 * component: message key=value ...", with <N> syslog prefixes when stderr is
 * the journal) or as one JSON object per line. Safe from any thread; each
 * line is built in a stack buffer and written whole, so lines from threads
 * never interleave. Once cs_log_start has run, one thread of its own writes
 * them and a stderr that blocks never stalls a caller (log_writer.h). The
 * settings are made once at start. */
#ifndef CS_LOG_H
#define CS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Which run and attempt state changes get an info line (--log-runs): none,
 * one per run at its end (how it ended, its attempts, its duration), or
 * every change of the run and of each attempt. */
enum cs_log_runs {
    CS_LOG_RUNS_NONE = 0,
    CS_LOG_RUNS_END = 1,
    CS_LOG_RUNS_ALL = 2,
};

/* Sets the most verbose level written (default CS_LOG_INFO). Call before
 * starting threads. */
void cs_log_set_level(enum cs_log_level level);

/* Sets the format (default text) and which run and attempt state changes
 * are logged (default every one). Text lines get journald's <N> level
 * prefixes when JOURNAL_STREAM names stderr. Call before starting threads;
 * reads the environment and fstat()s stderr once. */
void cs_log_configure(enum cs_log_format format, enum cs_log_runs runs);

/* Starts the log writer thread (log_writer.h): from then on no caller
 * waits for stderr. Call once, after cs_log_configure. 0 or a negative
 * errno. */
int cs_log_start(void);
/* Writes what waits, for up to 2 s, and stops the thread: at the end. */
void cs_log_stop(void);
/* Waits up to 1 s for what waits to be written: a crash's last words. */
void cs_log_flush(void);

/* Parses "error", "warn", "info" or "debug"; returns 0 or -EINVAL. */
int cs_log_level_parse(const char *name, enum cs_log_level *out);
/* Parses "text" or "json"; returns 0 or -EINVAL. */
int cs_log_format_parse(const char *name, enum cs_log_format *out);
/* Parses "none", "end" or "all" ("false" and "true", their older words, as
 * none and all); returns 0 or -EINVAL. */
int cs_log_runs_parse(const char *name, enum cs_log_runs *out);

bool cs_log_enabled(enum cs_log_level level);
/* Whether a state change is logged (at info): run_end, the run's own
 * change to an end state. */
bool cs_log_run_change_enabled(bool run_end);

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
