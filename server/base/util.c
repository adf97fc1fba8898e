/* Helpers shared by every thread of cschedd. */
#include "util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

void cs_assert_fail(const char *what, const char *file, int line)
{
    cs_log_flush();
    fprintf(stderr, "cschedd: assertion failed: %s at %s:%d\n", what, file, line);
    abort();
}

static void *check_alloc(void *p, size_t size)
{
    if (p == NULL && size != 0) {
        fprintf(stderr, "cschedd: out of memory allocating %zu bytes\n", size);
        abort();
    }
    return p;
}

void *cs_xmalloc(size_t size)
{
    return check_alloc(malloc(size), size);
}

void *cs_xcalloc(size_t n, size_t size)
{
    return check_alloc(calloc(n, size), n * size);
}

void *cs_xrealloc(void *ptr, size_t size)
{
    return check_alloc(realloc(ptr, size), size);
}

char *cs_xstrdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = cs_xmalloc(len);
    memcpy(copy, s, len);
    return copy;
}

int64_t cs_now_mono_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t cs_now_unix_ms(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cs_now_boot_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The length of the field path msg begins with, or 0: lower-case words
 * joined by dots, at least two of them or an index, each word maybe
 * followed by indexes ([2], ["key"]); then a space, a colon or the end. */
static size_t field_path_len(const char *msg)
{
    size_t i = 0, words = 0, indexes = 0;
    for (;;) {
        if (!islower((unsigned char)msg[i]))
            return 0;
        while (islower((unsigned char)msg[i]) || isdigit((unsigned char)msg[i]) || msg[i] == '_')
            i++;
        words++;
        while (msg[i] == '[') {
            const char *close = strchr(msg + i, ']');
            if (close == NULL)
                return 0;
            i = (size_t)(close - msg) + 1;
            indexes++;
        }
        if (msg[i] != '.')
            break;
        i++;
    }
    bool ends = msg[i] == '\0' || msg[i] == ' ' || msg[i] == ':';
    return ends && (words > 1 || indexes > 0) ? i : 0;
}

/* The code and the message of err, from fmt and ap. */
__attribute__((format(printf, 3, 0))) static void err_vset(struct cs_err *err, int code,
                                                           const char *fmt, va_list ap)
{
    err->code = code;
    (void)vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int cs_err_set(struct cs_err *err, int code, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        err_vset(err, code, fmt, ap);
        va_end(ap);
        size_t n = field_path_len(err->msg);
        if (n >= sizeof(err->field))
            n = 0;
        memcpy(err->field, err->msg, n);
        err->field[n] = '\0';
    }
    return code;
}

int cs_err_field(struct cs_err *err, int code, const char *field, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        err_vset(err, code, fmt, ap);
        va_end(ap);
        (void)snprintf(err->field, sizeof(err->field), "%s", field);
    }
    return code;
}

static _Thread_local bool is_loop_thread;

void cs_loop_thread_mark(void)
{
    is_loop_thread = true;
}

bool cs_on_loop_thread(void)
{
    return is_loop_thread;
}

void cs_assert_loop_fail(const char *file, int line)
{
    cs_assert_fail("running on the loop thread", file, line);
}
