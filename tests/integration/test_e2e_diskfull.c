/* End-to-end test of a full state dir under a running cschedd: a small
 * tmpfs is mounted on its attempts folder and filled, first its blocks (an
 * attempt's directory can still be made, its status note cannot be
 * written), then its inodes too (not even the directory can be made). Health
 * must turn NOT_SERVING; no command may run, as its end could not be
 * recorded; each run fails once, not retried into the same wall, with a
 * message that names the full disk; ReadLogs must not blame retention for a
 * directory never made; and once there is room again everything works.
 * Needs root for the mount: skipped otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define RUNS 5
/* The probe runs every 2 s (CS_DIR_CHECK_EVERY_MS); slack for a loaded
 * machine. */
#define HEALTH_MS 8000

static char attempts[4200];
static bool mounted;

/* Fills the file system of attempts: one file takes every block left; with
 * inodes, empty files take every inode left. */
static void fill(bool inodes)
{
    static const char block[4096];
    char path[4400];
    int fd;

    (void)snprintf(path, sizeof(path), "%s/filler", attempts);
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    assert_true(fd >= 0);
    while (write(fd, block, sizeof(block)) > 0)
        ;
    assert_int_equal(errno, ENOSPC);
    (void)close(fd);
    for (int i = 0; inodes; i++) {
        (void)snprintf(path, sizeof(path), "%s/inode-%d", attempts, i);
        fd = open(path, O_WRONLY | O_CREAT, 0600);
        if (fd < 0) {
            assert_int_equal(errno, ENOSPC);
            break;
        }
        (void)close(fd);
    }
}

static void unfill(void)
{
    char path[4400];

    (void)snprintf(path, sizeof(path), "%s/filler", attempts);
    (void)unlink(path);
    for (int i = 0;; i++) {
        (void)snprintf(path, sizeof(path), "%s/inode-%d", attempts, i);
        if (unlink(path) != 0)
            break;
    }
}

/* Waits for run_id to end; true if it failed once, naming the full disk in
 * word, and its command never ran. */
static bool failed_for_disk(struct cs_e2e *e, const char *dir, int64_t run_id, const char *word)
{
    Csched__V1__Run *run = cs_e2e_wait_end(e, run_id);
    bool ok = run->state == CSCHED__V1__RUN_STATE__RUN_STATE_FAILED && run->n_attempts == 1 &&
              strstr(run->message, word) != NULL && cs_e2e_executions(dir, run_id) == 0;

    if (!ok)
        printf("diskfull: run %lld: state %s, %zu attempts, %d executions, \"%s\"\n",
               (long long)run_id, cs_test_run_state_name(run->state), run->n_attempts,
               cs_e2e_executions(dir, run_id), run->message);
    csched__v1__run__free_unpacked(run, NULL);
    return ok;
}

static Csched__V1__Job *retried_job(struct cs_e2e *e, const char *name, const char *shell)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;

    job.name = (char *)name;
    job.shell = (char *)shell;
    job.max_attempts = 2;
    job.retry_backoff_ms = 0;
    return cs_e2e_create_job(e, &job);
}

static void test_e2e_diskfull_nothing_runs_unrecorded(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ReadLogsRequest logs = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    struct cs_status st = {0};
    char dir[4096], shell[4400], name[64];
    int64_t ids[RUNS], id;
    int ended_ok = 0;
    Csched__V1__Run *run;

    if (geteuid() != 0)
        skip(); /* mounting the small tmpfs needs root */
    (void)snprintf(attempts, sizeof(attempts), "%s/attempts", cs_testd_state_dir(e->d));
    assert_int_equal(mount("tmpfs", attempts, "tmpfs", 0, "size=256k,nr_inodes=512"), 0);
    mounted = true;
    cs_e2e_tmpdir(dir);
    (void)snprintf(shell, sizeof(shell), "echo x >> %s/$CSCHED_RUN_ID", dir);
    cs_e2e_name(name, sizeof(name), "full");
    csched__v1__job__free_unpacked(retried_job(e, name, shell), NULL);

    /* Blocks full: the note cannot be written, so the minder must refuse. */
    fill(false);
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING,
                       HEALTH_MS);
    for (int i = 0; i < RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    for (int i = 0; i < RUNS; i++)
        ended_ok += failed_for_disk(e, dir, ids[i], "no space to record the outcome");
    printf("diskfull (blocks): %d runs, %d failed once naming the disk, none ran\n", RUNS,
           ended_ok);
    assert_int_equal(ended_ok, RUNS);

    /* Inodes full too: not even the directory can be made. */
    fill(true);
    id = cs_e2e_trigger(e, name);
    assert_true(failed_for_disk(e, dir, id, "No space left on device"));
    logs.run_id = id;
    assert_int_equal(cs_e2e_read_logs_status(e, &logs, &st), GRPC_STATUS_NOT_FOUND);
    if (strstr(st.message, "retention") != NULL || strstr(st.message, "never made") == NULL)
        fail_msg("ReadLogs of a directory never made: \"%s\"", st.message);

    /* Room again: health comes back and a run runs once. */
    unfill();
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING,
                       HEALTH_MS);
    id = cs_e2e_trigger(e, name);
    run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(cs_e2e_executions(dir, id), 1);
    csched__v1__run__free_unpacked(run, NULL);
    cs_test_rmtree(dir);
}

/* Unmounts the tmpfs even when the test failed, before the fixture's
 * teardown removes the state dir. */
static int unmount_teardown(void **state)
{
    (void)state;
    if (mounted && umount2(attempts, MNT_DETACH) != 0)
        fprintf(stderr, "umount %s: %s\n", attempts, strerror(errno));
    mounted = false;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_e2e_diskfull_nothing_runs_unrecorded, unmount_teardown),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
