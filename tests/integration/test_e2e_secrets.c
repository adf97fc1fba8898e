/* End-to-end tests of secret_env: a file secret and a server_env secret
 * reach the command; GetJob returns the references only; no value is in the
 * database (jobs, runs, attempts, events, audit) or in the server's log at
 * debug; an unresolvable reference fails the attempt naming it; bad
 * references are refused at create. One server, started with a secret in
 * its environment and logging at debug, serves every test. */
#include <libgen.h>
#include <libpq-fe.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define ENV_VAR "CS_TEST_SECRET_VAR"

static char file_value[64], env_value[64];

static Csched__V1__SecretRef *ref_new(bool file, const char *what)
{
    Csched__V1__SecretRef *r = calloc(1, sizeof(*r));

    assert_non_null(r);
    csched__v1__secret_ref__init(r);
    r->source_case =
        file ? CSCHED__V1__SECRET_REF__SOURCE_FILE : CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV;
    if (file)
        r->file = (char *)what;
    else
        r->server_env = (char *)what;
    return r;
}

/* A shell job with n secrets (names[i] -> refs[i]); freed by the caller
 * with free_job. */
static Csched__V1__Job *job_new(const char *name, const char *shell, const char *const *names,
                                Csched__V1__SecretRef **refs, size_t n)
{
    Csched__V1__Job *job = calloc(1, sizeof(*job));

    assert_non_null(job);
    csched__v1__job__init(job);
    job->name = (char *)name;
    job->shell = (char *)shell;
    job->n_secret_env = n;
    job->secret_env = calloc(n, sizeof(*job->secret_env));
    for (size_t i = 0; i < n; i++) {
        job->secret_env[i] = calloc(1, sizeof(*job->secret_env[i]));
        csched__v1__job__secret_env_entry__init(job->secret_env[i]);
        job->secret_env[i]->key = (char *)names[i];
        job->secret_env[i]->value = refs[i];
    }
    return job;
}

static void free_job(Csched__V1__Job *job)
{
    for (size_t i = 0; i < job->n_secret_env; i++) {
        free(job->secret_env[i]->value);
        free(job->secret_env[i]);
    }
    free(job->secret_env);
    free(job);
}

static int setup(void **state)
{
    snprintf(file_value, sizeof(file_value), "file-secret-%d-%ld", (int)getpid(), random());
    snprintf(env_value, sizeof(env_value), "env-secret-%d-%ld", (int)getpid(), random());
    /* cschedd inherits both: its environment at start, and debug logging. */
    if (setenv(ENV_VAR, env_value, 1) != 0 || setenv("CSCHED_LOG_LEVEL", "debug", 1) != 0)
        return -1;
    return cs_e2e_setup(state);
}

/* How many rows of the tables hold value's bytes anywhere. */
static long db_count(struct cs_e2e *e, const char *value)
{
    static const char sql[] =
        "SELECT (SELECT count(*) FROM jobs WHERE position(convert_to($1, 'UTF8') IN spec) > 0)"
        " + (SELECT count(*) FROM runs WHERE position(convert_to($1, 'UTF8') IN"
        " coalesce(env, ''::bytea)) > 0 OR strpos(message, $1) > 0)"
        " + (SELECT count(*) FROM attempts WHERE strpos(message, $1) > 0)"
        " + (SELECT count(*) FROM events WHERE strpos(message, $1) > 0)"
        " + (SELECT count(*) FROM audit WHERE strpos(message, $1) > 0)";
    PGconn *conn = PQconnectdb(cs_testpg_url(e->pg));
    const char *params[] = {value};
    long n;

    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    PGresult *res = PQexecParams(conn, sql, 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        fail_msg("query failed: %s", PQerrorMessage(conn));
    n = strtol(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    PQfinish(conn);
    return n;
}

static char *read_server_log(struct cs_e2e *e)
{
    char dir[PATH_MAX], path[PATH_MAX + 16];
    snprintf(dir, sizeof(dir), "%s", cs_testd_state_dir(e->d));
    snprintf(path, sizeof(path), "%s/cschedd.log", dirname(dir));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *buf = calloc(1, 4 << 20);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (4 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The command sees both values; nothing else does. */
static void test_e2e_secrets_reach_only_the_command(void **state)
{
    struct cs_e2e *e = *state;
    char name[64], dir[PATH_MAX], path[PATH_MAX + 16];
    struct cs_status st = {0};

    cs_e2e_tmpdir(dir);
    snprintf(path, sizeof(path), "%s/token", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", file_value);
    fclose(f);
    cs_e2e_name(name, sizeof(name), "secret");
    const char *names[] = {"FILE_SECRET", "ENV_SECRET"};
    Csched__V1__SecretRef *refs[] = {ref_new(true, path), ref_new(false, ENV_VAR)};
    Csched__V1__Job *job =
        job_new(name, "printf '%s|%s' \"$FILE_SECRET\" \"$ENV_SECRET\"", names, refs, 2);
    Csched__V1__Job *created = cs_e2e_create_job(e, job);
    csched__v1__job__free_unpacked(created, NULL);

    int64_t run_id = cs_e2e_trigger(e, name);
    Csched__V1__Run *run = cs_e2e_wait_end(e, run_id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
    size_t len;
    char *out = cs_e2e_read_logs(e, run_id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    char want[160];
    snprintf(want, sizeof(want), "%s|%s", file_value, env_value);
    assert_string_equal(out, want);
    free(out);

    /* GetJob: the references, not the values. */
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *got = NULL;
    get.name = name;
    assert_int_equal(cs_scheduler_get_job(e->client, &get, &got, cs_e2e_opts(), &st), 0);
    assert_int_equal(got->n_secret_env, 2);
    for (size_t i = 0; i < got->n_secret_env; i++) {
        const Csched__V1__SecretRef *r = got->secret_env[i]->value;
        if (strcmp(got->secret_env[i]->key, "FILE_SECRET") == 0)
            assert_string_equal(r->file, path);
        else
            assert_string_equal(r->server_env, ENV_VAR);
    }
    size_t packed_len = csched__v1__job__get_packed_size(got);
    uint8_t *packed = malloc(packed_len);
    csched__v1__job__pack(got, packed);
    assert_null(memmem(packed, packed_len, file_value, strlen(file_value)));
    assert_null(memmem(packed, packed_len, env_value, strlen(env_value)));
    free(packed);
    csched__v1__job__free_unpacked(got, NULL);

    /* The database holds the reference (the query works) and no value. */
    assert_true(db_count(e, path) >= 1);
    assert_int_equal(db_count(e, file_value), 0);
    assert_int_equal(db_count(e, env_value), 0);

    /* The log at debug talks about the run, never its values. */
    char *log = read_server_log(e);
    assert_non_null(strstr(log, "2 secret_env variables set"));
    assert_null(strstr(log, file_value));
    assert_null(strstr(log, env_value));
    free(log);
    free_job(job);
    cs_test_rmtree(dir);
}

/* A file that is not there fails the attempt, naming the variable and the
 * reference. */
static void test_e2e_secrets_missing_file_fails_the_attempt(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];

    cs_e2e_name(name, sizeof(name), "nosecret");
    const char *names[] = {"MISSING_ONE"};
    Csched__V1__SecretRef *refs[] = {ref_new(true, "/nonexistent/csched-secret")};
    Csched__V1__Job *job = job_new(name, "echo ran", names, refs, 1);
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    int64_t run_id = cs_e2e_trigger(e, name);
    Csched__V1__Run *run = cs_e2e_wait_end(e, run_id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_FAILED);
    assert_int_equal(run->n_attempts, 1);
    const char *msg = run->attempts[0]->message;
    assert_non_null(strstr(msg, "MISSING_ONE"));
    assert_non_null(strstr(msg, "file:/nonexistent/csched-secret"));
    assert_non_null(strstr(run->message, "MISSING_ONE"));
    csched__v1__run__free_unpacked(run, NULL);
    free_job(job);
}

/* What create refuses, each with a message naming the entry. */
static void test_e2e_secrets_bad_references_refused(void **state)
{
    struct cs_e2e *e = *state;
    static const struct {
        const char *name;
        bool file;
        const char *ref;
        const char *word;
    } cases[] = {
        {"REL", true, "relative/path", "absolute"},  {"CSCHED_X", true, "/etc/x", "CSCHED_"},
        {"DB", false, "PGPASSWORD", "credentials"},  {"BAD", false, "1NOT-A-NAME", "variable name"},
        {"BOTH", true, "/etc/x", "also in job.env"},
    };
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(cases); i++) {
        char name[64];
        struct cs_status st = {0};
        Csched__V1__Job__EnvEntry env = CSCHED__V1__JOB__ENV_ENTRY__INIT;
        Csched__V1__Job__EnvEntry *envs[] = {&env};
        const char *names[] = {cases[i].name};
        Csched__V1__SecretRef *refs[] = {ref_new(cases[i].file, cases[i].ref)};

        cs_e2e_name(name, sizeof(name), "badref");
        Csched__V1__Job *job = job_new(name, "true", names, refs, 1);
        env.key = "BOTH";
        env.value = "x";
        job->env = envs;
        job->n_env = 1;
        cs_e2e_assert_status(cs_e2e_try_create_job(e, job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                             cases[i].word);
        free_job(job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_secrets_reach_only_the_command),
        cmocka_unit_test(test_e2e_secrets_missing_file_fails_the_attempt),
        cmocka_unit_test(test_e2e_secrets_bad_references_refused),
    };

    return cmocka_run_group_tests(tests, setup, cs_e2e_teardown);
}
