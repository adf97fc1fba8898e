/* secret_thread: a launch's secret_env read and set, on the launch thread
 * (see secret_thread.h). */
#include "secret_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job.h"

/* Reads the file at path into a malloc'd, NUL-terminated buffer of at most
 * max bytes: 0, or a negative errno with why set. */
static int read_secret_file(const char *path, size_t max, char **out, size_t *len, const char **why)
{
    struct stat st;
    int rc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        *why = strerror(errno);
        return -errno;
    }
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        *why = strerror(-rc);
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        rc = -EINVAL;
        goto out_close;
    }
    char *buf = cs_xmalloc(max + 2);
    size_t n = 0;
    ssize_t got;
    while (n <= max && (got = read(fd, buf + n, max + 1 - n)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -errno;
            *why = strerror(-rc);
            goto out_free;
        }
        n += (size_t)got;
    }
    if (n > max) {
        *why = "larger than an environment variable may be";
        rc = -E2BIG;
        goto out_free;
    }
    if (memchr(buf, '\0', n) != NULL) {
        *why = "holds a NUL byte, which an environment variable cannot";
        rc = -EINVAL;
        goto out_free;
    }
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    buf[n] = '\0';
    *out = buf;
    *len = n;
    goto out_close;
out_free:
    explicit_bzero(buf, max + 2);
    free(buf);
out_close:
    (void)close(fd); /* read only: nothing to lose */
    return rc;
}

static const char *env_lookup(char *const *env, const char *name)
{
    size_t len = strlen(name);
    for (; *env != NULL; env++)
        if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
            return *env + len + 1;
    return NULL;
}

/* Takes entry ("NAME=VALUE", malloc'd) into *envp in place of NAME. */
static void env_set(char ***envp, char *entry, size_t name_len)
{
    size_t n = 0;
    for (char **p = *envp; *p != NULL; p++, n++) {
        if (strncmp(*p, entry, name_len + 1) == 0) {
            explicit_bzero(*p, strlen(*p));
            free(*p);
            *p = entry;
            return;
        }
    }
    *envp = cs_xrealloc(*envp, (n + 2) * sizeof(**envp));
    (*envp)[n] = entry;
    (*envp)[n + 1] = NULL;
}

static int resolve_one(char ***envp, const struct cs_secret *s, char *const *server_env, char *msg,
                       size_t cap)
{
    size_t name_len = strlen(s->name);
    size_t max = CS_JOB_ARG_BYTES_MAX - name_len - 1;
    char ref[CS_SECRET_PATH_MAX + 8];
    char *value = NULL;
    size_t len = 0;
    const char *why = NULL;
    int rc = 0;
    cs_secret_describe(s, ref, sizeof(ref));
    if (s->is_file) {
        rc = read_secret_file(s->ref, max, &value, &len, &why);
    } else {
        const char *v = env_lookup(server_env, s->ref);
        if (v == NULL) {
            why = "cschedd's environment has no such variable";
            rc = -ENOENT;
        } else if ((len = strlen(v)) > max) {
            why = "larger than an environment variable may be";
            rc = -E2BIG;
        } else {
            value = cs_xstrdup(v);
        }
    }
    if (rc != 0) {
        (void)snprintf(msg, cap, "secret_env %s (%s) could not be resolved: %s", s->name, ref, why);
        return rc;
    }
    char *entry = cs_xmalloc(name_len + 1 + len + 1);
    memcpy(entry, s->name, name_len);
    entry[name_len] = '=';
    memcpy(entry + name_len + 1, value, len + 1);
    explicit_bzero(value, len);
    free(value);
    env_set(envp, entry, name_len);
    return 0;
}

int cs_secrets_resolve(char ***envp, const struct cs_secret *secrets, size_t n,
                       char *const *server_env, char *msg, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        int rc = resolve_one(envp, &secrets[i], server_env, msg, cap);
        if (rc != 0)
            return rc;
    }
    return 0;
}
