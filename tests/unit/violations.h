/* violations: checks made inside loop callbacks of a unit test (a fake's
 * callback run from uv_run), recorded rather than asserted, because a failed
 * cmocka assertion would longjmp out of uv_run. The test reports them once
 * the loop has returned: the count and the first message. One record per
 * test file; include after cmocka.h. */
#ifndef CS_TEST_VIOLATIONS_H
#define CS_TEST_VIOLATIONS_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static struct {
    int count;
    char first[256];
} violations;

static inline void violations_reset(void)
{
    memset(&violations, 0, sizeof(violations));
}

static inline void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline void violation(const char *fmt, ...)
{
    if (violations.count++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(violations.first, sizeof(violations.first), fmt, ap);
        va_end(ap);
    }
}

static inline void assert_no_violation(void)
{
    if (violations.count != 0)
        fail_msg("%d violations, the first: %s", violations.count, violations.first);
}

#endif
