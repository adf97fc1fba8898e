/* runas cache work: the launch threads' cache of resolved users (see
 * runas_cache.h). A few entries, replaced oldest first, under one mutex that
 * is never held across a lookup or a stat: two threads missing together both
 * look up, and the later answer replaces the earlier. Invariant: an entry
 * holds only a lookup that succeeded, stamped with the files as they were
 * before it was made, so a file changed during a lookup only costs a second
 * one. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runas_cache.h"
#include "util.h"

/* Jobs name few distinct users; a server with more only looks some up again. */
#define CACHE_SLOTS 8

/* What a file looked like; a missing file is all zeros. */
struct file_stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct entry {
    bool used;
    char user[CS_RUNAS_NAME_MAX], group[CS_RUNAS_NAME_MAX], default_user[CS_RUNAS_NAME_MAX];
    int64_t made_ns;
    struct file_stamp passwd, groupf;
    struct cs_runas value; /* value.groups malloc'd, the entry's own */
};

struct cs_runas_cache {
    pthread_mutex_t lock;
    char *passwd_path, *group_path;
    int64_t ttl_ns;
    cs_runas_resolve_fn resolve;
    struct entry slots[CACHE_SLOTS]; /* guarded by lock */
};

static void stamp_of(const char *path, struct file_stamp *s)
{
    struct stat st;
    memset(s, 0, sizeof(*s));
    if (stat(path, &st) != 0)
        return;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->size = st.st_size;
    s->mtime = st.st_mtim;
}

static bool stamp_same(const struct file_stamp *a, const struct file_stamp *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Whether the key fits an entry's fields (a longer one is never kept). */
static bool key_fits(const char *user, const char *group, const char *default_user)
{
    return strlen(user) < CS_RUNAS_NAME_MAX && strlen(group) < CS_RUNAS_NAME_MAX &&
           strlen(default_user) < CS_RUNAS_NAME_MAX;
}

static bool key_is(const struct entry *e, const char *user, const char *group,
                   const char *default_user)
{
    return e->used && strcmp(e->user, user) == 0 && strcmp(e->group, group) == 0 &&
           strcmp(e->default_user, default_user) == 0;
}

static void runas_copy(struct cs_runas *to, const struct cs_runas *from)
{
    *to = *from;
    to->groups = NULL;
    if (from->n_groups > 0) {
        to->groups = cs_xmalloc(from->n_groups * sizeof(uint32_t));
        memcpy(to->groups, from->groups, from->n_groups * sizeof(uint32_t));
    }
}

struct cs_runas_cache *cs_runas_cache_new(const char *passwd_path, const char *group_path,
                                          uint64_t ttl_ms, cs_runas_resolve_fn resolve)
{
    struct cs_runas_cache *c = cs_xcalloc(1, sizeof(*c));
    CS_ASSERT(pthread_mutex_init(&c->lock, NULL) == 0);
    c->passwd_path = cs_xstrdup(passwd_path);
    c->group_path = cs_xstrdup(group_path);
    c->ttl_ns = (int64_t)ttl_ms * 1000000;
    c->resolve = resolve;
    return c;
}

void cs_runas_cache_free(struct cs_runas_cache *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        cs_runas_clear(&c->slots[i].value);
    free(c->passwd_path);
    free(c->group_path);
    (void)pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Under lock: copies a valid entry for the key into out. */
static bool cache_find(struct cs_runas_cache *c, const struct entry *probe, int64_t now,
                       struct cs_runas *out)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        const struct entry *e = &c->slots[i];
        if (key_is(e, probe->user, probe->group, probe->default_user) &&
            now - e->made_ns < c->ttl_ns && stamp_same(&e->passwd, &probe->passwd) &&
            stamp_same(&e->groupf, &probe->groupf)) {
            runas_copy(out, &e->value);
            return true;
        }
    }
    return false;
}

/* Under lock: puts probe (with a copy of value) in the key's own slot, or
 * else the oldest. */
static void cache_put(struct cs_runas_cache *c, const struct entry *probe,
                      const struct cs_runas *value)
{
    struct entry *slot = &c->slots[0];
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        struct entry *e = &c->slots[i];
        if (key_is(e, probe->user, probe->group, probe->default_user)) {
            slot = e;
            break;
        }
        if (!e->used || (slot->used && e->made_ns < slot->made_ns))
            slot = e;
    }
    cs_runas_clear(&slot->value);
    *slot = *probe;
    slot->used = true;
    runas_copy(&slot->value, value);
}

int cs_runas_cache_resolve(struct cs_runas_cache *c, const char *user, const char *group,
                           const char *default_user, struct cs_runas *out, struct cs_err *err)
{
    const char *dflt = default_user != NULL ? default_user : "";
    if (!key_fits(user, group, dflt))
        return c->resolve(user, group, default_user, out, err);

    struct entry probe = {0};
    (void)snprintf(probe.user, sizeof(probe.user), "%s", user);
    (void)snprintf(probe.group, sizeof(probe.group), "%s", group);
    (void)snprintf(probe.default_user, sizeof(probe.default_user), "%s", dflt);
    /* Stamped before the lookup: a change after it is seen next time. */
    stamp_of(c->passwd_path, &probe.passwd);
    stamp_of(c->group_path, &probe.groupf);
    probe.made_ns = cs_now_mono_ns();

    CS_ASSERT(pthread_mutex_lock(&c->lock) == 0);
    bool hit = cache_find(c, &probe, probe.made_ns, out);
    CS_ASSERT(pthread_mutex_unlock(&c->lock) == 0);
    if (hit)
        return 0;

    int rc = c->resolve(user, group, default_user, out, err);
    if (rc != 0)
        return rc; /* never kept: the next start asks again */
    CS_ASSERT(pthread_mutex_lock(&c->lock) == 0);
    cache_put(c, &probe, out);
    CS_ASSERT(pthread_mutex_unlock(&c->lock) == 0);
    return 0;
}

static struct cs_runas_cache *shared;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void shared_make(void)
{
    shared =
        cs_runas_cache_new("/etc/passwd", "/etc/group", CS_RUNAS_CACHE_TTL_MS, cs_runas_resolve);
}

struct cs_runas_cache *cs_runas_cache_shared(void)
{
    CS_ASSERT(pthread_once(&shared_once, shared_make) == 0);
    return shared;
}
