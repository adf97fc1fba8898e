/* Unit tests of launches held for their due time (server/launcher.h) with
 * the real launch threads and csched-minder: the directory is made at once
 * and the minder starts at the due time, not before; one still held, or
 * still being made, is taken back with nothing of it run; a launch without
 * a due time, or one already started, is not; a minder started ahead is
 * armed and released by its gate at the due time, or killed if its launch
 * is taken back first. */
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "launch_test.h"
#include "launcher_thread.h"
#include "minder_contract.h"
#include "util.h"

/* How far ahead of its start each launch is submitted: the hold. */
#define HOLD_MS 300
/* The same with a minder started ahead, whose spawn comes first. */
#define ARMED_HOLD_MS 1000

static char state_dir[64];
static uv_loop_t loop;
static struct cs_launcher *launcher;
static struct cs_launch *done[4];
static size_t n_done;

static void done_cb(struct cs_launch *launch, void *ctx)
{
    (void)ctx;
    if (n_done < sizeof(done) / sizeof(done[0]))
        done[n_done++] = launch;
}

static int setup(void **state)
{
    (void)state;
    strcpy(state_dir, "/tmp/test_launcher_hold.XXXXXX");
    assert_non_null(mkdtemp(state_dir));
    cs_loop_thread_mark();
    assert_int_equal(uv_loop_init(&loop), 0);
    launcher = cs_launcher_start(&loop, CS_MINDER_PATH, 2, done_cb, NULL);
    assert_non_null(launcher);
    n_done = 0;
    return 0;
}

static void stopped_cb(void *arg)
{
    *(bool *)arg = true;
}

static int teardown(void **state)
{
    (void)state;
    bool stopped = false;
    cs_launcher_stop(launcher, stopped_cb, &stopped);
    while (!stopped)
        (void)uv_run(&loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&loop), 0);
    for (size_t i = 0; i < n_done; i++) {
        if (done[i]->pid > 0)
            (void)waitpid(done[i]->pid, NULL, 0);
        if (done[i]->pidfd >= 0)
            (void)close(done[i]->pidfd);
        cs_launch_free(done[i]);
    }
    char cmd[256];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", state_dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* A launch of attempt number of run 1 running "true", due at due_unix_ms
 * (0: at once), as dispatch would build it. */
static struct cs_launch *launch_of(uint32_t number, int64_t due_unix_ms)
{
    char dir[128];
    (void)snprintf(dir, sizeof(dir), "%s/1-%u", state_dir, number);
    return launch_test_new(dir, "true", due_unix_ms);
}

static bool dir_exists(const struct cs_launch *launch)
{
    struct stat st;
    return stat(launch->dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Turns the loop until n launches came back, for at most 5 s. */
static void wait_done(size_t n)
{
    int64_t give_up_ms = cs_now_unix_ms() + 5000;
    while (n_done < n && cs_now_unix_ms() < give_up_ms) {
        (void)uv_run(&loop, UV_RUN_NOWAIT);
        (void)usleep(1000);
    }
    assert_int_equal(n_done, n);
}

/* Waits until launch's directory is there, held: the launcher made it. */
static void wait_held(const struct cs_launch *launch)
{
    int64_t give_up_ms = cs_now_unix_ms() + 5000;
    while (!dir_exists(launch) && cs_now_unix_ms() < give_up_ms)
        (void)usleep(1000);
    assert_true(dir_exists(launch));
}

static void test_held_until_due(void **state)
{
    (void)state;
    int64_t due_ms = cs_now_unix_ms() + HOLD_MS;
    struct cs_launch *launch = launch_of(1, due_ms);
    cs_launcher_submit(launcher, launch);
    wait_held(launch);
    /* Made long before its time, and nothing of it runs yet. */
    assert_true(cs_now_unix_ms() < due_ms);
    (void)uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(n_done, 0);
    wait_done(1);
    assert_int_equal(done[0]->err, 0);
    assert_true(done[0]->pid > 0);
    assert_true(done[0]->started_unix_ms >= due_ms);
    /* Its minder ran "true" and wrote its note. */
    int wstatus;
    assert_int_equal(waitpid(done[0]->pid, &wstatus, 0), done[0]->pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    done[0]->pid = -1;
}

/* No pid file: no minder has worked in launch's directory. */
static bool no_minder_in(const struct cs_launch *launch)
{
    char pid_file[256];
    (void)snprintf(pid_file, sizeof(pid_file), "%s/%s", launch->dir, CS_ATTEMPT_PID_FILE);
    return access(pid_file, F_OK) == -1;
}

static void test_revoked_while_held(void **state)
{
    (void)state;
    struct cs_launch *launch = launch_of(1, cs_now_unix_ms() + HOLD_MS);
    cs_launcher_submit(launcher, launch);
    wait_held(launch);
    /* Its directory is there; its group's sync is over well within this. */
    (void)usleep(50 * 1000);
    assert_int_equal(cs_launcher_revoke(launcher, launch), CS_REVOKE_DONE);
    /* Taken back: it never comes back, and no minder worked in its directory. */
    (void)usleep((HOLD_MS + 100) * 1000);
    (void)uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(n_done, 0);
    assert_true(no_minder_in(launch));
    assert_true(cs_launch_state(launch) == CS_LAUNCH_TAKEN_BACK && dir_exists(launch));
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    cs_launch_free(launch);
}

/* Taken back the moment its directory shows: held already (DONE), or still
 * being made (PENDING), when it comes back unstarted, -ECANCELED. */
static void test_revoked_while_made(void **state)
{
    (void)state;
    struct cs_launch *launch = launch_of(1, cs_now_unix_ms() + HOLD_MS);
    cs_launcher_submit(launcher, launch);
    wait_held(launch);
    enum cs_revoke rc = cs_launcher_revoke(launcher, launch);
    assert_true(rc == CS_REVOKE_DONE || rc == CS_REVOKE_PENDING);
    if (rc == CS_REVOKE_PENDING) {
        wait_done(1);
        assert_ptr_equal(done[0], launch);
        assert_int_equal(launch->err, -ECANCELED);
        n_done = 0;
    }
    assert_true(launch->pid <= 0);
    (void)usleep((HOLD_MS + 100) * 1000);
    assert_true(no_minder_in(launch));
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    cs_launch_free(launch);
}

static void test_not_revoked_once_started(void **state)
{
    (void)state;
    struct cs_launch *now = launch_of(1, 0);
    struct cs_launch *due = launch_of(2, cs_now_unix_ms() + 50);
    cs_launcher_submit(launcher, now);
    cs_launcher_submit(launcher, due);
    wait_done(2);
    /* Neither can be taken back: one has no due time, the other started. */
    assert_int_equal(cs_launcher_revoke(launcher, now), CS_REVOKE_TOO_LATE);
    assert_int_equal(cs_launcher_revoke(launcher, due), CS_REVOKE_TOO_LATE);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(done[i]->err, 0);
}

/* Whether any thread of this process has a child: the launch threads
 * spawn the minders, and the table counts one before its spawn. */
static bool has_child(void)
{
    glob_t g;
    bool any = false;
    if (glob("/proc/self/task/*/children", 0, NULL, &g) != 0)
        return false;
    for (size_t i = 0; i < g.gl_pathc && !any; i++) {
        FILE *f = fopen(g.gl_pathv[i], "re");
        int pid;
        any = f != NULL && fscanf(f, "%d", &pid) == 1;
        if (f != NULL)
            fclose(f);
    }
    globfree(&g);
    return any;
}

/* Submits the launch of attempt 1, due in ARMED_HOLD_MS, after a minder
 * started ahead for it, and waits until that minder is armed: held, its
 * gate shut. */
static struct cs_launch *armed_launch(void)
{
    int64_t due_ms = cs_now_unix_ms() + ARMED_HOLD_MS;
    cs_launcher_submit_ahead(launcher, launch_of(1, due_ms));
    int64_t give_up_ms = cs_now_unix_ms() + 5000;
    while (!has_child() && cs_now_unix_ms() < give_up_ms)
        (void)usleep(1000);
    /* In the table once its spawn has returned, well within this. */
    (void)usleep(200 * 1000);
    struct cs_launch *launch = launch_of(1, due_ms);
    cs_launcher_submit(launcher, launch);
    bool armed = false;
    while (!armed && cs_now_unix_ms() < give_up_ms) {
        (void)usleep(1000);
        pthread_mutex_lock(&launcher->lock);
        armed = cs_launch_state(launch) == CS_LAUNCH_ARMED;
        pthread_mutex_unlock(&launcher->lock);
    }
    assert_true(armed);
    assert_true(cs_now_unix_ms() < due_ms);
    return launch;
}

/* Its minder started ahead goes when its gate opens, at the due time: the
 * launch comes back with that minder, started at or after its due time. */
static void test_armed_minder_released_at_due(void **state)
{
    (void)state;
    struct cs_launch *launch = armed_launch();
    assert_true(no_minder_in(launch));
    wait_done(1);
    assert_ptr_equal(done[0], launch);
    assert_int_equal(launch->err, 0);
    assert_true(launch->started_unix_ms >= launch->due_unix_ms);
    assert_int_equal(launcher->ahead.n_went, 1);
    int wstatus;
    assert_int_equal(waitpid(launch->pid, &wstatus, 0), launch->pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    launch->pid = -1;
}

/* Taken back while armed: DONE, its minder killed before its gate opens. */
static void test_armed_minder_taken_back(void **state)
{
    (void)state;
    struct cs_launch *launch = armed_launch();
    assert_int_equal(cs_launcher_revoke(launcher, launch), CS_REVOKE_DONE);
    (void)usleep((ARMED_HOLD_MS + 100) * 1000);
    (void)uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(n_done, 0);
    assert_true(no_minder_in(launch));
    pthread_mutex_lock(&launcher->ahead.lock);
    assert_int_equal(launcher->ahead.n_sent_away, 1);
    pthread_mutex_unlock(&launcher->ahead.lock);
    cs_launch_free(launch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_held_until_due, setup, teardown),
        cmocka_unit_test_setup_teardown(test_revoked_while_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_revoked_while_made, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_revoked_once_started, setup, teardown),
        cmocka_unit_test_setup_teardown(test_armed_minder_released_at_due, setup, teardown),
        cmocka_unit_test_setup_teardown(test_armed_minder_taken_back, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
