/* End-to-end tests of who a job runs as, under a root cschedd (CI runs as
 * root; the tests skip otherwise): run_as_user and run_as_group with the
 * ids, groups, HOME/USER/LOGNAME the command sees and the files it leaves;
 * the default job user when run_as_user is empty, root only when asked for;
 * users and groups that do not exist refused at CreateJob and UpdateJob; a
 * working directory the user cannot enter failing the attempt with the
 * step named; and none of the server's secrets in a job's environment,
 * though they are in cschedd's. cschedd and its minder run from a dir only
 * root may enter, as they do from a clone under /root (deploy/quickstart.sh):
 * no job's user needs a way to them. */
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "runs_fixture.h"
#include "testlib.h"

/* Set in cschedd's environment by main, and never to be seen by a job. */
static const char *const secrets[][2] = {
    {"CSCHED_TEST_SECRET", "secret-csched-1"},
    {"PGPASSWORD", "secret-pg-2"},
    {"DATABASE_URL", "postgresql://u:secret-url-3@db/x"},
    {"APP_DATABASE_URL", "postgresql://u:secret-url-4@db/x"},
};

/* Creates job (name from prefix), runs it once and returns the run. */
static Csched__V1__Run *run_job(struct cs_e2e *e, Csched__V1__Job *job, const char *prefix,
                                char *name, size_t cap)
{
    cs_e2e_name(name, cap, prefix);
    job->name = name;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    return cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
}

static char *stdout_of(struct cs_e2e *e, int64_t run_id)
{
    size_t len;
    return cs_e2e_read_logs(e, run_id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
}

/* Runs job once (name from prefix): it must succeed and print want. */
static void expect_stdout(struct cs_e2e *e, Csched__V1__Job *job, const char *prefix,
                          const char *want)
{
    char name[64];
    Csched__V1__Run *run = run_job(e, job, prefix, name, sizeof(name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    char *out = stdout_of(e, run->id);
    assert_string_equal(out, want);
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
}

/* The file's owner and permission bits, as "UID MODE" (octal). */
static void owner_mode(const char *path, char *buf, size_t cap)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    snprintf(buf, cap, "%u %o", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
}

/* A job as nobody: its ids and groups, its HOME, USER and LOGNAME; it writes
 * in its working directory, which is nobody's, while the attempt's
 * directory, note and logs stay root's. */
static void test_e2e_runas_nobody(void **state)
{
    struct cs_e2e *e = *state;
    struct passwd *pw = getpwnam("nobody");
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64], want[512], path[PATH_MAX + 64], got[64];

    assert_non_null(pw);
    job.run_as_user = "nobody";
    /* It cannot forge its note, plant a file beside it, or read the logs. */
    job.shell = "id -u; id -g; id -G; echo \"$HOME $USER $LOGNAME\"; echo data > out && cat out; "
                "(echo forged > ../status) 2>/dev/null || echo no-note; "
                "(: > ../status.tmp) 2>/dev/null || echo no-file; "
                "cat ../stdout 2>/dev/null || echo no-logs";
    Csched__V1__Run *run = run_job(e, &job, "nobody", name, sizeof(name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    gid_t groups[64];
    int n = 64;
    assert_true(getgrouplist("nobody", pw->pw_gid, groups, &n) > 0);
    size_t len = (size_t)snprintf(want, sizeof(want), "%u\n%u\n", (unsigned)pw->pw_uid,
                                  (unsigned)pw->pw_gid);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%u", i > 0 ? " " : "",
                                (unsigned)groups[i]);
    snprintf(want + len, sizeof(want) - len,
             "\n%s nobody nobody\ndata\nno-note\nno-file\nno-logs\n", pw->pw_dir);
    char *out = stdout_of(e, run->id);
    assert_string_equal(out, want);
    free(out);

    const char *state_dir = cs_testd_state_dir(e->d);
    snprintf(path, sizeof(path), "%s/attempts/%lld-1", state_dir, (long long)run->id);
    owner_mode(path, got, sizeof(got));
    assert_string_equal(got, "0 700");
    snprintf(path, sizeof(path), "%s/attempts/%lld-1/work", state_dir, (long long)run->id);
    owner_mode(path, got, sizeof(got));
    snprintf(want, sizeof(want), "%u 700", (unsigned)pw->pw_uid);
    assert_string_equal(got, want);
    snprintf(path, sizeof(path), "%s/attempts/%lld-1/work/out", state_dir, (long long)run->id);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, pw->pw_uid);
    /* The logs, the start record and the note: root's, and the logs and
     * the start record readable by root only. */
    static const char *const root_files[] = {"stdout", "stderr", "pid", "status"};
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(root_files); i++) {
        snprintf(path, sizeof(path), "%s/attempts/%lld-1/%s", state_dir, (long long)run->id,
                 root_files[i]);
        owner_mode(path, got, sizeof(got));
        assert_string_equal(got, i < 3 ? "0 600" : "0 644");
    }
    csched__v1__run__free_unpacked(run, NULL);
}

/* run_as_group makes the group the command's only one; numbers work for
 * both, with no passwd entry needed once the group is given. */
static void test_e2e_runas_group_and_numbers(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char want[64];

    job.run_as_user = "nobody";
    job.run_as_group = "12345";
    job.shell = "id -u; id -g; id -G";
    snprintf(want, sizeof(want), "%u\n12345\n12345\n", (unsigned)getpwnam("nobody")->pw_uid);
    expect_stdout(e, &job, "group", want);

    job.run_as_user = "54321";
    job.run_as_group = "54322";
    job.shell = "id -u; id -g; echo \"$HOME $USER\"";
    expect_stdout(e, &job, "numbers", "54321\n54322\n/ 54321\n");
}

/* No run_as_user: the default job user (csched-job where it exists, else
 * nobody), never root; root only when named. */
static void test_e2e_runas_default_and_root(void **state)
{
    struct cs_e2e *e = *state;
    struct passwd *pw = getpwnam("csched-job");
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char want[32];

    if (pw == NULL)
        pw = getpwnam("nobody");
    assert_non_null(pw);
    assert_int_not_equal(pw->pw_uid, 0);
    snprintf(want, sizeof(want), "%u\n", (unsigned)pw->pw_uid);
    job.shell = "id -u";
    expect_stdout(e, &job, "default", want);

    job.run_as_user = "root";
    job.shell = "id -u; id -g; touch written-as-root && stat -c %u written-as-root";
    expect_stdout(e, &job, "root", "0\n0\n0\n");
}

/* A user or group that does not exist is refused, naming the field, by
 * CreateJob and UpdateJob; so is a name no system would take. */
static void test_e2e_runas_unknown_refused(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct cs_status st = {0};
    char name[64];

    cs_e2e_name(name, sizeof(name), "unknown");
    job.name = name;
    job.shell = "true";
    job.run_as_user = "no-such-user-csched";
    cs_e2e_assert_status(cs_e2e_try_create_job(e, &job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "run_as_user");
    job.run_as_user = "nobody";
    job.run_as_group = "no-such-group-csched";
    cs_e2e_assert_status(cs_e2e_try_create_job(e, &job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "run_as_group");
    job.run_as_group = "";
    job.run_as_user = "bad:name";
    cs_e2e_assert_status(cs_e2e_try_create_job(e, &job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "run_as_user");

    job.run_as_user = "nobody";
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    Csched__V1__UpdateJobRequest req = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    Csched__V1__Job *out = NULL;
    job.run_as_user = "no-such-user-csched";
    req.job = &job;
    cs_e2e_assert_status(cs_scheduler_update_job(e->client, &req, &out, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "no-such-user-csched");
    assert_null(out);
}

/* A working directory is entered as the job's user: one closed to nobody
 * fails the attempt, with the step and the uid named, before anything runs. */
static void test_e2e_runas_workdir_closed(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char dir[PATH_MAX], name[64];

    cs_e2e_tmpdir(dir);
    assert_int_equal(chmod(dir, 0700), 0);
    job.run_as_user = "nobody";
    job.working_dir = dir;
    job.shell = "echo ran";
    Csched__V1__Run *run = run_job(e, &job, "closed", name, sizeof(name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_non_null(strstr(run->message, "chdir"));
    assert_non_null(strstr(run->message, "Permission denied"));
    char *out = stdout_of(e, run->id);
    assert_string_equal(out, "");
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(dir), 0);
}

/* cschedd was started with the secrets in its environment; a job sees none
 * of them, under any user, and inherits no fd but stdin, stdout and stderr
 * (ls's own directory fd is the 3). */
static void test_e2e_runas_no_secrets_in_env(void **state)
{
    struct cs_e2e *e = *state;
    static const char *const users[] = {"", "root"};
    char name[64];

    for (size_t u = 0; u < CS_E2E_ARRAY_LEN(users); u++) {
        Csched__V1__Job job = CSCHED__V1__JOB__INIT;
        job.run_as_user = (char *)users[u];
        job.shell = "env; ls /proc/self/fd | tr '\\n' ' '";
        Csched__V1__Run *run = run_job(e, &job, "env", name, sizeof(name));
        assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        char *out = stdout_of(e, run->id);
        assert_non_null(strstr(out, "CSCHED_RUN_ID="));
        assert_null(strstr(out, "secret"));
        assert_null(strstr(out, "\nPG"));
        assert_null(strstr(out, "DATABASE_URL="));
        if (strstr(out, "\n0 1 2 3 ") == NULL)
            fail_msg("the command has more fds than 0-2: %s", strrchr(out, '\n'));
        free(out);
        csched__v1__run__free_unpacked(run, NULL);
    }
}

/* Copies of cschedd and csched-minder, in a dir of mode 0700. */
static char private_bin[256];

static int setup(void **state)
{
    static const char *const programs[] = {"cschedd", "csched-minder"};
    char path[PATH_MAX], exe[PATH_MAX];

    int rc = cs_test_mkdtemp(private_bin, sizeof(private_bin), "cs-runas-bin");
    for (size_t i = 0; rc == 0 && i < CS_E2E_ARRAY_LEN(programs); i++) {
        snprintf(path, sizeof(path), "%s/%s", cs_test_bin_dir(), programs[i]);
        rc = cs_test_copy_program(path, private_bin);
    }
    if (rc != 0)
        return rc;
    setenv("CSCHED_BIN_DIR", private_bin, 1);
    if ((rc = cs_e2e_setup(state)) != 0)
        return rc;
    struct cs_e2e *e = *state;
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)cs_testd_pid(e->d));
    ssize_t n = readlink(path, exe, sizeof(exe) - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    snprintf(path, sizeof(path), "%s/cschedd", private_bin);
    assert_string_equal(exe, path);
    return 0;
}

static int teardown(void **state)
{
    int rc = cs_e2e_teardown(state);
    assert_int_equal(cs_test_rmtree(private_bin), 0);
    return rc;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_runas_nobody),
        cmocka_unit_test(test_e2e_runas_group_and_numbers),
        cmocka_unit_test(test_e2e_runas_default_and_root),
        cmocka_unit_test(test_e2e_runas_unknown_refused),
        cmocka_unit_test(test_e2e_runas_workdir_closed),
        cmocka_unit_test(test_e2e_runas_no_secrets_in_env),
    };

    if (geteuid() != 0) {
        printf("test_e2e_runas: needs root (jobs as other users); skipped\n");
        return 77;
    }
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(secrets); i++)
        setenv(secrets[i][0], secrets[i][1], 1);
    return cmocka_run_group_tests(tests, setup, teardown);
}
