/* End-to-end tests of what a job can reach of the server, with cschedd's
 * embedded PostgreSQL (no --database-url, a temp state dir each): a job
 * cannot connect to that database, though cschedd does; a state dir made
 * when the cluster trusted every local connection is upgraded to password
 * authentication on start (and --job-user names who jobs run as); and under a cschedd run as an
 * unprivileged user (nobody, through a wrapper that hands it its dirs and drops to it), a job for
 * another user is refused at CreateJob, and a job under cschedd's own uid can neither read
 * cschedd's environ or fds nor see its secrets, nor connect to the database without the password.
 * Needs root; skips without. */
#include <errno.h>
#include <libpq-fe.h>
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
#include "testfile.h"
#include "testlib.h"

#ifndef CS_BIN_DIR
#error "CS_BIN_DIR must name the directory holding cschedd"
#endif

#define SECRET_NAME "CSCHED_TEST_SECRET"
#define SECRET "secret-isolation-1"

/* A daemon of the test's own, with its client, as the e2e helpers take.
 * extra_args: more flags for cschedd, NULL-terminated, or NULL. */
static int start(struct cs_e2e *e, const char *state_dir, const char *const *extra_args)
{
    struct cs_testd_options opts = {
        .max_running = CS_E2E_MAX_RUNNING, .state_dir = state_dir, .extra_args = extra_args};
    memset(e, 0, sizeof(*e));
    int rc = cs_testd_start(&opts, &e->d);
    if (rc == 0)
        rc = cs_client_new(cs_testd_target(e->d), &e->client);
    return rc;
}

static void stop(struct cs_e2e *e)
{
    cs_client_free(e->client);
    assert_int_equal(cs_testd_stop(e->d), 0);
}

/* Runs shell as a new job (run_as_user user, "" for the default) and
 * returns its stdout and stderr, joined, and the run. */
static char *run_output(struct cs_e2e *e, const char *user, const char *shell,
                        Csched__V1__Run **run_out)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64];
    size_t len_out, len_err;

    cs_e2e_name(name, sizeof(name), "iso");
    job.name = name;
    job.shell = (char *)shell;
    job.run_as_user = (char *)user;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    Csched__V1__Run *run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    char *out =
        cs_e2e_read_logs(e, run->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len_out);
    char *err =
        cs_e2e_read_logs(e, run->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR, &len_err);
    out = realloc(out, len_out + len_err + 1);
    assert_non_null(out);
    memcpy(out + len_out, err, len_err + 1);
    free(err);
    *run_out = run;
    return out;
}

/* psql to the embedded cluster's socket, never asking for a password. */
static void psql_command(char *buf, size_t cap, const char *state_dir)
{
    snprintf(buf, cap,
             "psql -w -h %s/pg -U postgres -d postgres -c 'select count(*) from jobs' && "
             "echo connected",
             state_dir);
}

/* Connects from the test (root) with libpq; the password, or NULL. */
static bool connects(const char *state_dir, const char *password)
{
    char conninfo[PATH_MAX + 128];
    snprintf(conninfo, sizeof(conninfo), "host=%s/pg user=postgres dbname=postgres%s%s", state_dir,
             password != NULL ? " password=" : "", password != NULL ? password : "");
    PGconn *conn = PQconnectdb(conninfo);
    bool ok = PQstatus(conn) == CONNECTION_OK;
    PQfinish(conn);
    return ok;
}

static char *read_password(const char *state_dir)
{
    char path[PATH_MAX];
    static char pw[128];
    snprintf(path, sizeof(path), "%s/pg/password", state_dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(pw, 1, sizeof(pw) - 1, f);
    fclose(f);
    pw[n] = '\0';
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    return pw;
}

static void assert_no_trust(const char *state_dir)
{
    char path[PATH_MAX], line[512];
    snprintf(path, sizeof(path), "%s/pg/data/pg_hba.conf", state_dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL)
        if (line[0] != '#')
            assert_null(strstr(line, "trust"));
    fclose(f);
}

/* A job (the default job user) cannot connect to the embedded database
 * under dir (why, when given, is in its output); the test (root) connects
 * only with the password; pg_hba.conf trusts no one. */
static void assert_db_closed(struct cs_e2e *e, const char *dir, const char *why)
{
    char psql[PATH_MAX + 128];
    Csched__V1__Run *run;

    psql_command(psql, sizeof(psql), dir);
    char *out = run_output(e, "", psql, &run);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_null(strstr(out, "connected"));
    if (why != NULL)
        assert_non_null(strstr(out, why));
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
    assert_no_trust(dir);
    assert_false(connects(dir, NULL));
    assert_true(connects(dir, read_password(dir)));
}

/* A root cschedd's embedded database: a job (the default job user) cannot
 * reach its socket; cschedd itself works; only the password lets in. Then a
 * state dir as an older cschedd left it (a trust pg_hba.conf, no password
 * file) is upgraded by the next start, which also takes --job-user. */
static void test_e2e_isolation_embedded_and_upgrade(void **state)
{
    (void)state;
    char dir[] = "/tmp/cs-iso-XXXXXX";
    struct cs_e2e e;

    assert_non_null(mkdtemp(dir));
    assert_int_equal(start(&e, dir, NULL), 0);
    assert_db_closed(&e, dir, "Permission denied");
    stop(&e);

    /* What a cschedd from before passwords left behind. */
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/pg/data/pg_hba.conf", dir);
    cs_test_write_text(path, "local all all trust\nhost all all 127.0.0.1/32 trust\n");
    snprintf(path, sizeof(path), "%s/pg/password", dir);
    assert_int_equal(unlink(path), 0);

    /* Restarted with another default job user, which a job without
     * run_as_user now runs as. */
    static const char *const job_user[] = {"--job-user", "daemon", NULL};
    assert_int_equal(start(&e, dir, job_user), 0);
    assert_db_closed(&e, dir, "Permission denied");
    Csched__V1__Run *run;
    char *out = run_output(&e, "", "id -un", &run);
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_string_equal(out, "daemon\n");
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
    stop(&e);
    assert_int_equal(cs_test_rmtree(dir), 0);
}

/* Fills BIN for cs_testd to start: BIN/cschedd, a wrapper that hands the
 * daemon's state dir and ready file to nobody and runs the real cschedd as
 * nobody, from BIN/real with its csched-minder beside it: copies, which
 * nobody can run wherever the build tree is (a clone under /root). */
static void fill_bin(const char *bin, const struct passwd *pw)
{
    char path[PATH_MAX], real[PATH_MAX];
    snprintf(real, sizeof(real), "%s/real", bin);
    assert_int_equal(mkdir(real, 0755), 0);
    assert_int_equal(cs_test_copy_program(CS_BIN_DIR "/cschedd", real), 0);
    assert_int_equal(cs_test_copy_program(CS_BIN_DIR "/csched-minder", real), 0);
    snprintf(path, sizeof(path), "%s/cschedd", bin);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "#!/bin/sh\n"
            "prev=\n"
            "for a in \"$@\"; do\n"
            "    case \"$prev\" in\n"
            "    --state-dir) chown -R %u:%u \"$a\" ;;\n"
            "    --ready-file) chown %u:%u \"$(dirname \"$a\")\" ;;\n"
            "    esac\n"
            "    prev=$a\n"
            "done\n"
            "exec setpriv --reuid=%u --regid=%u --clear-groups -- %s/cschedd \"$@\"\n",
            (unsigned)pw->pw_uid, (unsigned)pw->pw_gid, (unsigned)pw->pw_uid, (unsigned)pw->pw_gid,
            (unsigned)pw->pw_uid, (unsigned)pw->pw_gid, real);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

/* Whether /proc/PID/environ (read as root) holds text. */
static bool environ_has(pid_t pid, const char *text)
{
    char path[64], buf[65536];
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = '\n';
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

/* cschedd as nobody: another run_as_user is refused, saying why; a job as
 * nobody cannot read cschedd's environ or fds (it is not dumpable), does
 * not get its secret, and cannot connect to the database without the
 * password. */
static void test_e2e_isolation_unprivileged(void **state)
{
    (void)state;
    struct passwd *pw = getpwnam("nobody");
    char bin[256], shell[2 * PATH_MAX + 512], psql[PATH_MAX + 128];
    struct cs_e2e e;
    struct cs_status st = {0};

    assert_non_null(pw);
    assert_int_equal(cs_test_mkdtemp_shared(bin, sizeof(bin), "cs-iso-bin"), 0);
    fill_bin(bin, pw);
    setenv("CSCHED_BIN_DIR", bin, 1);
    int rc = start(&e, NULL, NULL);
    unsetenv("CSCHED_BIN_DIR");
    assert_int_equal(rc, 0);
    pid_t pid = cs_testd_pid(e.d);
    assert_true(environ_has(pid, SECRET));

    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64];
    cs_e2e_name(name, sizeof(name), "other");
    job.name = name;
    job.shell = "true";
    job.run_as_user = "root";
    cs_e2e_assert_status(cs_e2e_try_create_job(&e, &job, &st), &st, GRPC_STATUS_FAILED_PRECONDITION,
                         "cannot start jobs as root");

    psql_command(psql, sizeof(psql), cs_testd_state_dir(e.d));
    snprintf(shell, sizeof(shell),
             "id -u; cat /proc/%d/environ > /dev/null 2>&1 && echo environ || echo no-environ; "
             "ls /proc/%d/fd > /dev/null 2>&1 && echo fds || echo no-fds; "
             "env | grep -c %s; %s || echo no-db",
             (int)pid, (int)pid, SECRET, psql);
    Csched__V1__Run *run;
    char *out = run_output(&e, "nobody", shell, &run);
    char want[64];
    snprintf(want, sizeof(want), "%u\nno-environ\nno-fds\n0\nno-db\n", (unsigned)pw->pw_uid);
    char head[sizeof(want)];
    snprintf(head, sizeof(head), "%.*s", (int)strlen(want), out);
    assert_string_equal(head, want);
    assert_non_null(strstr(out, "password")); /* psql's "no password supplied" */
    assert_null(strstr(out, "connected"));
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
    stop(&e);
    assert_int_equal(cs_test_rmtree(bin), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_isolation_embedded_and_upgrade),
        cmocka_unit_test(test_e2e_isolation_unprivileged),
    };
    if (geteuid() != 0) {
        printf("test_e2e_isolation: needs root; skipped\n");
        return 77;
    }
    setenv(SECRET_NAME, SECRET, 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
