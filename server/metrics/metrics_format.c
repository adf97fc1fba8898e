/* metrics_format: the text exposition of a snapshot (see metrics_format.h).
 * Any thread; touches only its arguments and constant tables. */
#include "metrics_format.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_writer.h"
#include "util.h"

#ifndef CS_VERSION
#define CS_VERSION "unknown"
#endif

void cs_text_printf(struct cs_text *t, const char *fmt, ...)
{
    for (;;) {
        size_t room = t->cap - t->len;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf != NULL ? t->buf + t->len : NULL, room, fmt, ap);
        va_end(ap);
        CS_ASSERT(n >= 0);
        if ((size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap * 2 > t->len + (size_t)n + 1 ? t->cap * 2 : t->len + (size_t)n + 256;
        t->buf = cs_xrealloc(t->buf, t->cap);
    }
}

void cs_text_free(struct cs_text *t)
{
    free(t->buf);
    *t = (struct cs_text){0};
}

void cs_prom_label(struct cs_text *t, const char *name, const char *value)
{
    cs_text_printf(t, "%s%s=\"", t->len > 0 ? "," : "", name);
    for (const char *p = value; *p != '\0'; p++) {
        if (*p == '\\')
            cs_text_printf(t, "\\\\");
        else if (*p == '"')
            cs_text_printf(t, "\\\"");
        else if (*p == '\n')
            cs_text_printf(t, "\\n");
        else
            cs_text_printf(t, "%c", *p);
    }
    cs_text_printf(t, "\"");
}

void cs_prom_family(struct cs_text *t, const char *name, const char *type, const char *help)
{
    cs_text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A value as the format writes floats: integers without a fraction. */
static void value(struct cs_text *t, double v)
{
    if (isinf(v))
        cs_text_printf(t, "%s", v > 0 ? "+Inf" : "-Inf");
    else if (v == floor(v) && fabs(v) < 1e15)
        cs_text_printf(t, "%.0f", v);
    else
        cs_text_printf(t, "%.15g", v);
}

void cs_prom_sample(struct cs_text *t, const char *name, const char *labels, double v)
{
    cs_text_printf(t, labels[0] != '\0' ? "%s{%s} " : "%s ", name, labels);
    value(t, v);
    cs_text_printf(t, "\n");
}

void cs_prom_hist(struct cs_text *t, const char *name, const char *labels, const struct cs_hist *h,
                  const struct cs_hist_bounds *bounds)
{
    const char *sep = labels[0] != '\0' ? "," : "";
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds->n; i++) {
        cumulative += h->counts[i];
        cs_text_printf(t, "%s_bucket{%s%sle=\"", name, labels, sep);
        value(t, i < bounds->n ? bounds->v[i] : INFINITY);
        cs_text_printf(t, "\"} %llu\n", (unsigned long long)cumulative);
    }
    cs_text_printf(t, "%s_sum%s%s%s ", name, labels[0] != '\0' ? "{" : "", labels,
                   labels[0] != '\0' ? "}" : "");
    value(t, h->sum);
    cs_text_printf(t, "\n%s_count%s%s%s %llu\n", name, labels[0] != '\0' ? "{" : "", labels,
                   labels[0] != '\0' ? "}" : "", (unsigned long long)h->count);
}

/* An enum value's name as a label value: "RUN_STATE_TIMED_OUT" less its
 * prefix and lowercased, "timed_out". */
static void enum_label(struct cs_text *labels, const char *label,
                       const ProtobufCEnumDescriptor *desc, int v, const char *prefix)
{
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(desc, v);
    char text[64] = "unknown";
    if (ev != NULL) {
        const char *name = ev->name;
        size_t plen = strlen(prefix);
        if (strncmp(name, prefix, plen) == 0)
            name += plen;
        size_t i = 0;
        for (; name[i] != '\0' && i + 1 < sizeof(text); i++)
            text[i] = (char)tolower((unsigned char)name[i]);
        text[i] = '\0';
    }
    cs_prom_label(labels, label, text);
}

/* A counter family with one sample per run state that has been counted. */
/* A counter family of two samples, each with its one label. */
static void counter_pair(struct cs_text *t, const char *name, const char *help, const char *label_a,
                         uint64_t a, const char *label_b, uint64_t b)
{
    cs_prom_family(t, name, "counter", help);
    cs_prom_sample(t, name, label_a, (double)a);
    cs_prom_sample(t, name, label_b, (double)b);
}

static void by_state(struct cs_text *t, const char *name, const char *help, const uint64_t *counts)
{
    cs_prom_family(t, name, "counter", help);
    for (int st = CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED; st < CS_METRIC_RUN_STATES; st++) {
        struct cs_text labels = {0};
        enum_label(&labels, "state", &csched__v1__run_state__descriptor, st, "RUN_STATE_");
        cs_prom_sample(t, name, labels.buf, (double)counts[st]);
        cs_text_free(&labels);
    }
}

static void hist_family(struct cs_text *t, const char *name, const char *help,
                        const struct cs_hist *h, const struct cs_hist_bounds *bounds)
{
    cs_prom_family(t, name, "histogram", help);
    cs_prom_hist(t, name, "", h, bounds);
}

static void runs(struct cs_text *t, const struct cs_metrics_snapshot *s)
{
    const struct cs_metrics_gauges *g = &s->gauges;
    cs_prom_family(t, "csched_runs_started_total", "counter", "Runs whose first attempt started.");
    cs_prom_sample(t, "csched_runs_started_total", "", (double)s->runs_started);
    cs_prom_family(t, "csched_attempts_started_total", "counter",
                   "Attempts started, retries included.");
    cs_prom_sample(t, "csched_attempts_started_total", "", (double)s->attempts_started);
    counter_pair(t, "csched_status_notes_read_total",
                 "Status notes read: on the loop from the kernel's caches, or on the pool.",
                 "where=\"loop\"", s->notes_read_loop, "where=\"pool\"", s->notes_read_pool);
    counter_pair(t, "csched_output_truncated_total",
                 "Attempts whose log of the stream was cut at its cap, the rest dropped.",
                 "stream=\"stdout\"", s->stdout_cut, "stream=\"stderr\"", s->stderr_cut);
    by_state(t, "csched_runs_finished_total", "Runs ended, by the state they ended in.",
             s->runs_finished);
    by_state(t, "csched_attempts_finished_total", "Attempts ended, by the state they ended in.",
             s->attempts_finished);
    hist_family(t, "csched_attempt_duration_seconds", "An attempt's start to its end.",
                &s->hist[CS_METRIC_ATTEMPT_DURATION],
                &cs_metrics_bounds[CS_METRIC_ATTEMPT_DURATION]);
    hist_family(t, "csched_queue_wait_seconds",
                "A run's time from due (created, or its not_before) to starting.",
                &s->hist[CS_METRIC_QUEUE_WAIT], &cs_metrics_bounds[CS_METRIC_QUEUE_WAIT]);
    hist_family(t, "csched_spawn_latency_seconds",
                "An attempt's launch asked for to its minder running.", &s->hist[CS_METRIC_SPAWN],
                &cs_metrics_bounds[CS_METRIC_SPAWN]);
    cs_prom_family(t, "csched_runs", "gauge", "Runs not yet ended, by state.");
    cs_prom_sample(t, "csched_runs", "state=\"queued\"", g->runs_queued);
    cs_prom_sample(t, "csched_runs", "state=\"starting\"", g->runs_starting);
    cs_prom_sample(t, "csched_runs", "state=\"running\"", g->runs_running);
    cs_prom_family(t, "csched_slots_used", "gauge",
                   "Runs holding a slot of --max-running (starting or running).");
    cs_prom_sample(t, "csched_slots_used", "", g->slots_used);
    cs_prom_family(t, "csched_slots_limit", "gauge", "--max-running: runs at once, all jobs.");
    cs_prom_sample(t, "csched_slots_limit", "", g->max_running);
    cs_prom_family(t, "csched_jobs", "gauge", "Jobs defined.");
    cs_prom_sample(t, "csched_jobs", "", g->jobs);
}

static void store(struct cs_text *t, const struct cs_store_stats *st)
{
    hist_family(t, "csched_db_roundtrip_seconds", "A batch sent to its first result.",
                &st->roundtrip_s, &cs_store_latency_bounds);
    hist_family(t, "csched_db_commit_seconds", "A batch sent to its commit (its sync).",
                &st->commit_s, &cs_store_latency_bounds);
    hist_family(t, "csched_db_batch_operations", "Operations (writes and reads) per batch.",
                &st->batch_ops, &cs_store_batch_bounds);
    cs_prom_family(t, "csched_db_reconnects_total", "counter",
                   "Connections to the database made again after it was lost.");
    cs_prom_sample(t, "csched_db_reconnects_total", "", (double)st->reconnects);
    cs_prom_family(t, "csched_db_batches_failed_total", "counter",
                   "Batches a statement's error aborted.");
    cs_prom_sample(t, "csched_db_batches_failed_total", "", (double)st->batches_failed);
    cs_prom_family(t, "csched_db_up", "gauge",
                   "1 while the database is connected and takes writes, else 0.");
    cs_prom_sample(t, "csched_db_up", "", st->up ? 1 : 0);
}

static const char *const grpc_codes[CS_METRIC_GRPC_CODES] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

/* grpc_service and grpc_method of "/pkg.Service/Method" into labels. */
static void method_labels(struct cs_text *labels, const char *path)
{
    const char *slash = strrchr(path, '/');
    char service[256];
    const char *start = path[0] == '/' ? path + 1 : path;
    size_t n = slash != NULL && slash > start ? (size_t)(slash - start) : 0;
    (void)snprintf(service, sizeof(service), "%.*s", (int)n, start);
    cs_prom_label(labels, "grpc_service", service);
    cs_prom_label(labels, "grpc_method", slash != NULL ? slash + 1 : path);
}

static void grpc(struct cs_text *t, const struct cs_metrics_snapshot *s)
{
    cs_prom_family(t, "csched_grpc_server_handled_total", "counter",
                   "gRPC calls ended, by method and status code.");
    for (uint32_t i = 0; i < s->n_grpc; i++) {
        for (int code = 0; code < CS_METRIC_GRPC_CODES; code++) {
            if (s->grpc[i].handled[code] == 0)
                continue;
            struct cs_text labels = {0};
            method_labels(&labels, s->grpc[i].path);
            cs_prom_label(&labels, "grpc_code", grpc_codes[code]);
            cs_prom_sample(t, "csched_grpc_server_handled_total", labels.buf,
                           (double)s->grpc[i].handled[code]);
            cs_text_free(&labels);
        }
    }
    cs_prom_family(t, "csched_grpc_server_handling_seconds", "histogram",
                   "gRPC calls' time from the request taken to the final status sent.");
    for (uint32_t i = 0; i < s->n_grpc; i++) {
        struct cs_text labels = {0};
        method_labels(&labels, s->grpc[i].path);
        cs_prom_hist(t, "csched_grpc_server_handling_seconds", labels.buf, &s->grpc[i].seconds,
                     &cs_store_latency_bounds);
        cs_text_free(&labels);
    }
}

static void schedules(struct cs_text *t, const struct cs_metrics_snapshot *s)
{
    hist_family(t, "csched_schedule_fire_lateness_seconds",
                "A schedule's slot due to decided (backfills not counted).",
                &s->hist[CS_METRIC_SLOT_LATENESS], &cs_metrics_bounds[CS_METRIC_SLOT_LATENESS]);
    cs_prom_family(t, "csched_schedule_slots_total", "counter",
                   "Schedule slots decided, by outcome and skip reason.");
    for (int o = 1; o < CS_METRIC_SLOT_OUTCOMES; o++) {
        for (int r = 0; r < CS_METRIC_SKIP_REASONS; r++) {
            /* A started slot has no reason; a skipped one shows once it has
             * happened. */
            if (s->slots[o][r] == 0 &&
                (o != CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED || r != 0))
                continue;
            struct cs_text labels = {0};
            enum_label(&labels, "outcome", &csched__v1__slot_outcome__descriptor, o,
                       "SLOT_OUTCOME_");
            if (r != 0)
                enum_label(&labels, "reason", &csched__v1__skip_reason__descriptor, r,
                           "SKIP_REASON_");
            cs_prom_sample(t, "csched_schedule_slots_total", labels.buf, (double)s->slots[o][r]);
            cs_text_free(&labels);
        }
    }
    /* Shown once the zones have been read at start. */
    if (s->gauges.tzdata_version[0] != '\0') {
        struct cs_text labels = {0};
        cs_prom_label(&labels, "version", s->gauges.tzdata_version);
        cs_prom_family(t, "csched_tzdata_info", "gauge",
                       "Always 1; the version of the tz database the schedules' time zones were "
                       "last read from (at start or on SIGHUP).");
        cs_prom_sample(t, "csched_tzdata_info", labels.buf, 1);
        cs_text_free(&labels);
    }
    if (s->gauges.limits_mechanism != NULL) {
        struct cs_text labels = {0};
        cs_prom_label(&labels, "mechanism", s->gauges.limits_mechanism);
        cs_prom_label(&labels, "enforcement", s->gauges.limits_strict ? "strict" : "warn");
        cs_prom_family(t, "csched_limits_info", "gauge",
                       "Always 1; how the jobs' resource limits are held on this host "
                       "(docs/limits.md).");
        cs_prom_sample(t, "csched_limits_info", labels.buf, 1);
        cs_text_free(&labels);
    }
}

/* This replica among those sharing the database (docs/operations.md,
 * "Replicas"); every replica's rows are ListReplicas'. */
static void replica(struct cs_text *t, const struct cs_metrics_gauges *g)
{
    struct cs_text labels = {0};
    if (g->replica_id[0] == '\0')
        return;
    cs_prom_label(&labels, "replica", g->replica_id);
    cs_prom_family(t, "csched_replica_epoch", "gauge",
                   "This replica's epoch, its fencing token: new at every start and takeover; 0 "
                   "until it has joined.");
    cs_prom_sample(t, "csched_replica_epoch", labels.buf, (double)g->replica_epoch);
    cs_prom_family(t, "csched_replica_active", "gauge",
                   "1 while this replica is the active one, 0 while it stands by.");
    cs_prom_sample(t, "csched_replica_active", labels.buf, g->replica_active ? 1 : 0);
    if (g->replica_renewed_age_ms >= 0) {
        cs_prom_family(t, "csched_replica_lease_age_seconds", "gauge",
                       "Since the last renewal of the lease that committed was sent.");
        cs_prom_sample(t, "csched_replica_lease_age_seconds", labels.buf,
                       (double)g->replica_renewed_age_ms / 1000.0);
    }
    cs_text_free(&labels);
}

static void process(struct cs_text *t, const struct cs_proc_facts *p)
{
    cs_prom_family(t, "process_cpu_seconds_total", "counter", "User and system CPU time spent.");
    cs_prom_sample(t, "process_cpu_seconds_total", "", p->cpu_seconds);
    cs_prom_family(t, "process_start_time_seconds", "gauge", "Start time since the epoch.");
    cs_prom_sample(t, "process_start_time_seconds", "", p->start_time_seconds);
    cs_prom_family(t, "process_resident_memory_bytes", "gauge", "Resident memory size.");
    cs_prom_sample(t, "process_resident_memory_bytes", "", (double)p->resident_bytes);
    cs_prom_family(t, "process_virtual_memory_bytes", "gauge", "Virtual memory size.");
    cs_prom_sample(t, "process_virtual_memory_bytes", "", (double)p->virtual_bytes);
    cs_prom_family(t, "process_open_fds", "gauge", "Open file descriptors.");
    cs_prom_sample(t, "process_open_fds", "", (double)p->open_fds);
    cs_prom_family(t, "process_max_fds", "gauge", "The limit of open file descriptors.");
    cs_prom_sample(t, "process_max_fds", "", (double)p->max_fds);
    cs_prom_family(t, "process_threads", "gauge", "Threads of the process.");
    cs_prom_sample(t, "process_threads", "", (double)p->threads);
}

static void endpoint(struct cs_text *t, const struct cs_metrics_snapshot *s,
                     const struct cs_scrape_counts *c)
{
    cs_prom_family(t, "csched_metrics_scrapes_total", "counter", "Scrapes of /metrics served.");
    cs_prom_sample(t, "csched_metrics_scrapes_total", "", (double)c->served);
    counter_pair(t, "csched_metrics_scrapes_refused_total",
                 "Requests for /metrics refused, by reason.", "reason=\"unauthenticated\"",
                 c->unauthenticated, "reason=\"forbidden\"", c->forbidden);
    cs_prom_family(t, "csched_log_lines_dropped_total", "counter",
                   "Log lines dropped because stderr did not take them in time.");
    cs_prom_sample(t, "csched_log_lines_dropped_total", "", (double)cs_log_writer_dropped());
    cs_prom_family(t, "csched_metrics_published_timestamp_seconds", "gauge",
                   "When the loop last published the figures served here.");
    cs_prom_sample(t, "csched_metrics_published_timestamp_seconds", "",
                   (double)s->published_unix_ms / 1000.0);
    cs_prom_family(t, "csched_build_info", "gauge", "Always 1; the version of cschedd.");
    cs_prom_sample(t, "csched_build_info", "version=\"" CS_VERSION "\"", 1);
}

void cs_metrics_format(struct cs_text *t, const struct cs_metrics_snapshot *snap,
                       const struct cs_proc_facts *proc, const struct cs_scrape_counts *scrapes)
{
    hist_family(t, "csched_loop_lag_seconds",
                "How late the loop's 10 ms probe tick fired: the loop's stalls.",
                &snap->hist[CS_METRIC_LOOP_LAG], &cs_metrics_bounds[CS_METRIC_LOOP_LAG]);
    runs(t, snap);
    store(t, &snap->gauges.store);
    grpc(t, snap);
    schedules(t, snap);
    replica(t, &snap->gauges);
    if (proc->ok)
        process(t, proc);
    endpoint(t, snap, scrapes);
}
