/* Output for csched: JSON lines written from protobuf-c's descriptors (so
 * every field of the API shows up under its proto name with no hand-kept
 * list), and the human tables.
 *
 * Single-threaded.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
    size_t need;
    uint32_t cp;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        need = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        need = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        need = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
    if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return need;
}

void cs_cli_json_string(FILE *f, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        size_t n;

        switch (c) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\b':
            fputs("\\b", f);
            break;
        case '\f':
            fputs("\\f", f);
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                fprintf(f, "\\u%04x", c);
                break;
            }
            n = utf8_seq(p + i, len - i);
            if (n == 0) {
                fputs("\\ufffd", f);
                break;
            }
            fwrite(p + i, 1, n, f);
            i += n;
            continue;
        }
        i++;
    }
    fputc('"', f);
}

/* A map field's entry type: protobuf-c gives maps as repeated messages
 * named *Entry with the fields key and value. */
static bool is_map_entry(const ProtobufCMessageDescriptor *d)
{
    size_t len = strlen(d->name);

    return d->n_fields == 2 && len > 5 && strcmp(d->name + len - 5, "Entry") == 0 &&
           strcmp(d->fields[0].name, "key") == 0 && strcmp(d->fields[1].name, "value") == 0;
}

static void json_value(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p)
{
    switch (fd->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        fprintf(f, "%" PRId32, *(const int32_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        fprintf(f, "%" PRIu32, *(const uint32_t *)p);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        fprintf(f, "%" PRId64, *(const int64_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        fprintf(f, "%" PRIu64, *(const uint64_t *)p);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
        double d = fd->type == PROTOBUF_C_TYPE_FLOAT ? *(const float *)p : *(const double *)p;

        if (isfinite(d))
            fprintf(f, "%.17g", d);
        else
            fputs("null", f);
        break;
    }
    case PROTOBUF_C_TYPE_BOOL:
        fputs(*(const protobuf_c_boolean *)p ? "true" : "false", f);
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(fd->descriptor, v);

        if (ev != NULL)
            cs_cli_json_string(f, ev->name, strlen(ev->name));
        else
            fprintf(f, "%d", v);
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;

        cs_cli_json_string(f, s ? s : "", s ? strlen(s) : 0);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = p;

        cs_cli_json_string(f, (const char *)b->data, b->len);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *m = *(ProtobufCMessage *const *)p;

        if (m != NULL)
            cs_cli_json_message(f, m);
        else
            fputs("null", f);
        break;
    }
    }
}

static size_t field_size(const ProtobufCFieldDescriptor *fd)
{
    switch (fd->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    default:
        return 4;
    }
}

static void json_repeated(FILE *f, const ProtobufCFieldDescriptor *fd, const char *base)
{
    size_t n = *(const size_t *)(base + fd->quantifier_offset);
    const char *arr = *(char *const *)(base + fd->offset);
    bool map = fd->type == PROTOBUF_C_TYPE_MESSAGE && is_map_entry(fd->descriptor);

    fputc(map ? '{' : '[', f);
    for (size_t i = 0; i < n; i++) {
        const char *item = arr + i * field_size(fd);

        if (i > 0)
            fputc(',', f);
        if (map) {
            const ProtobufCMessage *e = *(ProtobufCMessage *const *)item;
            const ProtobufCMessageDescriptor *ed = e->descriptor;
            const char *k = *(char *const *)((const char *)e + ed->fields[0].offset);

            cs_cli_json_string(f, k, strlen(k));
            fputc(':', f);
            json_value(f, &ed->fields[1], (const char *)e + ed->fields[1].offset);
        } else {
            json_value(f, fd, item);
        }
    }
    fputc(map ? '}' : ']', f);
}

void cs_cli_json_message(FILE *f, const ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    const char *base = (const char *)msg;
    bool first = true;

    fputc('{', f);
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];

        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            if (*(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
                continue;
        } else if (fd->label == PROTOBUF_C_LABEL_OPTIONAL && fd->quantifier_offset != 0 &&
                   fd->type != PROTOBUF_C_TYPE_MESSAGE && fd->type != PROTOBUF_C_TYPE_STRING) {
            if (!*(const protobuf_c_boolean *)(base + fd->quantifier_offset))
                continue;
        }
        if (!first)
            fputc(',', f);
        first = false;
        cs_cli_json_string(f, fd->name, strlen(fd->name));
        fputc(':', f);
        if (fd->label == PROTOBUF_C_LABEL_REPEATED)
            json_repeated(f, fd, base);
        else
            json_value(f, fd, base + fd->offset);
    }
    fputc('}', f);
}

void cs_cli_json_line(FILE *f, const ProtobufCMessage *msg)
{
    cs_cli_json_message(f, msg);
    fputc('\n', f);
}

const char *cs_cli_state_name(int state)
{
    static const char *const names[] = {
        "-",      "queued",    "starting",  "running", "succeeded",
        "failed", "timed_out", "cancelled", "lost",
    };

    if (state < 0 || (size_t)state >= sizeof(names) / sizeof(names[0]))
        return "?";
    return names[state];
}

void cs_cli_format_time(int64_t unix_ms, char *buf, size_t len)
{
    time_t t = (time_t)(unix_ms / 1000);
    struct tm tm;

    if (unix_ms <= 0 || localtime_r(&t, &tm) == NULL ||
        strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(buf, len, "-");
}

void cs_cli_format_duration(int64_t ms, char *buf, size_t len)
{
    if (ms < 0)
        snprintf(buf, len, "-");
    else if (ms < 60000)
        snprintf(buf, len, "%" PRId64 ".%03" PRId64 "s", ms / 1000, ms % 1000);
    else if (ms < 3600000)
        snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", ms / 60000, ms / 1000 % 60);
    else
        snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", ms / 3600000, ms / 60000 % 60);
}

void cs_cli_format_outcome(bool has_exit, int32_t exit_code, bool has_signal, int32_t sig,
                           char *buf, size_t len)
{
    const char *name = has_signal ? sigabbrev_np(sig) : NULL;

    if (has_exit)
        snprintf(buf, len, "exit %" PRId32, exit_code);
    else if (has_signal && name != NULL)
        snprintf(buf, len, "signal %" PRId32 " (%s)", sig, name);
    else if (has_signal)
        snprintf(buf, len, "signal %" PRId32, sig);
    else
        snprintf(buf, len, "-");
}

void cs_cli_format_run_outcome(const Csched__V1__Run *run, char *buf, size_t len)
{
    cs_cli_format_outcome(run->outcome_case == CSCHED__V1__RUN__OUTCOME_EXIT_CODE, run->exit_code,
                          run->outcome_case == CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL,
                          run->term_signal, buf, len);
}

static void print_map(FILE *f, const char *title, void **entries, size_t n)
{
    if (n == 0)
        return;
    fprintf(f, "%s:\n", title);
    for (size_t i = 0; i < n; i++) {
        const Csched__V1__Job__EnvEntry *e = entries[i];

        fprintf(f, "  %s=%s\n", e->key, e->value);
    }
}

void cs_cli_print_job(FILE *f, const Csched__V1__Job *job)
{
    char t[32];

    fprintf(f, "name:             %s\n", job->name);
    if (job->n_command > 0) {
        fprintf(f, "command:         ");
        for (size_t i = 0; i < job->n_command; i++)
            fprintf(f, " %s", job->command[i]);
        fputc('\n', f);
    } else {
        fprintf(f, "shell:            %s\n", job->shell);
    }
    fprintf(f, "working_dir:      %s\n", job->working_dir[0] ? job->working_dir : "-");
    fprintf(f, "run_as_user:      %s\n", job->run_as_user[0] ? job->run_as_user : "-");
    fprintf(f, "run_as_group:     %s\n", job->run_as_group[0] ? job->run_as_group : "-");
    fprintf(f, "max_running:      %" PRIu32 "\n", job->max_running);
    fprintf(f, "timeout_seconds:  %" PRIu32 "\n", job->timeout_seconds);
    fprintf(f, "max_attempts:     %" PRIu32 "\n", job->max_attempts);
    fprintf(f, "retry_backoff_ms: %" PRIu32 "\n", job->retry_backoff_ms);
    cs_cli_print_job_stop(f, job);
    fprintf(f, "version:          %" PRIu64 "\n", job->version);
    cs_cli_format_time(job->created_unix_ms, t, sizeof(t));
    fprintf(f, "created:          %s\n", t);
    cs_cli_format_time(job->updated_unix_ms, t, sizeof(t));
    fprintf(f, "updated:          %s\n", t);
    fprintf(f, "created_by:       %s\n", job->created_by[0] ? job->created_by : "-");
    fprintf(f, "updated_by:       %s\n", job->updated_by[0] ? job->updated_by : "-");
    print_map(f, "env", (void **)job->env, job->n_env);
    if (job->n_secret_env > 0) {
        fprintf(f, "secret_env:\n");
        for (size_t i = 0; i < job->n_secret_env; i++) {
            const Csched__V1__SecretRef *r = job->secret_env[i]->value;
            bool file = r != NULL && r->source_case == CSCHED__V1__SECRET_REF__SOURCE_FILE;
            bool env = r != NULL && r->source_case == CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV;

            fprintf(f, "  %s=%s%s\n", job->secret_env[i]->key,
                    file  ? "file:"
                    : env ? "env:"
                          : "?",
                    file  ? r->file
                    : env ? r->server_env
                          : "");
        }
    }
    print_map(f, "labels", (void **)job->labels, job->n_labels);
    cs_cli_print_schedule(f, job);
}

static int64_t span_ms(int64_t start, int64_t end)
{
    return start > 0 && end >= start ? end - start : -1;
}

void cs_cli_print_run(FILE *f, const Csched__V1__Run *run)
{
    char t1[32], t2[32], t3[32], dur[32], delay[32], out[48];

    cs_cli_format_time(run->created_unix_ms, t1, sizeof(t1));
    cs_cli_format_time(run->started_unix_ms, t2, sizeof(t2));
    cs_cli_format_time(run->ended_unix_ms, t3, sizeof(t3));
    cs_cli_format_run_outcome(run, out, sizeof(out));
    fprintf(f, "run:      %" PRId64 "\n", run->id);
    fprintf(f, "job:      %s\n", run->job_name);
    fprintf(f, "state:    %s%s\n", cs_cli_state_name(run->state),
            run->cancel_requested && run->state < CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED
                ? " (cancel requested)"
                : "");
    fprintf(f, "outcome:  %s\n", out);
    fprintf(f, "created:  %s\n", t1);
    if (run->not_before_unix_ms > 0) {
        cs_cli_format_time(run->not_before_unix_ms, t2, sizeof(t2));
        fprintf(f, "not_before: %s\n", t2);
        cs_cli_format_time(run->started_unix_ms, t2, sizeof(t2));
    }
    fprintf(f, "started:  %s\n", t2);
    fprintf(f, "ended:    %s\n", t3);
    if (run->message[0])
        fprintf(f, "message:  %s\n", run->message);
    if (run->idempotency_key[0])
        fprintf(f, "key:      %s\n", run->idempotency_key);
    if (run->triggered_by[0])
        fprintf(f, "by:       %s\n", run->triggered_by);
    print_map(f, "env", (void **)run->env, run->n_env);
    if (run->n_attempts == 0)
        return;
    fprintf(f, "attempts:\n  %-3s %-10s %-20s %-10s %-9s %-8s %-8s %-10s %s\n", "#", "STATE",
            "OUTCOME", "DURATION", "CPU_MS", "RSS_KB", "LEFTOVER", "DELAY", "MESSAGE");
    for (size_t i = 0; i < run->n_attempts; i++) {
        const Csched__V1__Attempt *a = run->attempts[i];

        cs_cli_format_outcome(a->outcome_case == CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE,
                              a->exit_code,
                              a->outcome_case == CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL,
                              a->term_signal, out, sizeof(out));
        cs_cli_format_duration(span_ms(a->started_unix_ms, a->ended_unix_ms), dur, sizeof(dur));
        cs_cli_format_duration(a->retry_delay_ms, delay, sizeof(delay));
        fprintf(f,
                "  %-3" PRIu32 " %-10s %-20s %-10s %-9" PRId64 " %-8" PRId64 " %-8" PRId32
                " %-10s %s\n",
                a->number, cs_cli_state_name(a->state), out, dur, a->user_cpu_ms + a->system_cpu_ms,
                a->max_rss_kb, a->leftover_processes, delay, a->message);
    }
}

void cs_cli_print_run_header(FILE *f)
{
    fprintf(f, "%-8s %-24s %-10s %-20s %-19s %s\n", "ID", "JOB", "STATE", "OUTCOME", "CREATED",
            "DURATION");
}

void cs_cli_print_run_row(FILE *f, const Csched__V1__Run *run)
{
    char t[32], dur[32], out[48];

    cs_cli_format_time(run->created_unix_ms, t, sizeof(t));
    cs_cli_format_duration(span_ms(run->started_unix_ms, run->ended_unix_ms), dur, sizeof(dur));
    cs_cli_format_run_outcome(run, out, sizeof(out));
    fprintf(f, "%-8" PRId64 " %-24s %-10s %-20s %-19s %s\n", run->id, run->job_name,
            cs_cli_state_name(run->state), out, t, dur);
}

void cs_cli_print_event_header(FILE *f)
{
    fprintf(f, "%-8s %-19s %-8s %-24s %-3s %-10s %-20s %s\n", "SEQ", "AT", "RUN", "JOB", "ATT",
            "STATE", "OUTCOME", "MESSAGE");
}

void cs_cli_print_event_row(FILE *f, const Csched__V1__Event *ev)
{
    char t[32], out[48];

    cs_cli_format_time(ev->at_unix_ms, t, sizeof(t));
    cs_cli_format_outcome(ev->outcome_case == CSCHED__V1__EVENT__OUTCOME_EXIT_CODE, ev->exit_code,
                          ev->outcome_case == CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL,
                          ev->term_signal, out, sizeof(out));
    fprintf(f, "%-8" PRId64 " %-19s %-8" PRId64 " %-24s %-3" PRIu32 " %-10s %-20s %s\n", ev->seq, t,
            ev->run_id, ev->job_name, ev->attempt, cs_cli_state_name(ev->state), out, ev->message);
    fflush(f);
}
