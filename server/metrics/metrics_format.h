/* metrics_format: the Prometheus text exposition format (version 0.0.4) of
 * a metrics snapshot, the process's facts and the endpoint's own counts.
 * Pure functions over their arguments: any thread (the HTTP thread calls
 * them); text grows on the heap as needed.
 *
 * Every family gets its HELP and TYPE lines; label values are escaped as
 * the format asks (backslash, double quote, newline); histogram buckets are
 * cumulative and end with le="+Inf", then _sum and _count. */
#ifndef CS_METRICS_FORMAT_H
#define CS_METRICS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

/* A growing text; zero-initialised is empty. buf is NUL-terminated once
 * anything was written, and owned by the text (cs_text_free). */
struct cs_text {
    char *buf;
    size_t len, cap;
};

void cs_text_printf(struct cs_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cs_text_free(struct cs_text *t);

/* Appends name="value", value escaped, and a comma before it if t already
 * holds a label. */
void cs_prom_label(struct cs_text *t, const char *name, const char *value);
/* The HELP and TYPE lines of a family ("counter", "gauge", "histogram"). */
void cs_prom_family(struct cs_text *t, const char *name, const char *type, const char *help);
/* One sample: name{labels} value; labels may be "" (no braces then). */
void cs_prom_sample(struct cs_text *t, const char *name, const char *labels, double value);
/* The samples of histogram h under name with labels (may be ""): a bucket
 * per bound, +Inf, _sum and _count. */
void cs_prom_hist(struct cs_text *t, const char *name, const char *labels, const struct cs_hist *h,
                  const struct cs_hist_bounds *bounds);

/* What /proc says about cschedd; ok false when it could not be read. */
struct cs_proc_facts {
    bool ok;
    double cpu_seconds;        /* user + system */
    double start_time_seconds; /* since the epoch */
    uint64_t resident_bytes, virtual_bytes;
    uint64_t open_fds, max_fds;
    uint64_t threads;
};

/* The endpoint's own counts, kept by the HTTP thread. */
struct cs_scrape_counts {
    uint64_t served;
    uint64_t unauthenticated; /* no token or a wrong one: 401 */
    uint64_t forbidden;       /* a token whose role is too low: 403 */
};

/* Appends the whole exposition: every family of snap, proc (when ok), the
 * scrape counts and csched_build_info. */
void cs_metrics_format(struct cs_text *t, const struct cs_metrics_snapshot *snap,
                       const struct cs_proc_facts *proc, const struct cs_scrape_counts *scrapes);

#endif
