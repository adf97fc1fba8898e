/* End-to-end tests of a job's schedule through the real API: CreateJob and
 * UpdateJob check it (INVALID_ARGUMENT naming the field and the rule),
 * GetJob shows the next fire times in the job's zone and in UTC (ListJobs
 * the next one), from the system's tz database, and a restart keeps the
 * schedule. One server serves every test of this file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

/* What CreateJob answers for a schedule, asserting INVALID_ARGUMENT with
 * the words want. */
static void assert_refused(struct cs_e2e *e, Csched__V1__Job *job, const char *want)
{
    struct cs_status st = {0};
    int rc = cs_e2e_try_create_job(e, job, &st);

    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT, want);
    csched__v1__job__free_unpacked(job, NULL);
}

static void test_e2e_schedule_refused(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job;

    assert_refused(e, cs_e2e_scheduled_job("bad-dom", "0 0 32 * *", ""),
                   "job.schedule.text: cron field 3 (day of month): 32 is out of range 1-31");
    assert_refused(e, cs_e2e_scheduled_job("bad-zone", "@daily", "Europe/Berln"),
                   "job.schedule.time_zone: unknown time zone \"Europe/Berln\"");
    /* Names that would lead out of the tz database, and its files that are
     * no zone's. */
    assert_refused(e, cs_e2e_scheduled_job("bad-path", "@daily", "../../../etc/passwd"),
                   "job.schedule.time_zone: time zone \"../../../etc/passwd\" is not a zone name");
    assert_refused(e, cs_e2e_scheduled_job("bad-abs", "@daily", "/etc/localtime"),
                   "job.schedule.time_zone: time zone \"/etc/localtime\" is not a zone name");
    assert_refused(
        e,
        cs_e2e_scheduled_job("bad-long", "@daily",
                             "Europe/Berlin/01234567890123456789012345678901234567890123456789"),
        "job.schedule.time_zone: \"Europe/Berlin/012345678901234567...\" is longer "
        "than any zone name (at most 63 bytes)");
    assert_refused(e, cs_e2e_scheduled_job("bad-tab", "@daily", "zone1970.tab"),
                   "job.schedule.time_zone: time zone \"zone1970.tab\": its file is not valid "
                   "TZif");
    assert_refused(e, cs_e2e_scheduled_job("bad-every", "@every 0s", ""), "job.schedule.text");
    job = cs_e2e_scheduled_job("bad-misfire", "@hourly", "");
    job->schedule->misfire = 7;
    assert_refused(e, job, "job.schedule.misfire 7 is not a policy");
    job = cs_e2e_scheduled_job("bad-overlap", "@hourly", "");
    job->schedule->overlap = 9;
    assert_refused(e, job, "job.schedule.overlap 9 is not a policy");
    job = cs_e2e_scheduled_job("bad-jitter", "@hourly", "");
    job->schedule->jitter_seconds = 3601;
    assert_refused(e, job, "job.schedule.jitter_seconds 3601 is over the limit of 3600");
    job = cs_e2e_scheduled_job("bad-catchup", "@hourly", "");
    job->schedule->max_catchup = 1001;
    assert_refused(e, job, "job.schedule.max_catchup");
}

/* An empty text is no schedule: a zone or policy given with it would be
 * kept and never apply, so it is refused, naming it; with nothing else
 * set, the job is made without a schedule. */
static void test_e2e_schedule_empty_text(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job;

    assert_refused(e, cs_e2e_scheduled_job("empty-zone", "", "Europe/Berlin"),
                   "job.schedule.text is empty, which means no schedule, but "
                   "job.schedule.time_zone is set");
    job = cs_e2e_scheduled_job("empty-overlap", "", "");
    job->schedule->overlap = CSCHED__V1__OVERLAP__OVERLAP_FORBID;
    assert_refused(e, job, "job.schedule.overlap is set");
    job = cs_e2e_scheduled_job("empty-deadline", "", "");
    job->schedule->starting_deadline_seconds = 60;
    assert_refused(e, job, "job.schedule.starting_deadline_seconds is set");
    job = cs_e2e_scheduled_job("empty-jitter", "", "");
    job->schedule->jitter_seconds = 5;
    assert_refused(e, job, "job.schedule.jitter_seconds is set");

    job = cs_e2e_scheduled_job("empty-none", "", "");
    Csched__V1__Job *made = cs_e2e_create_job(e, job);
    assert_true(made->schedule == NULL || made->schedule->text[0] == '\0');
    assert_int_equal(made->n_next_fires, 0);
    csched__v1__job__free_unpacked(made, NULL);
    csched__v1__job__free_unpacked(job, NULL);
}

/* 02:30 every day in Berlin: five fires a day apart, at 00:30 or 01:30
 * UTC, each local time "YYYY-MM-DD 02:30:00 +0h:00". */
static void test_e2e_schedule_next_fires(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job = cs_e2e_scheduled_job("berlin", "30 2 * * *", "Europe/Berlin"), *got;
    int64_t now_ms = (int64_t)time(NULL) * 1000;

    job->schedule->misfire = CSCHED__V1__MISFIRE__MISFIRE_RUN_ONCE;
    job->schedule->overlap = CSCHED__V1__OVERLAP__OVERLAP_FORBID;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    got = cs_e2e_get_job(e, "berlin");
    assert_non_null(got->schedule);
    assert_string_equal(got->schedule->text, "30 2 * * *");
    assert_string_equal(got->schedule->time_zone, "Europe/Berlin");
    assert_int_equal(got->schedule->misfire, CSCHED__V1__MISFIRE__MISFIRE_RUN_ONCE);
    assert_int_equal(got->schedule->overlap, CSCHED__V1__OVERLAP__OVERLAP_FORBID);
    assert_int_equal(got->n_next_fires, 5);
    for (size_t i = 0; i < got->n_next_fires; i++) {
        const Csched__V1__FireTime *f = got->next_fires[i];
        int64_t of_day = f->at_unix_ms / 1000 % 86400;

        assert_true(f->at_unix_ms > now_ms - 1000);
        assert_true(of_day == 30 * 60 || of_day == 90 * 60);
        assert_non_null(strstr(f->local_time, " 02:30:00 +0"));
        assert_false(f->dst_shifted);
        if (i > 0) {
            int64_t gap = f->at_unix_ms - got->next_fires[i - 1]->at_unix_ms;
            assert_true(gap >= 23 * 3600000LL && gap <= 25 * 3600000LL);
        }
    }

    /* ListJobs shows the first of them; a job without a schedule none. */
    Csched__V1__ListJobsRequest lreq = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    Csched__V1__ListJobsResponse *list = NULL;
    struct cs_status st = {0};
    size_t seen = 0;
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, "unscheduled", "true"), NULL);
    assert_int_equal(cs_scheduler_list_jobs(e->client, &lreq, &list, cs_e2e_opts(), &st), 0);
    for (size_t i = 0; i < list->n_jobs; i++) {
        const Csched__V1__Job *j = list->jobs[i];
        if (strcmp(j->name, "berlin") == 0) {
            assert_int_equal(j->n_next_fires, 1);
            assert_int_equal(j->next_fires[0]->at_unix_ms, got->next_fires[0]->at_unix_ms);
            assert_string_equal(j->next_fires[0]->local_time, got->next_fires[0]->local_time);
            seen++;
        } else if (strcmp(j->name, "unscheduled") == 0) {
            assert_int_equal(j->n_next_fires, 0);
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    csched__v1__list_jobs_response__free_unpacked(list, NULL);
    csched__v1__job__free_unpacked(got, NULL);
}

/* UpdateJob checks the schedule as CreateJob does, and an empty text takes
 * the schedule away. */
static void test_e2e_schedule_update(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__UpdateJobRequest req = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    Csched__V1__Job *job = cs_e2e_scheduled_job("updated", "@every 90s", ""), *resp = NULL, *got;
    struct cs_status st = {0};
    int rc;

    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    got = cs_e2e_get_job(e, "updated");
    assert_int_equal(got->n_next_fires, 5);
    assert_int_equal(got->next_fires[0]->at_unix_ms / 1000 % 90, 0);
    assert_int_equal(got->next_fires[1]->at_unix_ms - got->next_fires[0]->at_unix_ms, 90000);
    assert_non_null(strstr(got->next_fires[0]->local_time, "+00:00"));
    csched__v1__job__free_unpacked(got, NULL);

    req.job = cs_e2e_scheduled_job("updated", "61 * * * *", "");
    rc = cs_scheduler_update_job(e->client, &req, &resp, cs_e2e_opts(), &st);
    cs_e2e_assert_status(rc, &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "field 1 (minute): 61 is out of range 0-59");
    free(req.job->schedule->text);
    req.job->schedule->text = strdup("");
    rc = cs_scheduler_update_job(e->client, &req, &resp, cs_e2e_opts(), &st);
    assert_int_equal(rc, 0);
    csched__v1__job__free_unpacked(resp, NULL);
    csched__v1__job__free_unpacked(req.job, NULL);
    got = cs_e2e_get_job(e, "updated");
    assert_int_equal(got->n_next_fires, 0);
    csched__v1__job__free_unpacked(got, NULL);
}

/* GetJob with next_fires: 0 gives 5, up to 20 as asked, more than 20 gives 20
 * (the console's Job page shows 20). */
static void get_fires(struct cs_e2e *e, uint32_t asked, size_t want)
{
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__Job *got = NULL;
    struct cs_status st = {0};

    req.name = "every10";
    req.next_fires = asked;
    if (cs_scheduler_get_job(e->client, &req, &got, cs_e2e_opts(), &st) != 0)
        fail_msg("GetJob(every10, next_fires %u): %s", asked, st.message);
    assert_int_equal(got->n_next_fires, want);
    for (size_t i = 1; i < got->n_next_fires; i++)
        assert_int_equal(got->next_fires[i]->at_unix_ms - got->next_fires[i - 1]->at_unix_ms,
                         600000);
    csched__v1__job__free_unpacked(got, NULL);
}

static void test_e2e_schedule_next_fires_asked(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job = cs_e2e_scheduled_job("every10", "*/10 * * * *", "UTC");

    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    get_fires(e, 0, 5);
    get_fires(e, 1, 1);
    get_fires(e, 20, 20);
    get_fires(e, 100000, 20);
}

/* The system's tz data, not ICU 72's copy of 2022e: Almaty is at +05:00
 * since 2024-03-01, so 12:00 there is 07:00 UTC, and Ciudad Juarez (a zone
 * since 2022g) is one. */
static void test_e2e_schedule_system_zones(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job = cs_e2e_scheduled_job("almaty", "0 12 * * *", "Asia/Almaty"), *got;

    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    got = cs_e2e_get_job(e, "almaty");
    assert_int_equal(got->n_next_fires, 5);
    for (size_t i = 0; i < got->n_next_fires; i++) {
        assert_int_equal(got->next_fires[i]->at_unix_ms / 1000 % 86400, 7 * 3600);
        assert_non_null(strstr(got->next_fires[i]->local_time, " 12:00:00 +05:00"));
    }
    csched__v1__job__free_unpacked(got, NULL);

    job = cs_e2e_scheduled_job("juarez", "0 12 * * *", "America/Ciudad_Juarez");
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    got = cs_e2e_get_job(e, "juarez");
    assert_int_equal(got->n_next_fires, 5);
    assert_non_null(strstr(got->next_fires[0]->local_time, " 12:00:00 -0"));
    csched__v1__job__free_unpacked(got, NULL);
}

/* A restart reads the schedule back with the job and reads its zone again. */
static void test_e2e_schedule_restart(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job = cs_e2e_scheduled_job("kept", "0 9 * * MON-FRI", "America/New_York"),
                    *got;

    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    assert_int_equal(cs_testd_restart(e->d), 0);
    got = cs_e2e_get_job(e, "kept");
    assert_int_equal(got->n_next_fires, 5);
    assert_non_null(strstr(got->next_fires[0]->local_time, " 09:00:00 -0"));
    csched__v1__job__free_unpacked(got, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_schedule_refused),
        cmocka_unit_test(test_e2e_schedule_empty_text),
        cmocka_unit_test(test_e2e_schedule_next_fires),
        cmocka_unit_test(test_e2e_schedule_next_fires_asked),
        cmocka_unit_test(test_e2e_schedule_system_zones),
        cmocka_unit_test(test_e2e_schedule_update),
        cmocka_unit_test(test_e2e_schedule_restart),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
