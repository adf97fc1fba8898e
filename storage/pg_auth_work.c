/* pg_auth work: the embedded cluster's password file, initdb's copy of it,
 * the check of pg_hba.conf and the upgrade of a cluster that trusted every
 * local connection (see pg_auth.h). Blocking, libuv's pool only. */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pg_auth.h"

/* Every connection, on the socket or on TCP, needs the password. */
static const char hba_text[] =
    "# Written by cschedd: its embedded PostgreSQL lets in only who has the\n"
    "# password (scram-sha-256), which cschedd keeps in ../password (0600).\n"
    "# Do not add trust lines: any local user could then read and change\n"
    "# every job.\n"
    "local   all   all                  scram-sha-256\n"
    "host    all   all   127.0.0.1/32   scram-sha-256\n"
    "host    all   all   ::1/128        scram-sha-256\n";

/* Writes len bytes of text to path (new or truncated, mode 0600, no link
 * followed), owned by owner when it is another user. 0 or -errno. */
static int write_file(const struct cs_pg_owner *owner, const char *path, const char *text,
                      size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (fchmod(fd, 0600) != 0 ||
        (owner != NULL && owner->as_user && fchown(fd, owner->uid, owner->gid) != 0))
        rc = -errno;
    else if (write(fd, text, len) != (ssize_t)len)
        rc = errno != 0 ? -errno : -EIO;
    else if (fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

static int make_password(char *pw)
{
    unsigned char bytes[CS_PG_PASSWORD_LEN / 2];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, bytes, sizeof(bytes));
    (void)close(fd); /* read-only */
    if (n != (ssize_t)sizeof(bytes))
        return -EIO;
    for (size_t i = 0; i < sizeof(bytes); i++)
        (void)sprintf(pw + 2 * i, "%02x", bytes[i]);
    return 0;
}

int cs_pg_auth_password(const struct cs_store_logger *log, const char *dir, char *pw)
{
    char path[4096];
    (void)snprintf(path, sizeof(path), "%s/" CS_PG_PASSWORD_FILE, dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, pw, CS_PG_PASSWORD_LEN);
        (void)close(fd); /* read-only */
        pw[n > 0 ? n : 0] = '\0';
        if (n == CS_PG_PASSWORD_LEN && strspn(pw, "0123456789abcdef") == CS_PG_PASSWORD_LEN)
            return 0;
        cs_store_log(log, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: %s is not a password cschedd made (%d hex digits): "
                     "restore it, or remove it and the cluster beside it",
                     path, CS_PG_PASSWORD_LEN);
        return -EINVAL;
    }
    int rc = errno == ENOENT ? make_password(pw) : -errno;
    if (rc == 0)
        rc = write_file(NULL, path, pw, CS_PG_PASSWORD_LEN);
    if (rc != 0)
        cs_store_log(log, CS_STORE_LOG_ERROR, "embedded PostgreSQL: cannot make %s: %s", path,
                     strerror(-rc));
    else
        cs_store_log(log, CS_STORE_LOG_INFO, "embedded PostgreSQL: made a password in %s", path);
    return rc;
}

int cs_pg_auth_initdb_pwfile(const struct cs_store_logger *log, const struct cs_pg_owner *owner,
                             const char *path, const char *pw)
{
    int rc = write_file(owner, path, pw, CS_PG_PASSWORD_LEN);
    if (rc != 0)
        cs_store_log(log, CS_STORE_LOG_ERROR, "embedded PostgreSQL: cannot write %s: %s", path,
                     strerror(-rc));
    return rc;
}

bool cs_pg_auth_hba_trusts(const char *data)
{
    char path[4096], line[1024];
    bool trusts = false;
    (void)snprintf(path, sizeof(path), "%s/pg_hba.conf", data);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false; /* no cluster yet, or PostgreSQL's to complain about */
    while (!trusts && fgets(line, sizeof(line), f) != NULL) {
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        for (char *save = NULL, *w = strtok_r(line, " \t\r\n", &save); w != NULL;
             w = strtok_r(NULL, " \t\r\n", &save))
            trusts = trusts || strcmp(w, "trust") == 0;
    }
    (void)fclose(f); /* read-only */
    return trusts;
}

/* ALTER ROLE with the password's SCRAM verifier, made by libpq: the
 * password itself never reaches the server or its log. */
static int set_password(const struct cs_store_logger *log, const char *conninfo, const char *pw)
{
    char sql[512];
    int rc = -EIO;
    PGconn *conn = PQconnectdb(conninfo);
    char *verifier = NULL;
    if (PQstatus(conn) != CONNECTION_OK)
        goto out_log;
    verifier = PQencryptPasswordConn(conn, pw, "postgres", "scram-sha-256");
    if (verifier == NULL || strchr(verifier, '\'') != NULL)
        goto out_log;
    (void)snprintf(sql, sizeof(sql), "ALTER ROLE postgres PASSWORD '%s'", verifier);
    PGresult *res = PQexec(conn, sql);
    rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : -EIO;
    PQclear(res);
out_log:
    if (rc != 0)
        cs_store_log(log, CS_STORE_LOG_ERROR,
                     "embedded PostgreSQL: setting the password failed: %s", PQerrorMessage(conn));
    PQfreemem(verifier);
    PQfinish(conn);
    return rc;
}

int cs_pg_auth_upgrade(const struct cs_store_logger *log, const struct cs_pg_owner *owner,
                       const char *conninfo, const char *data, const char *pw)
{
    char path[4096], tmp[4096];
    int rc = set_password(log, conninfo, pw);
    if (rc != 0)
        return rc;
    (void)snprintf(path, sizeof(path), "%s/pg_hba.conf", data);
    (void)snprintf(tmp, sizeof(tmp), "%s/pg_hba.conf.tmp", data);
    rc = write_file(owner, tmp, hba_text, sizeof(hba_text) - 1);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0) {
        cs_store_log(log, CS_STORE_LOG_ERROR, "embedded PostgreSQL: cannot rewrite %s: %s", path,
                     strerror(-rc));
        (void)unlink(tmp);
        return rc;
    }
    cs_store_log(log, CS_STORE_LOG_INFO,
                 "embedded PostgreSQL: upgraded from trust to password authentication (%s)", path);
    return 0;
}
