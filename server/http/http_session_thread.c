/* http_session: the sessions (see http_session.h): a fixed table searched
 * whole, comparing ids in constant time, in front of the database's
 * http_sessions rows when there is a database. Its queries run on the
 * calling libmicrohttpd thread over one blocking libpq connection, never
 * on the loop. */
#define CS_LOG_COMPONENT "http"
#include <errno.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "auth_file.h"
#include "http_session.h"
#include "log.h"
#include "util.h"

struct session {
    char id[CS_HTTP_SESSION_ID_LEN + 1]; /* "" when the slot is free */
    char token_sha256[CS_HTTP_TOKEN_HASH_LEN + 1];
    int64_t expires_ms;   /* unix ms, as the database has it */
    int64_t checked_mono; /* CLOCK_MONOTONIC s of its last look in the database */
};

struct cs_http_sessions {
    pthread_mutex_t lock; /* v */
    struct session v[CS_HTTP_SESSIONS_MAX];
    pthread_mutex_t db_lock; /* conninfo, conn: one query at a time */
    char *conninfo;          /* NULL: no database, the table alone */
    PGconn *conn;
};

static int64_t mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

static void hex(const unsigned char *raw, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        (void)snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* Whether a and b (each CS_HTTP_SESSION_ID_LEN long) are equal, in a time
 * that does not tell how much of them is. */
static bool same_id(const char *a, const char *b)
{
    unsigned char diff = 0;
    for (size_t i = 0; i < CS_HTTP_SESSION_ID_LEN; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

/* Whether id is 64 lowercase hex digits, as every id made here is. */
static bool id_is_well_formed(const char *id)
{
    size_t n = strspn(id, "0123456789abcdef");
    return n == CS_HTTP_SESSION_ID_LEN && id[n] == '\0';
}

static void wipe(struct session *e)
{
    explicit_bzero(e, sizeof(*e));
}

struct cs_http_sessions *cs_http_sessions_new(void)
{
    struct cs_http_sessions *s = cs_xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->db_lock, NULL);
    return s;
}

void cs_http_sessions_free(struct cs_http_sessions *s)
{
    if (s == NULL)
        return;
    if (s->conn != NULL)
        PQfinish(s->conn);
    if (s->conninfo != NULL)
        explicit_bzero(s->conninfo, strlen(s->conninfo));
    free(s->conninfo);
    pthread_mutex_destroy(&s->db_lock);
    pthread_mutex_destroy(&s->lock);
    explicit_bzero(s->v, sizeof(s->v));
    free(s);
}

void cs_http_sessions_database(struct cs_http_sessions *s, const char *conninfo)
{
    pthread_mutex_lock(&s->db_lock);
    free(s->conninfo);
    s->conninfo = cs_xstrdup(conninfo);
    pthread_mutex_unlock(&s->db_lock);
}

/* --- the database ------------------------------------------------------- */

/* The connection, made or made again; NULL when it cannot be. With db_lock
 * held. A statement timeout keeps a frozen database from holding a
 * connection's thread for long. */
static PGconn *db_conn(struct cs_http_sessions *s)
{
    if (s->conn != NULL && PQstatus(s->conn) == CONNECTION_OK)
        return s->conn;
    if (s->conn != NULL)
        PQfinish(s->conn);
    const char *keys[] = {"dbname", "connect_timeout", "application_name", "options", NULL};
    const char *values[] = {s->conninfo, "5", "cschedd http sessions", "-c statement_timeout=5000",
                            NULL};
    s->conn = PQconnectdbParams(keys, values, 1);
    if (PQstatus(s->conn) == CONNECTION_OK)
        return s->conn;
    cs_log_warn("the sessions' database connection failed: %s", PQerrorMessage(s->conn));
    PQfinish(s->conn);
    s->conn = NULL;
    return NULL;
}

/* Runs sql with n text params: its result (the caller clears it) when it
 * has status want, else NULL (logged). With db_lock held. */
static PGresult *db_exec(struct cs_http_sessions *s, const char *sql, int n, const char *const *p,
                         ExecStatusType want)
{
    PGconn *conn = db_conn(s);
    if (conn == NULL)
        return NULL;
    PGresult *res = PQexecParams(conn, sql, n, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(res) == want)
        return res;
    cs_log_warn("a query of the sessions' database failed: %s", PQerrorMessage(conn));
    PQclear(res);
    return NULL;
}

/* The id's SHA-256, the row's key: the database never holds an id. */
static void id_hash(const char *id, char out[CS_HTTP_TOKEN_HASH_LEN + 1])
{
    cs_sha256_hex(id, strlen(id), out);
}

/* Stores e (and drops the sessions past their expiry): 0 or -EIO. */
static int db_put(struct cs_http_sessions *s, const struct session *e, int64_t now_ms)
{
    static const char sql[] =
        "WITH gone AS (DELETE FROM http_sessions WHERE expires_unix_ms <= $4)"
        " INSERT INTO http_sessions (id_sha256, token_sha256, expires_unix_ms)"
        " VALUES (decode($1, 'hex'), decode($2, 'hex'), $3)";
    char key[CS_HTTP_TOKEN_HASH_LEN + 1], expires[24], now[24];
    id_hash(e->id, key);
    (void)snprintf(expires, sizeof(expires), "%lld", (long long)e->expires_ms);
    (void)snprintf(now, sizeof(now), "%lld", (long long)now_ms);
    const char *p[] = {key, e->token_sha256, expires, now};
    PGresult *res = db_exec(s, sql, 4, p, PGRES_COMMAND_OK);
    PQclear(res);
    return res != NULL ? 0 : -EIO;
}

/* The live session id from the database into *e: 0, -ENOENT, or -EIO. */
static int db_get(struct cs_http_sessions *s, const char *id, int64_t now_ms, struct session *e)
{
    static const char sql[] = "SELECT encode(token_sha256, 'hex'), expires_unix_ms"
                              " FROM http_sessions WHERE id_sha256 = decode($1, 'hex')"
                              " AND expires_unix_ms > $2";
    char key[CS_HTTP_TOKEN_HASH_LEN + 1], now[24];
    id_hash(id, key);
    (void)snprintf(now, sizeof(now), "%lld", (long long)now_ms);
    const char *p[] = {key, now};
    PGresult *res = db_exec(s, sql, 2, p, PGRES_TUPLES_OK);
    if (res == NULL)
        return -EIO;
    int rc = -ENOENT;
    if (PQntuples(res) == 1 && PQgetlength(res, 0, 0) == CS_HTTP_TOKEN_HASH_LEN) {
        memcpy(e->id, id, CS_HTTP_SESSION_ID_LEN + 1);
        memcpy(e->token_sha256, PQgetvalue(res, 0, 0), CS_HTTP_TOKEN_HASH_LEN + 1);
        e->expires_ms = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
        rc = 0;
    }
    PQclear(res);
    return rc;
}

static void db_delete(struct cs_http_sessions *s, const char *id)
{
    char key[CS_HTTP_TOKEN_HASH_LEN + 1];
    id_hash(id, key);
    const char *p[] = {key};
    PQclear(db_exec(s, "DELETE FROM http_sessions WHERE id_sha256 = decode($1, 'hex')", 1, p,
                    PGRES_COMMAND_OK));
}

/* --- the table ---------------------------------------------------------- */

/* The cached session id, or NULL; one past its expiry is dropped. With the
 * lock held. */
static struct session *find(struct cs_http_sessions *s, const char *id, int64_t now_ms)
{
    struct session *found = NULL;
    for (size_t i = 0; i < CS_HTTP_SESSIONS_MAX; i++) {
        struct session *e = &s->v[i];
        if (e->id[0] != '\0' && same_id(e->id, id)) {
            if (e->expires_ms > now_ms)
                found = e;
            else
                wipe(e);
        }
    }
    return found;
}

/* Caches e, in its own slot if it has one, else a free or the oldest. With
 * the lock held. */
static void cache(struct cs_http_sessions *s, const struct session *e, int64_t now_ms)
{
    struct session *slot = find(s, e->id, now_ms);
    for (size_t i = 0; slot == NULL && i < CS_HTTP_SESSIONS_MAX; i++) {
        struct session *c = &s->v[i];
        if (c->id[0] == '\0' || c->expires_ms <= now_ms)
            slot = c;
    }
    if (slot == NULL) {
        slot = &s->v[0];
        for (size_t i = 1; i < CS_HTTP_SESSIONS_MAX; i++)
            if (s->v[i].expires_ms < slot->expires_ms)
                slot = &s->v[i];
    }
    *slot = *e;
}

static bool has_database(struct cs_http_sessions *s)
{
    pthread_mutex_lock(&s->db_lock);
    bool has = s->conninfo != NULL;
    pthread_mutex_unlock(&s->db_lock);
    return has;
}

int cs_http_session_open(struct cs_http_sessions *s, const char *token_sha256,
                         char id[CS_HTTP_SESSION_ID_LEN + 1])
{
    unsigned char raw[CS_HTTP_SESSION_ID_LEN / 2];
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return -errno;
    hex(raw, sizeof(raw), id);
    int64_t now_ms = cs_now_unix_ms();
    struct session e = {.expires_ms = now_ms + (int64_t)CS_HTTP_SESSION_TTL_S * 1000,
                        .checked_mono = mono_s()};
    memcpy(e.id, id, CS_HTTP_SESSION_ID_LEN + 1);
    memcpy(e.token_sha256, token_sha256, CS_HTTP_TOKEN_HASH_LEN + 1);
    int rc = 0;
    pthread_mutex_lock(&s->db_lock);
    if (s->conninfo != NULL)
        rc = db_put(s, &e, now_ms);
    pthread_mutex_unlock(&s->db_lock);
    if (rc == 0) {
        pthread_mutex_lock(&s->lock);
        cache(s, &e, now_ms);
        pthread_mutex_unlock(&s->lock);
    }
    wipe(&e);
    return rc;
}

int cs_http_session_token(struct cs_http_sessions *s, const char *id,
                          char token_sha256[CS_HTTP_TOKEN_HASH_LEN + 1])
{
    if (!id_is_well_formed(id))
        return -ENOENT;
    int64_t now_ms = cs_now_unix_ms(), now_mono = mono_s();
    bool db = has_database(s);
    pthread_mutex_lock(&s->lock);
    struct session *c = find(s, id, now_ms);
    struct session e = {0};
    if (c != NULL)
        e = *c;
    pthread_mutex_unlock(&s->lock);
    int rc = c != NULL ? 0 : -ENOENT;
    if (db && (c == NULL || now_mono - e.checked_mono >= CS_HTTP_SESSION_RECHECK_S)) {
        pthread_mutex_lock(&s->db_lock);
        int got = db_get(s, id, now_ms, &e);
        pthread_mutex_unlock(&s->db_lock);
        /* Through a database outage a cached session goes on. */
        rc = got == -EIO && c != NULL ? 0 : got;
        e.checked_mono = now_mono;
        pthread_mutex_lock(&s->lock);
        if (got == 0)
            cache(s, &e, now_ms);
        else if (got == -ENOENT && (c = find(s, id, now_ms)) != NULL)
            wipe(c);
        pthread_mutex_unlock(&s->lock);
    }
    if (rc == 0)
        memcpy(token_sha256, e.token_sha256, CS_HTTP_TOKEN_HASH_LEN + 1);
    wipe(&e);
    return rc;
}

void cs_http_session_close(struct cs_http_sessions *s, const char *id)
{
    if (!id_is_well_formed(id))
        return;
    pthread_mutex_lock(&s->lock);
    struct session *e = find(s, id, cs_now_unix_ms());
    if (e != NULL)
        wipe(e);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->db_lock);
    if (s->conninfo != NULL)
        db_delete(s, id);
    pthread_mutex_unlock(&s->db_lock);
}
