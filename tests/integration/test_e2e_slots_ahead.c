/* End-to-end tests of slots decided ahead (server/slots.h, CS_SLOT_LEAD_MS)
 * against a real cschedd, the real clock and a real PostgreSQL: an
 * `@every 1s` job's run is made and committed before its slot is due, and
 * still never starts before it, its attempt directory made ahead too
 * (server/ahead_dir.h) and renamed into place at the start, and its minder
 * started ahead, waiting, and told to go at the due time
 * (server/ahead_minder.h); a job changed in that window runs as changed; a
 * pause or a delete in that window takes the run back and removes that
 * directory; a SIGKILL in that window leaves a slot that runs once, after
 * the restart, and no minder started ahead behind. The run is let go
 * CS_LATER_LEAD_MS before its due time (server/later.h): STARTING, its
 * directory made and its launch held until the time itself; a pause, a
 * cancel or a delete then still takes it back, its command never run.
 * One server serves every test of this file. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "minder_contract.h"
#include "testlib.h"

/* How long the tests poll for a run made ahead: several slots. */
#define AHEAD_WAIT_MS 5000

/* The wall clock, which run and slot times are in. */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether run's first attempt directory (suffix "") or its copy made ahead
 * (CS_AHEAD_DIR_SUFFIX) is there. */
static bool attempt_dir_is(struct cs_e2e *e, int64_t run_id, const char *suffix)
{
    char path[4096];
    struct stat st;
    (void)snprintf(path, sizeof(path), "%s/" CS_ATTEMPTS_DIR "/%lld-1%s", cs_testd_state_dir(e->d),
                   (long long)run_id, suffix);
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Waits until the copy made ahead of run's first attempt directory is
 * there (want) or gone; false if it did not come to that in time. */
static bool wait_ahead_dir(struct cs_e2e *e, int64_t run_id, bool want)
{
    int64_t until = wall_ms() + AHEAD_WAIT_MS;
    while (attempt_dir_is(e, run_id, CS_AHEAD_DIR_SUFFIX) != want && wall_ms() < until)
        cs_test_sleep_ms(5);
    return attempt_dir_is(e, run_id, CS_AHEAD_DIR_SUFFIX) == want;
}

/* Reads /proc/PID/cmdline into buf (NUL-separated); its length, or 0. */
static size_t read_cmdline(pid_t pid, char *buf, size_t cap)
{
    char path[64];
    (void)snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, cap - 1, f);
    (void)fclose(f);
    buf[n] = '\0';
    return n;
}

/* Whether the NUL-separated cmdline holds the argument arg. */
static bool has_arg(const char *cmdline, size_t len, const char *arg)
{
    for (size_t i = 0; i < len; i += strlen(cmdline + i) + 1)
        if (strcmp(cmdline + i, arg) == 0)
            return true;
    return false;
}

/* The pid of the minder started ahead (-w) for run's first attempt, or 0. */
static pid_t waiting_minder(struct cs_e2e *e, int64_t run_id)
{
    char dir[4096], cmdline[8192];
    (void)snprintf(dir, sizeof(dir), "%s/" CS_ATTEMPTS_DIR "/%lld-1", cs_testd_state_dir(e->d),
                   (long long)run_id);
    DIR *proc = opendir("/proc");
    pid_t found = 0;
    assert_non_null(proc);
    for (struct dirent *d; found == 0 && (d = readdir(proc)) != NULL;) {
        pid_t pid = (pid_t)atoi(d->d_name);
        size_t len = pid > 0 ? read_cmdline(pid, cmdline, sizeof(cmdline)) : 0;
        if (len > 0 && strstr(cmdline, CS_MINDER_NAME) != NULL && has_arg(cmdline, len, "-w") &&
            has_arg(cmdline, len, dir))
            found = pid;
    }
    (void)closedir(proc);
    return found;
}

/* Waits, until run is due, for the minder started ahead for it. */
static pid_t wait_waiting_minder(struct cs_e2e *e, const Csched__V1__Run *run)
{
    pid_t pid = 0;
    while ((pid = waiting_minder(e, run->id)) == 0 && wall_ms() < run->not_before_unix_ms)
        cs_test_sleep_ms(5);
    return pid;
}

/* Whether pid is gone or a zombie no one reaped yet: no longer running. */
static bool wait_not_running(pid_t pid)
{
    char path[64], stat_line[512];
    (void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    for (int64_t until = wall_ms() + AHEAD_WAIT_MS; wall_ms() < until; cs_test_sleep_ms(5)) {
        FILE *f = fopen(path, "re");
        if (f == NULL)
            return true;
        size_t n = fread(stat_line, 1, sizeof(stat_line) - 1, f);
        (void)fclose(f);
        stat_line[n] = '\0';
        const char *close_paren = strrchr(stat_line, ')');
        if (close_paren != NULL && close_paren[1] == ' ' && close_paren[2] == 'Z')
            return true;
    }
    return false;
}

static void create_job(struct cs_e2e *e, const char *name, const char *shell)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;

    job.name = (char *)name;
    job.shell = (char *)shell;
    sc.text = "@every 1s";
    job.schedule = &sc;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
}

static void create_ticking(struct cs_e2e *e, const char *name)
{
    create_job(e, name, "true");
}

/* Waits for a run of job made ahead of its slot whose due time is at least
 * min_left_ms away, its slot row committed (ListSlots reads the database).
 * Returns the run (caller frees). */
static Csched__V1__Run *wait_ahead(struct cs_e2e *e, const char *job, int64_t min_left_ms)
{
    int64_t until = wall_ms() + AHEAD_WAIT_MS;

    while (wall_ms() < until) {
        Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
        Csched__V1__ListRunsResponse *resp = NULL;
        Csched__V1__Run *found = NULL;
        struct cs_status st = {0};

        req.job_name = (char *)job;
        req.page_size = 5;
        if (cs_scheduler_list_runs(e->client, &req, &resp, cs_e2e_opts(), &st) != 0)
            fail_msg("ListRuns(%s): %s", job, st.message);
        for (size_t i = 0; i < resp->n_runs && found == NULL; i++) {
            const Csched__V1__Run *r = resp->runs[i];
            if (r->state == CSCHED__V1__RUN_STATE__RUN_STATE_QUEUED &&
                r->not_before_unix_ms - wall_ms() >= min_left_ms)
                found = cs_e2e_get_run(e, r->id);
        }
        csched__v1__list_runs_response__free_unpacked(resp, NULL);
        if (found != NULL) {
            Csched__V1__Slot *slot;
            while ((slot = cs_e2e_get_slot(e, job, found->slot_unix_ms)) == NULL)
                cs_test_sleep_ms(5);
            assert_int_equal(slot->run_id, found->id);
            csched__v1__slot__free_unpacked(slot, NULL);
            return found;
        }
        cs_test_sleep_ms(20);
    }
    fail_msg("no run of %s made ahead of its slot in %d ms", job, AHEAD_WAIT_MS);
    return NULL;
}

static void delete_job(struct cs_e2e *e, const char *name)
{
    Csched__V1__DeleteJobRequest del = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *resp = NULL;
    struct cs_status st = {0};

    del.name = (char *)name;
    if (cs_scheduler_delete_job(e->client, &del, &resp, cs_e2e_opts(), &st) != 0)
        fail_msg("DeleteJob(%s): %s", name, st.message);
    csched__v1__delete_job_response__free_unpacked(resp, NULL);
}

/* Whether a minder has worked in run's first attempt directory: its pid
 * file, written before the command starts, is there. */
static bool minder_worked(struct cs_e2e *e, int64_t run_id)
{
    char path[4096];
    (void)snprintf(path, sizeof(path), "%s/" CS_ATTEMPTS_DIR "/%lld-1/" CS_ATTEMPT_PID_FILE,
                   cs_testd_state_dir(e->d), (long long)run_id);
    return access(path, F_OK) == 0;
}

/* Waits for a run of job let go before its due time with min_left_ms still
 * to go: STARTING, its attempt directory in place, no minder at work in it.
 * Returns it as read then (caller frees); tries several slots. */
static Csched__V1__Run *wait_held(struct cs_e2e *e, const char *job, int64_t min_left_ms)
{
    for (int tries = 0; tries < 5; tries++) {
        Csched__V1__Run *run = wait_ahead(e, job, 200);
        int64_t id = run->id, latest_ms = run->not_before_unix_ms - min_left_ms;
        csched__v1__run__free_unpacked(run, NULL);
        while (wall_ms() < latest_ms) {
            Csched__V1__Run *now = cs_e2e_get_run(e, id);
            if (now->state == CSCHED__V1__RUN_STATE__RUN_STATE_STARTING &&
                attempt_dir_is(e, id, "") && !minder_worked(e, id) && wall_ms() < latest_ms)
                return now;
            csched__v1__run__free_unpacked(now, NULL);
            cs_test_sleep_ms(2);
        }
    }
    fail_msg("no run of %s held for its due time with %lld ms to go", job, (long long)min_left_ms);
    return NULL;
}

/* Waits for the slot of job at slot_ms to be recorded SKIPPED for reason,
 * naming run_id: its row is rewritten in the turn the run ends and commits
 * soon after. */
static void wait_slot_skipped(struct cs_e2e *e, const char *job, int64_t slot_ms,
                              Csched__V1__SkipReason reason, int64_t run_id)
{
    Csched__V1__Slot *slot;
    int64_t until = wall_ms() + AHEAD_WAIT_MS;
    while ((slot = cs_e2e_get_slot(e, job, slot_ms))->outcome !=
               CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED &&
           wall_ms() < until) {
        csched__v1__slot__free_unpacked(slot, NULL);
        cs_test_sleep_ms(20);
    }
    assert_int_equal(slot->outcome, CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_SKIPPED);
    assert_int_equal(slot->skip_reason, reason);
    assert_int_equal(slot->run_id, run_id);
    csched__v1__slot__free_unpacked(slot, NULL);
}

/* Pauses job once wait_run (wait_ahead or wait_held, with min_left_ms)
 * found its next run, until a pause lands before that run's due time (one
 * after it proves nothing: the job is resumed and the next slot tried).
 * Returns that run (caller frees). */
static Csched__V1__Run *pause_before_due(struct cs_e2e *e, const char *job,
                                         Csched__V1__Run *(*wait_run)(struct cs_e2e *, const char *,
                                                                      int64_t),
                                         int64_t min_left_ms)
{
    for (int tries = 0; tries < 5; tries++) {
        Csched__V1__PauseJobRequest preq = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
        Csched__V1__ResumeJobRequest rreq = CSCHED__V1__RESUME_JOB_REQUEST__INIT;
        Csched__V1__Job *paused = NULL, *resumed = NULL;
        struct cs_status st = {0};

        Csched__V1__Run *run = wait_run(e, job, min_left_ms);
        preq.name = rreq.name = (char *)job;
        assert_int_equal(cs_scheduler_pause_job(e->client, &preq, &paused, cs_e2e_opts(), &st), 0);
        bool in_time = paused->paused_unix_ms < run->not_before_unix_ms;
        csched__v1__job__free_unpacked(paused, NULL);
        if (in_time)
            return run;
        csched__v1__run__free_unpacked(run, NULL);
        assert_int_equal(cs_scheduler_resume_job(e->client, &rreq, &resumed, cs_e2e_opts(), &st),
                         0);
        csched__v1__job__free_unpacked(resumed, NULL);
    }
    fail_msg("no pause of %s landed before its run's due time", job);
    return NULL;
}

/* The run is made and its slot decided before the due time, and it starts
 * at that time, never before. */
static void test_e2e_slots_ahead_starts_on_time(void **state)
{
    struct cs_e2e *e = *state;
    create_ticking(e, "ahead");
    Csched__V1__Run *run = wait_ahead(e, "ahead", 200);
    Csched__V1__Slot *slot = cs_e2e_get_slot(e, "ahead", run->slot_unix_ms);

    /* Its directory is made ahead too, and only renamed at the start. */
    assert_true(wait_ahead_dir(e, run->id, true));
    assert_false(attempt_dir_is(e, run->id, ""));
    /* And its minder is started ahead, to wait for the due time. */
    pid_t waiting = wait_waiting_minder(e, run);
    assert_true(waiting > 0);

    /* No jitter: due at the slot itself. */
    assert_int_equal(run->not_before_unix_ms, run->slot_unix_ms);
    assert_true(run->created_unix_ms < run->not_before_unix_ms);
    assert_true(slot->decided_unix_ms < slot->due_unix_ms);
    assert_int_equal(slot->outcome, CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED);
    csched__v1__slot__free_unpacked(slot, NULL);

    Csched__V1__Run *done = cs_e2e_wait_end(e, run->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_true(done->started_unix_ms >= run->not_before_unix_ms);
    assert_true(done->attempts[0]->started_unix_ms >= run->not_before_unix_ms);
    assert_int_equal(done->attempts[0]->minder_pid, waiting);
    assert_true(attempt_dir_is(e, run->id, ""));
    assert_false(attempt_dir_is(e, run->id, CS_AHEAD_DIR_SUFFIX));
    csched__v1__run__free_unpacked(done, NULL);
    csched__v1__run__free_unpacked(run, NULL);
    delete_job(e, "ahead");
}

/* The job's command changed after its minder was started ahead: that
 * minder is sent away without running anything, and the run runs the
 * command as it is at the due time. */
static void test_e2e_slots_ahead_job_changed(void **state)
{
    struct cs_e2e *e = *state;
    create_job(e, "ahead-change", "echo old");
    Csched__V1__Run *run = wait_ahead(e, "ahead-change", 300);
    pid_t waiting = wait_waiting_minder(e, run);
    assert_true(waiting > 0);

    Csched__V1__GetJobRequest greq = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__UpdateJobRequest ureq = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
    Csched__V1__Job *job = NULL, *updated = NULL;
    struct cs_status st = {0};
    greq.name = "ahead-change";
    assert_int_equal(cs_scheduler_get_job(e->client, &greq, &job, cs_e2e_opts(), &st), 0);
    free(job->shell);
    job->shell = strdup("echo new");
    ureq.job = job;
    assert_int_equal(cs_scheduler_update_job(e->client, &ureq, &updated, cs_e2e_opts(), &st), 0);
    csched__v1__job__free_unpacked(updated, NULL);
    csched__v1__job__free_unpacked(job, NULL);
    /* The update must land before the due time for the test to say anything. */
    assert_true(wall_ms() < run->not_before_unix_ms);

    Csched__V1__Run *done = cs_e2e_wait_end(e, run->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_true(done->attempts[0]->minder_pid != waiting);
    size_t len;
    char *out = cs_e2e_read_logs(e, run->id, 1, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_string_equal(out, "new\n");
    free(out);
    assert_true(wait_not_running(waiting));
    csched__v1__run__free_unpacked(done, NULL);
    csched__v1__run__free_unpacked(run, NULL);
    delete_job(e, "ahead-change");
}

/* Paused after the run was made, before its slot came due: the run is
 * cancelled unstarted and the slot recorded PAUSED, naming the run. */
static void test_e2e_slots_ahead_paused(void **state)
{
    struct cs_e2e *e = *state;
    create_ticking(e, "ahead-pause");
    Csched__V1__Run *run = pause_before_due(e, "ahead-pause", wait_ahead, 200);

    Csched__V1__Run *done = cs_e2e_wait_end(e, run->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(done->n_attempts, 0);
    assert_non_null(strstr(done->message, "paused"));
    /* The directory made for it ahead goes with it; none was made. */
    assert_true(wait_ahead_dir(e, run->id, false));
    assert_false(attempt_dir_is(e, run->id, ""));
    csched__v1__run__free_unpacked(done, NULL);
    wait_slot_skipped(e, "ahead-pause", run->slot_unix_ms,
                      CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED, run->id);
    csched__v1__run__free_unpacked(run, NULL);
    delete_job(e, "ahead-pause");
}

/* Let go before its due time, the run is STARTING with its directory made,
 * and its minder starts at the due time, not before. */
static void test_e2e_slots_ahead_held_until_due(void **state)
{
    struct cs_e2e *e = *state;
    create_ticking(e, "ahead-held");
    Csched__V1__Run *held = wait_held(e, "ahead-held", 20);
    assert_int_equal(held->n_attempts, 1);
    assert_int_equal(held->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_STARTING);

    Csched__V1__Run *done = cs_e2e_wait_end(e, held->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(done->n_attempts, 1);
    assert_true(done->attempts[0]->started_unix_ms >= held->not_before_unix_ms);
    assert_true(minder_worked(e, held->id));
    csched__v1__run__free_unpacked(done, NULL);
    csched__v1__run__free_unpacked(held, NULL);
    delete_job(e, "ahead-held");
}

/* Paused while its run is held for the due time: the run is taken back,
 * its command never run, and the slot recorded PAUSED. */
static void test_e2e_slots_ahead_paused_while_held(void **state)
{
    struct cs_e2e *e = *state;
    create_ticking(e, "ahead-held-pause");
    Csched__V1__Run *held = pause_before_due(e, "ahead-held-pause", wait_held, 30);

    Csched__V1__Run *done = cs_e2e_wait_end(e, held->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_non_null(strstr(done->message, "paused"));
    assert_int_equal(done->n_attempts, 1);
    assert_int_equal(done->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    cs_test_sleep_ms(200); /* past the due time: still no minder at work */
    assert_false(minder_worked(e, held->id));
    csched__v1__run__free_unpacked(done, NULL);
    wait_slot_skipped(e, "ahead-held-pause", held->slot_unix_ms,
                      CSCHED__V1__SKIP_REASON__SKIP_REASON_PAUSED, held->id);
    csched__v1__run__free_unpacked(held, NULL);
    delete_job(e, "ahead-held-pause");
}

/* Cancelled while held for the due time: it ends at once, its command
 * never run. */
static void test_e2e_slots_ahead_cancelled_while_held(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    Csched__V1__Run *cancelled = NULL;
    struct cs_status st = {0};

    create_ticking(e, "ahead-held-cancel");
    Csched__V1__Run *held = wait_held(e, "ahead-held-cancel", 30);
    req.run_id = held->id;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &req, &cancelled, cs_e2e_opts(), &st), 0);
    /* Ended at once if held; while its directory was being made, a moment later. */
    assert_true(cancelled->state == CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED ||
                cancelled->cancel_requested);
    csched__v1__run__free_unpacked(cancelled, NULL);
    Csched__V1__Run *done = cs_e2e_wait_end(e, held->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_string_equal(done->message, "cancelled before it started");
    assert_int_equal(done->n_attempts, 1);
    assert_int_equal(done->attempts[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_string_equal(done->attempts[0]->message, "cancelled before its minder started");
    cs_test_sleep_ms(200); /* past the due time: still no minder at work */
    assert_false(minder_worked(e, held->id));
    csched__v1__run__free_unpacked(done, NULL);
    csched__v1__run__free_unpacked(held, NULL);
    delete_job(e, "ahead-held-cancel");
}

/* Deleted while its run is held for the due time: the run is taken back,
 * its command never run, and the delete goes through (or, while that run's
 * directory was still being made, fails FAILED_PRECONDITION until the run
 * has ended, a moment later). */
static void test_e2e_slots_ahead_deleted_while_held(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__DeleteJobRequest del = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    Csched__V1__DeleteJobResponse *resp = NULL;
    struct cs_status st = {0};

    create_ticking(e, "ahead-held-delete");
    Csched__V1__Run *held = wait_held(e, "ahead-held-delete", 30);
    del.name = "ahead-held-delete";
    int rc = cs_scheduler_delete_job(e->client, &del, &resp, cs_e2e_opts(), &st);
    if (rc == 0)
        csched__v1__delete_job_response__free_unpacked(resp, NULL);
    else
        assert_int_equal(st.code, GRPC_STATUS_FAILED_PRECONDITION);
    Csched__V1__Run *done = cs_e2e_wait_end(e, held->id);
    if (rc != 0)
        delete_job(e, "ahead-held-delete");
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    cs_test_sleep_ms(200); /* past the due time: still no minder at work */
    assert_false(minder_worked(e, held->id));
    csched__v1__run__free_unpacked(done, NULL);
    csched__v1__run__free_unpacked(held, NULL);
}

/* A job whose next run is made ahead can still be deleted: that run goes
 * with it, cancelled unstarted. */
static void test_e2e_slots_ahead_deleted(void **state)
{
    struct cs_e2e *e = *state;
    create_ticking(e, "ahead-delete");
    Csched__V1__Run *run = wait_ahead(e, "ahead-delete", 200);

    delete_job(e, "ahead-delete");
    Csched__V1__Run *done = cs_e2e_wait_end(e, run->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED);
    assert_int_equal(done->n_attempts, 0);
    assert_true(wait_ahead_dir(e, run->id, false));
    assert_false(attempt_dir_is(e, run->id, ""));
    csched__v1__run__free_unpacked(done, NULL);
    csched__v1__run__free_unpacked(run, NULL);
}

/* cschedd killed with SIGKILL after a run was made ahead and committed,
 * before its slot came due: after the restart that run starts, once, and
 * no other run is made for its slot. */
static void test_e2e_slots_ahead_across_a_crash(void **state)
{
    struct cs_e2e *e = *state;
    create_ticking(e, "ahead-crash");
    Csched__V1__Run *run = wait_ahead(e, "ahead-crash", 150);

    /* Killed with the directory made ahead: the restart makes no other. */
    assert_true(wait_ahead_dir(e, run->id, true));
    /* And with its minder started ahead: that one ends with cschedd. */
    pid_t waiting = wait_waiting_minder(e, run);
    assert_true(waiting > 0);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_true(wait_not_running(waiting));
    assert_int_equal(cs_testd_restart(e->d), 0);
    Csched__V1__Run *done = cs_e2e_wait_end(e, run->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_int_equal(done->n_attempts, 1);
    assert_true(done->attempts[0]->started_unix_ms >= run->not_before_unix_ms);
    assert_true(done->attempts[0]->minder_pid != waiting);
    assert_true(attempt_dir_is(e, run->id, ""));
    assert_false(attempt_dir_is(e, run->id, CS_AHEAD_DIR_SUFFIX));
    csched__v1__run__free_unpacked(done, NULL);

    Csched__V1__Slot *slot = cs_e2e_get_slot(e, "ahead-crash", run->slot_unix_ms);
    assert_int_equal(slot->outcome, CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED);
    assert_int_equal(slot->run_id, run->id);
    csched__v1__slot__free_unpacked(slot, NULL);
    assert_int_equal(cs_e2e_count_slot_runs(e, "ahead-crash", run->slot_unix_ms), 1);
    csched__v1__run__free_unpacked(run, NULL);
}

/* cschedd killed with SIGKILL while a run is held for its due time, its
 * directory made: after the restart the slot's command runs once, and an
 * attempt found with its directory but no minder is recorded as never
 * started. */
static void test_e2e_slots_ahead_crash_while_held(void **state)
{
    struct cs_e2e *e = *state;
    char dir[] = "/tmp/cs-ahead-held-crash.XXXXXX", out[64], shell[128];

    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 0777), 0); /* the job's user writes there */
    (void)snprintf(out, sizeof(out), "%s/ran", dir);
    (void)snprintf(shell, sizeof(shell), "echo x >> %s", out);
    create_job(e, "ahead-held-crash", shell);
    Csched__V1__Run *held = wait_held(e, "ahead-held-crash", 30);
    assert_int_equal(cs_testd_kill(e->d), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);

    Csched__V1__Run *done = cs_e2e_wait_end(e, held->id);
    assert_int_equal(done->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    for (size_t i = 0; i + 1 < done->n_attempts; i++) {
        assert_int_equal(done->attempts[i]->state, CSCHED__V1__RUN_STATE__RUN_STATE_LOST);
        assert_non_null(strstr(done->attempts[i]->message, "never started"));
    }
    assert_true(done->attempts[done->n_attempts - 1]->started_unix_ms >= held->not_before_unix_ms);
    assert_int_equal(cs_e2e_count_lines(out), 1);
    assert_int_equal(cs_e2e_count_slot_runs(e, "ahead-held-crash", held->slot_unix_ms), 1);
    csched__v1__run__free_unpacked(done, NULL);
    csched__v1__run__free_unpacked(held, NULL);
    delete_job(e, "ahead-held-crash");
    cs_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_slots_ahead_starts_on_time),
        cmocka_unit_test(test_e2e_slots_ahead_job_changed),
        cmocka_unit_test(test_e2e_slots_ahead_paused),
        cmocka_unit_test(test_e2e_slots_ahead_deleted),
        cmocka_unit_test(test_e2e_slots_ahead_held_until_due),
        cmocka_unit_test(test_e2e_slots_ahead_paused_while_held),
        cmocka_unit_test(test_e2e_slots_ahead_cancelled_while_held),
        cmocka_unit_test(test_e2e_slots_ahead_deleted_while_held),
        cmocka_unit_test(test_e2e_slots_ahead_across_a_crash),
        cmocka_unit_test(test_e2e_slots_ahead_crash_while_held),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
