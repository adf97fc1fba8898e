/* ahead_minder: the table of minders started ahead and what the launch
 * threads do with them (see ahead_minder.h). A chained hash by directory;
 * an entry is unlinked under the lock and then used or sent away outside
 * it, so no thread waits on another's spawn or reap. */
#define CS_LOG_COMPONENT "launch"
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ahead_minder.h"
#include "launcher_thread.h"
#include "log.h"
#include "minder_contract.h"
#include "util.h"

struct cs_ahead_minder {
    struct cs_ahead_minder *next; /* in its bucket */
    struct cs_launch *launch;     /* as started: -w in its argv, its user set, its pid */
    int go_fd;                    /* our end of the minder's socket */
    int64_t expires_mono_ms;
    bool armed;  /* handed its release gate: it goes when that opens */
    bool killed; /* taken back, or started otherwise: reaped at its expiry */
};

void cs_ahead_minders_init(struct cs_ahead_minders *t)
{
    memset(t, 0, sizeof(*t));
    CS_ASSERT(pthread_mutex_init(&t->lock, NULL) == 0);
    /* A quarter of the fds at most, so connections and starts keep theirs. */
    struct rlimit nofile;
    t->max = CS_AHEAD_MINDER_MAX;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur / 4 < t->max)
        t->max = (size_t)(nofile.rlim_cur / 4);
}

static struct cs_ahead_minder **bucket_of(struct cs_ahead_minders *t, const char *dir)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)dir; *p != '\0'; p++)
        h = (h ^ *p) * 16777619u;
    return &t->buckets[h % CS_AHEAD_MINDER_BUCKETS];
}

/* Where the entry of dir is linked (*at is NULL if none). The lock is held. */
static struct cs_ahead_minder **link_of(struct cs_ahead_minders *t, const char *dir)
{
    struct cs_ahead_minder **p = bucket_of(t, dir);
    while (*p != NULL && strcmp((*p)->launch->dir, dir) != 0)
        p = &(*p)->next;
    return p;
}

/* Unlinks and returns the entry of dir, or NULL. The lock is held. */
static struct cs_ahead_minder *unlink_dir(struct cs_ahead_minders *t, const char *dir)
{
    struct cs_ahead_minder **p = link_of(t, dir), *e = *p;
    if (e != NULL) {
        *p = e->next;
        t->n--;
    }
    return e;
}

/* Closes the socket and kills the minder, which has done nothing, then
 * reaps it. The KILL (our unreaped child: its pid is its own) makes the
 * reap prompt even for a minder someone stopped, which would never read
 * the end of file. */
static void send_away(struct cs_ahead_minder *e)
{
    int wstatus;
    (void)close(e->go_fd); /* a socket: nothing to lose */
    (void)kill(e->launch->pid, SIGKILL);
    while (waitpid(e->launch->pid, &wstatus, 0) < 0 && errno == EINTR)
        continue;
    cs_launch_free(e->launch);
    free(e);
}

static bool same_strings(char *const *a, char *const *b)
{
    for (; *a != NULL && *b != NULL; a++, b++)
        if (strcmp(*a, *b) != 0)
            return false;
    return *a == NULL && *b == NULL;
}

/* Whether the minder started as ahead would be started as now: the same
 * program, the same arguments but for -w, the same environment. */
static bool same_start(const struct cs_launch *ahead, const struct cs_launch *now)
{
    return now->n_secrets == 0 && strcmp(ahead->argv[0], now->argv[0]) == 0 &&
           same_strings(ahead->argv + 1 + CS_MINDER_WAIT_ARGS, now->argv + 1) &&
           same_strings(ahead->envp, now->envp);
}

/* Counts one more minder waiting, unless the table is full. */
static bool take_place(struct cs_ahead_minders *t)
{
    pthread_mutex_lock(&t->lock);
    bool room = t->n < t->max;
    t->n += room;
    pthread_mutex_unlock(&t->lock);
    return room;
}

static void give_place(struct cs_ahead_minders *t)
{
    pthread_mutex_lock(&t->lock);
    t->n--;
    pthread_mutex_unlock(&t->lock);
}

/* Puts e in, its place taken; an entry of the same directory (none should
 * be) is returned to be sent away. The lock is held. */
static struct cs_ahead_minder *insert(struct cs_ahead_minders *t, struct cs_ahead_minder *e)
{
    struct cs_ahead_minder *old = unlink_dir(t, e->launch->dir);
    struct cs_ahead_minder **b = bucket_of(t, e->launch->dir);
    e->next = *b;
    *b = e;
    return old;
}

int64_t cs_ahead_minder_start(struct cs_ahead_minders *t, const char *minder_path,
                              struct cs_launch *launch)
{
    int64_t now_ms = cs_now_unix_ms();
    struct cs_err err;
    int sv[2];
    /* Secrets are read at the start itself, never seconds before it. */
    if (launch->n_secrets > 0 || launch->due_unix_ms <= now_ms || !take_place(t))
        goto out_free;
    if (cs_launch_prepare_user(launch, &err) != 0)
        goto out_give; /* its start, spawning one, tells why */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        goto out_give;
    /* Out of memory: the server aborts, as cs_xmalloc does. */
    CS_ASSERT(cs_minder_argv_add_wait(&launch->argv, CS_LAUNCH_WAIT_FD) == 0);
    int rc = cs_launch_spawn_minder(minder_path, launch, sv[1]);
    (void)close(sv[1]); /* the minder's end, now its own */
    if (rc != 0)
        goto out_close;
    struct cs_ahead_minder *e = cs_xcalloc(1, sizeof(*e));
    e->launch = launch;
    e->go_fd = sv[0];
    e->expires_mono_ms =
        cs_now_mono_ns() / 1000000 + (launch->due_unix_ms - now_ms) + CS_AHEAD_MINDER_LINGER_MS;
    pthread_mutex_lock(&t->lock);
    struct cs_ahead_minder *old = insert(t, e);
    t->n_sent_away += old != NULL;
    pthread_mutex_unlock(&t->lock);
    if (old != NULL)
        send_away(old);
    return e->expires_mono_ms;

out_close:
    (void)close(sv[0]);
out_give:
    give_place(t);
out_free:
    cs_launch_free(launch);
    return 0;
}

/* Kills a minder that is not to go, leaving the reap to its expiry, so
 * that the caller waits for nothing. The lock is held. */
static void kill_waiting(struct cs_ahead_minders *t, struct cs_ahead_minder *e)
{
    (void)kill(e->launch->pid, SIGKILL); /* our unreaped child: its pid is its own */
    e->killed = true;
    t->n_sent_away++;
}

/* Hands the minder its gate with the byte that arms it. */
static bool send_gate(int go_fd, int gate_fd)
{
    struct cs_minder_word w;
    cs_minder_word_init(&w, CS_MINDER_ARM, gate_fd);
    return sendmsg(go_fd, &w.msg, MSG_NOSIGNAL | MSG_DONTWAIT) == 1;
}

bool cs_ahead_minder_arm(struct cs_ahead_minders *t, const struct cs_launch *launch, int gate_fd)
{
    pthread_mutex_lock(&t->lock);
    struct cs_ahead_minder *e = *link_of(t, launch->dir);
    bool armed = false;
    if (e != NULL && !e->killed && !e->armed) {
        armed = same_start(e->launch, launch) && send_gate(e->go_fd, gate_fd);
        if (!armed)
            kill_waiting(t, e); /* a new one is spawned at the due time */
        e->armed = armed;
    }
    pthread_mutex_unlock(&t->lock);
    return armed;
}

void cs_ahead_minder_take_back(struct cs_ahead_minders *t, const char *dir)
{
    pthread_mutex_lock(&t->lock);
    struct cs_ahead_minder *e = *link_of(t, dir);
    if (e != NULL && !e->killed)
        kill_waiting(t, e);
    pthread_mutex_unlock(&t->lock);
}

int cs_ahead_minder_go(struct cs_ahead_minders *t, struct cs_launch *launch)
{
    pthread_mutex_lock(&t->lock);
    struct cs_ahead_minder *e = unlink_dir(t, launch->dir);
    pthread_mutex_unlock(&t->lock);
    if (e == NULL)
        return -ENOENT;
    if (e->killed) {
        send_away(e); /* reaped now; counted when killed */
        return -ENOENT;
    }
    const char go = CS_MINDER_GO;
    /* An armed one went when its gate opened, before this call. A minder
     * that died waiting closed its end: EPIPE, and one is spawned. */
    bool went =
        e->armed || (same_start(e->launch, launch) && send(e->go_fd, &go, 1, MSG_NOSIGNAL) == 1);
    pthread_mutex_lock(&t->lock);
    t->n_went += went;
    t->n_sent_away += !went;
    pthread_mutex_unlock(&t->lock);
    if (!went) {
        send_away(e);
        return -ENOENT;
    }
    launch->pid = e->launch->pid;
    (void)close(e->go_fd); /* the byte is the minder's already */
    cs_launch_free(e->launch);
    free(e);
    return 0;
}

/* Sends away the minders past their time; with even_armed (at the end),
 * the armed ones too. */
static int64_t expire(struct cs_ahead_minders *t, int64_t now_mono_ms, bool even_armed)
{
    struct cs_ahead_minder *gone = NULL;
    int64_t next_ms = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < CS_AHEAD_MINDER_BUCKETS && t->n > 0; i++) {
        for (struct cs_ahead_minder **p = &t->buckets[i]; *p != NULL;) {
            struct cs_ahead_minder *e = *p;
            /* An armed one belongs to its held launch, which takes it: once
             * its gate opens, it runs the command. */
            if (e->armed && !e->killed && !even_armed) {
                p = &e->next;
                continue;
            }
            if (e->expires_mono_ms > now_mono_ms) {
                if (next_ms == 0 || e->expires_mono_ms < next_ms)
                    next_ms = e->expires_mono_ms;
                p = &e->next;
                continue;
            }
            *p = e->next;
            t->n--;
            t->n_sent_away += !e->killed;
            e->next = gone;
            gone = e;
        }
    }
    pthread_mutex_unlock(&t->lock);
    while (gone != NULL) {
        struct cs_ahead_minder *e = gone;
        gone = e->next;
        send_away(e);
    }
    return next_ms;
}

int64_t cs_ahead_minders_expire(struct cs_ahead_minders *t, int64_t now_mono_ms)
{
    return expire(t, now_mono_ms, false);
}

void cs_ahead_minders_free(struct cs_ahead_minders *t)
{
    (void)expire(t, INT64_MAX, true);
    if (t->n_went + t->n_sent_away > 0)
        cs_log_info("minders started ahead: %llu went, %llu sent away",
                    (unsigned long long)t->n_went, (unsigned long long)t->n_sent_away);
    pthread_mutex_destroy(&t->lock);
}
