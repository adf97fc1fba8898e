/* Small helpers shared by every part of cschedd: always-on assertions,
 * allocation that aborts on exhaustion, clocks, and the caller-provided error
 * record that carries a message for a person. */
#ifndef CS_UTIL_H
#define CS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Aborts with file:line when an invariant is broken. Never for input. */
#define CS_ASSERT(cond)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            cs_assert_fail(#cond, __FILE__, __LINE__);                                             \
    } while (0)

_Noreturn void cs_assert_fail(const char *what, const char *file, int line);

/* Allocation for the server: aborts on out-of-memory, as Redis's zmalloc. */
void *cs_xmalloc(size_t size);
void *cs_xcalloc(size_t n, size_t size);
void *cs_xrealloc(void *ptr, size_t size);
char *cs_xstrdup(const char *s);

#define CS_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Monotonic clock in nanoseconds. */
int64_t cs_now_mono_ns(void);
/* Wall clock in milliseconds since the Unix epoch. */
int64_t cs_now_unix_ms(void);
/* CLOCK_BOOTTIME in nanoseconds: monotonic, and counting the time the
 * machine spends suspended (the lease's clock, host/lease_file.h). */
int64_t cs_now_boot_ns(void);

/* An error for a person: a negative errno-style code plus a message that
 * names the field and what is allowed. Filled by callees, owned by callers. */
struct cs_err {
    int code;
    char msg[256];
    char field[128]; /* the request field msg is about, or "" */
};

/* Sets err (if not NULL) and returns code, so callers can write
 * "return cs_err_set(err, -EINVAL, ...)". A message that begins with a
 * field path of the request, up to a space or a colon ("job.retry.multiplier:
 * ...", "job.command[2] is ...", "job.labels[\"k\"] ..."), names that field:
 * err->field gets the path; a message of any other start leaves it "". */
int cs_err_set(struct cs_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As cs_err_set, for a message about the request field named (a top-level
 * field such as "time_zone", which a message's start does not tell). */
int cs_err_field(struct cs_err *err, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Loop-thread ownership checks: cs_loop_thread_mark() is called once by the
 * loop thread (cschedd's main, first thing; a unit test, in its setup);
 * CS_ASSERT_LOOP() at the top of every loop-only entry point then aborts
 * with file:line when it is called from any other thread. Compiled into
 * every build, like CS_ASSERT: it costs one thread-local read, and the
 * builds the tests run are the builds that ship. */
void cs_loop_thread_mark(void);
void cs_assert_loop_fail(const char *file, int line);
bool cs_on_loop_thread(void);
#define CS_ASSERT_LOOP()                                                                           \
    do {                                                                                           \
        if (!cs_on_loop_thread())                                                                  \
            cs_assert_loop_fail(__FILE__, __LINE__);                                               \
    } while (0)

#endif
