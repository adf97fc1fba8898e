/* End-to-end tests of what a job leaves behind, against a real cschedd and a
 * real PostgreSQL: a command that starts a daemon out of its session
 * (setsid ... &) and exits, and one that does so and is then cancelled. The
 * daemon must be stopped with its run, the run must end as its command did,
 * each command must run once, and the attempt must say how many processes
 * were left. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

/* Runs in flight at once in the first test. */
#define RUNS 8

/* Reads a decimal number from path, waiting up to timeout_ms for it. */
static long read_number(const char *path, int64_t timeout_ms)
{
    int64_t give_up = cs_test_now_ms() + timeout_ms;
    long value = 0;

    for (;;) {
        FILE *f = fopen(path, "r");

        if (f != NULL) {
            int got = fscanf(f, "%ld", &value);

            fclose(f);
            if (got == 1)
                return value;
        }
        if (cs_test_now_ms() > give_up)
            fail_msg("%s has no number after %lld ms", path, (long long)timeout_ms);
        cs_test_sleep_ms(10);
    }
}

static off_t size_of(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? st.st_size : -1;
}

static void assert_gone(pid_t pid)
{
    if (kill(pid, 0) == 0 || errno != ESRCH)
        fail_msg("process %d outlived its run", (int)pid);
}

/* RUNS runs of a command that leaves a daemon writing a heartbeat: every run
 * SUCCEEDED, once, with the daemon stopped and counted. */
static void test_e2e_leftovers_setsid_daemon(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], shell[3 * PATH_MAX + 256], name[64], path[PATH_MAX + 32];
    int64_t ids[RUNS];
    pid_t daemons[RUNS];
    off_t beats[RUNS];

    cs_e2e_tmpdir(dir);
    (void)snprintf(shell, sizeof(shell),
                   "setsid sh -c 'echo $$ > %s/pid.$CSCHED_RUN_ID; exec >/dev/null 2>&1;"
                   " while :; do echo x >> %s/beat.$CSCHED_RUN_ID; sleep 0.05; done' &"
                   " sleep 0.3; echo ran >> %s/exec.$CSCHED_RUN_ID",
                   dir, dir, dir);
    cs_e2e_name(name, sizeof(name), "leftover");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    for (int i = 0; i < RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    for (int i = 0; i < RUNS; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);

        assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        assert_int_equal(run->n_attempts, 1);
        /* The daemon's shell, and its sleep if it was in one. */
        assert_in_range(run->attempts[0]->leftover_processes, 1, 2);
        csched__v1__run__free_unpacked(run, NULL);
        (void)snprintf(path, sizeof(path), "%s/pid.%lld", dir, (long long)ids[i]);
        daemons[i] = (pid_t)read_number(path, 1000);
        (void)snprintf(path, sizeof(path), "%s/exec.%lld", dir, (long long)ids[i]);
        assert_int_equal(cs_e2e_count_lines(path), 1);
    }
    for (int i = 0; i < RUNS; i++) {
        assert_gone(daemons[i]);
        (void)snprintf(path, sizeof(path), "%s/beat.%lld", dir, (long long)ids[i]);
        beats[i] = size_of(path);
    }
    /* Nothing writes any more once the runs have ended. */
    cs_test_sleep_ms(300);
    for (int i = 0; i < RUNS; i++) {
        (void)snprintf(path, sizeof(path), "%s/beat.%lld", dir, (long long)ids[i]);
        assert_int_equal(size_of(path), beats[i]);
    }
    cs_test_rmtree(dir);
}

/* A cancelled run takes what its command left out of its group with it. */
static void test_e2e_leftovers_cancel(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    char dir[PATH_MAX], shell[3 * PATH_MAX + 256], name[64], path[PATH_MAX + 32];
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    pid_t daemon;

    cs_e2e_tmpdir(dir);
    (void)snprintf(shell, sizeof(shell),
                   "setsid sh -c 'echo $$ > %s/pid; exec sleep 100' >/dev/null 2>&1 & sleep 100",
                   dir);
    cs_e2e_name(name, sizeof(name), "leftover-cancel");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    cancel.run_id = cs_e2e_trigger(e, name);
    (void)snprintf(path, sizeof(path), "%s/pid", dir);
    daemon = (pid_t)read_number(path, CS_E2E_CALL_TIMEOUT_MS);
    assert_int_equal(cs_scheduler_cancel_run(e->client, &cancel, &run, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, cancel.run_id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(run->n_attempts, 1);
    /* The daemon, and the group's own sleep if it was still dying when the
     * shell's end was seen. */
    assert_in_range(run->attempts[0]->leftover_processes, 1, 2);
    csched__v1__run__free_unpacked(run, NULL);
    assert_gone(daemon);
    cs_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_leftovers_setsid_daemon),
        cmocka_unit_test(test_e2e_leftovers_cancel),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
