/* Assertions, allocation, clocks, the error record and the log sink of the
 * store (see store_util.h). Safe from any thread. */
#include "store_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cs_store_assert_fail(const char *what, const char *file, int line)
{
    fprintf(stderr, "store: assertion failed: %s (%s:%d)\n", what, file, line);
    abort();
}

static void *check_alloc(void *p)
{
    if (p == NULL) {
        fputs("store: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *cs_store_xmalloc(size_t size)
{
    return check_alloc(malloc(size > 0 ? size : 1));
}

void *cs_store_xcalloc(size_t n, size_t size)
{
    return check_alloc(calloc(n > 0 ? n : 1, size > 0 ? size : 1));
}

void *cs_store_xrealloc(void *ptr, size_t size)
{
    return check_alloc(realloc(ptr, size > 0 ? size : 1));
}

char *cs_store_xstrdup(const char *s)
{
    return check_alloc(strdup(s));
}

static int64_t now_ns(clockid_t clock)
{
    struct timespec ts;

    /* Cannot fail for these clocks on Linux. */
    (void)clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t cs_store_now_mono_ns(void)
{
    return now_ns(CLOCK_MONOTONIC);
}

int64_t cs_store_now_unix_ms(void)
{
    return now_ns(CLOCK_REALTIME) / 1000000;
}

int cs_store_err_set(struct cs_store_err *err, int code, const char *fmt, ...)
{
    char raw[sizeof(err->msg)];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    cs_store_oneline(raw, err->msg, sizeof(err->msg));
    err->code = code;
    return code;
}

void cs_store_oneline(const char *msg, char *out, size_t cap)
{
    size_t len = 0;

    for (; *msg != '\0' && len + 1 < cap; msg++) {
        if (*msg == '\n' || *msg == '\t') {
            if (len > 0 && out[len - 1] != ' ')
                out[len++] = ' ';
            continue;
        }
        out[len++] = *msg;
    }
    while (len > 0 && out[len - 1] == ' ')
        len--;
    out[len] = '\0';
}

void cs_store_log(const struct cs_store_logger *log, enum cs_store_log_level level, const char *fmt,
                  ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    char line[1024];
    va_list ap;

    if (log->cb == NULL && level == CS_STORE_LOG_DEBUG)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (log->cb != NULL)
        log->cb(log->arg, level, "store", line);
    else
        fprintf(stderr, "%s store: %s\n", names[level], line);
}
