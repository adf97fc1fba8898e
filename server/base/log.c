/* Logging: formats one line into a stack buffer and hands it whole to the
 * log writer thread (log_writer.h), which writes it to stderr; before that
 * thread starts and after it stops, the caller writes it with one write(2).
 * Runs on any thread; the settings are made once at start. Every string
 * that reaches a line (message and values) is escaped, so a job name with a
 * newline or a quote cannot forge or break a line, and a JSON line stays
 * valid JSON even when it is cut short. */
#include "log.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log_writer.h"

static enum cs_log_level max_level = CS_LOG_INFO;
static enum cs_log_format format = CS_LOG_TEXT;
static enum cs_log_runs log_runs = CS_LOG_RUNS_ALL;
static bool journal; /* stderr is the journal's stream: text lines get <N> */

static const char *const level_names[] = {"error", "warn", "info", "debug"};
static const char *const format_names[] = {"text", "json"};
/* syslog's err, warning, info and debug, which journald reads from <N>. */
static const char syslog_levels[] = {'3', '4', '6', '7'};

#define LINE_MAX_BYTES 2048
/* Room kept for what closes a line: "...\"}\n" or "...\n". */
#define LINE_TAIL 8

/* How long the end of the server, and a crash's last words, wait for a
 * stderr that does not take its lines. */
#define STOP_WAIT_MS 2000
#define CRASH_WAIT_MS 1000

_Static_assert(LINE_MAX_BYTES <= PIPE_BUF, "a whole line fits in one write to a pipe");

void cs_log_set_level(enum cs_log_level level)
{
    max_level = level;
}

/* JOURNAL_STREAM is "DEV:INODE" of the stream systemd connected; it names
 * stderr only if they match (a child of a journald service inherits the
 * variable with another stderr). */
static bool stderr_is_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) != 0)
        return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void cs_log_configure(enum cs_log_format f, enum cs_log_runs runs)
{
    format = f;
    log_runs = runs;
    journal = stderr_is_journal();
}

static int parse_name(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return (int)i;
    return -EINVAL;
}

int cs_log_level_parse(const char *name, enum cs_log_level *out)
{
    int i = parse_name(name, level_names, sizeof(level_names) / sizeof(level_names[0]));
    if (i < 0)
        return i;
    *out = (enum cs_log_level)i;
    return 0;
}

int cs_log_format_parse(const char *name, enum cs_log_format *out)
{
    int i = parse_name(name, format_names, sizeof(format_names) / sizeof(format_names[0]));
    if (i < 0)
        return i;
    *out = (enum cs_log_format)i;
    return 0;
}

int cs_log_runs_parse(const char *name, enum cs_log_runs *out)
{
    static const struct {
        const char *name;
        enum cs_log_runs runs;
    } words[] = {{"none", CS_LOG_RUNS_NONE},
                 {"end", CS_LOG_RUNS_END},
                 {"all", CS_LOG_RUNS_ALL},
                 {"false", CS_LOG_RUNS_NONE},
                 {"true", CS_LOG_RUNS_ALL}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcmp(name, words[i].name) == 0) {
            *out = words[i].runs;
            return 0;
        }
    }
    return -EINVAL;
}

bool cs_log_enabled(enum cs_log_level level)
{
    return level <= max_level;
}

bool cs_log_run_change_enabled(bool run_end)
{
    return (log_runs == CS_LOG_RUNS_ALL || (log_runs == CS_LOG_RUNS_END && run_end)) &&
           cs_log_enabled(CS_LOG_INFO);
}

/* A line under construction; len never passes LINE_MAX_BYTES - LINE_TAIL,
 * so the closing bytes always fit. Each piece goes in whole or not at all;
 * once one did not fit, the line is full and takes no more fields. */
struct line {
    char buf[LINE_MAX_BYTES];
    size_t len;
    bool full;
};

static size_t room(const struct line *l)
{
    return LINE_MAX_BYTES - LINE_TAIL - l->len;
}

static void put_raw(struct line *l, const char *s, size_t n)
{
    if (l->full || n > room(l)) {
        l->full = true;
        return;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void put_str(struct line *l, const char *s)
{
    put_raw(l, s, strlen(s));
}

/* The length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (c < 0xc2 || c > 0xf4)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

/* Whether byte c goes into a line as it is: printable ASCII but the
 * backslash, and the quote when quoted. */
static bool plain_byte(unsigned char c, bool quote_escaped)
{
    return c >= 0x20 && c < 0x7f && c != '\\' && (c != '"' || !quote_escaped);
}

/* Appends s escaped: JSON's escapes in either format (the text format writes
 * them only for control bytes, the backslash, and the quote when quoted).
 * Invalid UTF-8 becomes U+FFFD in JSON and \xNN in text. Stops before a
 * character or escape that would not leave one byte for a closing quote:
 * a long value is cut short, never in the middle of an escape. */
static void put_escaped(struct line *l, const char *str, bool quote_escaped)
{
    const unsigned char *s = (const unsigned char *)str;
    bool json = format == CS_LOG_JSON;
    while (*s != '\0') {
        /* Most values are plain ASCII: copied as one run, not byte by byte. */
        size_t plain = 0;
        while (plain_byte(s[plain], quote_escaped))
            plain++;
        if (plain > 0) {
            size_t fits = room(l) > 0 ? room(l) - 1 : 0; /* a byte for the quote */
            memcpy(l->buf + l->len, s, plain < fits ? plain : fits);
            l->len += plain < fits ? plain : fits;
            if (plain > fits) {
                l->full = true;
                return;
            }
            s += plain;
            continue;
        }
        char esc[8];
        size_t n = 0, take = 1;
        unsigned c = *s;
        if (c == '"' && quote_escaped)
            n = (size_t)snprintf(esc, sizeof(esc), "\\\"");
        else if (c == '\\')
            n = (size_t)snprintf(esc, sizeof(esc), "\\\\");
        else if (c == '\n' || c == '\t' || c == '\r')
            n = (size_t)snprintf(esc, sizeof(esc), "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
        else if (c < 0x20 || c == 0x7f)
            n = (size_t)snprintf(esc, sizeof(esc), json ? "\\u%04x" : "\\x%02x", c);
        else if (c >= 0x80 && (take = utf8_len(s)) == 0) {
            take = 1;
            n = (size_t)snprintf(esc, sizeof(esc), json ? "\\ufffd" : "\\x%02x", c);
        }
        const char *out = n > 0 ? esc : (const char *)s;
        size_t len = n > 0 ? n : take;
        if (len + 1 > room(l)) {
            l->full = true;
            return;
        }
        memcpy(l->buf + l->len, out, len);
        l->len += len;
        s += take;
    }
}

/* Whether a text value needs quotes: empty, or with a space, quote, '=' or
 * any byte that is escaped. */
static bool text_needs_quotes(const char *s)
{
    if (*s == '\0')
        return true;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || *p >= 0x7f)
            return true;
    return false;
}

/* The quote that ends a value put_escaped began: put_escaped left the byte. */
static void put_close_quote(struct line *l)
{
    l->buf[l->len++] = '"';
}

/* Writes v in decimal into buf (at least 21 bytes, not terminated);
 * returns its length. snprintf's cost, a few times over, on every line. */
static size_t format_int(char *buf, int64_t v)
{
    char rev[20];
    size_t n = 0, len = 0;
    /* Negated as unsigned, so INT64_MIN is whole. */
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        rev[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        buf[len++] = '-';
    while (n > 0)
        buf[len++] = rev[--n];
    return len;
}

static void put_field(struct line *l, const struct cs_log_field *f)
{
    char num[24];
    bool json = format == CS_LOG_JSON;
    /* The key, its punctuation and a number or a short value, or nothing. */
    if (l->full || room(l) < strlen(f->key) + 4 + sizeof(num)) {
        l->full = true;
        return;
    }
    put_str(l, json ? ",\"" : " ");
    put_str(l, f->key);
    put_str(l, json ? "\":" : "=");
    if (f->str == NULL) {
        put_raw(l, num, format_int(num, f->num));
        return;
    }
    bool quoted = json || text_needs_quotes(f->str);
    if (quoted)
        put_str(l, "\"");
    put_escaped(l, f->str, quoted);
    if (quoted)
        put_close_quote(l);
}

/* The time for a line's head, "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC) into ts (at
 * least 40 bytes): the seconds part is formatted once per second and thread
 * (strftime and gmtime_r cost more than the rest of a line). */
static void format_time(char *ts)
{
    static __thread time_t cached_sec = -1;
    static __thread char cached[32];
    static __thread size_t cached_len;
    struct timespec now;
    struct tm tm;
    (void)clock_gettime(CLOCK_REALTIME, &now);
    if (now.tv_sec != cached_sec) {
        (void)gmtime_r(&now.tv_sec, &tm);
        cached_len = strftime(cached, sizeof(cached), "%Y-%m-%dT%H:%M:%S", &tm);
        cached_sec = now.tv_sec;
    }
    long ms = now.tv_nsec / 1000000;
    memcpy(ts, cached, cached_len);
    char *p = ts + cached_len;
    *p++ = '.';
    *p++ = (char)('0' + ms / 100);
    *p++ = (char)('0' + ms / 10 % 10);
    *p++ = (char)('0' + ms % 10);
    *p++ = 'Z';
    *p = '\0';
}

static void put_head(struct line *l, enum cs_log_level level, const char *component)
{
    char ts[40];
    format_time(ts);
    if (format == CS_LOG_JSON) {
        put_str(l, "{\"time\":\"");
        put_str(l, ts);
        put_str(l, "\",\"level\":\"");
        put_str(l, level_names[level]);
        put_str(l, "\",\"component\":\"");
        put_escaped(l, component, true);
        put_str(l, "\",\"message\":\"");
        return;
    }
    if (journal) {
        char prefix[] = {'<', syslog_levels[level], '>', '\0'};
        put_str(l, prefix);
    }
    put_str(l, ts);
    put_str(l, " ");
    put_str(l, level_names[level]);
    put_str(l, " ");
    put_escaped(l, component, false);
    put_str(l, ": ");
}

static void write_out(const char *buf, size_t len)
{
    if (cs_log_writer_put(buf, len))
        return;
    /* A failed log write has nowhere to be reported. */
    (void)!write(STDERR_FILENO, buf, len);
}

/* Begins a line: its head and its message. */
static void put_start(struct line *l, enum cs_log_level level, const char *component,
                      const char *msg)
{
    put_head(l, level, component);
    put_escaped(l, msg, format == CS_LOG_JSON);
    if (format == CS_LOG_JSON)
        put_close_quote(l);
}

/* Ends a line begun with put_start. */
static void put_end(struct line *l)
{
    /* The tail room is kept for these bytes. */
    if (format == CS_LOG_JSON)
        l->buf[l->len++] = '}';
    l->buf[l->len++] = '\n';
}

/* The writer's line for lines it had no room for. */
static size_t dropped_line(char *buf, size_t cap, uint64_t n)
{
    char msg[128];
    (void)snprintf(msg, sizeof(msg), "%llu log lines dropped: stderr did not take them in time",
                   (unsigned long long)n);
    struct line l = {.len = 0, .full = false};
    put_start(&l, CS_LOG_WARN, "log", msg);
    put_end(&l);
    size_t len = l.len < cap ? l.len : cap;
    memcpy(buf, l.buf, len);
    return len;
}

static void stop_at_exit(void)
{
    cs_log_stop();
}

int cs_log_start(void)
{
    int rc = cs_log_writer_start(STDERR_FILENO, dropped_line);
    if (rc != 0)
        return -rc;
    /* A return from main before the server's end still writes them. */
    if (atexit(stop_at_exit) != 0) {
        cs_log_writer_stop(STOP_WAIT_MS);
        return -ENOMEM;
    }
    return 0;
}

void cs_log_stop(void)
{
    cs_log_writer_stop(STOP_WAIT_MS);
}

void cs_log_flush(void)
{
    (void)cs_log_writer_flush(CRASH_WAIT_MS);
}

__attribute__((format(printf, 5, 0))) static void
write_line(enum cs_log_level level, const char *component, const struct cs_log_field *fields,
           size_t n_fields, const char *fmt, va_list ap)
{
    char msg[LINE_MAX_BYTES];
    if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
        msg[0] = '\0';
    struct line l = {.len = 0, .full = false};
    put_start(&l, level, component, msg);
    for (size_t i = 0; i < n_fields; i++)
        put_field(&l, &fields[i]);
    put_end(&l);
    write_out(l.buf, l.len);
}

void cs_log_write(enum cs_log_level level, const char *component, const char *fmt, ...)
{
    if (!cs_log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    write_line(level, component, NULL, 0, fmt, ap);
    va_end(ap);
}

void cs_log_write_fields(enum cs_log_level level, const char *component,
                         const struct cs_log_field *fields, size_t n, const char *fmt, ...)
{
    if (!cs_log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    write_line(level, component, fields, n, fmt, ap);
    va_end(ap);
}
