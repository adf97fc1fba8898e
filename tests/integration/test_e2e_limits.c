/* The limits on what one request may ask of cschedd, against a real server:
 * each limit refused with INVALID_ARGUMENT naming it, requests that froze
 * the loop (tens of thousands of variables) refused without a late tick,
 * the largest accepted job and run started with the loop on time, ListRuns
 * and ListJobs pages bounded in bytes (their tokens reach every run and job
 * exactly once), and
 * cschedd's database credentials kept out of every job's environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

/* What the server documents (docs/configuration.md, "Limits"). */
#define ENV_ENTRIES_MAX 1024
#define RUN_BYTES_MAX (64 * 1024)
#define PAGE_BYTES (2 * 1024 * 1024)

/* A map of n entries "V<i>" = value, in the layout of any map<string,
 * string> entry; desc is the entry's type. Freed with kv_free. */
struct kv_map {
    Csched__V1__Job__EnvEntry **ptrs;
    size_t n;
};

static struct kv_map kv_make(const ProtobufCMessageDescriptor *desc, size_t n, const char *value)
{
    struct kv_map m = {calloc(n ? n : 1, sizeof(*m.ptrs)), n};

    assert_non_null(m.ptrs);
    for (size_t i = 0; i < n; i++) {
        m.ptrs[i] = calloc(1, sizeof(**m.ptrs));
        assert_non_null(m.ptrs[i]);
        protobuf_c_message_init(desc, m.ptrs[i]);
        m.ptrs[i]->key = malloc(24);
        assert_non_null(m.ptrs[i]->key);
        (void)snprintf(m.ptrs[i]->key, 24, "V%zu", i);
        m.ptrs[i]->value = (char *)value;
    }
    return m;
}

static void kv_free(struct kv_map *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->ptrs[i]->key);
        free(m->ptrs[i]);
    }
    free(m->ptrs);
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);

    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* TriggerJob of job with the env overrides in map; returns the status code
 * (0: the run id in *id). */
static int trigger_env(struct cs_e2e *e, const char *job, const struct kv_map *map, int64_t *id,
                       struct cs_status *st)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;

    req.job_name = (char *)job;
    req.env = (Csched__V1__TriggerJobRequest__EnvEntry **)map->ptrs;
    req.n_env = map->n;
    int rc = cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), st);
    if (rc == 0) {
        if (id != NULL)
            *id = run->id;
        csched__v1__run__free_unpacked(run, NULL);
    }
    return rc;
}

static int list_runs(struct cs_e2e *e, const char *job, uint32_t page_size, const char *token,
                     Csched__V1__ListRunsResponse **resp, struct cs_status *st)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;

    req.job_name = (char *)job;
    req.page_size = page_size;
    req.page_token = (char *)token;
    *resp = NULL;
    return cs_scheduler_list_runs(e->client, &req, resp, cs_e2e_opts(), st);
}

static void list_runs_fails(struct cs_e2e *e, uint32_t page_size, const char *token,
                            const char *word)
{
    Csched__V1__ListRunsResponse *resp;
    struct cs_status st = {0};
    int rc = list_runs(e, "", page_size, token, &resp, &st);

    if (rc == 0)
        csched__v1__list_runs_response__free_unpacked(resp, NULL);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, word);
}

/* Each documented limit is refused with INVALID_ARGUMENT naming the field
 * and the limit. */
static void test_e2e_limits_each_named(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct cs_status st = {0};
    char name[64];
    int rc;

    cs_e2e_name(name, sizeof(name), "limits");
    job.name = name;
    job.shell = "true";
    struct kv_map env = kv_make(&csched__v1__job__env_entry__descriptor, ENV_ENTRIES_MAX + 1, "x");
    job.env = env.ptrs;
    job.n_env = env.n;
    rc = cs_e2e_try_create_job(e, &job, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "job.env has 1025 entries");
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "the limit is 1024");
    kv_free(&env);
    job.n_env = 0;
    job.env = NULL;

    job.max_running = UINT32_MAX;
    rc = cs_e2e_try_create_job(e, &job, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "job.max_running 4294967295");
    job.max_running = 0;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);

    struct kv_map run_env =
        kv_make(&csched__v1__trigger_job_request__env_entry__descriptor, ENV_ENTRIES_MAX + 1, "x");
    rc = trigger_env(e, name, &run_env, NULL, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "env has 1025 entries");
    kv_free(&run_env);
    char *big = repeat('b', RUN_BYTES_MAX);
    run_env = kv_make(&csched__v1__trigger_job_request__env_entry__descriptor, 1, big);
    rc = trigger_env(e, name, &run_env, NULL, &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "the limit is 65536");
    kv_free(&run_env);
    free(big);

    /* page_size 2^40 is field 3 as a six-byte varint: protobuf-c would keep
     * its low 32 bits, 0, the default page. */
    static const uint8_t page_2_40[] = {0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20};
    rc = cs_e2e_raw_unary(e, "/csched.v1.Scheduler/ListRuns", page_2_40, sizeof(page_2_40), &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "page_size");
    char *digits = repeat('9', 400);
    list_runs_fails(e, 0, digits, "page_token");
    free(digits);
    list_runs_fails(e, 0, "999999999", "page_token");
    list_runs_fails(e, 0, "+1", "page_token");
    list_runs_fails(e, 0, "01", "page_token");

    /* Over the maximum page size is read as the maximum (AIP-158). */
    Csched__V1__ListRunsResponse *resp;
    rc = list_runs(e, "", 5000, "", &resp, &st);
    if (rc != 0)
        fail_msg("ListRuns(page_size 5000): %s \"%s\"", cs_status_code_name(rc), st.message);
    csched__v1__list_runs_response__free_unpacked(resp, NULL);
}

/* Requests that froze the loop for seconds before they had limits: a run
 * with 60,000 variables (9.7 s) and a job with 70,000 (890 KB, under the
 * 1 MiB request limit; 100,000 stalled every start 20 s). Both are refused
 * before they are unpacked (which alone took 50 ms), with the loop on time. */
static void refuse_huge_env(struct cs_e2e *e, void *arg)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct cs_status st = {0};
    char name[64];
    int64_t t0;
    int rc;

    (void)arg;
    cs_e2e_name(name, sizeof(name), "hugeenv");
    job.name = name;
    job.shell = "true";
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    struct kv_map run_env =
        kv_make(&csched__v1__trigger_job_request__env_entry__descriptor, 60000, "x");
    t0 = cs_test_now_ms();
    rc = trigger_env(e, name, &run_env, NULL, &st);
    kv_free(&run_env);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, "env has more than 4096 entries");

    cs_e2e_name(name, sizeof(name), "hugejob");
    struct kv_map env = kv_make(&csched__v1__job__env_entry__descriptor, 70000, "x");
    job.env = env.ptrs;
    job.n_env = env.n;
    rc = cs_e2e_try_create_job(e, &job, &st);
    kv_free(&env);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "job.env has more than 4096 entries");
    if (cs_test_now_ms() - t0 > 5000)
        fail_msg("refusing two requests took %lld ms", (long long)(cs_test_now_ms() - t0));
}

static void test_e2e_limits_huge_env_refused_on_time(void **state)
{
    cs_e2e_assert_loop_free(*state, "a TriggerJob of 60,000 variables and a CreateJob of 70,000",
                            refuse_huge_env, NULL);
}

/* The largest job and run the limits accept (1024 variables each, the job
 * near its 1 MiB exec limit, the run near 64 KiB) start, merge and end
 * with the loop on time, the run's overrides winning. */
struct largest {
    const char *job;
    const struct kv_map *run_env;
};

static void run_largest(struct cs_e2e *e, void *arg)
{
    const struct largest *l = arg;
    int64_t ids[10];

    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(ids); i++) {
        struct cs_status st = {0};
        int rc = trigger_env(e, l->job, l->run_env, &ids[i], &st);
        if (rc != 0)
            fail_msg("the largest TriggerJob: %s \"%s\"", cs_status_code_name(rc), st.message);
    }
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(ids); i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);
        assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        csched__v1__run__free_unpacked(run, NULL);
    }
}

static void test_e2e_limits_largest_accepted_on_time(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64], shell[128];
    char *job_value = repeat('j', 1000), *run_value = repeat('r', 50);

    cs_e2e_name(name, sizeof(name), "largest");
    job.name = name;
    /* V1023 is in both maps: the run's value must win. */
    (void)snprintf(shell, sizeof(shell), "test \"$V1023\" = %s", run_value);
    job.shell = shell;
    struct kv_map env =
        kv_make(&csched__v1__job__env_entry__descriptor, ENV_ENTRIES_MAX, job_value);
    job.env = env.ptrs;
    job.n_env = env.n;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    kv_free(&env);
    struct kv_map run_env = kv_make(&csched__v1__trigger_job_request__env_entry__descriptor,
                                    ENV_ENTRIES_MAX, run_value);
    struct largest l = {name, &run_env};
    cs_e2e_assert_loop_free(e, "ten runs of the largest job and run", run_largest, &l);
    kv_free(&run_env);
    free(job_value);
    free(run_value);
}

/* 150 runs of 60 KB each (9 MB) come in pages of at most 2 MiB and a run,
 * newest first, every run exactly once, whatever page_size asks, with the
 * loop on time. */
static void page_runs(struct cs_e2e *e, void *arg)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    enum { N = 150 };
    int64_t ids[N], seen[N + 1];
    size_t n_seen = 0, pages = 0;
    char name[64];
    char *value = repeat('p', 60000);

    (void)arg;

    cs_e2e_name(name, sizeof(name), "paged");
    job.name = name;
    job.shell = "true";
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    struct kv_map run_env =
        kv_make(&csched__v1__trigger_job_request__env_entry__descriptor, 1, value);
    for (size_t i = 0; i < N; i++) {
        struct cs_status st = {0};
        int rc = trigger_env(e, name, &run_env, &ids[i], &st);
        if (rc != 0)
            fail_msg("trigger %zu: %s \"%s\"", i, cs_status_code_name(rc), st.message);
    }
    kv_free(&run_env);
    free(value);

    char *token = strdup("");
    do {
        Csched__V1__ListRunsResponse *page;
        struct cs_status st = {0};
        int rc = list_runs(e, name, 1000, token, &page, &st);
        if (rc != 0)
            fail_msg("ListRuns page %zu: %s \"%s\"", pages, cs_status_code_name(rc), st.message);
        size_t bytes = csched__v1__list_runs_response__get_packed_size(page);
        if (bytes > PAGE_BYTES + 2 * RUN_BYTES_MAX)
            fail_msg("ListRuns page %zu is %zu bytes, over 2 MiB and a run", pages, bytes);
        for (size_t i = 0; i < page->n_runs; i++) {
            assert_true(n_seen < N);
            if (n_seen > 0 && page->runs[i]->id >= seen[n_seen - 1])
                fail_msg("run %lld after %lld: not newest first, or twice",
                         (long long)page->runs[i]->id, (long long)seen[n_seen - 1]);
            seen[n_seen++] = page->runs[i]->id;
        }
        free(token);
        token = strdup(page->next_page_token);
        csched__v1__list_runs_response__free_unpacked(page, NULL);
        pages++;
    } while (token[0] != '\0');
    free(token);
    assert_int_equal(n_seen, N);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(seen[i], ids[N - 1 - i]);
    if (pages < 3)
        fail_msg("9 MB of runs came in %zu pages", pages);
    for (size_t i = 0; i < N; i++)
        csched__v1__run__free_unpacked(cs_e2e_wait_end(e, ids[i]), NULL);
}

static void test_e2e_limits_runs_paged_by_bytes(void **state)
{
    cs_e2e_assert_loop_free(*state, "triggering and listing 9 MB of runs", page_runs, NULL);
}

/* Five jobs of 900 KB (4.5 MB) come in ListJobs pages of at most 2 MiB and
 * a job, every job exactly once, in name order. */
static void test_e2e_limits_jobs_paged_by_bytes(void **state)
{
    struct cs_e2e *e = *state;
    enum { N = 5 };
    char names[N][96], prefix[64];
    char *shell = repeat(':', 100000);
    size_t seen = 0, pages = 0;

    /* Names that sort before every other test's jobs, in creation order. */
    cs_e2e_name(prefix, sizeof(prefix), "0big");
    for (size_t i = 0; i < N; i++) {
        Csched__V1__Job job = CSCHED__V1__JOB__INIT;
        char *args[9];
        (void)snprintf(names[i], sizeof(names[i]), "%s-%zu", prefix, i);
        for (size_t a = 0; a < CS_E2E_ARRAY_LEN(args); a++)
            args[a] = shell;
        job.name = names[i];
        job.command = args;
        job.n_command = CS_E2E_ARRAY_LEN(args);
        csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    }
    free(shell);

    char *token = strdup("");
    do {
        Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
        Csched__V1__ListJobsResponse *page = NULL;
        struct cs_status st = {0};
        req.page_size = 1000;
        req.page_token = token;
        int rc = cs_scheduler_list_jobs(e->client, &req, &page, cs_e2e_opts(), &st);
        if (rc != 0)
            fail_msg("ListJobs page %zu: %s \"%s\"", pages, cs_status_code_name(rc), st.message);
        size_t bytes = csched__v1__list_jobs_response__get_packed_size(page);
        if (bytes > PAGE_BYTES + 1024 * 1024)
            fail_msg("ListJobs page %zu is %zu bytes, over 2 MiB and a job", pages, bytes);
        for (size_t i = 0; i < page->n_jobs; i++)
            if (strncmp(page->jobs[i]->name, prefix, strlen(prefix)) == 0) {
                assert_true(seen < N);
                assert_string_equal(page->jobs[i]->name, names[seen]);
                seen++;
            }
        free(token);
        token = strdup(page->next_page_token);
        csched__v1__list_jobs_response__free_unpacked(page, NULL);
        pages++;
    } while (token[0] != '\0');
    free(token);
    assert_int_equal(seen, N);
    if (pages < 3)
        fail_msg("4.5 MB of jobs came in %zu pages", pages);
}

/* cschedd's environment carries database credentials here (set before it
 * starts, below); a job sees none of them, but the PG* name its own env
 * sets. */
static void test_e2e_limits_no_secrets_in_jobs(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char name[64];
    size_t len;

    cs_e2e_name(name, sizeof(name), "secrets");
    job.name = name;
    job.shell = "env";
    struct kv_map env = kv_make(&csched__v1__job__env_entry__descriptor, 1, "jobs-own");
    free(env.ptrs[0]->key);
    env.ptrs[0]->key = strdup("PGHOST");
    job.env = env.ptrs;
    job.n_env = env.n;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    kv_free(&env);
    int64_t id = cs_e2e_trigger(e, name);
    Csched__V1__Run *run = cs_e2e_wait_end(e, id);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
    char *out = cs_e2e_read_logs(e, id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    static const char *const secrets[] = {"PGPASSWORD", "PGCONNECT_TIMEOUT", "DATABASE_URL",
                                          "s3cret"};
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(secrets); i++)
        if (strstr(out, secrets[i]) != NULL)
            fail_msg("a job's environment holds %s:\n%s", secrets[i], out);
    if (strstr(out, "\nPGHOST=jobs-own\n") == NULL || strstr(out, "CSCHED_RUN_ID=") == NULL)
        fail_msg("the job's own PGHOST or CSCHED_RUN_ID is missing:\n%s", out);
    free(out);
}

/* The server inherits this process's environment: give it credentials a
 * job must not see. libpq reads PGPASSWORD and PGCONNECT_TIMEOUT too, and
 * neither stops it from reaching the test database. */
static int setup(void **state)
{
    if (setenv("PGPASSWORD", "s3cret-pw", 1) != 0 || setenv("PGCONNECT_TIMEOUT", "10", 1) != 0 ||
        setenv("DATABASE_URL", "postgresql://u:s3cret@db.invalid/x", 1) != 0 ||
        setenv("APP_DATABASE_URL", "postgresql://u:s3cret@db.invalid/y", 1) != 0)
        return -1;
    return cs_e2e_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_limits_each_named),
        cmocka_unit_test(test_e2e_limits_huge_env_refused_on_time),
        cmocka_unit_test(test_e2e_limits_largest_accepted_on_time),
        cmocka_unit_test(test_e2e_limits_runs_paged_by_bytes),
        cmocka_unit_test(test_e2e_limits_jobs_paged_by_bytes),
        cmocka_unit_test(test_e2e_limits_no_secrets_in_jobs),
    };
    return cmocka_run_group_tests(tests, setup, cs_e2e_teardown);
}
