/* When attempts start and how they stop, as the CLI reads and shows them:
 * the retry flags of "job create/update", durations ("1h30m") and times
 * ("2026-12-01T13:00:00Z") for "trigger --in/--at", and the job table's
 * lines for the retry policy, the deadline and the kill settings.
 *
 * Single-threaded; messages are built on the heap (see cli.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const struct {
    const char *name;
    Csched__V1__RetryOn on;
} retry_on_names[] = {
    {"failure", CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE},
    {"timeout", CSCHED__V1__RETRY_ON__RETRY_ON_TIMEOUT},
    {"failure,timeout", CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE_AND_TIMEOUT},
    {"timeout,failure", CSCHED__V1__RETRY_ON__RETRY_ON_FAILURE_AND_TIMEOUT},
};

int cs_cli_parse_retry_on(const char *s, Csched__V1__RetryOn *out)
{
    for (size_t i = 0; s != NULL && i < sizeof(retry_on_names) / sizeof(retry_on_names[0]); i++) {
        if (strcmp(s, retry_on_names[i].name) == 0) {
            *out = retry_on_names[i].on;
            return 0;
        }
    }
    return -EINVAL;
}

const char *cs_cli_retry_on_name(Csched__V1__RetryOn on)
{
    for (size_t i = 0; i < sizeof(retry_on_names) / sizeof(retry_on_names[0]); i++)
        if (retry_on_names[i].on == on)
            return retry_on_names[i].name;
    return "failure,timeout";
}

int cs_cli_parse_double(const char *s, double *out)
{
    char *end;

    if (s == NULL || s[0] == '\0')
        return -EINVAL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return -EINVAL;
    *out = v;
    return 0;
}

Csched__V1__RetryPolicy *cs_cli_job_retry(Csched__V1__Job *job)
{
    if (job->retry == NULL) {
        job->retry = cs_cli_xmalloc(sizeof(*job->retry));
        csched__v1__retry_policy__init(job->retry);
    }
    return job->retry;
}

/* What a retry flag takes: milliseconds, a number, or a RetryOn name. */
enum retry_kind { RETRY_MS, RETRY_NUMBER, RETRY_ON };

/* Parses v into the field at p, of the kind the flag takes. 0 or -EINVAL. */
static int parse_retry_value(enum retry_kind kind, const char *v, void *p)
{
    switch (kind) {
    case RETRY_MS:
        return cs_cli_parse_u32(v, p);
    case RETRY_NUMBER:
        return cs_cli_parse_double(v, p);
    default:
        return cs_cli_parse_retry_on(v, p);
    }
}

int cs_cli_retry_flag(Csched__V1__Job *job, int argc, char **argv, int *i, struct cs_cli_err *err)
{
    static const struct {
        const char *flag;
        enum retry_kind kind;
        size_t offset;
        const char *wants;
    } flags[] = {
        {"--retry-initial-ms", RETRY_MS, offsetof(Csched__V1__RetryPolicy, initial_backoff_ms),
         "whole milliseconds"},
        {"--retry-max-ms", RETRY_MS, offsetof(Csched__V1__RetryPolicy, max_backoff_ms),
         "whole milliseconds"},
        {"--retry-multiplier", RETRY_NUMBER, offsetof(Csched__V1__RetryPolicy, multiplier),
         "a number, e.g. 2 or 1.5"},
        {"--retry-jitter", RETRY_NUMBER, offsetof(Csched__V1__RetryPolicy, jitter),
         "a fraction from 0 to 1"},
        {"--retry-on", RETRY_ON, offsetof(Csched__V1__RetryPolicy, retry_on),
         "failure, timeout or failure,timeout"},
    };
    const char *v;

    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        if (!cs_cli_flag(flags[k].flag, argc, argv, i, &v))
            continue;
        void *field = (char *)cs_cli_job_retry(job) + flags[k].offset;
        if (parse_retry_value(flags[k].kind, v, field) != 0)
            return cs_cli_err_set(err, -EINVAL, "%s takes %s, not '%s'", flags[k].flag,
                                  flags[k].wants, v ? v : "");
        return CS_CLI_FLAG_TAKEN;
    }
    return CS_CLI_FLAG_NOT_MINE;
}

int cs_cli_parse_duration(const char *s, int64_t *out_ms)
{
    static const struct {
        const char *unit;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    int64_t total = 0;

    if (s == NULL || s[0] == '\0')
        return -EINVAL;
    while (*s != '\0') {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno != 0 || v < 0 || !isfinite(v))
            return -EINVAL;
        size_t k = 0, n = sizeof(units) / sizeof(units[0]);
        while (k < n && strncmp(end, units[k].unit, strlen(units[k].unit)) != 0)
            k++;
        /* "m" would also match the start of "ms": units lists "ms" first. */
        if (k == n || v * (double)units[k].ms > 1e15)
            return -EINVAL;
        total += (int64_t)(v * (double)units[k].ms);
        s = end + strlen(units[k].unit);
    }
    if (total <= 0)
        return -EINVAL;
    *out_ms = total;
    return 0;
}

/* The offset of a "Z", "+HH:MM" or "-HH:MM" suffix in seconds east of UTC;
 * 1 for no suffix (local time); -EINVAL for anything else. */
static int parse_zone(const char *s, long *offset_s)
{
    unsigned hh, mm;
    int used = 0;

    if (*s == '\0')
        return 1;
    if (strcmp(s, "Z") == 0 || strcmp(s, "z") == 0) {
        *offset_s = 0;
        return 0;
    }
    if ((*s != '+' && *s != '-') || sscanf(s + 1, "%2u:%2u%n", &hh, &mm, &used) != 2 ||
        s[1 + used] != '\0' || hh > 23 || mm > 59)
        return -EINVAL;
    *offset_s = (long)(hh * 3600 + mm * 60) * (*s == '-' ? -1 : 1);
    return 0;
}

int cs_cli_parse_at(const char *s, int64_t *out_ms)
{
    static const char *const formats[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S",
                                          "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"};
    long offset_s = 0;

    if (s == NULL)
        return -EINVAL;
    if (s[0] == '@') {
        char *end;
        errno = 0;
        long long secs = strtoll(s + 1, &end, 10);
        if (end == s + 1 || *end != '\0' || errno != 0 || secs < 0 || secs > INT64_MAX / 1000)
            return -EINVAL;
        *out_ms = secs * 1000;
        return 0;
    }
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        struct tm tm;
        memset(&tm, 0, sizeof(tm));
        const char *rest = strptime(s, formats[i], &tm);
        if (rest == NULL)
            continue;
        int zone = parse_zone(rest, &offset_s);
        if (zone < 0)
            continue;
        time_t t;
        if (zone == 1) {
            tm.tm_isdst = -1;
            t = mktime(&tm);
        } else {
            t = timegm(&tm) - offset_s;
        }
        if (t == (time_t)-1)
            return -EINVAL;
        *out_ms = (int64_t)t * 1000;
        return 0;
    }
    return -EINVAL;
}

void cs_cli_print_job_stop(FILE *f, const Csched__V1__Job *job)
{
    const Csched__V1__RetryPolicy *p = job->retry;

    if (p != NULL)
        fprintf(f,
                "retry:            initial %" PRIu32 " ms, max %" PRIu32 " ms, x%g, jitter %g, "
                "on %s\n",
                p->initial_backoff_ms, p->max_backoff_ms, p->multiplier, p->jitter,
                cs_cli_retry_on_name(p->retry_on));
    fprintf(f, "run_deadline:     %" PRIu32 " s\n", job->run_deadline_seconds);
    fprintf(f, "kill_signal:      %s\n", job->kill_signal[0] ? job->kill_signal : "TERM");
    if (job->kill_grace_seconds > 0)
        fprintf(f, "kill_grace:       %" PRIu32 " s\n", job->kill_grace_seconds);
    else
        fprintf(f, "kill_grace:       the server's default (10 s)\n");
}
