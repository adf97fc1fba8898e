/* The status note as text, and its atomic write and read. Built twice: into
 * the static csched-minder (musl) and into cs_note, which the server links, so
 * it sticks to C11 and POSIX file calls. No state; safe from any thread.
 * Format, one "key=value" per line between "csched-note 1" and "end":
 * the end line tells a complete note from one cut short. */
#include "note.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* openat(AT_FDCWD, ...) rather than open(): musl's open() follows O_CLOEXEC
 * with an fcntl() for old kernels, and the minder counts its syscalls. */

#define NOTE_MAGIC "csched-note 1"
#define NOTE_END "end"
#define NOTE_TMP_FILE CS_NOTE_FILE ".tmp"

enum field_type { FIELD_OUTCOME, FIELD_INT, FIELD_I64, FIELD_BOOL, FIELD_MESSAGE };

struct field {
    const char *key;
    enum field_type type;
    size_t offset;
    int64_t min, max; /* for FIELD_INT and FIELD_I64 */
    bool optional;    /* added after version 1's first notes: may be missing */
};

/* One table drives both directions, so writer and reader cannot disagree. */
static const struct field fields[] = {
    {"outcome", FIELD_OUTCOME, offsetof(struct cs_note, outcome), 0, 0, false},
    {"exit_code", FIELD_INT, offsetof(struct cs_note, exit_code), 0, 255, false},
    {"term_signal", FIELD_INT, offsetof(struct cs_note, term_signal), 0, 127, false},
    {"started_unix_ms", FIELD_I64, offsetof(struct cs_note, started_unix_ms), INT64_MIN, INT64_MAX,
     false},
    {"ended_unix_ms", FIELD_I64, offsetof(struct cs_note, ended_unix_ms), INT64_MIN, INT64_MAX,
     false},
    {"user_cpu_ms", FIELD_I64, offsetof(struct cs_note, user_cpu_ms), 0, INT64_MAX, false},
    {"system_cpu_ms", FIELD_I64, offsetof(struct cs_note, system_cpu_ms), 0, INT64_MAX, false},
    {"max_rss_kb", FIELD_I64, offsetof(struct cs_note, max_rss_kb), 0, INT64_MAX, false},
    {"stdout_truncated", FIELD_BOOL, offsetof(struct cs_note, stdout_truncated), 0, 1, false},
    {"stderr_truncated", FIELD_BOOL, offsetof(struct cs_note, stderr_truncated), 0, 1, false},
    {"leftover_processes", FIELD_INT, offsetof(struct cs_note, leftover_processes), 0, INT32_MAX,
     true},
    {"stdout_written_bytes", FIELD_I64, offsetof(struct cs_note, stdout_written_bytes), 0,
     INT64_MAX, true},
    {"stdout_kept_bytes", FIELD_I64, offsetof(struct cs_note, stdout_kept_bytes), 0, INT64_MAX,
     true},
    {"stderr_written_bytes", FIELD_I64, offsetof(struct cs_note, stderr_written_bytes), 0,
     INT64_MAX, true},
    {"stderr_kept_bytes", FIELD_I64, offsetof(struct cs_note, stderr_kept_bytes), 0, INT64_MAX,
     true},
    {"peak_memory_bytes", FIELD_I64, offsetof(struct cs_note, peak_memory_bytes), 0, INT64_MAX,
     true},
    {"limit_hit", FIELD_INT, offsetof(struct cs_note, limit_hit), 0, CS_LIMIT_HIT_LAST, true},
    {"unenforced_limits", FIELD_INT, offsetof(struct cs_note, unenforced_limits), 0, CS_LIMIT_ALL,
     true},
    {"message", FIELD_MESSAGE, offsetof(struct cs_note, message), 0, 0, false},
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static const char *const outcome_names[] = {
    [CS_NOTE_EXITED] = "exited",
    [CS_NOTE_SIGNALED] = "signaled",
    [CS_NOTE_TIMED_OUT] = "timed_out",
    [CS_NOTE_CANCELLED] = "cancelled",
    [CS_NOTE_START_FAILED] = "start_failed",
    [CS_NOTE_FENCED] = "fenced",
};

#define LAST_OUTCOME CS_NOTE_FENCED

const char *cs_note_outcome_name(enum cs_note_outcome outcome)
{
    if ((int)outcome < CS_NOTE_EXITED || outcome > LAST_OUTCOME)
        return NULL;
    return outcome_names[outcome];
}

/* Escapes msg into out (cap >= 4 * sizeof(note->message) + 1). Bytes from
 * 0x80 up pass through, so UTF-8 text stays readable. */
static void escape(const char *msg, size_t len, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)msg[i];

        if (c == '\\') {
            *out++ = '\\';
            *out++ = '\\';
        } else if (c == '\n') {
            *out++ = '\\';
            *out++ = 'n';
        } else if (c == '\t') {
            *out++ = '\\';
            *out++ = 't';
        } else if (c < 0x20 || c == 0x7f) {
            *out++ = '\\';
            *out++ = 'x';
            *out++ = hex[c >> 4];
            *out++ = hex[c & 0xf];
        } else {
            *out++ = (char)c;
        }
    }
    *out = '\0';
}

int cs_note_format(const struct cs_note *note, char *buf, size_t cap)
{
    char escaped[4 * sizeof(note->message) + 1];
    const char *outcome = cs_note_outcome_name(note->outcome);
    int n;

    if (outcome == NULL)
        return -EINVAL;
    escape(note->message, strnlen(note->message, sizeof(note->message) - 1), escaped);
    n = snprintf(buf, cap,
                 NOTE_MAGIC "\n"
                            "outcome=%s\n"
                            "exit_code=%d\n"
                            "term_signal=%d\n"
                            "started_unix_ms=%lld\n"
                            "ended_unix_ms=%lld\n"
                            "user_cpu_ms=%lld\n"
                            "system_cpu_ms=%lld\n"
                            "max_rss_kb=%lld\n"
                            "stdout_truncated=%d\n"
                            "stderr_truncated=%d\n"
                            "leftover_processes=%d\n"
                            "stdout_written_bytes=%lld\n"
                            "stdout_kept_bytes=%lld\n"
                            "stderr_written_bytes=%lld\n"
                            "stderr_kept_bytes=%lld\n"
                            "peak_memory_bytes=%lld\n"
                            "limit_hit=%d\n"
                            "unenforced_limits=%d\n"
                            "message=%s\n" NOTE_END "\n",
                 outcome, note->exit_code, note->term_signal, (long long)note->started_unix_ms,
                 (long long)note->ended_unix_ms, (long long)note->user_cpu_ms,
                 (long long)note->system_cpu_ms, (long long)note->max_rss_kb,
                 note->stdout_truncated ? 1 : 0, note->stderr_truncated ? 1 : 0,
                 note->leftover_processes, (long long)note->stdout_written_bytes,
                 (long long)note->stdout_kept_bytes, (long long)note->stderr_written_bytes,
                 (long long)note->stderr_kept_bytes, (long long)note->peak_memory_bytes,
                 note->limit_hit, note->unenforced_limits, escaped);
    if (n < 0 || (size_t)n >= cap)
        return -ENOSPC;
    return n;
}

/* Parses a whole decimal integer in [min, max]; no sign but '-', no spaces. */
static int parse_i64(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
    bool negative = false;
    uint64_t limit, value = 0;
    size_t i = 0;

    if (len > 0 && s[0] == '-') {
        negative = true;
        i = 1;
    }
    if (i == len)
        return -EINVAL;
    limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';

        if (d > 9 || value > (limit - d) / 10)
            return -EINVAL;
        value = value * 10 + d;
    }
    if (negative)
        *out = value == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)value;
    else
        *out = (int64_t)value;
    if (*out < min || *out > max)
        return -EINVAL;
    return 0;
}

/* The value of a lower-case hex digit, or -EINVAL. */
static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -EINVAL;
}

static int unescape(const char *s, size_t len, char *out, size_t cap)
{
    size_t i, n = 0;

    for (i = 0; i < len; i++) {
        char c = s[i];

        if (c == '\\') {
            if (++i == len)
                return -EINVAL;
            switch (s[i]) {
            case '\\':
                c = '\\';
                break;
            case 'n':
                c = '\n';
                break;
            case 't':
                c = '\t';
                break;
            case 'x': {
                int hi, lo;

                if (len - i < 3)
                    return -EINVAL;
                hi = hex_digit(s[i + 1]);
                lo = hex_digit(s[i + 2]);
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                    return -EINVAL;
                c = (char)(hi << 4 | lo);
                i += 2;
                break;
            }
            default:
                return -EINVAL;
            }
        } else if ((unsigned char)c < 0x20 || c == 0x7f) {
            return -EINVAL;
        }
        if (n + 1 >= cap)
            return -EINVAL;
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

static int parse_value(const struct field *f, const char *v, size_t len, struct cs_note *out)
{
    char *base = (char *)out + f->offset;
    int64_t value;
    int rc;

    switch (f->type) {
    case FIELD_OUTCOME:
        for (int o = CS_NOTE_EXITED; o <= LAST_OUTCOME; o++) {
            if (strlen(outcome_names[o]) == len && memcmp(outcome_names[o], v, len) == 0) {
                out->outcome = (enum cs_note_outcome)o;
                return 0;
            }
        }
        return -EINVAL;
    case FIELD_MESSAGE:
        return unescape(v, len, base, sizeof(out->message));
    case FIELD_INT:
    case FIELD_I64:
    case FIELD_BOOL:
        rc = parse_i64(v, len, f->min, f->max, &value);
        if (rc < 0)
            return rc;
        if (f->type == FIELD_INT)
            *(int *)(void *)base = (int)value;
        else if (f->type == FIELD_I64)
            *(int64_t *)(void *)base = value;
        else
            *(bool *)(void *)base = value != 0;
        return 0;
    }
    return -EINVAL;
}

/* A key is [a-z0-9_]+; anything else on a line is garbage, not a newer key. */
static bool is_key(const char *s, size_t len)
{
    size_t i;

    if (len == 0)
        return false;
    for (i = 0; i < len; i++) {
        char c = s[i];

        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

static int parse_line(const char *line, size_t len, struct cs_note *out, uint32_t *seen)
{
    const char *eq = memchr(line, '=', len);
    size_t klen, i;

    if (eq == NULL)
        return -EINVAL;
    klen = (size_t)(eq - line);
    if (!is_key(line, klen))
        return -EINVAL;
    for (i = 0; i < NFIELDS; i++) {
        if (strlen(fields[i].key) != klen || memcmp(fields[i].key, line, klen) != 0)
            continue;
        if (*seen & (UINT32_C(1) << i))
            return -EINVAL;
        *seen |= UINT32_C(1) << i;
        return parse_value(&fields[i], eq + 1, len - klen - 1, out);
    }
    return 0;
}

/* The fields a note must have: all but the optional ones. */
static uint32_t required_fields(void)
{
    uint32_t mask = 0;

    for (size_t i = 0; i < NFIELDS; i++)
        if (!fields[i].optional)
            mask |= UINT32_C(1) << i;
    return mask;
}

int cs_note_parse(const char *buf, size_t len, struct cs_note *out)
{
    const uint32_t required = required_fields();
    uint32_t seen = 0;
    size_t pos = 0;
    bool first = true;

    memset(out, 0, sizeof(*out));
    while (pos < len) {
        const char *line = buf + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n;
        int rc;

        if (nl == NULL)
            return -EINVAL; /* cut short */
        n = (size_t)(nl - line);
        pos += n + 1;
        if (memchr(line, '\0', n) != NULL)
            return -EINVAL;
        if (first) {
            if (n != strlen(NOTE_MAGIC) || memcmp(line, NOTE_MAGIC, n) != 0)
                return -EINVAL;
            first = false;
            continue;
        }
        if (n == strlen(NOTE_END) && memcmp(line, NOTE_END, n) == 0)
            return pos == len && (seen & required) == required ? 0 : -EINVAL;
        rc = parse_line(line, n, out, &seen);
        if (rc < 0)
            return rc;
    }
    return -EINVAL; /* no end line */
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int cs_note_dir_open(const char *dir)
{
    return cs_path_open_no_links(dir, O_RDONLY | O_DIRECTORY, 0);
}

int cs_note_reserve_at(int dfd)
{
    int fd, rc;

    fd = openat(dfd, NOTE_TMP_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    /* posix_fallocate returns the error number rather than setting errno. */
    rc = -posix_fallocate(fd, 0, CS_NOTE_MAX_BYTES);
    if (rc < 0)
        goto err_close_tmp;
    if (close(fd) < 0) {
        rc = -errno;
        goto err_unlink_tmp;
    }
    return 0;

err_close_tmp:
    (void)close(fd); /* the reserve already failed; its error is the one to report */
err_unlink_tmp:
    (void)unlinkat(dfd, NOTE_TMP_FILE, 0); /* best effort: give the room back */
    return rc;
}

int cs_note_write_at(int dfd, const struct cs_note *note)
{
    char buf[CS_NOTE_MAX_BYTES];
    int fd, len, rc;

    len = cs_note_format(note, buf, sizeof(buf));
    if (len < 0)
        return len;
    /* No O_TRUNC: a reserved temp file is written over in place, so the
     * write needs no new blocks, and cutting it to length never does. */
    fd = openat(dfd, NOTE_TMP_FILE, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    rc = write_all(fd, buf, (size_t)len);
    if (rc < 0)
        goto err_close_tmp;
    if (ftruncate(fd, len) < 0) {
        rc = -errno;
        goto err_close_tmp;
    }
    /* Synced before the minder exits, with the directory below: once it has
     * exited, a crash of the machine cannot lose the outcome and have a
     * finished command taken for a vanished one and run again (see
     * docs/operations.md, "The start path and a crash of the machine"). */
    if (fsync(fd) < 0) {
        rc = -errno;
        goto err_close_tmp;
    }
    if (close(fd) < 0) {
        rc = -errno;
        goto err_unlink_tmp;
    }
    if (renameat(dfd, NOTE_TMP_FILE, dfd, CS_NOTE_FILE) < 0) {
        rc = -errno;
        goto err_unlink_tmp;
    }
    /* The rename is durable only once the directory itself is synced. */
    return fsync(dfd) < 0 ? -errno : 0;

err_close_tmp:
    (void)close(fd); /* the write already failed; its error is the one to report */
err_unlink_tmp:
    (void)unlinkat(dfd, NOTE_TMP_FILE, 0); /* best effort: keep no half note behind */
    return rc;
}

/* Runs write_at (a note, or a reserve with none) in DIR. */
static int at_dir(const char *dir, const struct cs_note *note, bool write)
{
    int dfd = cs_note_dir_open(dir);
    if (dfd < 0)
        return dfd;
    int rc = write ? cs_note_write_at(dfd, note) : cs_note_reserve_at(dfd);
    (void)close(dfd); /* read-only directory fd: nothing to lose */
    return rc;
}

int cs_note_reserve(const char *dir)
{
    return at_dir(dir, NULL, false);
}

int cs_note_write(const char *dir, const struct cs_note *note)
{
    return at_dir(dir, note, true);
}

int cs_note_read(const char *dir, struct cs_note *out)
{
    /* One byte more than any valid note, to tell "too long" from "full". */
    char buf[CS_NOTE_MAX_BYTES + 1];
    char path[PATH_MAX];
    size_t len = 0;
    int fd, n, rc = 0;

    n = snprintf(path, sizeof(path), "%s/%s", dir, CS_NOTE_FILE);
    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    while (len < sizeof(buf)) {
        ssize_t got = read(fd, buf + len, sizeof(buf) - len);

        if (got < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            goto out_close;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    rc = len == sizeof(buf) ? -EINVAL : cs_note_parse(buf, len, out);
out_close:
    (void)close(fd); /* read-only fd: nothing to lose */
    return rc;
}
