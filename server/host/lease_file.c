/* lease_file: STATE_DIR/lease opened, checked and mapped once at start,
 * then written with atomic stores; see lease_file.h. */
#define CS_LOG_COMPONENT "cschedd"
#include "lease_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "minder_contract.h"

#define LEASE_MODE 0600

/* Refuses what others could write behind cschedd's back, as whoever holds
 * the file open for writing could keep minders running past the lease;
 * narrows a mode that only lets them read it. */
static int check_owner_and_mode(int fd, const struct cs_lease_file *lf, const struct stat *st,
                                struct cs_err *err)
{
    mode_t mode = st->st_mode & 07777;

    if (!S_ISREG(st->st_mode))
        return cs_err_set(err, -EINVAL,
                          "the lease file %s is not a regular file: remove it, cschedd makes it",
                          lf->path);
    if (st->st_uid != geteuid())
        return cs_err_set(err, -EPERM,
                          "the lease file %s belongs to uid %u, not to cschedd (uid %u): remove "
                          "it, cschedd makes it",
                          lf->path, (unsigned)st->st_uid, (unsigned)geteuid());
    if ((mode & (S_IWGRP | S_IWOTH)) != 0)
        return cs_err_set(err, -EPERM,
                          "the lease file %s may be written by others (mode %o), who could keep "
                          "minders running past the lease: remove it, cschedd makes it",
                          lf->path, (unsigned)mode);
    if (mode == LEASE_MODE)
        return 0;
    if (fchmod(fd, LEASE_MODE) != 0)
        return cs_err_set(err, -errno, "fchmod(%s, 0600) failed: %s", lf->path, strerror(errno));
    cs_log_warn("the lease file %s had mode %o: set to 0600", lf->path, (unsigned)mode);
    return 0;
}

/* Sets the file to the 8 bytes of a deadline; *cut_short when it held
 * fewer, whose value then means nothing. */
static int fix_size(int fd, const struct cs_lease_file *lf, const struct stat *st, bool *cut_short,
                    struct cs_err *err)
{
    *cut_short = st->st_size < CS_LEASE_BYTES;
    if (st->st_size == CS_LEASE_BYTES)
        return 0;
    if (ftruncate(fd, CS_LEASE_BYTES) != 0)
        return cs_err_set(err, -errno, "ftruncate(%s, 8) failed: %s", lf->path, strerror(errno));
    /* A new file is 0 bytes: nothing to say about it. */
    if (st->st_size != 0)
        cs_log_warn("the lease file %s held %lld bytes: set to 8", lf->path,
                    (long long)st->st_size);
    return 0;
}

int cs_lease_file_open(struct cs_lease_file *lf, const char *state_dir, struct cs_err *err)
{
    struct stat st;
    bool cut_short;
    void *map;
    int fd, rc;

    lf->deadline = NULL;
    if (snprintf(lf->path, sizeof(lf->path), "%s/%s", state_dir, CS_LEASE_FILE) >=
        (int)sizeof(lf->path))
        return cs_err_set(err, -ENAMETOOLONG, "state dir %s: path too long", state_dir);
    fd = cs_path_open_no_links(lf->path, O_RDWR | O_CREAT, LEASE_MODE);
    if (fd == -ELOOP)
        return cs_err_set(err, fd,
                          "the lease file %s is a symbolic link, or its path goes through one: "
                          "refused, as the minders refuse it; remove the link",
                          lf->path);
    if (fd < 0)
        return cs_err_set(err, fd, "open(%s) failed: %s", lf->path, strerror(-fd));
    if (fstat(fd, &st) != 0) {
        rc = cs_err_set(err, -errno, "fstat(%s) failed: %s", lf->path, strerror(errno));
        goto out_close_fd;
    }
    if ((rc = check_owner_and_mode(fd, lf, &st, err)) != 0 ||
        (rc = fix_size(fd, lf, &st, &cut_short, err)) != 0)
        goto out_close_fd;
    map = mmap(NULL, CS_LEASE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        rc = cs_err_set(err, -errno, "mmap(%s) failed: %s", lf->path, strerror(errno));
        goto out_close_fd;
    }
    lf->deadline = map;
    if (cut_short)
        cs_lease_file_set(lf, 0);

out_close_fd:
    /* The mapping stands without the fd; one opened for reading and
     * writing, whose data went through the mapping: nothing to lose. */
    (void)close(fd);
    return rc;
}

void cs_lease_file_set(struct cs_lease_file *lf, int64_t deadline_boot_ns)
{
    atomic_store_explicit(lf->deadline, deadline_boot_ns, memory_order_release);
}

int64_t cs_lease_file_get(const struct cs_lease_file *lf)
{
    return atomic_load_explicit(lf->deadline, memory_order_acquire);
}

void cs_lease_file_close(struct cs_lease_file *lf)
{
    if (lf->deadline == NULL)
        return;
    /* Fails only for a bad range, and this one is the mapping's own. */
    (void)munmap((void *)lf->deadline, CS_LEASE_BYTES);
    lf->deadline = NULL;
}
