/* End-to-end tests of the audit trail: who made each change (created_by,
 * updated_by, triggered_by), one audit row per change, trigger and cancel
 * and per refused call, ListAudit's paging and filters, and a row that
 * commits with its change (kill -9 right after a trigger's reply), the
 * expiry of old rows, refusals whose job name or message a database index
 * or text column would not take as they came, and every method of the
 * proto that changes jobs or runs, made and refused. One server, with
 * --audit-retention-days 1, serves every test of this file. */
#include <libpq-fe.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "access.h"
#include "e2e.h"
#include "testlib.h"

/* What the server calls this test's calls over its unix socket:
 * "unix:uid=N(name)". */
static const char *who_am_i(void)
{
    static char who[300];
    if (who[0] == '\0') {
        const struct passwd *pw = getpwuid(geteuid());
        (void)snprintf(who, sizeof(who), "unix:uid=%u(%s)", (unsigned)geteuid(),
                       pw != NULL ? pw->pw_name : "?");
    }
    return who;
}
#define WHO who_am_i()

static Csched__V1__ListAuditResponse *list_audit(struct cs_e2e *e,
                                                 const Csched__V1__ListAuditRequest *req)
{
    Csched__V1__ListAuditResponse *resp = NULL;
    struct cs_status st = {0};
    int rc = cs_scheduler_list_audit(e->client, req, &resp, cs_e2e_opts(), &st);

    if (rc != 0)
        fail_msg("ListAudit: %s \"%s\"", cs_status_code_name(rc), st.message);
    return resp;
}

static Csched__V1__ListAuditResponse *audit_of_job(struct cs_e2e *e, const char *job)
{
    Csched__V1__ListAuditRequest req = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;

    req.job_name = (char *)job;
    return list_audit(e, &req);
}

static void assert_entry(const Csched__V1__AuditEntry *a, const char *method, const char *job,
                         int code)
{
    assert_string_equal(a->method, method);
    assert_string_equal(a->job_name, job);
    assert_string_equal(a->identity, WHO);
    assert_int_equal(a->code, code);
    assert_true(a->at_unix_ms > 0);
}

/* Create, update, trigger, cancel and delete each leave one OK row naming
 * the caller and the target, newest first; the job and the run say who. */
static void test_e2e_audit_every_change(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    struct cs_status st = {0};

    cs_e2e_name(name, sizeof(name), "audited");
    Csched__V1__Job *job = cs_e2e_create_shell_job(e, name, "sleep 30");
    assert_string_equal(job->created_by, WHO);
    assert_string_equal(job->updated_by, WHO);

    Csched__V1__UpdateJobRequest up = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    Csched__V1__Job *updated = NULL;
    up.job = job;
    assert_int_equal(cs_scheduler_update_job(e->client, &up, &updated, cs_e2e_opts(), &st), 0);
    assert_int_equal(updated->version, 2);
    assert_string_equal(updated->created_by, WHO);
    csched__v1__job__free_unpacked(updated, NULL);
    Csched__V1__Job *got = cs_e2e_get_job(e, name);
    assert_string_equal(got->created_by, WHO);
    assert_string_equal(got->updated_by, WHO);
    csched__v1__job__free_unpacked(got, NULL);

    int64_t run_id = cs_e2e_trigger(e, name);
    Csched__V1__Run *run = cs_e2e_get_run(e, run_id);
    assert_string_equal(run->triggered_by, WHO);
    csched__v1__run__free_unpacked(run, NULL);

    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *cancelled = NULL;
    cancel.run_id = run_id;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &cancel, &cancelled, cs_e2e_opts(), &st),
                     0);
    csched__v1__run__free_unpacked(cancelled, NULL);
    run = cs_e2e_wait_end(e, run_id);
    assert_string_equal(run->triggered_by, WHO);
    csched__v1__run__free_unpacked(run, NULL);

    /* A finished run comes from the store: triggered_by was stored. */
    Csched__V1__ListRunsRequest lr = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *runs = NULL;
    lr.job_name = name;
    assert_int_equal(cs_scheduler_list_runs(e->client, &lr, &runs, cs_e2e_opts(), &st), 0);
    assert_int_equal(runs->n_runs, 1);
    assert_string_equal(runs->runs[0]->triggered_by, WHO);
    csched__v1__list_runs_response__free_unpacked(runs, NULL);

    Csched__V1__DeleteJobRequest del = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *deleted = NULL;
    del.name = name;
    assert_int_equal(cs_scheduler_delete_job(e->client, &del, &deleted, cs_e2e_opts(), &st), 0);
    csched__v1__delete_job_response__free_unpacked(deleted, NULL);

    Csched__V1__ListAuditResponse *audit = audit_of_job(e, name);
    assert_int_equal(audit->n_entries, 5);
    assert_entry(audit->entries[0], "DeleteJob", name, 0);
    assert_entry(audit->entries[1], "CancelRun", name, 0);
    assert_int_equal(audit->entries[1]->run_id, run_id);
    assert_entry(audit->entries[2], "TriggerJob", name, 0);
    assert_int_equal(audit->entries[2]->run_id, run_id);
    assert_entry(audit->entries[3], "UpdateJob", name, 0);
    assert_entry(audit->entries[4], "CreateJob", name, 0);
    for (size_t i = 1; i < audit->n_entries; i++)
        assert_true(audit->entries[i]->id < audit->entries[i - 1]->id);
    assert_string_equal(audit->next_page_token, "");
    csched__v1__list_audit_response__free_unpacked(audit, NULL);
    csched__v1__job__free_unpacked(job, NULL);
}

/* Refused calls leave a row with their status and message; reads leave
 * none. */
static void test_e2e_audit_refusals(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    struct cs_status st = {0};
    Csched__V1__Job bad = CSCHED__V1__JOB__INIT;

    cs_e2e_name(name, sizeof(name), "refused");
    bad.name = name; /* no command */
    cs_e2e_assert_status(cs_e2e_try_create_job(e, &bad, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "command");
    Csched__V1__TriggerJobRequest trig = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    trig.job_name = name;
    cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &trig, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, "does not exist");
    Csched__V1__GetJobRequest get = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL;
    get.name = name;
    cs_e2e_assert_status(cs_scheduler_get_job(e->client, &get, &job, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_NOT_FOUND, NULL);

    Csched__V1__ListAuditResponse *audit = audit_of_job(e, name);
    assert_int_equal(audit->n_entries, 2);
    assert_entry(audit->entries[0], "TriggerJob", name, GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(audit->entries[0]->message, "does not exist"));
    assert_entry(audit->entries[1], "CreateJob", name, GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(audit->entries[1]->message, "command"));
    csched__v1__list_audit_response__free_unpacked(audit, NULL);
}

/* A refused trigger of a job name of 600000 bytes is recorded under its
 * first 128 bytes, and a refusal whose message quotes a name cut inside a
 * character is recorded with that character replaced: neither row is lost
 * (the database refused both, and the batch they were in). */
static void test_e2e_audit_refusals_of_hostile_text(void **state)
{
    struct cs_e2e *e = *state;
    struct cs_status st = {0};
    enum { HUGE = 600000 };
    char *huge = malloc(HUGE + 1);
    char kept[129];

    assert_non_null(huge);
    cs_e2e_name(huge, 64, "hostile");
    size_t n = strlen(huge);
    memset(huge + n, 'x', HUGE - n);
    huge[HUGE] = '\0';
    memcpy(kept, huge, 128);
    kept[128] = '\0';
    Csched__V1__TriggerJobRequest trig = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    trig.job_name = huge;
    cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &trig, &run, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "job_name");
    free(huge);
    Csched__V1__ListAuditResponse *audit = audit_of_job(e, kept);
    assert_int_equal(audit->n_entries, 1);
    assert_entry(audit->entries[0], "TriggerJob", kept, GRPC_STATUS_INVALID_ARGUMENT);
    csched__v1__list_audit_response__free_unpacked(audit, NULL);

    /* "job.env variable name \"%.64s\"" cuts this key inside an e-acute. */
    char name[64], key[128] = "a";
    cs_e2e_name(name, sizeof(name), "cut-utf8");
    for (int i = 0; i < 40; i++)
        strcat(key, "\xc3\xa9");
    strcat(key, "=");
    Csched__V1__Job bad = CSCHED__V1__JOB__INIT;
    Csched__V1__Job__EnvEntry env = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry *envp[] = {&env};
    char *argv[] = {"true"};
    env.key = key;
    env.value = "v";
    bad.name = name;
    bad.command = argv;
    bad.n_command = 1;
    bad.env = envp;
    bad.n_env = 1;
    cs_e2e_assert_status(cs_e2e_try_create_job(e, &bad, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "contains '='");
    audit = audit_of_job(e, name);
    assert_int_equal(audit->n_entries, 1);
    assert_entry(audit->entries[0], "CreateJob", name, GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(audit->entries[0]->message, "\xc3\xa9?\" contains '='"));
    csched__v1__list_audit_response__free_unpacked(audit, NULL);
}

/* Pages of two follow each other newest first without gaps; each filter
 * narrows the rows; a bad token and an empty range are refused. */
static void test_e2e_audit_paging_and_filters(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    int64_t runs[5];
    struct cs_status st = {0};

    cs_e2e_name(name, sizeof(name), "paged");
    Csched__V1__Job *job = cs_e2e_create_shell_job(e, name, "true");
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(runs); i++)
        runs[i] = cs_e2e_trigger(e, name);

    Csched__V1__ListAuditRequest req = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    char token[64] = "";
    size_t seen = 0, pages = 0;
    int64_t last_id = INT64_MAX;
    req.job_name = name;
    req.method = "TriggerJob";
    req.page_size = 2;
    do {
        req.page_token = token;
        Csched__V1__ListAuditResponse *page = list_audit(e, &req);
        pages++;
        for (size_t i = 0; i < page->n_entries; i++, seen++) {
            assert_true(page->entries[i]->id < last_id);
            last_id = page->entries[i]->id;
            assert_int_equal(page->entries[i]->run_id, runs[CS_E2E_ARRAY_LEN(runs) - 1 - seen]);
        }
        snprintf(token, sizeof(token), "%s", page->next_page_token);
        csched__v1__list_audit_response__free_unpacked(page, NULL);
    } while (token[0] != '\0');
    assert_int_equal(seen, 5);
    assert_int_equal(pages, 3);

    /* By run, by identity, by time. */
    Csched__V1__ListAuditRequest one = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    one.run_id = runs[2];
    Csched__V1__ListAuditResponse *r = list_audit(e, &one);
    assert_int_equal(r->n_entries, 1);
    assert_entry(r->entries[0], "TriggerJob", name, 0);
    int64_t at = r->entries[0]->at_unix_ms;
    csched__v1__list_audit_response__free_unpacked(r, NULL);

    Csched__V1__ListAuditRequest nobody = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    nobody.identity = "unix:uid=12345(nobody)";
    r = list_audit(e, &nobody);
    assert_int_equal(r->n_entries, 0);
    csched__v1__list_audit_response__free_unpacked(r, NULL);

    Csched__V1__ListAuditRequest by_time = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    by_time.job_name = name;
    by_time.since_unix_ms = at + 3600 * 1000;
    r = list_audit(e, &by_time);
    assert_int_equal(r->n_entries, 0);
    csched__v1__list_audit_response__free_unpacked(r, NULL);
    by_time.since_unix_ms = 0;
    by_time.until_unix_ms = job->created_unix_ms; /* before the CreateJob */
    r = list_audit(e, &by_time);
    assert_int_equal(r->n_entries, 0);
    csched__v1__list_audit_response__free_unpacked(r, NULL);
    by_time.until_unix_ms = at + 3600 * 1000;
    by_time.identity = (char *)WHO;
    r = list_audit(e, &by_time);
    assert_int_equal(r->n_entries, 6);
    assert_entry(r->entries[5], "CreateJob", name, 0);
    csched__v1__list_audit_response__free_unpacked(r, NULL);

    Csched__V1__ListAuditRequest bad = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    Csched__V1__ListAuditResponse *none = NULL;
    bad.page_token = "x1";
    cs_e2e_assert_status(cs_scheduler_list_audit(e->client, &bad, &none, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "page_token");
    bad.page_token = "";
    bad.since_unix_ms = 2000;
    bad.until_unix_ms = 1000;
    cs_e2e_assert_status(cs_scheduler_list_audit(e->client, &bad, &none, cs_e2e_opts(), &st), &st,
                         GRPC_STATUS_INVALID_ARGUMENT, "until_unix_ms");
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(runs); i++)
        csched__v1__run__free_unpacked(cs_e2e_wait_end(e, runs[i]), NULL);
    csched__v1__job__free_unpacked(job, NULL);
}

/* The trigger's run and its audit row commit together: killed with -9 the
 * moment the reply arrives, the restarted server has both. */
static void test_e2e_audit_commits_with_the_trigger(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];

    cs_e2e_name(name, sizeof(name), "killed");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    int64_t run_id = cs_e2e_trigger(e, name);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);

    Csched__V1__Run *run = cs_e2e_get_run(e, run_id);
    assert_string_equal(run->triggered_by, WHO);
    csched__v1__run__free_unpacked(run, NULL);
    Csched__V1__ListAuditRequest req = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    req.run_id = run_id;
    Csched__V1__ListAuditResponse *audit = list_audit(e, &req);
    assert_int_equal(audit->n_entries, 1);
    assert_entry(audit->entries[0], "TriggerJob", name, 0);
    csched__v1__list_audit_response__free_unpacked(audit, NULL);

    /* Ids go on after the restart: a new row sorts first. */
    int64_t again = cs_e2e_trigger(e, name);
    audit = audit_of_job(e, name);
    assert_int_equal(audit->n_entries, 3);
    assert_int_equal(audit->entries[0]->run_id, again);
    csched__v1__list_audit_response__free_unpacked(audit, NULL);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, run_id), NULL);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, again), NULL);
}

static long sql_count(struct cs_e2e *e, const char *sql)
{
    PGconn *conn = PQconnectdb(cs_testpg_url(e->pg));
    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    PGresult *res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(conn));
    long n = PQresultStatus(res) == PGRES_TUPLES_OK ? strtol(PQgetvalue(res, 0, 0), NULL, 10) : 0;
    PQclear(res);
    PQfinish(conn);
    return n;
}

/* A row older than the retention goes at the first expiry (5 s after the
 * start; the test before restarted the server); a fresh one stays. */
static void test_e2e_audit_old_rows_expire(void **state)
{
    struct cs_e2e *e = *state;

    (void)sql_count(e, "INSERT INTO audit (id, at_unix_ms, method, identity, code)"
                       " VALUES (-1, 1000, 'CreateJob', 'long-ago', 0)");
    assert_int_equal(sql_count(e, "SELECT count(*) FROM audit WHERE id = -1"), 1);
    long left = 1;
    for (int i = 0; i < 150 && left > 0; i++) {
        cs_test_sleep_ms(100);
        left = sql_count(e, "SELECT count(*) FROM audit WHERE id = -1");
    }
    assert_int_equal(left, 0);
    assert_true(sql_count(e, "SELECT count(*) FROM audit WHERE id > 0") > 0);
}

/* --- every method that changes jobs or runs ------------------------------ */

static void delete_job(struct cs_e2e *e, const char *name)
{
    Csched__V1__DeleteJobRequest del = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *deleted = NULL;
    struct cs_status st = {0};
    del.name = (char *)name;
    assert_int_equal(cs_scheduler_delete_job(e->client, &del, &deleted, cs_e2e_opts(), &st), 0);
    csched__v1__delete_job_response__free_unpacked(deleted, NULL);
}

static void pause_job(struct cs_e2e *e, const char *name)
{
    Csched__V1__PauseJobRequest req = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL;
    struct cs_status st = {0};
    req.name = (char *)name;
    assert_int_equal(cs_scheduler_pause_job(e->client, &req, &job, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(job, NULL);
}

static void call_create(struct cs_e2e *e, const char *name)
{
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
}

static void call_update(struct cs_e2e *e, const char *name)
{
    Csched__V1__Job *job = cs_e2e_create_shell_job(e, name, "true"), *updated = NULL;
    Csched__V1__UpdateJobRequest up = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    struct cs_status st = {0};
    up.job = job;
    assert_int_equal(cs_scheduler_update_job(e->client, &up, &updated, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(updated, NULL);
    csched__v1__job__free_unpacked(job, NULL);
}

static void call_delete(struct cs_e2e *e, const char *name)
{
    call_create(e, name);
    delete_job(e, name);
}

static void call_trigger(struct cs_e2e *e, const char *name)
{
    call_create(e, name);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, name)), NULL);
}

static void call_cancel(struct cs_e2e *e, const char *name)
{
    Csched__V1__CancelRunRequest cancel = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *cancelled = NULL;
    struct cs_status st = {0};
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "sleep 30"), NULL);
    cancel.run_id = cs_e2e_trigger(e, name);
    assert_int_equal(cs_scheduler_cancel_run(e->client, &cancel, &cancelled, cs_e2e_opts(), &st),
                     0);
    csched__v1__run__free_unpacked(cancelled, NULL);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cancel.run_id), NULL);
}

static void call_pause(struct cs_e2e *e, const char *name)
{
    call_create(e, name);
    pause_job(e, name);
}

static void call_resume(struct cs_e2e *e, const char *name)
{
    Csched__V1__ResumeJobRequest req = CSCHED__V1__RESUME_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL;
    struct cs_status st = {0};
    call_pause(e, name);
    req.name = (char *)name;
    assert_int_equal(cs_scheduler_resume_job(e->client, &req, &job, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(job, NULL);
}

/* The hourly slots two and three hours back: two runs of "true". */
static void call_backfill(struct cs_e2e *e, const char *name)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    Csched__V1__BackfillJobRequest req = CSCHED__V1__BACKFILL_JOB_REQUEST__INIT;
    Csched__V1__BackfillJobResponse *resp = NULL;
    struct cs_status st = {0};
    int64_t hour_ms = 3600 * 1000, now_ms = (int64_t)time(NULL) * 1000;

    job.name = (char *)name;
    job.shell = "true";
    sc.text = "@every 1h";
    job.schedule = &sc;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    req.name = (char *)name;
    req.from_unix_ms = now_ms / hour_ms * hour_ms - 3 * hour_ms;
    req.to_unix_ms = req.from_unix_ms + hour_ms;
    if (cs_scheduler_backfill_job(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("BackfillJob: %s %s", cs_status_code_name(st.code), st.message);
    assert_int_equal(resp->runs_created, 2);
    csched__v1__backfill_job_response__free_unpacked(resp, NULL);
    /* Paused, the job makes no more runs while the other tests go on. */
    pause_job(e, name);
}

/* SetClusterLimits names no job: as it succeeds (0, no limit, as the
 * server started), and refused (past the bound), with its status. */
static int set_cluster_limit(struct cs_e2e *e, uint32_t max_running)
{
    Csched__V1__SetClusterLimitsRequest req = CSCHED__V1__SET_CLUSTER_LIMITS_REQUEST__INIT;
    Csched__V1__ClusterLimits *limits = NULL;
    struct cs_status st = {0};

    req.max_running = max_running;
    int code = cs_scheduler_set_cluster_limits(e->client, &req, &limits, cs_e2e_opts(), &st);
    if (limits != NULL)
        csched__v1__cluster_limits__free_unpacked(limits, NULL);
    return code;
}

static void call_set_cluster_limits(struct cs_e2e *e, const char *job_name)
{
    (void)job_name;
    assert_int_equal(set_cluster_limit(e, 0), 0);
}

static int refuse_set_cluster_limits(struct cs_e2e *e)
{
    return set_cluster_limit(e, 100001);
}

/* A call, made as it succeeds, of each method that changes jobs or runs;
 * for a method that names no job or run, a call refused too. */
static const struct change_call {
    const char *method;
    void (*call_cb)(struct cs_e2e *e, const char *job_name);
    int (*refuse_cb)(struct cs_e2e *e);
} change_calls[] = {
    {"CreateJob", call_create, NULL},
    {"UpdateJob", call_update, NULL},
    {"DeleteJob", call_delete, NULL},
    {"TriggerJob", call_trigger, NULL},
    {"CancelRun", call_cancel, NULL},
    {"PauseJob", call_pause, NULL},
    {"ResumeJob", call_resume, NULL},
    {"BackfillJob", call_backfill, NULL},
    {"SetClusterLimits", call_set_cluster_limits, refuse_set_cluster_limits},
};

/* A method that names no job or run: one OK row without a target, then one
 * with the refusal's status. */
static void assert_untargeted(struct cs_e2e *e, const struct change_call *c);

/* The rows of method about job_name, or of run_id when job_name is NULL. */
static Csched__V1__ListAuditResponse *audit_of(struct cs_e2e *e, const char *method,
                                               const char *job_name, int64_t run_id)
{
    Csched__V1__ListAuditRequest req = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    req.method = (char *)method;
    req.job_name = (char *)(job_name != NULL ? job_name : "");
    req.run_id = run_id;
    return list_audit(e, &req);
}

/* Sets the field of msg named name to value (a string), if it has one. */
static bool set_string(ProtobufCMessage *msg, const char *name, const char *value)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
    if (f == NULL || f->type != PROTOBUF_C_TYPE_STRING)
        return false;
    *(const char **)((char *)msg + f->offset) = value;
    return true;
}

/* The request of method naming job_name (as job_name, name or job.name) or
 * else the run run_id, packed into buf (cap bytes): its length. *by_run:
 * whether it names the run. */
static size_t request_naming(const ProtobufCMethodDescriptor *method, const char *job_name,
                             int64_t run_id, uint8_t *buf, size_t cap, bool *by_run)
{
    const ProtobufCMessageDescriptor *desc = method->input;
    ProtobufCMessage *req = calloc(1, desc->sizeof_message), *job = NULL;
    const ProtobufCFieldDescriptor *f;

    assert_non_null(req);
    protobuf_c_message_init(desc, req);
    *by_run = false;
    if (!set_string(req, "job_name", job_name) && !set_string(req, "name", job_name)) {
        if ((f = protobuf_c_message_descriptor_get_field_by_name(desc, "job")) != NULL) {
            const ProtobufCMessageDescriptor *jd = f->descriptor;
            job = calloc(1, jd->sizeof_message);
            assert_non_null(job);
            protobuf_c_message_init(jd, job);
            assert_true(set_string(job, "name", job_name));
            *(ProtobufCMessage **)((char *)req + f->offset) = job;
        } else if ((f = protobuf_c_message_descriptor_get_field_by_name(desc, "run_id")) != NULL) {
            *(int64_t *)((char *)req + f->offset) = run_id;
            *by_run = true;
        } else {
            fail_msg("%s's request names no job and no run", method->name);
        }
    }
    assert_true(protobuf_c_message_get_packed_size(req) <= cap);
    size_t len = protobuf_c_message_pack(req, buf);
    free(job);
    free(req);
    return len;
}

/* Every method of the service that access.c marks as changing jobs or runs
 * leaves an OK row naming its job when it succeeds, and a row with its
 * status naming its target when it is refused; a method this test has no
 * call of fails it, so that a new one gets one. */
static void test_e2e_audit_every_changing_method(void **state)
{
    struct cs_e2e *e = *state;
    const ProtobufCServiceDescriptor *svc = &csched__v1__scheduler__descriptor;
    size_t walked = 0;

    for (unsigned m = 0; m < svc->n_methods; m++) {
        const ProtobufCMethodDescriptor *method = &svc->methods[m];
        char path[200], name[64], missing[64];
        (void)snprintf(path, sizeof(path), "/%s/%s", svc->name, method->name);
        if (!cs_access_changes(path))
            continue;
        const struct change_call *c = NULL;
        for (size_t i = 0; i < CS_E2E_ARRAY_LEN(change_calls) && c == NULL; i++)
            if (strcmp(change_calls[i].method, method->name) == 0)
                c = &change_calls[i];
        if (c == NULL)
            fail_msg("%s changes jobs or runs (server/access.c), and this test has no call of "
                     "it: add one to change_calls",
                     path);
        walked++;
        if (c->refuse_cb != NULL) {
            assert_untargeted(e, c);
            continue;
        }

        cs_e2e_name(name, sizeof(name), method->name);
        c->call_cb(e, name);
        Csched__V1__ListAuditResponse *audit = audit_of(e, method->name, name, 0);
        if (audit->n_entries != 1 || audit->entries[0]->code != 0)
            fail_msg("%s of job %s left %zu rows, not one OK row", method->name, name,
                     audit->n_entries);
        assert_entry(audit->entries[0], method->name, name, 0);
        csched__v1__list_audit_response__free_unpacked(audit, NULL);

        /* Refused: the job (or run) does not exist, or the job is not whole. */
        uint8_t buf[512];
        struct cs_status st = {0};
        int64_t no_run = INT64_C(1) << 40;
        bool by_run;
        cs_e2e_name(missing, sizeof(missing), "missing");
        size_t len = request_naming(method, missing, no_run, buf, sizeof(buf), &by_run);
        int code = cs_e2e_raw_unary(e, path, buf, len, &st);
        if (code == 0)
            fail_msg("%s naming no job that exists succeeded", path);
        audit = audit_of(e, method->name, by_run ? NULL : missing, by_run ? no_run : 0);
        if (audit->n_entries != 1)
            fail_msg("%s refused (%s \"%s\") left %zu rows naming its target, not one", path,
                     cs_status_code_name(code), st.message, audit->n_entries);
        assert_int_equal(audit->entries[0]->code, code);
        csched__v1__list_audit_response__free_unpacked(audit, NULL);
    }
    assert_int_equal(walked, CS_E2E_ARRAY_LEN(change_calls));
}

static void assert_untargeted(struct cs_e2e *e, const struct change_call *c)
{
    c->call_cb(e, NULL);
    Csched__V1__ListAuditResponse *audit = audit_of(e, c->method, "", 0);
    if (audit->n_entries != 1 || audit->entries[0]->code != 0)
        fail_msg("%s left %zu rows, not one OK row", c->method, audit->n_entries);
    assert_entry(audit->entries[0], c->method, "", 0);
    csched__v1__list_audit_response__free_unpacked(audit, NULL);
    int code = c->refuse_cb(e);
    assert_int_not_equal(code, 0);
    audit = audit_of(e, c->method, "", 0);
    if (audit->n_entries != 2)
        fail_msg("%s refused (%s) left %zu rows in all, not two", c->method,
                 cs_status_code_name(code), audit->n_entries);
    assert_int_equal(audit->entries[0]->code, code);
    csched__v1__list_audit_response__free_unpacked(audit, NULL);
}

static int setup(void **state)
{
    if (setenv("CSCHED_AUDIT_RETENTION_DAYS", "1", 1) != 0)
        return -1;
    return cs_e2e_setup(state);
}

/* Refusals past 60 a minute of one caller are not recorded one by one: a
 * caller with no role, refused thousands of times a second, filled the
 * database's disk with their rows (integration_e2e_refusals waits for the
 * row that says how many were left out). Last in this file: the refusals
 * after it in the same minute would be left out. */
static void test_e2e_audit_refusals_budget(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__TriggerJobRequest trig = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    char name[64];

    cs_e2e_name(name, sizeof(name), "no-such-job");
    trig.job_name = name;
    for (int i = 0; i < 70; i++)
        cs_e2e_assert_status(cs_scheduler_trigger_job(e->client, &trig, &run, cs_e2e_opts(), &st),
                             &st, GRPC_STATUS_NOT_FOUND, "does not exist");
    Csched__V1__ListAuditResponse *audit = audit_of_job(e, name);
    if (audit->n_entries > 60)
        fail_msg("70 refusals within a minute left %zu rows", audit->n_entries);
    csched__v1__list_audit_response__free_unpacked(audit, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_audit_every_change),
        cmocka_unit_test(test_e2e_audit_refusals),
        cmocka_unit_test(test_e2e_audit_refusals_of_hostile_text),
        cmocka_unit_test(test_e2e_audit_paging_and_filters),
        cmocka_unit_test(test_e2e_audit_commits_with_the_trigger),
        cmocka_unit_test(test_e2e_audit_old_rows_expire),
        cmocka_unit_test(test_e2e_audit_every_changing_method),
        cmocka_unit_test(test_e2e_audit_refusals_budget),
    };

    return cmocka_run_group_tests(tests, setup, cs_e2e_teardown);
}
