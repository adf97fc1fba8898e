/* End-to-end tests of slots against a real cschedd, the real clock and a
 * real PostgreSQL: `@every 1s` schedules fire on time and once per slot,
 * the overlap policies with long commands, pause and resume, backfill, and
 * the misfire policies across a SIGKILL of the server. ListSlots is the
 * witness each time: its key (job, slot) is unique, and every started slot
 * names a run that says it was made for that slot. One server serves every
 * test of this file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define STARTED CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED
#define SKIPPED CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Creates a job running shell every second, with the given policies. */
static void create_every_second(struct cs_e2e *e, const char *name, const char *shell,
                                Csched__V1__Overlap overlap, Csched__V1__Misfire misfire,
                                uint32_t max_catchup)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;

    job.name = (char *)name;
    job.shell = (char *)shell;
    sc.text = "@every 1s";
    sc.overlap = overlap;
    sc.misfire = misfire;
    sc.max_catchup = max_catchup;
    job.schedule = &sc;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
}

/* Every slot of job, newest first (caller frees). */
static Csched__V1__ListSlotsResponse *list_slots(struct cs_e2e *e, const char *job)
{
    Csched__V1__ListSlotsRequest req = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    Csched__V1__ListSlotsResponse *resp = NULL;
    struct cs_status st = {0};

    req.job_name = (char *)job;
    req.page_size = 1000;
    if (cs_scheduler_list_slots(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListSlots(%s): %s", job, st.message);
    return resp;
}

static size_t count(const Csched__V1__ListSlotsResponse *r, Csched__V1__SlotOutcome outcome,
                    Csched__V1__SkipReason reason)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_slots; i++)
        n += r->slots[i]->outcome == outcome &&
             (outcome == STARTED || r->slots[i]->skip_reason == reason);
    return n;
}

/* How many runs job has, all made by its schedule here. */
static size_t count_runs(struct cs_e2e *e, const char *job)
{
    Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListRunsResponse *resp = NULL;
    struct cs_status st = {0};
    size_t n;

    req.job_name = (char *)job;
    req.page_size = 1000;
    if (cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("ListRuns(%s): %s", job, st.message);
    n = resp->n_runs;
    csched__v1__list_runs_response__free_unpacked(resp, NULL);
    return n;
}

/* Slots are newest first, one per second with no gap and no repeat, and
 * every started one has its own run, made for that slot. */
static void assert_slots(struct cs_e2e *e, const Csched__V1__ListSlotsResponse *r)
{
    for (size_t i = 0; i < r->n_slots; i++) {
        const Csched__V1__Slot *s = r->slots[i];
        if (i > 0)
            assert_int_equal(r->slots[i - 1]->slot_unix_ms - s->slot_unix_ms, 1000);
        /* A skipped slot names a run only when it ended that run unstarted:
         * its deadline passed in the queue, or the job was paused after the
         * run was made ahead. */
        if (s->outcome != STARTED && s->run_id != 0)
            assert_true(s->skip_reason == CSCHED__V1__SKIP_REASON__SKIP_REASON_DEADLINE_PASSED ||
                        s->skip_reason == CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED);
        if (s->outcome != STARTED && s->run_id == 0) {
            assert_true(s->message[0] != '\0');
            continue;
        }
        Csched__V1__Run *run = cs_e2e_get_run(e, s->run_id);
        assert_int_equal(run->slot_unix_ms, s->slot_unix_ms);
        assert_string_equal(run->job_name, s->job_name);
        /* A backfill's run names its caller, over the unix socket here. */
        if (s->backfill)
            assert_true(strncmp(run->triggered_by, "unix:uid=", 9) == 0);
        else
            assert_string_equal(run->triggered_by, "schedule");
        csched__v1__run__free_unpacked(run, NULL);
        for (size_t k = 0; k < i; k++)
            assert_true(r->slots[k]->run_id != s->run_id);
    }
}

/* assert_slots for every slot of a job: the job has no run but theirs (and
 * the one a slot may have made since r was read). */
static void assert_accounted(struct cs_e2e *e, const Csched__V1__ListSlotsResponse *r)
{
    assert_slots(e, r);
    if (r->n_slots > 0) {
        size_t runs = count_runs(e, r->slots[0]->job_name), started = count(r, STARTED, 0);
        assert_true(runs >= started && runs <= started + 1);
    }
}

static Csched__V1__Job *job_call(struct cs_e2e *e, const char *method, const char *name,
                                 const char *reason)
{
    struct cs_status st = {0};
    Csched__V1__Job *job = NULL;
    int rc;

    if (strcmp(method, "pause") == 0) {
        Csched__V1__PauseJobRequest req = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
        req.name = (char *)name;
        req.reason = (char *)reason;
        rc = cs_scheduler_pause_job(e->client, &req, &job, cs_e2e_opts(), &st);
    } else {
        Csched__V1__ResumeJobRequest req = CSCHED__V1__RESUME_JOB_REQUEST__INIT;
        req.name = (char *)name;
        rc = cs_scheduler_resume_job(e->client, &req, &job, cs_e2e_opts(), &st);
    }
    if (rc != 0)
        fail_msg("%s %s: %s", method, name, st.message);
    return job;
}

/* `@every 1s` fires every second, on time, each slot once with its run. */
static void test_e2e_slots_every_second(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListSlotsResponse *r;

    create_every_second(e, "tick", "true", CSCHED__V1__OVERLAP__OVERLAP_ALLOW,
                        CSCHED__V1__MISFIRE__MISFIRE_SKIP, 0);
    sleep_ms(4500);
    r = list_slots(e, "tick");
    assert_true(r->n_slots >= 4 && r->n_slots <= 5);
    assert_int_equal(count(r, STARTED, 0), r->n_slots);
    assert_accounted(e, r);
    for (size_t i = 1; i < r->n_slots; i++) {
        /* The newest may not have started yet. */
        assert_true(r->slots[i]->lateness_ms >= 0 && r->slots[i]->lateness_ms < 500);
        assert_true(r->slots[i]->decided_unix_ms - r->slots[i]->due_unix_ms < 200);
    }
    csched__v1__list_slots_response__free_unpacked(r, NULL);
}

/* A 2.5 s command every second: forbid skips the slots it overlaps,
 * queue_one lets one wait and skips the rest, replace cancels. */
static void test_e2e_slots_overlap(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListSlotsResponse *r;

    create_every_second(e, "forbid", "sleep 2.5", CSCHED__V1__OVERLAP__OVERLAP_FORBID,
                        CSCHED__V1__MISFIRE__MISFIRE_SKIP, 0);
    create_every_second(e, "queue-one", "sleep 2.5", CSCHED__V1__OVERLAP__OVERLAP_QUEUE_ONE,
                        CSCHED__V1__MISFIRE__MISFIRE_SKIP, 0);
    create_every_second(e, "replace", "sleep 30", CSCHED__V1__OVERLAP__OVERLAP_REPLACE,
                        CSCHED__V1__MISFIRE__MISFIRE_SKIP, 0);
    sleep_ms(5500);

    r = list_slots(e, "forbid");
    assert_true(r->n_slots >= 5);
    assert_true(count(r, SKIPPED, CSCHED__V1__SKIP_REASON__SKIP_REASON_OVERLAP_FORBIDDEN) >= 3);
    assert_true(count(r, STARTED, 0) >= 1 && count(r, STARTED, 0) <= 2);
    assert_accounted(e, r);
    csched__v1__list_slots_response__free_unpacked(r, NULL);

    /* One runs at a time, one waits behind it: the slots in between had a
     * run waiting. In 5.5 s of 2.5 s runs at most three started. */
    r = list_slots(e, "queue-one");
    assert_true(count(r, SKIPPED, CSCHED__V1__SKIP_REASON__SKIP_REASON_QUEUE_FULL) >= 2);
    assert_true(count(r, STARTED, 0) >= 2 && count(r, STARTED, 0) <= 4);
    assert_accounted(e, r);
    for (size_t i = 0; i + 1 < r->n_slots; i++) {
        /* Never two at once: each run started after the one before ended. */
        const Csched__V1__Slot *a = r->slots[i];
        if (a->outcome != STARTED)
            continue;
        for (size_t k = i + 1; k < r->n_slots; k++) {
            if (r->slots[k]->outcome != STARTED)
                continue;
            Csched__V1__Run *newer = cs_e2e_get_run(e, a->run_id);
            Csched__V1__Run *older = cs_e2e_wait_end(e, r->slots[k]->run_id);
            assert_true(newer->started_unix_ms == 0 ||
                        newer->started_unix_ms >= older->ended_unix_ms);
            csched__v1__run__free_unpacked(newer, NULL);
            csched__v1__run__free_unpacked(older, NULL);
            break;
        }
    }
    csched__v1__list_slots_response__free_unpacked(r, NULL);

    r = list_slots(e, "replace");
    assert_int_equal(count(r, STARTED, 0), r->n_slots);
    assert_accounted(e, r);
    /* Every run but the newest was cancelled by the next slot. */
    for (size_t i = 2; i < r->n_slots; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, r->slots[i]->run_id);
        assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
        csched__v1__run__free_unpacked(run, NULL);
    }
    csched__v1__list_slots_response__free_unpacked(r, NULL);
}

/* Paused, the slots are skipped PAUSED; resumed with run_once, the newest of
 * them runs once as a catch-up, and the schedule goes on. */
static void test_e2e_slots_pause_resume(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListSlotsResponse *r;
    Csched__V1__Job *job;

    create_every_second(e, "pausing", "true", CSCHED__V1__OVERLAP__OVERLAP_ALLOW,
                        CSCHED__V1__MISFIRE__MISFIRE_RUN_ONCE, 0);
    job = job_call(e, "pause", "pausing", "maintenance");
    assert_true(job->paused);
    assert_string_equal(job->pause_reason, "maintenance");
    assert_true(job->paused_unix_ms > 0);
    csched__v1__job__free_unpacked(job, NULL);
    sleep_ms(3500);
    r = list_slots(e, "pausing");
    assert_true(count(r, SKIPPED, CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED) >= 3);
    assert_int_equal(count(r, STARTED, 0), 0);
    csched__v1__list_slots_response__free_unpacked(r, NULL);

    job = job_call(e, "resume", "pausing", NULL);
    assert_false(job->paused);
    assert_string_equal(job->pause_reason, "");
    csched__v1__job__free_unpacked(job, NULL);
    sleep_ms(300);
    r = list_slots(e, "pausing");
    /* The newest paused slot became the catch-up run. */
    size_t catchups = 0;
    for (size_t i = 0; i < r->n_slots; i++)
        catchups += r->slots[i]->outcome == STARTED && strstr(r->slots[i]->message, "catch-up");
    assert_int_equal(catchups, 1);
    assert_accounted(e, r);
    csched__v1__list_slots_response__free_unpacked(r, NULL);
    sleep_ms(1500);
    r = list_slots(e, "pausing");
    assert_true(r->slots[0]->outcome == STARTED);
    csched__v1__list_slots_response__free_unpacked(r, NULL);
}

/* ListSlots pages newest first; a new schedule stops the old one's slots,
 * and a deleted job's slots stay readable. */
static void test_e2e_slots_pages_update_delete(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListSlotsRequest req = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    Csched__V1__ListSlotsResponse *all = list_slots(e, "tick"), *page = NULL;
    struct cs_status st = {0};
    size_t seen = 0;

    req.job_name = "tick";
    req.page_size = 2;
    req.page_token = "";
    /* The schedule goes on: page through what all saw. */
    req.to_unix_ms = all->slots[0]->slot_unix_ms;
    do {
        assert_int_equal(cs_scheduler_list_slots(e->client, &req, &page, cs_e2e_opts(), &st), 0);
        for (size_t i = 0; i < page->n_slots && seen < all->n_slots; i++, seen++)
            assert_int_equal(page->slots[i]->slot_unix_ms, all->slots[seen]->slot_unix_ms);
        if (req.page_token[0] != '\0')
            free(req.page_token);
        req.page_token = strdup(page->next_page_token);
        csched__v1__list_slots_response__free_unpacked(page, NULL);
    } while (req.page_token[0] != '\0' && seen < all->n_slots);
    free(req.page_token);
    assert_true(seen >= all->n_slots);
    csched__v1__list_slots_response__free_unpacked(all, NULL);

    Csched__V1__UpdateJobRequest up = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT, *resp = NULL;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    job.name = "tick";
    job.shell = "true";
    sc.text = "0 0 1 1 *";
    job.schedule = &sc;
    up.job = &job;
    assert_int_equal(cs_scheduler_update_job(e->client, &up, &resp, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(resp, NULL);
    sleep_ms(300);
    size_t before = (all = list_slots(e, "tick"))->n_slots;
    csched__v1__list_slots_response__free_unpacked(all, NULL);
    sleep_ms(1500);
    all = list_slots(e, "tick");
    assert_int_equal(all->n_slots, before);
    csched__v1__list_slots_response__free_unpacked(all, NULL);

    Csched__V1__DeleteJobRequest del = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *dresp = NULL;
    del.name = "tick";
    assert_int_equal(cs_scheduler_delete_job(e->client, &del, &dresp, cs_e2e_opts(), &st), 0);
    csched__v1__delete_job_response__free_unpacked(dresp, NULL);
    all = list_slots(e, "tick");
    assert_int_equal(all->n_slots, before);
    csched__v1__list_slots_response__free_unpacked(all, NULL);
}

/* Backfill makes the runs of past slots once: a second call finds them
 * started. With overlap forbid they all run, one at a time, oldest first. */
static void test_e2e_slots_backfill(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__BackfillJobRequest req = CSCHED__V1__BACKFILL_JOB_REQUEST__INIT;
    Csched__V1__BackfillJobResponse *resp = NULL;
    Csched__V1__ListSlotsResponse *r;
    struct cs_status st = {0};
    int64_t t = now_ms() / 1000 * 1000;

    create_every_second(e, "backfilled", "sleep 0.2", CSCHED__V1__OVERLAP__OVERLAP_FORBID,
                        CSCHED__V1__MISFIRE__MISFIRE_SKIP, 0);
    req.name = "backfilled";
    req.from_unix_ms = t - 20000;
    req.to_unix_ms = t - 11000;
    assert_int_equal(cs_scheduler_backfill_job(e->client, &req, &resp, cs_e2e_opts(), &st), 0);
    assert_int_equal(resp->runs_created, 10);
    assert_int_equal(resp->already_started, 0);
    assert_false(resp->more);
    csched__v1__backfill_job_response__free_unpacked(resp, NULL);
    assert_int_equal(cs_scheduler_backfill_job(e->client, &req, &resp, cs_e2e_opts(), &st), 0);
    assert_int_equal(resp->runs_created, 0);
    assert_int_equal(resp->already_started, 10);
    csched__v1__backfill_job_response__free_unpacked(resp, NULL);

    Csched__V1__ListSlotsRequest lr = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    lr.job_name = "backfilled";
    lr.to_unix_ms = t - 11000;
    assert_int_equal(cs_scheduler_list_slots(e->client, &lr, &r, cs_e2e_opts(), &st), 0);
    assert_int_equal(r->n_slots, 10);
    int64_t ended = 0;
    for (size_t i = r->n_slots; i-- > 0;) {
        assert_true(r->slots[i]->backfill);
        Csched__V1__Run *run = cs_e2e_wait_end(e, r->slots[i]->run_id);
        assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
        assert_true(run->started_unix_ms >= ended);
        ended = run->ended_unix_ms;
        csched__v1__run__free_unpacked(run, NULL);
    }
    assert_slots(e, r);
    csched__v1__list_slots_response__free_unpacked(r, NULL);
}

/* max_running 1 and a 4 s run ahead: the slots' runs that wait in the queue
 * past the 1 s starting deadline are cancelled unstarted, their slots
 * recorded DEADLINE_PASSED, and each run says why. */
static void test_e2e_slots_deadline_in_the_queue(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    size_t passed = 0;

    job.name = "queued-deadline";
    job.shell = "sleep 4";
    job.max_running = 1;
    sc.text = "@every 1s";
    sc.starting_deadline_seconds = 1;
    job.schedule = &sc;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    sleep_ms(6000);
    csched__v1__job__free_unpacked(job_call(e, "pause", job.name, "test over"), NULL);

    Csched__V1__ListSlotsResponse *r = list_slots(e, job.name);
    for (size_t i = 0; i < r->n_slots; i++) {
        const Csched__V1__Slot *slot = r->slots[i];
        if (slot->skip_reason != CSCHED__V1__SKIP_REASON__SKIP_REASON_DEADLINE_PASSED)
            continue;
        passed++;
        assert_true(slot->run_id != 0);
        assert_non_null(strstr(slot->message, "starting_deadline_seconds"));
        Csched__V1__Run *run = cs_e2e_get_run(e, slot->run_id);
        assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
        assert_int_equal(run->n_attempts, 0);
        assert_non_null(strstr(run->message, "starting_deadline_seconds"));
        csched__v1__run__free_unpacked(run, NULL);
    }
    /* Slots 2 and 3 waited 3 and 2 s behind the first run; slot 5 started. */
    assert_true(passed >= 2);
    assert_true(count(r, STARTED, 0) >= 2);
    assert_slots(e, r);
    csched__v1__list_slots_response__free_unpacked(r, NULL);
}

/* cschedd killed with SIGKILL for about 4 s: skip records the slots missed
 * while down, run_all with max_catchup 2 runs the newest two and records the
 * older ones superseded; no slot is decided twice. */
static void test_e2e_slots_misfire_across_a_crash(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__ListSlotsResponse *r;

    create_every_second(e, "crash-skip", "true", CSCHED__V1__OVERLAP__OVERLAP_ALLOW,
                        CSCHED__V1__MISFIRE__MISFIRE_SKIP, 0);
    create_every_second(e, "crash-all", "true", CSCHED__V1__OVERLAP__OVERLAP_ALLOW,
                        CSCHED__V1__MISFIRE__MISFIRE_RUN_ALL, 2);
    sleep_ms(2200);
    assert_int_equal(cs_testd_kill(e->d), 0);
    sleep_ms(4000);
    assert_int_equal(cs_testd_restart(e->d), 0);
    sleep_ms(1500);

    r = list_slots(e, "crash-skip");
    assert_true(count(r, SKIPPED, CSCHED__V1__SKIP_REASON__SKIP_REASON_MISSED) >= 3);
    assert_slots(e, r);
    csched__v1__list_slots_response__free_unpacked(r, NULL);

    /* The catch-ups are decided and committed once the restarted server has
     * read its newest slots: waited for, not assumed done by now. A slot that
     * comes due meanwhile runs on time and takes no catch-up's place. */
    size_t catchups = 0;
    for (int tries = 0;; tries++) {
        r = list_slots(e, "crash-all");
        catchups = 0;
        for (size_t i = 0; i < r->n_slots; i++)
            catchups += r->slots[i]->outcome == STARTED && strstr(r->slots[i]->message, "catch-up");
        if (catchups >= 2 || tries == 100)
            break;
        csched__v1__list_slots_response__free_unpacked(r, NULL);
        sleep_ms(100);
    }
    assert_int_equal(catchups, 2);
    assert_true(count(r, SKIPPED, CSCHED__V1__SKIP_REASON__SKIP_REASON_SUPERSEDED) >= 1);
    assert_slots(e, r);
    csched__v1__list_slots_response__free_unpacked(r, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_slots_every_second),
        cmocka_unit_test(test_e2e_slots_pages_update_delete),
        cmocka_unit_test(test_e2e_slots_overlap),
        cmocka_unit_test(test_e2e_slots_pause_resume),
        cmocka_unit_test(test_e2e_slots_backfill),
        cmocka_unit_test(test_e2e_slots_deadline_in_the_queue),
        cmocka_unit_test(test_e2e_slots_misfire_across_a_crash),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
