/* The state dir's random id (state_instance.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "state_instance.h"

static bool is_instance(const char *s, size_t n)
{
    if (n != CS_STATE_INSTANCE_SIZE - 1)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strchr("0123456789abcdef", s[i]) == NULL || s[i] == '\0')
            return false;
    return true;
}

static int read_instance(const char *path, char out[CS_STATE_INSTANCE_SIZE], struct cs_err *err)
{
    char buf[CS_STATE_INSTANCE_SIZE + 2];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    int saved = errno;
    (void)close(fd);
    if (n < 0)
        return cs_err_set(err, -saved, "reading %s: %s", path, strerror(saved));
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    if (!is_instance(buf, (size_t)n))
        return cs_err_set(err, -EINVAL,
                          "%s does not hold a state dir id (32 hex digits): restore it, or "
                          "remove it if this state dir has no attempts running",
                          path);
    memcpy(out, buf, CS_STATE_INSTANCE_SIZE - 1);
    out[CS_STATE_INSTANCE_SIZE - 1] = '\0';
    return 0;
}

static int make_instance(const char *state_dir, const char *path, char out[CS_STATE_INSTANCE_SIZE],
                         struct cs_err *err)
{
    unsigned char bits[16];
    char tmp[PATH_MAX], line[CS_STATE_INSTANCE_SIZE + 1];
    if (getrandom(bits, sizeof(bits), 0) != (ssize_t)sizeof(bits))
        return cs_err_set(err, -EIO, "getrandom: %s", strerror(errno));
    for (size_t i = 0; i < sizeof(bits); i++)
        (void)snprintf(out + 2 * i, 3, "%02x", bits[i]);
    (void)snprintf(line, sizeof(line), "%s\n", out);
    if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", state_dir, CS_STATE_INSTANCE_FILE) >=
        (int)sizeof(tmp))
        return cs_err_set(err, -ENAMETOOLONG, "the state dir %s: path too long", state_dir);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return cs_err_set(err, -errno, "creating %s: %s", tmp, strerror(errno));
    bool ok = write(fd, line, strlen(line)) == (ssize_t)strlen(line) && fsync(fd) == 0;
    int saved = errno;
    (void)close(fd);
    if (!ok || rename(tmp, path) != 0) {
        saved = ok ? errno : saved;
        (void)unlink(tmp);
        return cs_err_set(err, -saved, "writing %s: %s", path, strerror(saved));
    }
    /* The rename is durable once the directory is synced. */
    int dir = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        (void)fsync(dir);
        (void)close(dir);
    }
    return 0;
}

int cs_state_instance_get(const char *state_dir, char out[CS_STATE_INSTANCE_SIZE],
                          struct cs_err *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/%s", state_dir, CS_STATE_INSTANCE_FILE) >=
        (int)sizeof(path))
        return cs_err_set(err, -ENAMETOOLONG, "the state dir %s: path too long", state_dir);
    int rc = read_instance(path, out, err);
    if (rc == -ENOENT)
        return make_instance(state_dir, path, out, err);
    if (rc < 0 && err->msg[0] == '\0')
        return cs_err_set(err, rc, "opening %s: %s", path, strerror(-rc));
    return rc;
}
