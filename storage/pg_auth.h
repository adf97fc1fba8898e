/* pg_auth: how only cschedd gets into its embedded PostgreSQL: a password
 * made at first start from /dev/urandom and kept in DIR/password (mode
 * 0600, cschedd's), scram-sha-256 for every connection, and a pg_hba.conf
 * without a trust line; a cluster made before (trust) is upgraded in place.
 * Private to pg_embedded_work.c; blocking (files, libpq), so libuv's pool or
 * tests only. */
#ifndef CS_PG_AUTH_H
#define CS_PG_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "store_util.h"

/* The password's length: 32 random bytes in hex. */
#define CS_PG_PASSWORD_LEN 64
#define CS_PG_PASSWORD_FILE "password"

/* Who owns the cluster's files: cschedd itself, or (as root) this user. */
struct cs_pg_owner {
    bool as_user;
    uid_t uid;
    gid_t gid;
};

/* Reads DIR/password into pw (CS_PG_PASSWORD_LEN + 1 bytes), making it
 * first if there is none. 0 or -errno (logged). */
int cs_pg_auth_password(const struct cs_store_logger *log, const char *dir, char *pw);

/* Writes pw to DIR/initdb.pw for initdb --pwfile, readable by owner only.
 * 0 or -errno (logged); the caller removes it after initdb. */
int cs_pg_auth_initdb_pwfile(const struct cs_store_logger *log, const struct cs_pg_owner *owner,
                             const char *path, const char *pw);

/* Whether DATA/pg_hba.conf lets anyone in without a password (a trust line:
 * a cluster made before passwords, or changed by hand). */
bool cs_pg_auth_hba_trusts(const char *data);

/* Upgrades a trusting cluster that runs: sets the postgres role's password
 * through conninfo (which the trust still lets in), then rewrites
 * DATA/pg_hba.conf to password only. The caller reloads the server.
 * 0 or -errno (logged). */
int cs_pg_auth_upgrade(const struct cs_store_logger *log, const struct cs_pg_owner *owner,
                       const char *conninfo, const char *data, const char *pw);

#endif
