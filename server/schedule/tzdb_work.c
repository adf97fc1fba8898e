/* tzdb_work: zone files and the data's version read from the tz database's
 * directory (see tzdb.h). Blocking: pool threads, tests and tools.
 *
 * A name is checked before it becomes a path: relative, made of parts of
 * the characters zone names use, none of them "." or "..", so no name
 * leads out of the directory (a link the tzdata package put there may:
 * Debian's localtime points to /etc/localtime, as Python's zoneinfo
 * follows it too). The file must be a regular one, opened non-blocking so
 * that a FIFO cannot hold the thread, and valid TZif. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tzdb.h"

static bool part_ok(const char *part, size_t n)
{
    return n > 0 && !(n == 1 && part[0] == '.') && !(n == 2 && part[0] == '.' && part[1] == '.');
}

static bool name_ok(const char *name)
{
    const char *part = name;

    if (strnlen(name, CS_TZ_NAME_MAX + 1) > CS_TZ_NAME_MAX)
        return false;
    for (const char *p = name;; p++) {
        if (*p == '/' || *p == '\0') {
            if (!part_ok(part, (size_t)(p - part)))
                return false;
            if (*p == '\0')
                return true;
            part = p + 1;
        } else if (!isalnum((unsigned char)*p) && strchr("_-+.", *p) == NULL) {
            return false;
        }
    }
}

/* The whole of the regular file at path, of at most max bytes, in *buf
 * (malloc'd, the caller's) and *len. 0, -ENOENT for anything but a regular
 * file, -EFBIG past max, or -errno. */
static int read_file(const char *path, size_t max, uint8_t **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    ssize_t got = 0;
    int rc = 0;

    *buf = NULL;
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0)
        rc = -errno;
    else if (!S_ISREG(st.st_mode))
        rc = -ENOENT;
    else if (st.st_size > (off_t)max)
        rc = -EFBIG;
    if (rc != 0)
        goto out_close;
    /* One more byte than the size: a file that grew is refused. */
    *buf = cs_xmalloc((size_t)st.st_size + 1);
    *len = 0;
    while (*len <= (size_t)st.st_size) {
        got = read(fd, *buf + *len, (size_t)st.st_size + 1 - *len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            rc = -errno;
        if (got <= 0)
            break;
        *len += (size_t)got;
    }
    if (rc == 0 && *len > (size_t)st.st_size)
        rc = -EFBIG;
    if (rc != 0) {
        free(*buf);
        *buf = NULL;
    }
out_close:
    (void)close(fd); /* read-only: nothing to lose */
    return rc;
}

int cs_tzdb_open(const char *dir, const char *name, struct cs_tz **out, struct cs_err *err)
{
    char path[PATH_MAX];
    uint8_t *buf;
    size_t len = 0;
    int rc;

    *out = NULL;
    if (!name_ok(name))
        return cs_err_set(err, -EINVAL,
                          "time zone \"%.64s\" is not a zone name: use a name of the tz database "
                          "such as Europe/Berlin or UTC",
                          name);
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return cs_err_set(err, -ENAMETOOLONG, "the time zone directory %s is too long a path", dir);
    rc = read_file(path, CS_TZDB_FILE_MAX, &buf, &len);
    if (rc == -ENOENT || rc == -ENOTDIR)
        return cs_err_set(err, -EINVAL, "unknown time zone \"%s\"", name);
    if (rc == -EFBIG)
        return cs_err_set(err, -EINVAL, "time zone \"%s\": %s is not a zone's file", name, path);
    if (rc != 0)
        return cs_err_set(err, rc, "time zone \"%s\": cannot read %s: %s", name, path,
                          strerror(-rc));
    rc = cs_tz_new(name, buf, len, out, err);
    free(buf);
    return rc;
}

/* The first line of dir/file (up to len - 1 bytes), or "" when unreadable. */
static void first_line(const char *dir, const char *file, char *out, size_t len)
{
    char path[PATH_MAX];
    ssize_t n = -1;

    if (snprintf(path, sizeof(path), "%s/%s", dir, file) < (int)sizeof(path)) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd >= 0) {
            n = read(fd, out, len - 1);
            (void)close(fd); /* read-only: nothing to lose */
        }
    }
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

/* Whether text is a plausible version: letters, digits, '.', '-', '_'. */
static bool version_ok(const char *text)
{
    if (*text == '\0')
        return false;
    for (; *text != '\0'; text++)
        if (!isalnum((unsigned char)*text) && strchr("._-", *text) == NULL)
            return false;
    return true;
}

void cs_tzdb_version(const char *dir, char *out, size_t len)
{
    static const char prefix[] = "# version ";
    char line[CS_TZDB_VERSION_MAX + sizeof(prefix)];

    first_line(dir, "+VERSION", line, sizeof(line));
    if (!version_ok(line)) {
        first_line(dir, "tzdata.zi", line, sizeof(line));
        if (strncmp(line, prefix, sizeof(prefix) - 1) == 0)
            memmove(line, line + sizeof(prefix) - 1, strlen(line + sizeof(prefix) - 1) + 1);
    }
    (void)snprintf(out, len, "%s", version_ok(line) && strlen(line) < len ? line : "unknown");
}
