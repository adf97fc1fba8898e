/* http_session: the browser's sessions of the HTTP API. POST /login trades
 * a bearer token for a session: a random 256-bit id (64 hex digits, the
 * csched_session cookie) held here, in memory only, with the token and an
 * expiry. Each call made under the session sends the token, so the server
 * checks it as for any call; a session whose token the server no longer
 * knows (revoked and reread on SIGHUP) is dropped at its next use. Any
 * thread: one mutex. */
#ifndef CS_HTTP_SESSION_H
#define CS_HTTP_SESSION_H

#include <stddef.h>

#define CS_HTTP_SESSION_ID_LEN 64
#define CS_HTTP_TOKEN_MAX 512
/* A session lasts this long from its login. */
#define CS_HTTP_SESSION_TTL_S (12 * 3600)
/* Sessions held at once: a login past it drops the oldest. */
#define CS_HTTP_SESSIONS_MAX 1024

struct cs_http_sessions;

struct cs_http_sessions *cs_http_sessions_new(void);
void cs_http_sessions_free(struct cs_http_sessions *s);
/* Opens a session for token (copied): its id into id (NUL-terminated).
 * 0, or -EINVAL for a token longer than CS_HTTP_TOKEN_MAX, or -errno of
 * getrandom. */
int cs_http_session_open(struct cs_http_sessions *s, const char *token,
                         char id[CS_HTTP_SESSION_ID_LEN + 1]);
/* The token of the live session id, copied into token: 0 or -ENOENT. */
int cs_http_session_token(struct cs_http_sessions *s, const char *id,
                          char token[CS_HTTP_TOKEN_MAX + 1]);
/* Ends the session id (if there is one). */
void cs_http_session_close(struct cs_http_sessions *s, const char *id);

#endif
