/* End-to-end tests of the job methods (CreateJob, GetJob, UpdateJob,
 * ListJobs, DeleteJob) through libcsched against a real cschedd and a real
 * PostgreSQL. One server serves every test of this file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

static Csched__V1__Job *get_job(struct cs_e2e *e, const char *name, int want, struct cs_status *st)
{
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL;
    int rc;

    req.name = (char *)name;
    rc = cs_scheduler_get_job(e->client, &req, &job, cs_e2e_opts(), st);
    if (want == 0 && rc != 0)
        fail_msg("GetJob(%s): %s \"%s\"", name, cs_status_code_name(rc), st->message);
    if (want != 0)
        cs_e2e_assert_status(rc, st, want, NULL);
    return job;
}

static const char *map_get(Csched__V1__Job__EnvEntry **entries, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(entries[i]->key, key) == 0)
            return entries[i]->value;
    return NULL;
}

static const char *label_get(Csched__V1__Job *job, const char *key)
{
    for (size_t i = 0; i < job->n_labels; i++)
        if (strcmp(job->labels[i]->key, key) == 0)
            return job->labels[i]->value;
    return NULL;
}

static void assert_full_job(const Csched__V1__Job *job, const char *name)
{
    assert_string_equal(job->name, name);
    assert_int_equal(job->n_command, 3);
    assert_string_equal(job->command[0], "printf");
    assert_string_equal(job->command[1], "%s\\n");
    assert_string_equal(job->command[2], "hello world");
    assert_string_equal(job->shell, "");
    assert_int_equal(job->n_env, 2);
    assert_string_equal(map_get(job->env, job->n_env, "A"), "1");
    assert_string_equal(map_get(job->env, job->n_env, "B"), "two words");
    assert_string_equal(job->working_dir, "/tmp");
    assert_int_equal(job->max_running, 2);
    assert_int_equal(job->timeout_seconds, 60);
    assert_int_equal(job->max_attempts, 3);
    assert_int_equal(job->retry_backoff_ms, 250);
    assert_int_equal(job->n_labels, 1);
    assert_string_equal(label_get((Csched__V1__Job *)job, "team"), "ops");
    assert_true(job->version >= 1);
    assert_true(job->created_unix_ms > 0);
    assert_true(job->updated_unix_ms >= job->created_unix_ms);
}

/* Every settable field goes in through CreateJob and comes back from both
 * CreateJob and GetJob. */
static void test_e2e_jobs_create_get_roundtrip(void **state)
{
    struct cs_e2e *e = *state;
    char *argv[] = {"printf", "%s\\n", "hello world"};
    Csched__V1__Job__EnvEntry env_a = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry env_b = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry *env[] = {&env_a, &env_b};
    Csched__V1__Job__LabelsEntry label = CSCHED__V1__JOB__LABELS_ENTRY__INIT;
    Csched__V1__Job__LabelsEntry *labels[] = {&label};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Job *created, *got;
    struct cs_status st = {0};
    int64_t before = 0;
    char name[64];

    cs_e2e_name(name, sizeof(name), "full");
    env_a.key = "A";
    env_a.value = "1";
    env_b.key = "B";
    env_b.value = "two words";
    label.key = "team";
    label.value = "ops";
    job.name = name;
    job.n_command = 3;
    job.command = argv;
    job.n_env = 2;
    job.env = env;
    job.working_dir = "/tmp";
    job.max_running = 2;
    job.timeout_seconds = 60;
    job.max_attempts = 3;
    job.retry_backoff_ms = 250;
    job.n_labels = 1;
    job.labels = labels;

    created = cs_e2e_create_job(e, &job);
    assert_full_job(created, name);
    before = created->created_unix_ms;
    got = get_job(e, name, 0, &st);
    assert_full_job(got, name);
    assert_int_equal(got->version, created->version);
    assert_int_equal(got->created_unix_ms, before);
    csched__v1__job__free_unpacked(got, NULL);
    csched__v1__job__free_unpacked(created, NULL);
}

static int update_shell(struct cs_e2e *e, const char *name, const char *shell,
                        uint64_t expected_version, Csched__V1__Job **out, struct cs_status *st)
{
    Csched__V1__UpdateJobRequest req = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;

    job.name = (char *)name;
    job.shell = (char *)shell;
    req.job = &job;
    req.expected_version = expected_version;
    return cs_scheduler_update_job(e->client, &req, out, cs_e2e_opts(), st);
}

/* UpdateJob replaces the job, bumps its version, and honours
 * expected_version. */
static void test_e2e_jobs_update_versions(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *v1, *v2 = NULL, *v3 = NULL, *got, *stale = NULL;
    struct cs_status st = {0};
    char name[64];
    int rc;

    cs_e2e_name(name, sizeof(name), "upd");
    v1 = cs_e2e_create_shell_job(e, name, "echo one");

    /* No expected_version: unconditional. */
    rc = update_shell(e, name, "echo two", 0, &v2, &st);
    if (rc != 0)
        fail_msg("UpdateJob: %s \"%s\"", cs_status_code_name(rc), st.message);
    assert_string_equal(v2->shell, "echo two");
    assert_true(v2->version > v1->version);
    assert_int_equal(v2->created_unix_ms, v1->created_unix_ms);
    assert_true(v2->updated_unix_ms >= v1->updated_unix_ms);

    /* expected_version of an older version: refused, job unchanged. */
    rc = update_shell(e, name, "echo stale", v1->version, &stale, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_FAILED_PRECONDITION, "version");
    assert_null(stale);
    got = get_job(e, name, 0, &st);
    assert_string_equal(got->shell, "echo two");
    assert_int_equal(got->version, v2->version);
    csched__v1__job__free_unpacked(got, NULL);

    /* expected_version of the current version: accepted. */
    rc = update_shell(e, name, "echo three", v2->version, &v3, &st);
    if (rc != 0)
        fail_msg("UpdateJob(expected_version=%llu): %s \"%s\"", (unsigned long long)v2->version,
                 cs_status_code_name(rc), st.message);
    assert_string_equal(v3->shell, "echo three");
    assert_true(v3->version > v2->version);

    csched__v1__job__free_unpacked(v3, NULL);
    csched__v1__job__free_unpacked(v2, NULL);
    csched__v1__job__free_unpacked(v1, NULL);
}

static void test_e2e_jobs_update_unknown_is_not_found(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *out = NULL;
    struct cs_status st = {0};
    int rc;

    rc = update_shell(e, "no-such-job-upd", "true", 0, &out, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_NOT_FOUND, "no-such-job-upd");
    assert_null(out);
}

/* A run triggered after UpdateJob runs the new command. */
static void test_e2e_jobs_update_applies_to_new_runs(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *updated = NULL;
    struct cs_status st = {0};
    Csched__V1__Run *run;
    char name[64];
    size_t len;
    char *out;

    cs_e2e_name(name, sizeof(name), "updrun");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "echo before"), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    out = cs_e2e_read_logs(e, run->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_string_equal(out, "before\n");
    free(out);
    csched__v1__run__free_unpacked(run, NULL);

    if (update_shell(e, name, "echo after", 0, &updated, &st) != 0)
        fail_msg("UpdateJob: %s \"%s\"", cs_status_code_name(st.code), st.message);
    csched__v1__job__free_unpacked(updated, NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    out = cs_e2e_read_logs(e, run->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_string_equal(out, "after\n");
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
}

static int list_jobs(struct cs_e2e *e, uint32_t page_size, const char *token,
                     Csched__V1__ListJobsResponse **out, struct cs_status *st)
{
    Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;

    req.page_size = page_size;
    req.page_token = (char *)token;
    return cs_scheduler_list_jobs(e->client, &req, out, cs_e2e_opts(), st);
}

/* ListJobs pages through every job exactly once, each page at most
 * page_size long, and the last page has an empty token. */
static void test_e2e_jobs_list_paging(void **state)
{
    struct cs_e2e *e = *state;
    enum { N = 7, MAX_SEEN = 256 };
    char names[N][64], *seen[MAX_SEEN], *token = strdup("");
    Csched__V1__ListJobsResponse *page;
    size_t n_seen = 0, pages = 0;
    struct cs_status st = {0};
    int rc;

    for (int i = 0; i < N; i++) {
        cs_e2e_name(names[i], sizeof(names[i]), "page");
        csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, names[i], "true"), NULL);
    }
    do {
        rc = list_jobs(e, 3, token, &page, &st);
        if (rc != 0)
            fail_msg("ListJobs(page %zu): %s \"%s\"", pages, cs_status_code_name(rc), st.message);
        assert_true(page->n_jobs <= 3);
        pages++;
        for (size_t i = 0; i < page->n_jobs; i++) {
            for (size_t j = 0; j < n_seen; j++)
                if (strcmp(seen[j], page->jobs[i]->name) == 0)
                    fail_msg("job %s listed twice (page %zu)", seen[j], pages);
            assert_true(n_seen < MAX_SEEN);
            seen[n_seen++] = strdup(page->jobs[i]->name);
        }
        free(token);
        token = strdup(page->next_page_token);
        /* A non-empty token on an empty page would loop for ever. */
        if (page->n_jobs == 0)
            assert_string_equal(token, "");
        csched__v1__list_jobs_response__free_unpacked(page, NULL);
    } while (token[0] != '\0');
    free(token);

    assert_true(pages >= 3);
    for (int i = 0; i < N; i++) {
        bool found = false;

        for (size_t j = 0; j < n_seen; j++)
            found = found || strcmp(seen[j], names[i]) == 0;
        if (!found)
            fail_msg("job %s missing from ListJobs pages", names[i]);
    }
    for (size_t j = 0; j < n_seen; j++)
        free(seen[j]);
}

/* page_size 0 means the default page (100), which holds every job here. */
static void test_e2e_jobs_list_default_page(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListJobsResponse *page;
    struct cs_status st = {0};
    char name[64];
    bool found = false;

    cs_e2e_name(name, sizeof(name), "deflist");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    assert_int_equal(list_jobs(e, 0, "", &page, &st), 0);
    assert_string_equal(page->next_page_token, "");
    for (size_t i = 0; i < page->n_jobs; i++)
        found = found || strcmp(page->jobs[i]->name, name) == 0;
    assert_true(found);
    csched__v1__list_jobs_response__free_unpacked(page, NULL);
}

static int delete_job(struct cs_e2e *e, const char *name, struct cs_status *st)
{
    Csched__V1__DeleteJobRequest req = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *resp = NULL;
    int rc;

    req.name = (char *)name;
    rc = cs_scheduler_delete_job(e->client, &req, &resp, cs_e2e_opts(), st);
    if (resp != NULL)
        csched__v1__delete_job_response__free_unpacked(resp, NULL);
    return rc;
}

/* DeleteJob removes the job (GetJob and a second delete are NOT_FOUND), and
 * its name can be used again. */
static void test_e2e_jobs_delete(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};
    Csched__V1__Job *job;
    char name[64];

    cs_e2e_name(name, sizeof(name), "del");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    assert_int_equal(delete_job(e, name, &st), 0);
    job = get_job(e, name, GRPC_STATUS_NOT_FOUND, &st);
    assert_null(job);
    cs_e2e_assert_status(delete_job(e, name, &st), &st, GRPC_STATUS_NOT_FOUND, name);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    assert_int_equal(delete_job(e, name, &st), 0);
}

/* A job with a run in progress cannot be deleted; once the run has ended it
 * can, and the finished run stays readable. */
static void test_e2e_jobs_delete_with_active_run(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    char name[64];
    int64_t id;

    cs_e2e_name(name, sizeof(name), "delactive");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "sleep 30"), NULL);
    id = cs_e2e_trigger(e, name);
    run = cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, 10000);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    csched__v1__run__free_unpacked(run, NULL);

    cs_e2e_assert_status(delete_job(e, name, &st), &st, GRPC_STATUS_FAILED_PRECONDITION, NULL);

    cancel.run_id = id;
    run = NULL;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &cancel, &run, cs_e2e_opts(), &st), 0);
    csched__v1__run__free_unpacked(run, NULL);
    run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    csched__v1__run__free_unpacked(run, NULL);

    if (delete_job(e, name, &st) != 0)
        fail_msg("DeleteJob after the run ended: %s \"%s\"", cs_status_code_name(st.code),
                 st.message);
    run = cs_e2e_get_run(e, id);
    assert_string_equal(run->job_name, name);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    csched__v1__run__free_unpacked(run, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_jobs_create_get_roundtrip),
        cmocka_unit_test(test_e2e_jobs_update_versions),
        cmocka_unit_test(test_e2e_jobs_update_unknown_is_not_found),
        cmocka_unit_test(test_e2e_jobs_update_applies_to_new_runs),
        cmocka_unit_test(test_e2e_jobs_list_paging),
        cmocka_unit_test(test_e2e_jobs_list_default_page),
        cmocka_unit_test(test_e2e_jobs_delete),
        cmocka_unit_test(test_e2e_jobs_delete_with_active_run),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
