/* The harness's own test: what the concurrency tests rely on, checked against
 * processes whose state is known.
 *
 *   minders   cs_test_count_minders counts live csched-minder children of a
 *             pid, not their commands and not zombies;
 *   daemon    cs_testd start, restart on the same port, kill, restart after
 *             the kill, stop with a clean exit; started without waiting,
 *             waited for, or seen to exit (a second on the same database)
 *             and reaped with its status;
 *   failure   a failed CS_TEST_* aborts and takes its cluster with it. */
#include <errno.h>
#include <libpq-fe.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#ifndef CSCHED_BIN_DIR
#error "CSCHED_BIN_DIR must name the directory holding csched-minder"
#endif

extern char **environ;

enum { N_MINDERS = 5, WAIT_MS = 10000 };

/* wait_count polls until server_pid has want live minders. */
static void wait_count(pid_t parent, int want)
{
    int64_t deadline = cs_test_now_ms() + WAIT_MS;
    int n;

    while ((n = cs_test_count_minders(parent)) != want && cs_test_now_ms() < deadline)
        cs_test_sleep_ms(5);
    CS_TEST_EQ(n, want);
}

static void test_minders(void)
{
    char minder[1024], dir[] = "/tmp/cs-testlib-XXXXXX", attempt[64];
    pid_t pids[N_MINDERS];
    int wstatus;

    snprintf(minder, sizeof(minder), "%s/csched-minder", CSCHED_BIN_DIR);
    CS_TEST_TRUE(mkdtemp(dir) != NULL);
    CS_TEST_EQ(cs_test_count_minders(getpid()), 0);
    for (int i = 0; i < N_MINDERS; i++) {
        snprintf(attempt, sizeof(attempt), "%s/%d", dir, i);
        CS_TEST_OK(mkdir(attempt, 0755));
        char *argv[] = {minder, "-d", attempt, "--", "sleep", "0.5", NULL};
        CS_TEST_OK(posix_spawn(&pids[i], minder, NULL, NULL, argv, environ));
    }
    /* The sleeps are the minders' children: only the minders count. */
    wait_count(getpid(), N_MINDERS);
    /* Unreaped, the ended minders are zombies: they no longer count. */
    wait_count(getpid(), 0);
    for (int i = 0; i < N_MINDERS; i++) {
        CS_TEST_EQ(waitpid(pids[i], &wstatus, 0), pids[i]);
        CS_TEST_TRUE(WIFEXITED(wstatus));
        CS_TEST_EQ(WEXITSTATUS(wstatus), 0);
    }
    CS_TEST_OK(cs_test_rmtree(dir));
}

static void test_daemon(void)
{
    struct cs_testpg *pg = NULL;
    struct cs_testd *d = NULL;
    char target[64];

    CS_TEST_OK(cs_testpg_start(&pg));
    CS_TEST_EQ(PQping(cs_testpg_url(pg)), PQPING_OK);
    struct cs_testd_options opts = {.database_url = cs_testpg_url(pg), .max_running = 4};
    CS_TEST_OK(cs_testd_start(&opts, &d));
    snprintf(target, sizeof(target), "%s", cs_testd_target(d));
    CS_TEST_TRUE(strncmp(target, "unix:/tmp/cs-testd-", 19) == 0);
    pid_t first = cs_testd_pid(d);
    CS_TEST_GT(first, 0);
    CS_TEST_EQ(access(cs_testd_state_dir(d), F_OK), 0);
    CS_TEST_EQ(cs_test_count_minders(first), 0);

    CS_TEST_OK(cs_testd_restart(d));
    CS_TEST_STREQ(cs_testd_target(d), target);
    CS_TEST_NE(cs_testd_pid(d), first);

    pid_t second = cs_testd_pid(d);
    CS_TEST_OK(cs_testd_kill(d));
    CS_TEST_EQ(cs_testd_pid(d), 0);
    CS_TEST_EQ(kill(second, 0), -1);
    CS_TEST_OK(cs_testd_restart(d));
    CS_TEST_STREQ(cs_testd_target(d), target);
    /* Two seconds of ticks, so that p99 is about the probe, not one tick of
     * the start-up on a busy machine. */
    cs_test_sleep_ms(2000);
    cs_testd_assert_lag_ok(d);

    CS_TEST_EQ(cs_testd_stop(d), 0);
    cs_testpg_stop(pg);
}

static void test_daemon_no_wait(void)
{
    struct cs_testpg *pg = NULL;
    struct cs_testd *d = NULL, *refused = NULL;

    CS_TEST_OK(cs_testpg_start(&pg));
    struct cs_testd_options opts = {.database_url = cs_testpg_url(pg), .no_wait = true};
    CS_TEST_OK(cs_testd_start(&opts, &d));
    /* Spawned only: its target is known before it serves. */
    CS_TEST_TRUE(strncmp(cs_testd_target(d), "unix:/", 6) == 0);
    CS_TEST_EQ(cs_testd_reap(d), -EBUSY);
    CS_TEST_OK(cs_testd_wait_ready(d, 120000));

    /* A second on the same database is refused by the server lock. */
    CS_TEST_OK(cs_testd_start(&opts, &refused));
    fprintf(stderr, "test_testlib: the next daemon's refusal is expected:\n");
    CS_TEST_EQ(cs_testd_wait_ready(refused, 120000), -ECHILD);
    int status = cs_testd_reap(refused);
    CS_TEST_GT(status, 0);
    CS_TEST_EQ(cs_testd_pid(refused), 0);
    CS_TEST_EQ(cs_testd_stop(refused), status);

    CS_TEST_OK(cs_testd_kill(d));
    CS_TEST_EQ(cs_testd_reap(d), 128 + SIGKILL);
    CS_TEST_OK(cs_testd_restart(d));
    CS_TEST_OK(cs_testd_wait_ready(d, 120000));
    CS_TEST_EQ(cs_testd_stop(d), 0);
    cs_testpg_stop(pg);
}

/* test_failure runs a failing test in a child and checks that it aborted and
 * that its cluster's directory is gone. */
static void test_failure(void)
{
    char dir[256] = "";
    int pipefd[2];
    int wstatus;

    CS_TEST_OK(pipe(pipefd));
    pid_t pid = fork();
    CS_TEST_TRUE(pid >= 0);
    if (pid == 0) {
        struct cs_testpg *pg = NULL;
        close(pipefd[0]);
        if (cs_testpg_start(&pg) != 0)
            _exit(3);
        dprintf(pipefd[1], "%s", cs_testpg_url(pg));
        close(pipefd[1]);
        fprintf(stderr, "test_testlib: the next failure is expected:\n");
        CS_TEST_EQ(1, 2);
        _exit(4);
    }
    close(pipefd[1]);
    ssize_t n = read(pipefd[0], dir, sizeof(dir) - 1);
    close(pipefd[0]);
    CS_TEST_EQ(waitpid(pid, &wstatus, 0), pid);
    CS_TEST_TRUE(WIFSIGNALED(wstatus));
    CS_TEST_EQ(WTERMSIG(wstatus), SIGABRT);
    CS_TEST_GT(n, 0);
    /* The url is "host=DIR port=..."; DIR must be gone. */
    char *host = strstr(dir, "host=");
    CS_TEST_TRUE(host != NULL);
    host += 5;
    host[strcspn(host, " ")] = '\0';
    CS_TEST_EQ(access(host, F_OK), -1);
    CS_TEST_EQ(errno, ENOENT);
}

/* A discarded dir goes at once, or when deferring ends. */
static void test_discards(void)
{
    char now_dir[] = "/tmp/cs-testlib-now-XXXXXX", later_dir[] = "/tmp/cs-testlib-later-XXXXXX";

    if (cs_test_keep_dirs())
        return;
    CS_TEST_TRUE(mkdtemp(now_dir) != NULL);
    CS_TEST_TRUE(mkdtemp(later_dir) != NULL);
    cs_test_discard_dir("now", now_dir);
    CS_TEST_EQ(access(now_dir, F_OK), -1);
    cs_test_defer_discards(true);
    cs_test_discard_dir("later", later_dir);
    CS_TEST_EQ(access(later_dir, F_OK), 0);
    cs_test_defer_discards(false);
    CS_TEST_EQ(access(later_dir, F_OK), -1);
}

int main(void)
{
    test_discards();
    fprintf(stderr, "test_testlib: discards ok\n");
    test_minders();
    fprintf(stderr, "test_testlib: minders ok\n");
    test_failure();
    fprintf(stderr, "test_testlib: failure ok\n");
    test_daemon();
    test_daemon_no_wait();
    fprintf(stderr, "test_testlib: daemon ok\n");
    return 0;
}
