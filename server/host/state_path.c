/* state_path: the state dir's path resolved link by link, each directory on
 * the way checked; see state_path.h. */
#include "state_path.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* As the kernel's own limit on links followed in one lookup. */
#define LINKS_MAX 40

static bool in_my_groups(gid_t gid)
{
    gid_t groups[256];
    int n = getgroups(256, groups);
    if (gid == getegid())
        return true;
    for (int i = 0; i < n; i++)
        if (groups[i] == gid)
            return true;
    return false;
}

static bool trusted_owner(uid_t uid)
{
    return uid == 0 || uid == geteuid();
}

/* Whether someone other than root, cschedd and its groups may add, rename
 * or remove entries of the directory st describes. */
static bool others_may_write(const struct stat *st)
{
    return (st->st_mode & S_IWOTH) != 0 ||
           ((st->st_mode & S_IWGRP) != 0 && !in_my_groups(st->st_gid));
}

/* Whether the entry entry_st, looked up in the directory dir_st (at
 * dir_path), stays as it is unless root or cschedd changes it. */
static int check_lookup(const char *dir_path, const struct stat *dir_st,
                        const struct stat *entry_st, const char *entry_path, struct cs_err *err)
{
    if (!trusted_owner(dir_st->st_uid))
        return cs_err_set(
            err, -EPERM,
            "the state dir's path goes through %s, which belongs to uid %u: that user "
            "could replace what it holds; choose a state dir whose every parent belongs "
            "to root or to cschedd",
            dir_path, (unsigned)dir_st->st_uid);
    if (!others_may_write(dir_st))
        return 0;
    if ((dir_st->st_mode & S_ISVTX) != 0 && trusted_owner(entry_st->st_uid))
        return 0;
    return cs_err_set(
        err, -EPERM,
        "the state dir's path goes through %s, in %s, a directory others may write "
        "(mode %o)%s: they could replace it; choose a state dir whose every parent is "
        "written only by root or cschedd",
        entry_path, dir_path, (unsigned)(dir_st->st_mode & 07777),
        (dir_st->st_mode & S_ISVTX) != 0 ? " and the entry is not root's or cschedd's" : "");
}

/* The state dir itself: root's or cschedd's, written by no one else (its
 * group's members only when the group is cschedd's, as a Kubernetes volume
 * with fsGroup is). */
static int check_state_dir(const char *path, const struct stat *st, struct cs_err *err)
{
    if (!trusted_owner(st->st_uid))
        return cs_err_set(err, -EPERM,
                          "the state dir %s belongs to uid %u, not to root or to cschedd: choose a "
                          "directory of cschedd's own",
                          path, (unsigned)st->st_uid);
    if (others_may_write(st))
        return cs_err_set(
            err, -EPERM, "the state dir %s may be written by others (mode %o): run `chmod go-w %s`",
            path, (unsigned)(st->st_mode & 07777), path);
    return 0;
}

/* Appends "/name" (name_len bytes) to the resolved prefix done. */
static int push(char *done, size_t size, const char *name, size_t name_len)
{
    size_t len = strlen(done);
    if (len + 1 + name_len + 1 > size)
        return -ENAMETOOLONG;
    done[len] = '/';
    memcpy(done + len + 1, name, name_len);
    done[len + 1 + name_len] = '\0';
    return 0;
}

/* Drops the last component of the resolved prefix done ("" is the root). */
static void pop(char *done)
{
    char *slash = strrchr(done, '/');
    if (slash != NULL)
        *slash = '\0';
}

/* Puts the link's target in front of what is left to resolve: rest becomes
 * target + "/" + rest. An absolute target starts again from the root. */
static int follow(const char *link_path, char *done, char *rest, size_t rest_size)
{
    char target[PATH_MAX];
    ssize_t n = readlink(link_path, target, sizeof(target) - 1);
    if (n < 0)
        return -errno;
    target[n] = '\0';
    size_t rest_len = strlen(rest);
    if ((size_t)n + 1 + rest_len + 1 > rest_size)
        return -ENAMETOOLONG;
    memmove(rest + n + 1, rest, rest_len + 1);
    memcpy(rest, target, (size_t)n);
    rest[n] = '/';
    if (target[0] == '/')
        done[0] = '\0';
    return 0;
}

/* The root as seen by lstat: "" stands for "/". */
static int stat_dir(const char *done, struct stat *st)
{
    return lstat(done[0] != '\0' ? done : "/", st) == 0 ? 0 : -errno;
}

int cs_state_path_resolve(const char *path, char *out, size_t size, struct cs_err *err)
{
    char rest[PATH_MAX * 2], done[PATH_MAX], next[PATH_MAX];
    struct stat dir_st, st;
    int links = 0, rc;

    if (path[0] != '/')
        return cs_err_set(err, -EINVAL, "the state dir %s must be an absolute path", path);
    if (strlen(path) + 1 > sizeof(rest))
        return cs_err_set(err, -ENAMETOOLONG, "the state dir's path is too long");
    strcpy(rest, path);
    done[0] = '\0';
    for (char *p = rest;;) {
        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        size_t len = strcspn(p, "/");
        if (len == 1 && p[0] == '.') {
            p += len;
            continue;
        }
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            pop(done);
            p += len;
            continue;
        }
        if ((rc = stat_dir(done, &dir_st)) != 0)
            return cs_err_set(err, rc, "lstat(%s) failed: %s", done[0] ? done : "/", strerror(-rc));
        strcpy(next, done);
        if ((rc = push(next, sizeof(next), p, len)) != 0)
            return cs_err_set(err, rc, "the state dir's path is too long");
        if (lstat(next, &st) != 0)
            return cs_err_set(err, -errno, "lstat(%s) failed: %s", next, strerror(errno));
        if ((rc = check_lookup(done[0] ? done : "/", &dir_st, &st, next, err)) != 0)
            return rc;
        p += len;
        if (S_ISLNK(st.st_mode)) {
            if (++links > LINKS_MAX)
                return cs_err_set(err, -ELOOP, "the state dir %s: more than %d links on the way",
                                  path, LINKS_MAX);
            /* What is left moves to the front of the buffer first, so the
             * target always fits in front of it. */
            memmove(rest, p, strlen(p) + 1);
            if ((rc = follow(next, done, rest, sizeof(rest))) != 0)
                return cs_err_set(err, rc, "following the link %s failed: %s", next, strerror(-rc));
            p = rest;
            continue;
        }
        if (!S_ISDIR(st.st_mode))
            return cs_err_set(err, -ENOTDIR,
                              "the state dir's path goes through %s, which is not a directory",
                              next);
        strcpy(done, next);
    }
    if ((rc = stat_dir(done, &st)) != 0)
        return cs_err_set(err, rc, "lstat(%s) failed: %s", done[0] ? done : "/", strerror(-rc));
    if ((rc = check_state_dir(done[0] ? done : "/", &st, err)) != 0)
        return rc;
    if (strlen(done[0] ? done : "/") + 1 > size)
        return cs_err_set(err, -ENAMETOOLONG, "the state dir's path is too long");
    strcpy(out, done[0] ? done : "/");
    return 0;
}
