/* A real cschedd for tests: started from the build's bin/ on a unix socket in
 * its own temp dir, with its own temp state dir (or another daemon's), waited
 * for through --ready-file and the health service, stopped with SIGTERM (or
 * killed like a crash), restarted on the same state dir, database and
 * socket; or started to be refused, and its log kept. */
#include <csched/client.h>
#include <csched/health.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib_int.h"

#ifndef CSCHED_BIN_DIR
#error "CSCHED_BIN_DIR must name the directory holding cschedd"
#endif

enum {
    START_TIMEOUT_MS = 120000,
    STOP_TIMEOUT_MS = 30000,
    MAX_EXTRA_ARGS = 32,
    LOG_TAIL_BYTES = 8192,
};

struct cs_testd {
    char root[64];
    char state_dir[256];
    char ready_path[96];
    char log_path[96];
    char socket_path[96];
    char target[128]; /* "unix:" and the socket's path, or HOST:PORT */
    pid_t pid;
    char *database_url;
    char *bin_dir; /* NULL: cs_test_bin_dir() */
    unsigned max_running;
    char *extra_args[MAX_EXTRA_ARGS + 1];
    const struct cs_client_opts *client;
    int stall_fd; /* the FIFO's unread end (stalled_stderr), or -1 */
    bool no_wait;
    int last_status; /* how the last cschedd ended, once reaped */
};

const char *cs_test_bin_dir(void)
{
    const char *v = getenv("CSCHED_BIN_DIR");
    return v != NULL && v[0] != '\0' ? v : CSCHED_BIN_DIR;
}

/* read_ready reads the ready file into d->target; returns true once it
 * holds a non-empty address. */
static bool read_ready(struct cs_testd *d)
{
    char buf[sizeof(d->target)];
    size_t n;
    FILE *f = fopen(d->ready_path, "r");

    if (f == NULL)
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        n--;
    buf[n] = '\0';
    if (n == 0)
        return false;
    memcpy(d->target, buf, n + 1);
    return true;
}

/* is_serving asks the health service once. */
static bool is_serving(const struct cs_testd *d)
{
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    Grpc__Health__V1__HealthCheckResponse *resp = NULL;
    struct cs_call_opts opts = {.timeout_ms = 2000, .wait_for_ready = true};
    struct cs_client *client = NULL;
    bool serving = false;

    if (cs_client_new_opts(d->target, d->client, &client) != 0)
        return false;
    if (cs_health_check(client, &req, &resp, &opts, NULL) == 0) {
        serving = resp->status == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
        grpc__health__v1__health_check_response__free_unpacked(resp, NULL);
    }
    cs_client_free(client);
    return serving;
}

int cs_testd_reap(struct cs_testd *d)
{
    int wstatus;

    if (d->pid > 0 && cs_test__wait(d->pid, 0, &wstatus) == 0) {
        d->pid = 0;
        d->last_status = cs_test__exit_code(wstatus);
    }
    return d->pid > 0 ? -EBUSY : d->last_status;
}

/* wait_started polls for the ready file, then for SERVING, while watching
 * that the daemon is still alive. */
static int wait_started(struct cs_testd *d, int64_t timeout_ms)
{
    int64_t deadline = cs_test_now_ms() + timeout_ms;
    bool ready = false;

    while (cs_test_now_ms() < deadline) {
        if (cs_testd_reap(d) != -EBUSY) {
            fprintf(stderr, "testlib: cschedd exited during start-up with status %d\n",
                    d->last_status);
            return -ECHILD;
        }
        if (!ready)
            ready = read_ready(d);
        if (ready && is_serving(d))
            return 0;
        cs_test_sleep_ms(10);
    }
    fprintf(stderr, "testlib: cschedd not serving after %lld ms\n", (long long)timeout_ms);
    return -ETIMEDOUT;
}

int cs_testd_wait_ready(struct cs_testd *d, int64_t timeout_ms)
{
    int rc = wait_started(d, timeout_ms);

    if (rc == -ECHILD)
        cs_test__print_tail("cschedd log", d->log_path, LOG_TAIL_BYTES);
    return rc;
}

/* spawn_daemon starts cschedd on its socket. */
static int spawn_daemon(struct cs_testd *d)
{
    char path[PATH_MAX], max_running[16];
    const char *argv[16 + MAX_EXTRA_ARGS];
    size_t n = 0;

    snprintf(path, sizeof(path), "%s/cschedd", d->bin_dir != NULL ? d->bin_dir : cs_test_bin_dir());
    argv[n++] = path;
    argv[n++] = "--socket";
    argv[n++] = d->socket_path;
    argv[n++] = "--state-dir";
    argv[n++] = d->state_dir;
    argv[n++] = "--ready-file";
    argv[n++] = d->ready_path;
    if (d->database_url != NULL) {
        argv[n++] = "--database-url";
        argv[n++] = d->database_url;
    }
    if (d->max_running > 0) {
        snprintf(max_running, sizeof(max_running), "%u", d->max_running);
        argv[n++] = "--max-running";
        argv[n++] = max_running;
    }
    for (size_t i = 0; d->extra_args[i] != NULL; i++)
        argv[n++] = d->extra_args[i];
    argv[n] = NULL;

    struct cs_test__spawn s = {
        .argv = argv,
        .log_path = d->log_path,
        .pdeath_signal = SIGTERM,
        .new_session = true,
    };
    return cs_test__spawn(&s, &d->pid);
}

/* launch starts the daemon and waits for it (unless no_wait); on failure
 * the daemon is gone and its log printed. */
static int launch(struct cs_testd *d)
{
    int rc;

    unlink(d->ready_path);
    rc = spawn_daemon(d);
    if (rc != 0 || d->no_wait)
        return rc;
    rc = wait_started(d, START_TIMEOUT_MS);
    if (rc != 0) {
        if (d->pid > 0) {
            int wstatus;
            kill(d->pid, SIGKILL);
            cs_test__wait(d->pid, STOP_TIMEOUT_MS, &wstatus);
            d->pid = 0;
        }
        cs_test__print_tail("cschedd log", d->log_path, LOG_TAIL_BYTES);
    }
    return rc;
}

static void testd_free(struct cs_testd *d)
{
    if (d->stall_fd >= 0)
        close(d->stall_fd);
    free(d->database_url);
    free(d->bin_dir);
    for (size_t i = 0; d->extra_args[i] != NULL; i++)
        free(d->extra_args[i]);
    free(d);
}

/* testd_new makes the handle and its directories; opts NULL = defaults. */
static int testd_new(const struct cs_testd_options *opts, struct cs_testd **out)
{
    static const struct cs_testd_options defaults = {0};
    struct cs_testd *d = calloc(1, sizeof(*d));
    size_t n = 0;
    int rc = -ENOMEM;

    if (d == NULL)
        return -ENOMEM;
    d->stall_fd = -1;
    if (opts == NULL)
        opts = &defaults;
    if (opts->database_url != NULL && (d->database_url = strdup(opts->database_url)) == NULL)
        goto err_free;
    if ((rc = cs_testd_set_bin_dir(d, opts->bin_dir)) != 0)
        goto err_free;
    d->max_running = opts->max_running;
    d->client = opts->client;
    d->no_wait = opts->no_wait;
    d->last_status = 128 + SIGKILL;
    for (; opts->extra_args != NULL && opts->extra_args[n] != NULL; n++) {
        rc = n == MAX_EXTRA_ARGS ? -E2BIG : -ENOMEM;
        if (n == MAX_EXTRA_ARGS || (d->extra_args[n] = strdup(opts->extra_args[n])) == NULL)
            goto err_free;
    }
    if ((rc = cs_test_mkdtemp(d->root, sizeof(d->root), "cs-testd")) != 0)
        goto err_free;
    /* The state dir may hold an embedded cluster run as another user. */
    chmod(d->root, 0755);
    snprintf(d->ready_path, sizeof(d->ready_path), "%s/ready", d->root);
    snprintf(d->log_path, sizeof(d->log_path), "%s/cschedd.log", d->root);
    snprintf(d->socket_path, sizeof(d->socket_path), "%s/csched.sock", d->root);
    /* What the ready file will say, known before it is written. */
    snprintf(d->target, sizeof(d->target), "unix:%s", d->socket_path);
    /* With a reader open, the daemon's open for writing does not wait. */
    if (opts->stalled_stderr &&
        (mkfifo(d->log_path, 0600) != 0 ||
         (d->stall_fd = open(d->log_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)) {
        rc = -errno;
        goto err_rmdir;
    }
    if (opts->state_dir != NULL) {
        snprintf(d->state_dir, sizeof(d->state_dir), "%s", opts->state_dir);
    } else {
        snprintf(d->state_dir, sizeof(d->state_dir), "%s/state", d->root);
        if (mkdir(d->state_dir, 0755) != 0) {
            rc = -errno;
            goto err_rmdir;
        }
    }
    *out = d;
    return 0;

err_rmdir:
    cs_test_rmtree(d->root);
err_free:
    testd_free(d);
    return rc;
}

int cs_testd_start(const struct cs_testd_options *opts, struct cs_testd **out)
{
    struct cs_testd *d = NULL;
    int rc = testd_new(opts, &d);

    if (rc != 0)
        return rc;
    cs_test__register_testd(d);
    rc = launch(d);
    if (rc != 0) {
        cs_test__unregister_testd(d);
        cs_test_rmtree(d->root);
        testd_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

const char *cs_testd_target(const struct cs_testd *d)
{
    return d->target;
}

pid_t cs_testd_pid(const struct cs_testd *d)
{
    return d->pid;
}

const char *cs_testd_state_dir(const struct cs_testd *d)
{
    return d->state_dir;
}

const char *cs_testd_log_path(const struct cs_testd *d)
{
    return d->log_path;
}

/* terminate sends SIGTERM and waits; returns the exit status as
 * cs_testd_stop documents. */
static int terminate(struct cs_testd *d)
{
    int wstatus;
    int rc;

    if (d->pid <= 0)
        return d->last_status;
    kill(d->pid, SIGTERM);
    rc = cs_test__wait(d->pid, STOP_TIMEOUT_MS, &wstatus);
    if (rc == -ETIMEDOUT) {
        fprintf(stderr, "testlib: cschedd %d ignored SIGTERM for %d ms; killing it\n", (int)d->pid,
                STOP_TIMEOUT_MS);
        kill(d->pid, SIGKILL);
        cs_test__wait(d->pid, STOP_TIMEOUT_MS, &wstatus);
    } else if (rc == 0) {
        rc = cs_test__exit_code(wstatus);
    }
    d->pid = 0;
    if (rc != 0) {
        fprintf(stderr, "testlib: cschedd did not exit cleanly (status %d)\n", rc);
        cs_test__print_tail("cschedd log", d->log_path, LOG_TAIL_BYTES);
    }
    return rc;
}

int cs_testd_stop(struct cs_testd *d)
{
    int rc;

    if (d == NULL)
        return 0;
    cs_test__unregister_testd(d);
    rc = terminate(d);
    cs_test_discard_dir("cschedd", d->root);
    testd_free(d);
    return rc;
}

/* read_log copies the end of the daemon's log into buf (cap bytes). */
static void read_log(const struct cs_testd *d, char *buf, size_t cap)
{
    FILE *f = d->stall_fd < 0 ? fopen(d->log_path, "r") : NULL;
    size_t n = 0;

    if (f != NULL) {
        if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)cap - 1)
            fseek(f, -((long)cap - 1), SEEK_END);
        else
            rewind(f);
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
}

/* wait_refused waits for the daemon to exit during start-up and returns its
 * exit status, or 0 once it serves, or -ETIMEDOUT. */
static int wait_refused(struct cs_testd *d)
{
    int64_t deadline = cs_test_now_ms() + START_TIMEOUT_MS;
    int wstatus;

    while (cs_test_now_ms() < deadline) {
        if (cs_test__wait(d->pid, 0, &wstatus) == 0) {
            d->pid = 0;
            return cs_test__exit_code(wstatus);
        }
        if (read_ready(d) && is_serving(d))
            return 0;
        cs_test_sleep_ms(10);
    }
    return -ETIMEDOUT;
}

int cs_testd_start_refused(const struct cs_testd_options *opts, char *log, size_t cap)
{
    struct cs_testd *d = NULL;
    int rc = testd_new(opts, &d);

    if (rc != 0)
        return rc;
    unlink(d->ready_path);
    cs_test__register_testd(d);
    rc = spawn_daemon(d);
    if (rc == 0)
        rc = wait_refused(d);
    if (rc == 0)
        fprintf(stderr, "testlib: cschedd started where it should have been refused\n");
    if (d->pid > 0)
        (void)terminate(d);
    read_log(d, log, cap);
    cs_test__unregister_testd(d);
    cs_test_discard_dir("cschedd", d->root);
    testd_free(d);
    return rc;
}

int cs_testd_kill(struct cs_testd *d)
{
    int wstatus;
    int rc;

    if (d->pid <= 0)
        return -ESRCH;
    if (kill(d->pid, SIGKILL) != 0)
        return -errno;
    rc = cs_test__wait(d->pid, STOP_TIMEOUT_MS, &wstatus);
    d->pid = 0;
    d->last_status = 128 + SIGKILL;
    return rc;
}

int cs_testd_set_bin_dir(struct cs_testd *d, const char *bin_dir)
{
    char *copy = NULL;

    if (bin_dir != NULL && (copy = strdup(bin_dir)) == NULL)
        return -ENOMEM;
    free(d->bin_dir);
    d->bin_dir = copy;
    return 0;
}

int cs_testd_restart(struct cs_testd *d)
{
    int status = 0;
    int rc;

    if (d->pid > 0)
        status = terminate(d);
    /* Same socket, so clients made for the old daemon reach the new one. */
    rc = launch(d);
    return rc != 0 ? rc : status;
}

void cs_test__testd_abandon(struct cs_testd *d)
{
    int wstatus;

    cs_test__print_tail("cschedd log", d->log_path, LOG_TAIL_BYTES);
    if (d->pid > 0) {
        kill(d->pid, SIGKILL);
        cs_test__wait(d->pid, STOP_TIMEOUT_MS, &wstatus);
        d->pid = 0;
    }
    cs_test_discard_dir("cschedd", d->root);
}
