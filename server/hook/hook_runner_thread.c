/* hook_runner: command hooks' minders, started and waited for on a thread
 * of their own (see hook_runner.h). Blocking: this thread only. */
#define CS_LOG_COMPONENT "hooks"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hook_runner.h"
#include "launcher_thread.h"
#include "log.h"
#include "minder_contract.h"
#include "note.h"
#include "secret_thread.h"
#include "util.h"

struct running {
    struct cs_hook_post *post;
    int pidfd;
};

struct cs_hook_runner {
    pthread_t thread;
    pthread_mutex_t lock;
    struct cs_hook_post *head, *tail; /* submitted, guarded by lock */
    bool stopping;                    /* guarded by lock */
    int wake_fd;                      /* an eventfd: news in the queue */
    struct cs_mailbox *results;
    const char *minder_path, *hooks_dir;
    /* The thread's own: the minders running. */
    struct running running[CS_HOOK_RUNNER_MAX];
    size_t n_running;
};

/* The last cap - 1 bytes of dir/name into buf, anything but printable
 * ASCII, tab and newline read '?' (the row's text must be valid UTF-8). */
static void read_tail(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[4200];
    buf[0] = '\0';
    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    off_t from =
        fstat(fd, &st) == 0 && st.st_size > (off_t)(cap - 1) ? st.st_size - (off_t)(cap - 1) : 0;
    ssize_t n = pread(fd, buf, cap - 1, from);
    (void)close(fd);
    n = n < 0 ? 0 : n;
    for (ssize_t i = 0; i < n; i++)
        if ((buf[i] < 0x20 || buf[i] > 0x7e) && buf[i] != '\n' && buf[i] != '\t')
            buf[i] = '?';
    buf[n] = '\0';
}

static void post_back(struct cs_hook_runner *r, struct cs_hook_post *post)
{
    cs_mailbox_post(r->results, &post->mail);
}

/* How the minder's attempt ended, from its note, into post: error stays
 * empty only for a command that exited 0 (a timeout's exit 0 is not). */
static void collect(struct cs_hook_post *post, int wstatus)
{
    const char *dir = post->launch->dir;
    struct cs_note note;
    int rc = cs_note_read(dir, &note);
    read_tail(dir, CS_ATTEMPT_STDOUT_FILE, post->stdout_tail, sizeof(post->stdout_tail));
    read_tail(dir, CS_ATTEMPT_STDERR_FILE, post->stderr_tail, sizeof(post->stderr_tail));
    if (rc != 0) {
        (void)snprintf(post->error, sizeof(post->error),
                       "the minder (%.120s) ended with status %d and left no note: %s",
                       post->launch->dir, WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
                       strerror(-rc));
        return;
    }
    post->ran = note.outcome != CS_NOTE_START_FAILED && note.started_unix_ms > 0;
    post->exit_code = note.exit_code;
    post->term_signal = note.term_signal;
    switch (note.outcome) {
    case CS_NOTE_EXITED:
        if (note.exit_code != 0)
            (void)snprintf(post->error, sizeof(post->error), "the command exited %d",
                           note.exit_code);
        break;
    case CS_NOTE_SIGNALED:
        (void)snprintf(post->error, sizeof(post->error), "the command was killed by signal %d",
                       note.term_signal);
        break;
    case CS_NOTE_TIMED_OUT:
        (void)snprintf(post->error, sizeof(post->error),
                       "the command ran past the hook's timeout_ms (%u ms) and was stopped",
                       (unsigned)post->due.timeout_ms);
        break;
    case CS_NOTE_START_FAILED:
        (void)snprintf(post->error, sizeof(post->error), "the command could not start: %.200s",
                       note.message);
        break;
    default:
        (void)snprintf(post->error, sizeof(post->error), "the command ended %s: %.200s",
                       cs_note_outcome_name(note.outcome), note.message);
        break;
    }
}

static void finish(struct cs_hook_runner *r, size_t i)
{
    struct running *run = &r->running[i];
    int wstatus = 0;
    while (waitpid(run->post->launch->pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    (void)close(run->pidfd);
    collect(run->post, wstatus);
    post_back(r, run->post);
    *run = r->running[--r->n_running];
}

/* Everything a launch thread does before a minder starts (the directory,
 * the user, the secrets), then the spawn; a failure goes back at once
 * with its reason. */
static void start(struct cs_hook_runner *r, struct cs_hook_post *post)
{
    struct cs_launch *l = post->launch;
    struct cs_err err = {0};
    if (mkdir(r->hooks_dir, 0700) != 0 && errno != EEXIST) {
        (void)snprintf(post->error, sizeof(post->error), "mkdir(%s) failed: %s", r->hooks_dir,
                       strerror(errno));
        goto fail;
    }
    if (mkdir(l->dir, 0700) != 0) {
        (void)snprintf(post->error, sizeof(post->error), "mkdir(%s) failed: %s", l->dir,
                       strerror(errno));
        goto fail;
    }
    if (cs_launch_prepare_user(l, &err) != 0) {
        (void)snprintf(post->error, sizeof(post->error), "%s", err.msg);
        goto fail;
    }
    if (cs_secrets_resolve(&l->envp, l->secrets, l->n_secrets, l->server_env, post->error,
                           sizeof(post->error)) != 0)
        goto fail;
    int rc = cs_launch_spawn_minder(r->minder_path, l, -1);
    if (rc != 0) {
        (void)snprintf(post->error, sizeof(post->error), "starting %s failed: %s", r->minder_path,
                       strerror(-rc));
        goto fail;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, l->pid, 0);
    if (pidfd < 0) {
        /* Out of fds, or a kernel without pidfds: wait for this one here. */
        int wstatus = 0;
        while (waitpid(l->pid, &wstatus, 0) < 0 && errno == EINTR)
            ;
        collect(post, wstatus);
        post_back(r, post);
        return;
    }
    r->running[r->n_running++] = (struct running){post, pidfd};
    return;

fail:
    cs_log_warn("hook %s of job %s: delivery %lld not run: %s", post->due.hook_name,
                post->due.job_name, (long long)post->due.id, post->error);
    post_back(r, post);
}

/* Takes what was submitted, as many as there is room for. */
static struct cs_hook_post *take(struct cs_hook_runner *r, bool *stopping)
{
    CS_ASSERT(pthread_mutex_lock(&r->lock) == 0);
    struct cs_hook_post *posts = NULL, **end = &posts;
    for (size_t room = CS_HOOK_RUNNER_MAX - r->n_running; room > 0 && r->head != NULL; room--) {
        *end = r->head;
        r->head = r->head->next;
        end = &(*end)->next;
    }
    *end = NULL;
    if (r->head == NULL)
        r->tail = NULL;
    *stopping = r->stopping;
    CS_ASSERT(pthread_mutex_unlock(&r->lock) == 0);
    return posts;
}

static void *runner_main(void *arg)
{
    struct cs_hook_runner *r = arg;
    struct pollfd fds[CS_HOOK_RUNNER_MAX + 1];
    bool stopping = false;

    for (;;) {
        struct cs_hook_post *posts = take(r, &stopping);
        while (posts != NULL) {
            struct cs_hook_post *next = posts->next;
            if (stopping)
                cs_hook_post_free(posts);
            else
                start(r, posts);
            posts = next;
        }
        if (stopping)
            break;
        fds[0] = (struct pollfd){.fd = r->wake_fd, .events = POLLIN};
        for (size_t i = 0; i < r->n_running; i++)
            fds[i + 1] = (struct pollfd){.fd = r->running[i].pidfd, .events = POLLIN};
        if (poll(fds, r->n_running + 1, -1) < 0)
            continue; /* EINTR */
        uint64_t count;
        if ((fds[0].revents & POLLIN) != 0)
            (void)!read(r->wake_fd, &count, sizeof(count));
        /* From the end, as finish() moves the last into the place it frees. */
        for (size_t i = r->n_running; i-- > 0;)
            if (fds[i + 1].revents != 0)
                finish(r, i);
    }
    /* The minders still running go on; their deliveries stay pending. */
    for (size_t i = 0; i < r->n_running; i++) {
        (void)close(r->running[i].pidfd);
        cs_hook_post_free(r->running[i].post);
    }
    r->n_running = 0;
    return NULL;
}

int cs_hook_runner_start(struct cs_hook_runner **out, struct cs_mailbox *results,
                         const char *minder_path, const char *hooks_dir)
{
    struct cs_hook_runner *r = cs_xcalloc(1, sizeof(*r));
    r->results = results;
    r->minder_path = minder_path;
    r->hooks_dir = hooks_dir;
    r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (r->wake_fd < 0) {
        int err = errno;
        cs_log_error("eventfd(hook runner) failed: %s", strerror(err));
        free(r);
        return -err;
    }
    CS_ASSERT(pthread_mutex_init(&r->lock, NULL) == 0);
    int rc = pthread_create(&r->thread, NULL, runner_main, r);
    if (rc != 0) {
        cs_log_error("pthread_create(hook runner) failed: %s", strerror(rc));
        (void)close(r->wake_fd);
        CS_ASSERT(pthread_mutex_destroy(&r->lock) == 0);
        free(r);
        return -rc;
    }
    *out = r;
    return 0;
}

static void wake(struct cs_hook_runner *r)
{
    uint64_t one = 1;
    (void)!write(r->wake_fd, &one, sizeof(one));
}

void cs_hook_runner_submit(struct cs_hook_runner *r, struct cs_hook_post *post)
{
    post->next = NULL;
    CS_ASSERT(pthread_mutex_lock(&r->lock) == 0);
    if (r->tail != NULL)
        r->tail->next = post;
    else
        r->head = post;
    r->tail = post;
    CS_ASSERT(pthread_mutex_unlock(&r->lock) == 0);
    wake(r);
}

void cs_hook_runner_stop(struct cs_hook_runner *r)
{
    if (r == NULL)
        return;
    CS_ASSERT(pthread_mutex_lock(&r->lock) == 0);
    r->stopping = true;
    CS_ASSERT(pthread_mutex_unlock(&r->lock) == 0);
    wake(r);
    CS_ASSERT(pthread_join(r->thread, NULL) == 0);
    for (struct cs_hook_post *p = r->head, *next; p != NULL; p = next) {
        next = p->next;
        cs_hook_post_free(p);
    }
    (void)close(r->wake_fd);
    CS_ASSERT(pthread_mutex_destroy(&r->lock) == 0);
    free(r);
}
