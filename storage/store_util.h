/* The few helpers storage carries itself, so that it needs nothing of the
 * server: assertions, allocation that aborts, clocks, an error record and
 * the log sink. Safe from any thread; none of them blocks. */
#ifndef CS_STORE_UTIL_H
#define CS_STORE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Aborts with file:line when an invariant is broken. Never for input. */
#define CS_STORE_ASSERT(cond)                                                                      \
    do {                                                                                           \
        if (!(cond))                                                                               \
            cs_store_assert_fail(#cond, __FILE__, __LINE__);                                       \
    } while (0)

_Noreturn void cs_store_assert_fail(const char *what, const char *file, int line);

/* Allocation that aborts when memory runs out, as the server's does. */
void *cs_store_xmalloc(size_t size);
void *cs_store_xcalloc(size_t n, size_t size);
void *cs_store_xrealloc(void *ptr, size_t size);
char *cs_store_xstrdup(const char *s);

int64_t cs_store_now_mono_ns(void);
int64_t cs_store_now_unix_ms(void);

/* Why an action failed, for the caller to log or pass on: a negative errno
 * and a message on one line. Filled by callees, owned by callers. */
struct cs_store_err {
    int code;
    char msg[512];
};

/* Sets err (not NULL) and returns code. The message is made one line (see
 * cs_store_oneline), since libpq's messages span several. */
int cs_store_err_set(struct cs_store_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copies a libpq message (several lines, ending in a newline) as one line. */
void cs_store_oneline(const char *msg, char *out, size_t cap);

/* Where log lines go: the callback given in struct cs_store_config. */
struct cs_store_logger {
    cs_store_log_cb cb; /* NULL: stderr, without debug lines */
    void *arg;
};

void cs_store_log(const struct cs_store_logger *log, enum cs_store_log_level level, const char *fmt,
                  ...) __attribute__((format(printf, 3, 4)));

#endif
