/* Logging: formats one line into a stack buffer and writes it with one
 * write(2) to stderr. Runs on any thread; the level is set once at start. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum cs_log_level max_level = CS_LOG_INFO;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void cs_log_set_level(enum cs_log_level level)
{
    max_level = level;
}

int cs_log_level_parse(const char *name, enum cs_log_level *out)
{
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *out = (enum cs_log_level)i;
            return 0;
        }
    }
    return -EINVAL;
}

bool cs_log_enabled(enum cs_log_level level)
{
    return level <= max_level;
}

void cs_log_write(enum cs_log_level level, const char *component, const char *fmt, ...)
{
    if (!cs_log_enabled(level))
        return;

    char line[2048];
    struct timespec now;
    struct tm tm;
    (void)clock_gettime(CLOCK_REALTIME, &now);
    (void)gmtime_r(&now.tv_sec, &tm);
    int n = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03ldZ %s %s: ", now.tv_nsec / 1000000,
                  level_names[level], component);

    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += m;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2; /* truncated: keep the newline */
    line[n++] = '\n';

    /* A failed log write has nowhere to be reported. */
    (void)!write(STDERR_FILENO, line, (size_t)n);
}
