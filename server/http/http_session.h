/* http_session: the browser's sessions of the HTTP API. POST /login trades
 * a bearer token for a session: a random 256-bit id (64 hex digits, the
 * csched_session cookie) with the SHA-256 of its token and an expiry. Each
 * call made under the session names that hash to the server (auth, from
 * the HTTP API's connection only), which finds the token in its tokens
 * file as for any call: a token revoked (and SIGHUP) ends its sessions.
 *
 * With a database (cs_http_sessions_database) the sessions live in it
 * (migration 0020: the id's SHA-256, never the id), so that every replica
 * knows them, and this table is their cache: a session is looked up in the
 * database when the cache lacks it or last looked more than
 * CS_HTTP_SESSION_RECHECK_S ago, so a logout on one replica ends it on the
 * others within that. Without one, the table alone holds them. Any thread
 * (libmicrohttpd's): one mutex for the table, one for the database's
 * connection, whose queries block the calling thread. */
#ifndef CS_HTTP_SESSION_H
#define CS_HTTP_SESSION_H

#include <stddef.h>

#define CS_HTTP_SESSION_ID_LEN 64
/* A token's SHA-256 in hex (auth_file.h's cs_sha256_hex). */
#define CS_HTTP_TOKEN_HASH_LEN 64
#define CS_HTTP_TOKEN_MAX 512
/* A session lasts this long from its login. */
#define CS_HTTP_SESSION_TTL_S (12 * 3600)
/* Sessions cached at once: a login past it drops the oldest (which, with
 * no database, ends it). */
#define CS_HTTP_SESSIONS_MAX 1024
/* How long a session found in the database is trusted before it is looked
 * up again: how late another replica's logout reaches this one. */
#define CS_HTTP_SESSION_RECHECK_S 1

struct cs_http_sessions;

struct cs_http_sessions *cs_http_sessions_new(void);
void cs_http_sessions_free(struct cs_http_sessions *s);
/* Keeps the sessions in the database conninfo (a libpq string or URL,
 * copied) from now on; connected at the first use. */
void cs_http_sessions_database(struct cs_http_sessions *s, const char *conninfo);
/* Opens a session for the token whose SHA-256 (hex) is token_sha256: its id
 * into id (NUL-terminated). 0, -errno of getrandom, or -EIO when the
 * database could not store it (the login must then fail: no other replica,
 * nor this one after CS_HTTP_SESSION_RECHECK_S, would know it). */
int cs_http_session_open(struct cs_http_sessions *s, const char *token_sha256,
                         char id[CS_HTTP_SESSION_ID_LEN + 1]);
/* The token hash of the live session id, copied into token_sha256: 0,
 * -ENOENT, or -EIO when the database could not be asked about a session
 * the cache does not hold (a cached one is used through a database
 * outage). */
int cs_http_session_token(struct cs_http_sessions *s, const char *id,
                          char token_sha256[CS_HTTP_TOKEN_HASH_LEN + 1]);
/* Ends the session id (if there is one), in the database too. */
void cs_http_session_close(struct cs_http_sessions *s, const char *id);

#endif
