/* Logging for cschedd: one line per call on stderr, "ts level component:
 * message key=value" (the store's lines come through main.c's log callback).
 * Safe from any thread; each line is written with a single write(2) so lines
 * from threads never interleave. */
#ifndef CS_LOG_H
#define CS_LOG_H

#include <stdbool.h>

enum cs_log_level {
    CS_LOG_ERROR = 0,
    CS_LOG_WARN = 1,
    CS_LOG_INFO = 2,
    CS_LOG_DEBUG = 3,
};

/* Sets the most verbose level written (default CS_LOG_INFO). Call before
 * starting threads. */
void cs_log_set_level(enum cs_log_level level);

/* Parses "error", "warn", "info" or "debug"; returns 0 or -EINVAL. */
int cs_log_level_parse(const char *name, enum cs_log_level *out);

bool cs_log_enabled(enum cs_log_level level);

void cs_log_write(enum cs_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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
