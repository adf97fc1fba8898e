/* Counting a server's live csched-minder children from /proc.
 *
 * The children of each of the server's threads are listed in
 * /proc/<pid>/task/<tid>/children (the launch thread is the minders' parent
 * thread); each child's /proc/<pid>/stat gives its name, state and parent. A
 * counter keeps all these files open and re-reads them with pread, so that a
 * sample every 2 ms costs a few syscalls per process and takes little CPU
 * from the server it watches.
 *
 * A sweep is not atomic: between reading one launch thread's children and
 * another's, a minder may exit and the next one start, and a plain sweep
 * would count both. So each minder found live is read again once the sweep
 * is over, and only those still live count: each was then alive from its
 * first read to its second, and every first read came before every second,
 * so all of them were alive at one instant. A count never exceeds what
 * really ran at once; it may miss a minder that ended during the sweep. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib_int.h"

enum {
    MAX_TASKS = 256,
    MAX_KIDS = 4096,
    /* Threads come and go rarely; look for new ones every this many counts. */
    RESCAN_EVERY = 64,
};

struct kid {
    pid_t pid;
    int fd; /* /proc/<pid>/stat */
    bool seen;
    bool live; /* at its first read of this sweep */
};

struct cs_test_minder_counter {
    pid_t server;
    bool scan_all; /* the kernel has no children files */
    int task_fds[MAX_TASKS];
    size_t n_tasks;
    unsigned counts_since_rescan;
    struct kid kids[MAX_KIDS];
    size_t n_kids;
    char buf[65536];
};

/* parse_live_minder says whether a stat line is a csched-minder child of
 * parent that has not exited yet (a zombie does no work). */
static bool parse_live_minder(char *stat, pid_t parent)
{
    char *open_paren = strchr(stat, '(');
    char *close_paren = strrchr(stat, ')');
    char state;
    int ppid;

    if (open_paren == NULL || close_paren == NULL || close_paren < open_paren)
        return false;
    *close_paren = '\0';
    if (strcmp(open_paren + 1, "csched-minder") != 0)
        return false;
    if (sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2)
        return false;
    return ppid == parent && state != 'Z' && state != 'X';
}

static int open_stat(pid_t pid)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    return open(path, O_RDONLY | O_CLOEXEC);
}

/* read_live_minder reads a stat file, from the start. */
static bool read_live_minder(int fd, pid_t parent)
{
    char buf[512];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

    if (n <= 0)
        return false;
    buf[n] = '\0';
    return parse_live_minder(buf, parent);
}

static void close_tasks(struct cs_test_minder_counter *c)
{
    for (size_t i = 0; i < c->n_tasks; i++)
        close(c->task_fds[i]);
    c->n_tasks = 0;
}

/* rescan_tasks opens the children file of every thread of the server. */
static void rescan_tasks(struct cs_test_minder_counter *c)
{
    char path[320];
    struct dirent *de;
    DIR *tasks;

    close_tasks(c);
    c->counts_since_rescan = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)c->server);
    tasks = opendir(path);
    if (tasks == NULL)
        return;
    while ((de = readdir(tasks)) != NULL && c->n_tasks < MAX_TASKS) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)c->server, de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            c->task_fds[c->n_tasks++] = fd;
    }
    closedir(tasks);
}

static struct kid *kid_get(struct cs_test_minder_counter *c, pid_t pid)
{
    for (size_t i = 0; i < c->n_kids; i++) {
        if (c->kids[i].pid == pid)
            return &c->kids[i];
    }
    if (c->n_kids == MAX_KIDS)
        return NULL;
    int fd = open_stat(pid);
    if (fd < 0)
        return NULL;
    c->kids[c->n_kids] = (struct kid){.pid = pid, .fd = fd};
    return &c->kids[c->n_kids++];
}

/* mark_listed marks the pids of one children file seen, and the live
 * minders among them live. */
static void mark_listed(struct cs_test_minder_counter *c, char *list)
{
    char *save = NULL;

    for (char *tok = strtok_r(list, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
        struct kid *k = kid_get(c, (pid_t)atoi(tok));
        if (k == NULL)
            continue;
        k->seen = true;
        k->live = read_live_minder(k->fd, c->server);
    }
}

/* still_live reads again the minders the sweep found live: those still
 * live were all alive at once. */
static int still_live(struct cs_test_minder_counter *c)
{
    int count = 0;

    for (size_t i = 0; i < c->n_kids; i++)
        count += c->kids[i].live && read_live_minder(c->kids[i].fd, c->server);
    return count;
}

/* forget_unseen closes the stat files of children that have gone. */
static void forget_unseen(struct cs_test_minder_counter *c)
{
    size_t kept = 0;

    for (size_t i = 0; i < c->n_kids; i++) {
        if (c->kids[i].seen) {
            c->kids[i].seen = false;
            c->kids[kept++] = c->kids[i];
        } else {
            close(c->kids[i].fd);
        }
    }
    c->n_kids = kept;
}

/* What scan_cb finds: the stat files of the live minders of server. */
struct scan {
    pid_t server;
    int fds[MAX_KIDS];
    size_t n;
};

static void scan_cb(pid_t pid, void *arg)
{
    struct scan *s = arg;
    int fd = open_stat(pid);

    if (fd < 0)
        return;
    if (s->n < MAX_KIDS && read_live_minder(fd, s->server))
        s->fds[s->n++] = fd;
    else
        close(fd);
}

/* count_by_scan walks every process in /proc (no children files), then
 * reads the live ones again. */
static int count_by_scan(pid_t server)
{
    struct scan *s = calloc(1, sizeof(*s));
    int count = 0;

    if (s == NULL)
        return -ENOMEM;
    s->server = server;
    int rc = cs_test__each_process(scan_cb, s);
    for (size_t i = 0; i < s->n; i++) {
        count += read_live_minder(s->fds[i], server);
        close(s->fds[i]);
    }
    free(s);
    return rc != 0 ? rc : count;
}

int cs_test_minder_counter_new(pid_t server_pid, struct cs_test_minder_counter **out)
{
    struct cs_test_minder_counter *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return -ENOMEM;
    c->server = server_pid;
    /* The children files need CONFIG_PROC_CHILDREN. */
    c->scan_all = access("/proc/thread-self/children", R_OK) != 0;
    *out = c;
    return 0;
}

int cs_test_minder_counter_count(struct cs_test_minder_counter *c)
{

    if (c->server <= 0)
        return 0;
    if (c->scan_all)
        return count_by_scan(c->server);
    if (c->n_tasks == 0 || ++c->counts_since_rescan >= RESCAN_EVERY)
        rescan_tasks(c);
    for (size_t i = 0; i < c->n_tasks; i++) {
        ssize_t n = pread(c->task_fds[i], c->buf, sizeof(c->buf) - 1, 0);
        if (n <= 0)
            continue;
        c->buf[n] = '\0';
        mark_listed(c, c->buf);
    }
    forget_unseen(c);
    return still_live(c);
}

void cs_test_minder_counter_free(struct cs_test_minder_counter *c)
{
    if (c == NULL)
        return;
    close_tasks(c);
    for (size_t i = 0; i < c->n_kids; i++)
        close(c->kids[i].fd);
    free(c);
}

int cs_test_count_minders(pid_t server_pid)
{
    struct cs_test_minder_counter *c;
    int rc = cs_test_minder_counter_new(server_pid, &c);

    if (rc != 0)
        return rc;
    rc = cs_test_minder_counter_count(c);
    cs_test_minder_counter_free(c);
    return rc;
}
