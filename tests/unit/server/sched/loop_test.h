/* loop_test: what the unit tests of the loop's modules (test_pump,
 * test_dispatch) share. Violations: checks made inside loop callbacks (a
 * fake's callback run from uv_run), recorded rather than asserted, because a
 * failed cmocka assertion would longjmp out of uv_run; the test reports them
 * once the loop has returned, the count and the first message (one record
 * per file). And jobs made by hand. Include after cmocka.h. */
#ifndef CS_TEST_LOOP_TEST_H
#define CS_TEST_LOOP_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "job_table.h"

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

/* A job named name running "true", with the limit and retry policy given,
 * inserted into sched (which owns it). */
static inline struct cs_job *loop_test_add_job(struct cs_sched *sched, const char *name,
                                               uint32_t max_running, uint32_t max_attempts,
                                               uint32_t retry_backoff_ms)
{
    Csched__V1__Job spec;
    char *argv[] = {"true"};

    csched__v1__job__init(&spec);
    spec.name = (char *)name;
    spec.command = argv;
    spec.n_command = 1;
    spec.max_running = max_running;
    spec.max_attempts = max_attempts;
    spec.retry_backoff_ms = retry_backoff_ms;
    return cs_job_insert(sched, (Csched__V1__Job *)cs_message_copy(&spec.base));
}

#endif
