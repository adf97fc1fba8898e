/* The embedded PostgreSQL: initdb, pg_ctl start and pg_ctl stop of a private
 * cluster under one directory. Everything here blocks (it spawns programs
 * and waits for them), so it runs only on libuv's pool or in tests, never on
 * the loop thread.
 *
 * As root, PostgreSQL (which refuses to run as root) runs as an unprivileged
 * user through runuser; posix_spawn, never fork, because the caller is a
 * multi-threaded server. Only cschedd gets in: the socket's directory is
 * 0700 and every connection needs the password (pg_auth.h). */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pg_auth.h"
#include "pg_embedded.h"
#include "store_util.h"

extern char **environ;

#define PG_PORT 5432

/* Who runs the PostgreSQL programs, and how. */
struct pg_ctx {
    struct cs_store_logger logger;
    const char *dir;
    char bindir[PATH_MAX];
    bool as_user; /* we are root: run them as user through runuser */
    char user[64];
    uid_t uid;
    gid_t gid;
    gid_t groups[64];
    int n_groups;
    char runuser[32];
    char data[PATH_MAX];
    char log[PATH_MAX];
};

static void find_bindir(const struct cs_pg_embedded_options *opts, char *out, size_t cap)
{
    const char *env = getenv("CSCHED_PG_BINDIR");
    glob_t g;
    long best = -1;

    out[0] = '\0';
    if (opts != NULL && opts->bindir != NULL) {
        snprintf(out, cap, "%s", opts->bindir);
        return;
    }
    if (env != NULL && env[0] != '\0') {
        snprintf(out, cap, "%s", env);
        return;
    }
    if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        long version = strtol(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"), NULL, 10);

        if (version > best) {
            best = version;
            snprintf(out, cap, "%.*s", (int)(strlen(g.gl_pathv[i]) - strlen("/initdb")),
                     g.gl_pathv[i]);
        }
    }
    globfree(&g);
}

static int ctx_user(struct pg_ctx *c, const char *user)
{
    struct passwd pw;
    struct passwd *found = NULL;
    char buf[4096];
    int n = (int)(sizeof(c->groups) / sizeof(c->groups[0]));

    if (getpwnam_r(user, &pw, buf, sizeof(buf), &found) != 0 || found == NULL) {
        cs_store_log(&c->logger, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: running as root, but there is no user %s to run "
                     "PostgreSQL as (install the postgresql package, or run as another user)",
                     user);
        return -ENOENT;
    }
    snprintf(c->user, sizeof(c->user), "%s", user);
    c->uid = pw.pw_uid;
    c->gid = pw.pw_gid;
    if (getgrouplist(user, pw.pw_gid, c->groups, &n) < 0)
        n = 0;
    c->n_groups = n;
    if (access("/usr/sbin/runuser", X_OK) == 0)
        snprintf(c->runuser, sizeof(c->runuser), "/usr/sbin/runuser");
    else
        snprintf(c->runuser, sizeof(c->runuser), "/sbin/runuser");
    c->as_user = true;
    return 0;
}

static int ctx_init(struct pg_ctx *c, const char *dir, const struct cs_pg_embedded_options *opts,
                    const char *user)
{
    memset(c, 0, sizeof(*c));
    if (opts != NULL)
        c->logger = (struct cs_store_logger){opts->log_cb, opts->log_arg};
    if (dir[0] != '/' || strpbrk(dir, "'\"\\") != NULL) {
        cs_store_log(&c->logger, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: directory %s must be an absolute path without quotes "
                     "or backslashes",
                     dir);
        return -EINVAL;
    }
    c->dir = dir;
    find_bindir(opts, c->bindir, sizeof(c->bindir));
    snprintf(c->data, sizeof(c->data), "%s/data", dir);
    snprintf(c->log, sizeof(c->log), "%s/postgresql.log", dir);
    if (geteuid() != 0)
        return 0;
    return ctx_user(c, user != NULL ? user : "postgres");
}

/* Runs a PostgreSQL program (bindir/prog) with args, output appended to
 * out_path, and waits for it. Returns its exit status, or a negative errno
 * when it could not run. */
static int run_prog(const struct pg_ctx *c, const char *out_path, const char *prog,
                    const char *const *args)
{
    const char *argv[24];
    char path[PATH_MAX + 64];
    posix_spawn_file_actions_t fa;
    int argc = 0;
    int status;
    pid_t pid;
    int rc;

    if (c->bindir[0] != '\0')
        snprintf(path, sizeof(path), "%s/%s", c->bindir, prog);
    else
        snprintf(path, sizeof(path), "%s", prog);
    if (c->as_user) {
        argv[argc++] = c->runuser;
        argv[argc++] = "-u";
        argv[argc++] = c->user;
        argv[argc++] = "--";
    }
    argv[argc++] = path;
    while (*args != NULL && argc < 23)
        argv[argc++] = *args++;
    argv[argc] = NULL;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    /* The server pg_ctl starts outlives us: it must not keep our fds. */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        cs_store_log(&c->logger, CS_STORE_LOG_ERROR, "embedded PostgreSQL: cannot run %s: %s",
                     argv[0], strerror(rc));
        return -rc;
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -errno;
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

static bool user_can_enter(const struct pg_ctx *c, const struct stat *st)
{
    if (st->st_uid == c->uid)
        return (st->st_mode & S_IXUSR) != 0;
    for (int i = 0; i < c->n_groups; i++) {
        if (st->st_gid == c->groups[i])
            return (st->st_mode & S_IXGRP) != 0;
    }
    return (st->st_mode & S_IXOTH) != 0;
}

/* Checks that the PostgreSQL user can reach dir through every directory
 * above it (those that exist). The directory right above dir is typically
 * the server's own state directory, made 0700: when we own it, it gets o+x
 * (enter, not list) so the cluster inside can be reached. Anything higher up
 * is the operator's to change, so it fails with a message naming the fix. */
static int check_traversal(const struct pg_ctx *c, const char *dir)
{
    char path[PATH_MAX];
    struct stat st;
    bool parent = true;

    snprintf(path, sizeof(path), "%s", dir);
    for (char *slash = strrchr(path, '/'); slash != NULL; slash = strrchr(path, '/')) {
        const char *shown;

        *slash = '\0';
        shown = path[0] != '\0' ? path : "/";
        if (stat(shown, &st) != 0)
            continue;
        if (!user_can_enter(c, &st) && parent && st.st_uid == geteuid()) {
            cs_store_log(&c->logger, CS_STORE_LOG_INFO,
                         "embedded PostgreSQL: letting user %s enter %s (chmod o+x)", c->user,
                         shown);
            if (chmod(shown, (st.st_mode & 07777) | S_IXOTH) == 0)
                st.st_mode |= S_IXOTH;
        }
        parent = false;
        if (!user_can_enter(c, &st)) {
            cs_store_log(&c->logger, CS_STORE_LOG_ERROR,
                         "embedded PostgreSQL runs as user %s, which cannot enter %s (mode %o): "
                         "run `chmod o+x %s`, or choose a state directory elsewhere (e.g. under "
                         "/var/lib)",
                         c->user, shown, (unsigned)(st.st_mode & 07777), shown);
            return -EACCES;
        }
    }
    return 0;
}

/* Makes dir (and its parents) for PostgreSQL alone: mode 0700, owned by
 * its user. The last directory is opened without following a symlink and
 * changed through that handle; one that already existed must be a
 * directory of root's, of PostgreSQL's user or of ours, or it is refused:
 * in a shared folder such as /tmp another user could have made it, or a
 * link in its place, for us to hand over (chown) or open up. */
static int make_dir(const char *dir, const struct pg_ctx *c)
{
    char path[PATH_MAX];
    struct stat st;
    int fd = -1;

    snprintf(path, sizeof(path), "%s", dir);
    for (char *p = strchr(path + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            goto err;
        *p = '/';
    }
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        goto err;
    fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0)
        goto err;
    if (st.st_uid != 0 && st.st_uid != geteuid() && !(c->as_user && st.st_uid == c->uid)) {
        cs_store_log(&c->logger, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: %s belongs to uid %u, not to us or to PostgreSQL's "
                     "user: refusing to use it (remove it, or choose a shorter state directory "
                     "so that the socket needs no folder of its own)",
                     path, (unsigned)st.st_uid);
        (void)close(fd);
        return -EPERM;
    }
    if (fchmod(fd, 0700) != 0)
        goto err;
    if (c->as_user && fchown(fd, c->uid, c->gid) != 0)
        goto err;
    (void)close(fd);
    return 0;
err:;
    int rc = -errno;
    cs_store_log(&c->logger, CS_STORE_LOG_ERROR,
                 "embedded PostgreSQL: cannot make directory %s: %s%s", path, strerror(-rc),
                 rc == -ELOOP || rc == -ENOTDIR ? " (not a directory: a link or a file is there)"
                                                : "");
    if (fd >= 0)
        (void)close(fd);
    return rc;
}

/* The socket goes in dir when the path fits a unix socket address, else in
 * /tmp/csched-pg-<hash of dir>. */
static int socket_dir(const struct pg_ctx *c, char *out, size_t cap)
{
    struct sockaddr_un sun;
    uint64_t hash = 1469598103934665603ULL;

    if (strlen(c->dir) + strlen("/.s.PGSQL.65535.lock") < sizeof(sun.sun_path)) {
        snprintf(out, cap, "%s", c->dir);
        return 0;
    }
    for (const char *p = c->dir; *p != '\0'; p++)
        hash = (hash ^ (unsigned char)*p) * 1099511628211ULL;
    snprintf(out, cap, "/tmp/csched-pg-%016llx", (unsigned long long)hash);
    return make_dir(out, c);
}

static bool is_running(const struct pg_ctx *c)
{
    const char *args[] = {"-D", c->data, "status", NULL};
    char pid_file[PATH_MAX + 32];

    snprintf(pid_file, sizeof(pid_file), "%s/postmaster.pid", c->data);
    if (access(pid_file, F_OK) != 0)
        return false;
    return run_prog(c, "/dev/null", "pg_ctl", args) == 0;
}

static struct cs_pg_owner owner_of(const struct pg_ctx *c)
{
    return (struct cs_pg_owner){c->as_user, c->uid, c->gid};
}

/* A new cluster takes the password from the start: no moment of trust. */
static int initdb(const struct pg_ctx *c, const struct cs_pg_embedded_options *opts, const char *pw)
{
    char version[PATH_MAX + 16];
    char out[PATH_MAX + 16];
    char pwfile[PATH_MAX + 16], pwfile_arg[PATH_MAX + 32];
    const char *args[] = {"-D", c->data, "-A",         "scram-sha-256", "-U", "postgres",
                          "-E", "UTF8",  "--locale=C", pwfile_arg,      NULL, NULL};
    struct cs_pg_owner owner = owner_of(c);
    int rc;

    snprintf(version, sizeof(version), "%s/PG_VERSION", c->data);
    if (access(version, F_OK) == 0)
        return 0;
    if (opts != NULL && opts->fsync_off)
        args[10] = "--no-sync";
    snprintf(out, sizeof(out), "%s/initdb.log", c->dir);
    snprintf(pwfile, sizeof(pwfile), "%s/initdb.pw", c->dir);
    snprintf(pwfile_arg, sizeof(pwfile_arg), "--pwfile=%s", pwfile);
    if ((rc = cs_pg_auth_initdb_pwfile(&c->logger, &owner, pwfile, pw)) != 0)
        return rc;
    cs_store_log(&c->logger, CS_STORE_LOG_INFO, "embedded PostgreSQL: initdb %s", c->data);
    rc = run_prog(c, out, "initdb", args);
    (void)unlink(pwfile); /* a leftover is only readable by the cluster's user */
    if (rc != 0) {
        cs_store_log(&c->logger, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: initdb failed (status %d); see %s", rc, out);
        return rc < 0 ? rc : -EIO;
    }
    return 0;
}

static int port(const struct cs_pg_embedded_options *opts)
{
    return opts != NULL && opts->tcp_port > 0 ? opts->tcp_port : PG_PORT;
}

static int pg_start(const struct pg_ctx *c, const struct cs_pg_embedded_options *opts,
                    const char *sock_dir)
{
    char options[PATH_MAX + 256];
    char out[PATH_MAX + 16];
    const char *args[] = {"-D", c->data, "-l",    c->log,  "-w", "-t",
                          "60", "-o",    options, "start", NULL};
    int rc;

    /* The TCP port, when there is one, names the socket too. */
    snprintf(options, sizeof(options),
             "-p %d -k '%s' -c unix_socket_permissions=0700 -c listen_addresses='%s'%s", port(opts),
             sock_dir, opts != NULL && opts->tcp_port > 0 ? "127.0.0.1" : "",
             opts != NULL && opts->fsync_off
                 ? " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                 : "");
    snprintf(out, sizeof(out), "%s/pg_ctl.log", c->dir);
    rc = run_prog(c, out, "pg_ctl", args);
    if (rc != 0) {
        cs_store_log(&c->logger, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: pg_ctl start failed (status %d); see %s and %s", rc, out,
                     c->log);
        return rc < 0 ? rc : -EIO;
    }
    return 0;
}

/* A cluster that still trusts local connections (made before passwords)
 * gets the password and a pg_hba.conf without trust, and reloads it. */
static int upgrade_auth(const struct pg_ctx *c, const char *conninfo, const char *pw)
{
    const char *args[] = {"-D", c->data, "reload", NULL};
    char out[PATH_MAX + 16];
    struct cs_pg_owner owner = owner_of(c);
    int rc;

    if (!cs_pg_auth_hba_trusts(c->data))
        return 0;
    if ((rc = cs_pg_auth_upgrade(&c->logger, &owner, conninfo, c->data, pw)) != 0)
        return rc;
    snprintf(out, sizeof(out), "%s/pg_ctl.log", c->dir);
    rc = run_prog(c, out, "pg_ctl", args);
    if (rc != 0) {
        cs_store_log(&c->logger, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: pg_ctl reload failed (status %d); see %s", rc, out);
        return rc < 0 ? rc : -EIO;
    }
    return 0;
}

int cs_pg_embedded_start(const char *dir, const struct cs_pg_embedded_options *opts,
                         char *conninfo_out, size_t cap)
{
    struct pg_ctx c;
    char sock_dir[PATH_MAX], pw[CS_PG_PASSWORD_LEN + 1];
    int rc;

    rc = ctx_init(&c, dir, opts, opts != NULL ? opts->user : NULL);
    if (rc != 0)
        return rc;
    if (c.as_user && (rc = check_traversal(&c, dir)) != 0)
        return rc;
    if ((rc = make_dir(dir, &c)) != 0)
        return rc;
    if ((rc = socket_dir(&c, sock_dir, sizeof(sock_dir))) != 0)
        return rc;
    if ((rc = cs_pg_auth_password(&c.logger, dir, pw)) != 0)
        return rc;
    if ((rc = initdb(&c, opts, pw)) != 0)
        return rc;
    bool again = opts != NULL && opts->again, running = is_running(&c);
    if (running && !again)
        cs_store_log(&c.logger, CS_STORE_LOG_INFO, "embedded PostgreSQL already runs in %s",
                     c.data);
    if (!running && again)
        cs_store_log(&c.logger, CS_STORE_LOG_WARN,
                     "embedded PostgreSQL in %s is not running (killed, or stopped by hand); "
                     "starting it again",
                     c.data);
    if (!running && (rc = pg_start(&c, opts, sock_dir)) != 0)
        return rc;
    if ((size_t)snprintf(conninfo_out, cap, "host='%s' port=%d user=postgres dbname=postgres",
                         sock_dir, port(opts)) >= cap)
        return -ENAMETOOLONG;
    if ((rc = upgrade_auth(&c, conninfo_out, pw)) != 0)
        return rc;
    /* In the conninfo, not the environment: a job inherits neither. */
    size_t len = strlen(conninfo_out);
    if ((size_t)snprintf(conninfo_out + len, cap - len, " password=%s", pw) >= cap - len)
        return -ENAMETOOLONG;
    if (!(running && again))
        cs_store_log(&c.logger, CS_STORE_LOG_INFO, "embedded PostgreSQL runs in %s (socket in %s)",
                     c.data, sock_dir);
    return 0;
}

int cs_pg_embedded_stop(const char *dir, const struct cs_pg_embedded_options *opts)
{
    struct pg_ctx c;
    struct stat st;
    struct passwd pw;
    struct passwd *owner = NULL;
    char buf[4096];
    char out[PATH_MAX + 16];
    const char *args[] = {"-D", c.data, "-m", "fast", "-w", "-t", "60", "stop", NULL};
    int rc;

    /* As root, stop as whoever owns the cluster. */
    snprintf(out, sizeof(out), "%s/data", dir);
    if (stat(out, &st) != 0)
        return 0;
    if (geteuid() == 0 &&
        (getpwuid_r(st.st_uid, &pw, buf, sizeof(buf), &owner) != 0 || owner == NULL))
        return -ENOENT;
    rc = ctx_init(&c, dir, opts, owner != NULL ? owner->pw_name : NULL);
    if (rc != 0)
        return rc;
    if (!is_running(&c))
        return 0;
    snprintf(out, sizeof(out), "%s/pg_ctl.log", c.dir);
    rc = run_prog(&c, out, "pg_ctl", args);
    if (rc != 0) {
        cs_store_log(&c.logger, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: pg_ctl stop failed (status %d); see %s", rc, out);
        return rc < 0 ? rc : -EIO;
    }
    cs_store_log(&c.logger, CS_STORE_LOG_INFO, "embedded PostgreSQL in %s stopped", c.data);
    return 0;
}
