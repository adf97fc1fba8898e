/* http_session: the sessions' table (see http_session.h), a fixed array
 * searched whole, comparing ids in constant time. */
#include "http_session.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util.h"

struct session {
    char id[CS_HTTP_SESSION_ID_LEN + 1]; /* "" when the slot is free */
    char token[CS_HTTP_TOKEN_MAX + 1];
    time_t expires; /* CLOCK_MONOTONIC seconds */
};

struct cs_http_sessions {
    pthread_mutex_t lock;
    struct session v[CS_HTTP_SESSIONS_MAX];
};

static time_t now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
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

static void wipe(struct session *e)
{
    explicit_bzero(e, sizeof(*e));
}

struct cs_http_sessions *cs_http_sessions_new(void)
{
    struct cs_http_sessions *s = cs_xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

void cs_http_sessions_free(struct cs_http_sessions *s)
{
    if (s == NULL)
        return;
    pthread_mutex_destroy(&s->lock);
    explicit_bzero(s->v, sizeof(s->v));
    free(s);
}

int cs_http_session_open(struct cs_http_sessions *s, const char *token,
                         char id[CS_HTTP_SESSION_ID_LEN + 1])
{
    unsigned char raw[CS_HTTP_SESSION_ID_LEN / 2];
    if (strlen(token) > CS_HTTP_TOKEN_MAX)
        return -EINVAL;
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return -errno;
    for (size_t i = 0; i < sizeof(raw); i++)
        (void)snprintf(id + 2 * i, 3, "%02x", raw[i]);
    pthread_mutex_lock(&s->lock);
    time_t now = now_s();
    struct session *slot = &s->v[0];
    for (size_t i = 0; i < CS_HTTP_SESSIONS_MAX; i++) {
        struct session *e = &s->v[i];
        if (e->id[0] == '\0' || e->expires <= now) {
            slot = e;
            break;
        }
        if (e->expires < slot->expires)
            slot = e;
    }
    wipe(slot);
    memcpy(slot->id, id, CS_HTTP_SESSION_ID_LEN + 1);
    memcpy(slot->token, token, strlen(token) + 1);
    slot->expires = now + CS_HTTP_SESSION_TTL_S;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* The live session of id, or NULL; with the lock held. */
static struct session *find(struct cs_http_sessions *s, const char *id)
{
    if (strlen(id) != CS_HTTP_SESSION_ID_LEN)
        return NULL;
    time_t now = now_s();
    struct session *found = NULL;
    for (size_t i = 0; i < CS_HTTP_SESSIONS_MAX; i++) {
        struct session *e = &s->v[i];
        if (e->id[0] != '\0' && same_id(e->id, id)) {
            if (e->expires > now)
                found = e;
            else
                wipe(e);
        }
    }
    return found;
}

int cs_http_session_token(struct cs_http_sessions *s, const char *id,
                          char token[CS_HTTP_TOKEN_MAX + 1])
{
    pthread_mutex_lock(&s->lock);
    struct session *e = find(s, id);
    if (e != NULL)
        memcpy(token, e->token, strlen(e->token) + 1);
    pthread_mutex_unlock(&s->lock);
    return e != NULL ? 0 : -ENOENT;
}

void cs_http_session_close(struct cs_http_sessions *s, const char *id)
{
    pthread_mutex_lock(&s->lock);
    struct session *e = find(s, id);
    if (e != NULL)
        wipe(e);
    pthread_mutex_unlock(&s->lock);
}
