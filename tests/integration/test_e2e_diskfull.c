/* End-to-end test of a full state dir under a running cschedd: a small
 * tmpfs is mounted on its attempts folder and filled, first its blocks (an
 * attempt's directory can still be made, its status note cannot be
 * written), then its inodes too (not even the directory can be made). Health
 * must turn NOT_SERVING; no command may run, as its end could not be
 * recorded; each run fails once, not retried into the same wall, with a
 * message that names the full disk; ReadLogs must not blame retention for a
 * directory never made; and once there is room again everything works.
 * And a database out of disk space (the jobs table moved to a tablespace on
 * a small tmpfs, then filled): a change is RESOURCE_EXHAUSTED saying so, not
 * INTERNAL; health turns NOT_SERVING until a write commits again; the job
 * it would have made does not exist, and an update
 * that failed so is undone (both were kept in memory, though not in the
 * database: a retry was ALREADY_EXISTS, and a restart lost them); and it
 * works once there is room; a pause or resume that failed so is undone too.
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
#include <sys/stat.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>
#include <libpq-fe.h>

#include "e2e.h"
#include "testlib.h"

#define RUNS 5
/* The probe runs every 2 s (CS_DIR_CHECK_EVERY_MS); slack for a loaded
 * machine. */
#define HEALTH_MS 8000
/* Health follows the database's writes as they fail or commit: the next
 * Check says so. */
#define DB_HEALTH_MS 1000

static char attempts[4200];
static bool mounted;
static char tablespace[4200]; /* the database's small disk, when mounted */

/* Fills the file system of dir: one file takes every block left; with
 * inodes, empty files take every inode left. */
static void fill(const char *dir, bool inodes)
{
    static const char block[4096];
    char path[4400];
    int fd;

    (void)snprintf(path, sizeof(path), "%s/filler", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    assert_true(fd >= 0);
    while (write(fd, block, sizeof(block)) > 0)
        ;
    assert_int_equal(errno, ENOSPC);
    (void)close(fd);
    for (int i = 0; inodes; i++) {
        (void)snprintf(path, sizeof(path), "%s/inode-%d", dir, i);
        fd = open(path, O_WRONLY | O_CREAT, 0600);
        if (fd < 0) {
            assert_int_equal(errno, ENOSPC);
            break;
        }
        (void)close(fd);
    }
}

static void unfill(const char *dir)
{
    char path[4400];

    (void)snprintf(path, sizeof(path), "%s/filler", dir);
    (void)unlink(path);
    for (int i = 0;; i++) {
        (void)snprintf(path, sizeof(path), "%s/inode-%d", dir, i);
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
    fill(attempts, false);
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
    fill(attempts, true);
    id = cs_e2e_trigger(e, name);
    assert_true(failed_for_disk(e, dir, id, "No space left on device"));
    logs.run_id = id;
    assert_int_equal(cs_e2e_read_logs_status(e, &logs, &st), GRPC_STATUS_NOT_FOUND);
    if (strstr(st.message, "retention") != NULL || strstr(st.message, "never made") == NULL)
        fail_msg("ReadLogs of a directory never made: \"%s\"", st.message);

    /* Room again: health comes back and a run runs once. */
    unfill(attempts);
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING,
                       HEALTH_MS);
    id = cs_e2e_trigger(e, name);
    run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(cs_e2e_executions(dir, id), 1);
    csched__v1__run__free_unpacked(run, NULL);
    cs_test_rmtree(dir);
}

static void sql(PGconn *conn, const char *query)
{
    PGresult *res = PQexec(conn, query);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        fail_msg("%s: %s", query, PQerrorMessage(conn));
    PQclear(res);
}

/* Creates, or with update updates, a job whose env (random hex, so it
 * does not compress) needs new pages. */
static int try_big_job(struct cs_e2e *e, const char *name, bool update, struct cs_status *st)
{
    static char values[8][8193];
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Job__EnvEntry entries[8], *envp[8];
    char keys[8][8], *argv[] = {"true"};

    for (int i = 0; i < 8; i++) {
        for (int k = 0; k < 8192; k++)
            values[i][k] = "0123456789abcdef"[random() % 16];
        (void)snprintf(keys[i], sizeof(keys[i]), "V%d", i);
        csched__v1__job__env_entry__init(&entries[i]);
        entries[i].key = keys[i];
        entries[i].value = values[i];
        envp[i] = &entries[i];
    }
    job.name = (char *)name;
    job.command = argv;
    job.n_command = 1;
    job.env = envp;
    job.n_env = 8;
    if (!update)
        return cs_e2e_try_create_job(e, &job, st);
    Csched__V1__UpdateJobRequest req = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    Csched__V1__Job *out = NULL;
    req.job = &job;
    int rc = cs_scheduler_update_job(e->client, &req, &out, cs_e2e_opts(), st);
    if (out != NULL)
        csched__v1__job__free_unpacked(out, NULL);
    return rc;
}

/* The job's version and its number of env variables, as GetJob says. */
static void assert_job(struct cs_e2e *e, const char *name, uint64_t version, size_t n_env)
{
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *got = NULL;
    struct cs_status st = {0};
    get.name = (char *)name;
    assert_int_equal(cs_scheduler_get_job(e->client, &get, &got, cs_e2e_opts(), &st), 0);
    assert_int_equal(got->version, version);
    assert_int_equal(got->n_env, n_env);
    csched__v1__job__free_unpacked(got, NULL);
}

/* Moves the jobs table to a tablespace on a small tmpfs (into tablespace):
 * the connection that did it, to fill it and move the table back. */
static PGconn *small_jobs_tablespace(struct cs_e2e *e)
{
    struct stat pg;
    char path[64], query[4400];

    cs_e2e_tmpdir(tablespace);
    assert_int_equal(mount("tmpfs", tablespace, "tmpfs", 0, "size=512k"), 0);
    /* The tablespace's directory is the database server's own. */
    (void)snprintf(path, sizeof(path), "/proc/%d", (int)cs_testpg_pid(e->pg));
    assert_int_equal(stat(path, &pg), 0);
    assert_int_equal(chown(tablespace, pg.st_uid, pg.st_gid), 0);
    PGconn *conn = PQconnectdb(cs_testpg_url(e->pg));
    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    (void)snprintf(query, sizeof(query), "CREATE TABLESPACE small LOCATION '%s'", tablespace);
    sql(conn, query);
    sql(conn, "ALTER TABLE jobs SET TABLESPACE small");
    return conn;
}

static void default_jobs_tablespace(PGconn *conn)
{
    sql(conn, "ALTER TABLE jobs SET TABLESPACE pg_default");
    sql(conn, "DROP TABLESPACE small");
    PQfinish(conn);
}

static void test_e2e_diskfull_database_full(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};
    char name[64], kept[64];

    if (geteuid() != 0)
        skip(); /* mounting the small tmpfs needs root */
    PGconn *conn = small_jobs_tablespace(e);
    cs_e2e_name(kept, sizeof(kept), "dbfull-kept");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, kept, "true"), NULL);
    fill(tablespace, false);

    cs_e2e_name(name, sizeof(name), "dbfull");
    int code = try_big_job(e, name, false, &st);
    if (code != GRPC_STATUS_RESOURCE_EXHAUSTED || strstr(st.message, "out of disk space") == NULL)
        fail_msg("CreateJob on a full database: %s \"%s\"", cs_status_code_name(code), st.message);
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *got = NULL;
    get.name = name;
    cs_e2e_assert_status(cs_scheduler_get_job(e->client, &get, &got, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, "does not exist");
    /* A write that failed for want of space says so at once, as a database
     * that is down does. */
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING,
                       DB_HEALTH_MS);
    /* An update that did not commit is undone. */
    code = try_big_job(e, kept, true, &st);
    if (code != GRPC_STATUS_RESOURCE_EXHAUSTED)
        fail_msg("UpdateJob on a full database: %s \"%s\"", cs_status_code_name(code), st.message);
    assert_job(e, kept, 1, 0);
    unfill(tablespace);
    code = try_big_job(e, name, false, &st);
    if (code != GRPC_STATUS_OK)
        fail_msg("CreateJob with room again: %s \"%s\"", cs_status_code_name(code), st.message);
    cs_e2e_wait_health(e, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING,
                       DB_HEALTH_MS);
    default_jobs_tablespace(conn);
}

/* PauseJob (pause) or ResumeJob of name: the gRPC code, and the job in
 * *out (NULL if none). */
static int try_pause(struct cs_e2e *e, const char *name, bool pause, const char *reason,
                     Csched__V1__Job **out, struct cs_status *st)
{
    if (pause) {
        Csched__V1__PauseJobRequest req = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
        req.name = (char *)name;
        req.reason = (char *)reason;
        return cs_scheduler_pause_job(e->client, &req, out, cs_e2e_opts(), st);
    }
    Csched__V1__ResumeJobRequest req = CSCHED__V1__RESUME_JOB_REQUEST__INIT;
    req.name = (char *)name;
    return cs_scheduler_resume_job(e->client, &req, out, cs_e2e_opts(), st);
}

/* On the full disk, a pause or resume of name must be RESOURCE_EXHAUSTED
 * and leave the job's pause as GetJob showed it before. */
static void assert_pause_refused(struct cs_e2e *e, const char *name, bool pause)
{
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *before = NULL, *after = NULL, *out = NULL;
    struct cs_status st = {0};

    get.name = (char *)name;
    assert_int_equal(cs_scheduler_get_job(e->client, &get, &before, cs_e2e_opts(), &st), 0);
    int code = try_pause(e, name, pause, "full", &out, &st);
    if (out != NULL)
        csched__v1__job__free_unpacked(out, NULL);
    if (code != GRPC_STATUS_RESOURCE_EXHAUSTED || strstr(st.message, "out of disk space") == NULL)
        fail_msg("%s on a full database: %s \"%s\"", pause ? "PauseJob" : "ResumeJob",
                 cs_status_code_name(code), st.message);
    assert_int_equal(cs_scheduler_get_job(e->client, &get, &after, cs_e2e_opts(), &st), 0);
    if (after->paused != before->paused || after->paused_unix_ms != before->paused_unix_ms ||
        strcmp(after->pause_reason, before->pause_reason) != 0)
        fail_msg("%s that did not commit: paused %d at %lld \"%s\", before %d at %lld \"%s\"",
                 pause ? "PauseJob" : "ResumeJob", after->paused, (long long)after->paused_unix_ms,
                 after->pause_reason, before->paused, (long long)before->paused_unix_ms,
                 before->pause_reason);
    csched__v1__job__free_unpacked(before, NULL);
    csched__v1__job__free_unpacked(after, NULL);
}

/* How many lines of cschedd's log hold word. */
static long count_in_log(struct cs_e2e *e, const char *word)
{
    FILE *f = fopen(cs_testd_log_path(e->d), "r");
    char line[8192];
    long n = 0;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, word) != NULL;
    (void)fclose(f);
    return n;
}

/* A pause, and a resume, whose row cannot commit (the job's row is large,
 * so rewriting it needs new pages) are undone: they were kept in memory
 * though not in the database, so the job ran, or did not, as a restart
 * would not remember. */
static void test_e2e_diskfull_pause_undone(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *out = NULL;
    struct cs_status st = {0};
    char name[64];

    if (geteuid() != 0)
        skip(); /* mounting the small tmpfs needs root */
    PGconn *conn = small_jobs_tablespace(e);
    cs_e2e_name(name, sizeof(name), "dbfull-pause");
    assert_int_equal(try_big_job(e, name, false, &st), GRPC_STATUS_OK);

    fill(tablespace, false);
    assert_pause_refused(e, name, true);
    unfill(tablespace);
    assert_int_equal(try_pause(e, name, true, "kept", &out, &st), GRPC_STATUS_OK);
    csched__v1__job__free_unpacked(out, NULL);
    fill(tablespace, false);
    assert_pause_refused(e, name, false);
    unfill(tablespace);
    assert_int_equal(try_pause(e, name, false, NULL, &out, &st), GRPC_STATUS_OK);
    assert_false(out->paused);
    csched__v1__job__free_unpacked(out, NULL);
    default_jobs_tablespace(conn);
    /* Four writes failed in these two tests, within a minute or so: each
     * wrote a line, and on a full disk every batch fails. */
    long lines = count_in_log(e, "failed: ERROR:  could not extend file");
    if (lines < 1 || lines > 2)
        fail_msg("%ld lines of a failed statement in the log, for 4 failures", lines);
}

/* Unmounts the tmpfs even when the test failed, before the fixture's
 * teardown removes the state dir. */
static int unmount_teardown(void **state)
{
    (void)state;
    if (mounted && umount2(attempts, MNT_DETACH) != 0)
        fprintf(stderr, "umount %s: %s\n", attempts, strerror(errno));
    mounted = false;
    if (tablespace[0] != '\0' && umount2(tablespace, MNT_DETACH) != 0)
        fprintf(stderr, "umount %s: %s\n", tablespace, strerror(errno));
    tablespace[0] = '\0';
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_e2e_diskfull_nothing_runs_unrecorded, unmount_teardown),
        cmocka_unit_test_teardown(test_e2e_diskfull_database_full, unmount_teardown),
        cmocka_unit_test_teardown(test_e2e_diskfull_pause_undone, unmount_teardown),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
