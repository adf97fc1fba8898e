/* local_peers: a growable array of connection identities under a mutex. */
#include "local_peers.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

void cs_local_peers_init(struct cs_local_peers *t)
{
    memset(t, 0, sizeof(*t));
    CS_ASSERT(uv_mutex_init(&t->lock) == 0);
}

void cs_local_peers_free(struct cs_local_peers *t)
{
    free(t->peers);
    t->peers = NULL;
    t->n_peers = 0;
    uv_mutex_destroy(&t->lock);
}

void cs_local_peers_record(struct cs_local_peers *t, int fd, const struct cs_local_peer *peer)
{
    CS_ASSERT(fd >= 0);
    uv_mutex_lock(&t->lock);
    if ((size_t)fd >= t->n_peers) {
        size_t n = t->n_peers == 0 ? 64 : t->n_peers;
        while (n <= (size_t)fd)
            n *= 2;
        t->peers = cs_xrealloc(t->peers, n * sizeof(*t->peers));
        memset(t->peers + t->n_peers, 0, (n - t->n_peers) * sizeof(*t->peers));
        t->n_peers = n;
    }
    t->peers[fd] = *peer;
    t->peers[fd].used = true;
    uv_mutex_unlock(&t->lock);
}

bool cs_local_peers_lookup(struct cs_local_peers *t, int fd, struct cs_local_peer *peer)
{
    bool found = false;
    uv_mutex_lock(&t->lock);
    if (fd >= 0 && (size_t)fd < t->n_peers && t->peers[fd].used) {
        *peer = t->peers[fd];
        found = true;
    }
    uv_mutex_unlock(&t->lock);
    return found;
}

size_t cs_local_peers_count_open(struct cs_local_peers *t, uid_t uid)
{
    size_t n = 0;
    uv_mutex_lock(&t->lock);
    for (size_t fd = 0; fd < t->n_peers; fd++) {
        const struct cs_local_peer *p = &t->peers[fd];
        struct stat st;
        /* A connection gRPC has closed leaves its entry behind: its fd is
         * closed, or reused by something that is not this socket. */
        if (p->used && p->uid == uid && fstat((int)fd, &st) == 0 && st.st_ino == p->ino &&
            st.st_dev == p->dev)
            n++;
    }
    uv_mutex_unlock(&t->lock);
    return n;
}
