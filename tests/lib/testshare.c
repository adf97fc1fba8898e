/* What a test hands to another user: a temp dir that user can enter, and
 * copies of the programs it runs. The build tree may be where no one else
 * can reach (a clone under /root, mode 0700), so a program run as another
 * user is copied out of it rather than run in place. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

/* Whether every dir from path up to / lets others in (o+x); if not, names
 * the first that does not. */
static int check_enterable(const char *path)
{
    char dir[PATH_MAX];
    struct stat st;

    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    for (;;) {
        if (stat(dir, &st) != 0)
            return -errno;
        if (!(st.st_mode & S_IXOTH)) {
            fprintf(stderr,
                    "testlib: %s (mode %o) keeps other users out of %s: set CSCHED_TEST_TMPDIR "
                    "to a dir they can enter, or chmod o+x %s\n",
                    dir, (unsigned)(st.st_mode & 07777), path, dir);
            return -EACCES;
        }
        if (strcmp(dir, "/") == 0 || strcmp(dir, ".") == 0)
            return 0;
        /* dirname works in place and may return a static "/" or ".". */
        const char *up = dirname(dir);
        if (up != dir)
            (void)snprintf(dir, sizeof(dir), "%s", up);
    }
}

int cs_test_mkdtemp_shared(char *buf, size_t cap, const char *prefix)
{
    int rc = cs_test_mkdtemp(buf, cap, prefix);
    if (rc != 0)
        return rc;
    if (chmod(buf, 0755) != 0)
        rc = -errno;
    if (rc == 0)
        rc = check_enterable(buf);
    if (rc != 0)
        (void)rmdir(buf); /* just made, still empty */
    return rc;
}

int cs_test_copy_program(const char *src, const char *dir)
{
    char dst[PATH_MAX], name[PATH_MAX];
    struct stat st;
    int rc = 0;

    (void)snprintf(name, sizeof(name), "%s", src);
    if (snprintf(dst, sizeof(dst), "%s/%s", dir, basename(name)) >= (int)sizeof(dst))
        return -ENAMETOOLONG;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
    if (out < 0) {
        rc = -errno;
        goto out_close_in;
    }
    if (fstat(in, &st) != 0) {
        rc = -errno;
        goto out_close;
    }
    for (off_t at = 0; at < st.st_size;) {
        ssize_t n = sendfile(out, in, &at, (size_t)(st.st_size - at));
        if (n <= 0) {
            rc = n < 0 ? -errno : -EIO;
            goto out_close;
        }
    }
    /* The umask may have taken bits that others need. */
    if (fchmod(out, 0755) != 0)
        rc = -errno;
out_close:
    if (close(out) != 0 && rc == 0)
        rc = -errno;
out_close_in:
    (void)close(in);
    if (rc != 0)
        fprintf(stderr, "testlib: cannot copy %s to %s: %s\n", src, dst, strerror(-rc));
    return rc;
}
