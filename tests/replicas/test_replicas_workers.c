/* Attempts placed on every replica's machine (docs/design/0036), three
 * replicas, the commands under the oracles:
 *
 * - a burst spreads: each replica's machine runs a share of it, the job's
 *   limit is never exceeded, each run's output is read through the active
 *   replica, and ListReplicas and GetStats show every machine's limit;
 * - a standby killed with kill -9 while it runs placed attempts: they end
 *   LOST only after its commands' deadline and the margin, and run again on
 *   another machine, never two at once; the attempts on the other machines
 *   are cancelled through the API and end CANCELLED;
 * - a standby killed and started again within its lease: its minders go
 *   on, the active replica asks the new process, which adopts them, and
 *   each run ends SUCCEEDED after one attempt;
 * - the active replica killed while standbys run its placed attempts: the
 *   replica that takes over asks them, and each of those runs ends
 *   SUCCEEDED after one attempt, nothing LOST;
 * - the output of an attempt still running on a standby's machine, read
 *   through another replica: what it has written so far, and, following,
 *   the rest as it comes, to the attempt's end (relayed to that machine);
 * - a launch that reaches a worker after that worker has told the attempt
 *   never started (sent by an active replica frozen meanwhile, and taken
 *   over) starts nothing: the worker left the attempt's directory. */
#include <errno.h>
#include <fcntl.h>
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

#include "csched/v1/worker.pb-c.h"
#include "replicas_runs.h"

#define N_REPLICAS 3
#define N_BURST 60
/* Enough runs that each replica's machine gets some: the active one places
 * on the machine with the most free places, its own on a tie. */
#define N_LONG 24

static int group_setup(void **state)
{
    return cs_rruns_setup(state, N_REPLICAS, NULL);
}

static int replica_index(struct cs_rruns_suite *f, const char *id)
{
    for (unsigned i = 0; i < f->rs->n; i++)
        if (strcmp(f->rs->r[i].id, id) == 0)
            return (int)i;
    return -1;
}

/* Waits until every run of ids has a start mark, so its attempt is placed
 * and running. */
static void wait_all_started(struct cs_rruns_suite *f, const int64_t *ids, size_t n)
{
    for (size_t k = 0; k < n; k++)
        cs_rruns_wait_started(&f->oracle, ids[k], CS_E2E_RUN_TIMEOUT_MS);
}

static void test_workers_spread(void **state)
{
    struct cs_rruns_suite *f = *state;
    static struct cs_rruns_run runs[N_BURST];
    int64_t ids[N_BURST];
    char job[64], where[64];
    unsigned a = cs_rruns_active(f, -1, NULL), count[N_REPLICAS] = {0};

    for (unsigned i = 0; i < N_REPLICAS; i++)
        if (i != a)
            cs_rruns_wait_forwarding(f->rs, i);
    cs_rruns_job(f->rs, a, &f->oracle, "spread", "echo out-$CSCHED_RUN_ID; sleep 0.3", 30, 1, job,
                 sizeof(job));
    cs_rruns_trigger(f->rs, a, job, N_BURST, ids);
    for (size_t k = 0; k < N_BURST; k++)
        runs[k].id = ids[k];
    cs_rruns_assert_outcomes(f, a, runs, N_BURST, "");
    for (size_t k = 0; k < N_BURST; k++) {
        cs_rruns_placed_on(f, a, ids[k], where, sizeof(where));
        int i = replica_index(f, where);
        if (i < 0)
            fail_msg("run %lld ran on \"%s\", not a replica of the test", (long long)ids[k], where);
        count[i]++;
        /* Its output, kept in the database by the machine that ran it, read
         * through the active replica. */
        char want[64];
        size_t len;
        (void)snprintf(want, sizeof(want), "out-%lld\n", (long long)ids[k]);
        char *out = cs_e2e_read_logs(cs_replicas_e2e(f->rs, a), ids[k], 0,
                                     CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
        if (strstr(out, want) == NULL)
            fail_msg("run %lld on %s: ReadLogs gave \"%s\", want a line \"%s\"", (long long)ids[k],
                     where, out, want);
        free(out);
    }
    fprintf(stderr,
            "workers: %d runs of a job with a limit of 30 ran %u, %u and %u on %s, %s, %s\n",
            N_BURST, count[0], count[1], count[2], f->rs->r[0].id, f->rs->r[1].id, f->rs->r[2].id);
    for (unsigned i = 0; i < N_REPLICAS; i++)
        if (count[i] < 5)
            fail_msg("%s ran %u of %d runs: the burst did not spread", f->rs->r[i].id, count[i],
                     N_BURST);

    Csched__V1__ListReplicasResponse *list = NULL;
    struct cs_status st = {0};
    assert_int_equal(cs_scheduler_list_replicas(cs_replicas_e2e(f->rs, a)->client, NULL, &list,
                                                cs_e2e_opts(), &st),
                     0);
    assert_int_equal(list->n_replicas, N_REPLICAS);
    for (size_t i = 0; i < list->n_replicas; i++)
        assert_int_equal(list->replicas[i]->max_running, 16);
    csched__v1__list_replicas_response__free_unpacked(list, NULL);
    /* GetStats: each machine the active one places on, its own first. */
    Csched__V1__Stats *stats = NULL;
    assert_int_equal(
        cs_scheduler_get_stats(cs_replicas_e2e(f->rs, a)->client, NULL, &stats, cs_e2e_opts(), &st),
        0);
    assert_int_equal(stats->n_machines, N_REPLICAS);
    assert_string_equal(stats->machines[0]->replica, f->rs->r[a].id);
    for (size_t i = 0; i < stats->n_machines; i++) {
        assert_int_equal(stats->machines[i]->max_running, 16);
        assert_int_equal(stats->machines[i]->running, 0);
        assert_true(stats->machines[i]->takes_attempts);
    }
    csched__v1__stats__free_unpacked(stats, NULL);
}

/* Triggers N_LONG runs of a job whose first attempt sleeps past any lease
 * here, waits for all to run, and returns the standby running the most
 * (into *w) with the number of them. */
static unsigned start_long_runs(struct cs_rruns_suite *f, unsigned a, const char *prefix,
                                const char *payload, int64_t *ids, char (*where)[64], unsigned *w)
{
    char job[64];
    unsigned count[N_REPLICAS] = {0};
    cs_rruns_job(f->rs, a, &f->oracle, prefix, payload, N_LONG, CS_RRUNS_MAX_ATTEMPTS, job,
                 sizeof(job));
    cs_rruns_trigger(f->rs, a, job, N_LONG, ids);
    wait_all_started(f, ids, N_LONG);
    for (size_t k = 0; k < N_LONG; k++) {
        cs_rruns_placed_on(f, a, ids[k], where[k], sizeof(where[k]));
        int i = replica_index(f, where[k]);
        assert_true(i >= 0);
        count[i]++;
    }
    *w = a == 0 ? 1 : 0;
    for (unsigned i = 0; i < N_REPLICAS; i++)
        if (i != a && count[i] > count[*w])
            *w = i;
    if (count[*w] == 0)
        fail_msg("no run of %d was placed on a standby", N_LONG);
    return count[*w];
}

static void test_worker_killed(void **state)
{
    struct cs_rruns_suite *f = *state;
    int64_t ids[N_LONG];
    char where[N_LONG][64];
    static struct cs_rruns_run lost[N_LONG];
    unsigned a = cs_rruns_active(f, -1, NULL), w;

    unsigned on_w = start_long_runs(f, a, "killed", CS_RRUNS_LONG_FIRST, ids, where, &w);
    int64_t t0 = cs_test_now_ms();
    assert_int_equal(cs_replicas_kill9(f->rs, w), 0);
    /* The others' first attempts would sleep a minute: cancelled, which
     * reaches each one on whichever machine runs it. */
    for (size_t k = 0; k < N_LONG; k++)
        lost[k] = (struct cs_rruns_run){ids[k], true};
    size_t n_lost = cs_rruns_split(f, a, lost, N_LONG, f->rs->r[w].id);
    assert_int_equal(n_lost, on_w);
    int64_t first_lost_ms = cs_rruns_wait_lost(f, a, lost[0].id, f->rs->r[w].id, t0);
    cs_rruns_assert_outcomes(f, a, lost, n_lost, f->rs->r[w].id);
    fprintf(stderr,
            "workers: %s killed with %u attempts placed on it: LOST after %lld ms (lease %d ms, "
            "margin %d ms), each run again elsewhere once\n",
            f->rs->r[w].id, on_w, (long long)first_lost_ms, CS_RRUNS_ATTEMPT_LEASE_MS,
            CS_RRUNS_LOST_MARGIN_MS);
    if (first_lost_ms < CS_RRUNS_ATTEMPT_LEASE_MS)
        fail_msg("taken for lost after %lld ms, before the attempt lease (%d ms)",
                 (long long)first_lost_ms, CS_RRUNS_ATTEMPT_LEASE_MS);
    assert_int_equal(cs_replicas_restart(f->rs, w, CS_REPLICAS_WAIT_UP), 0);
    cs_rruns_wait_forwarding(f->rs, w);
}

/* Each of runs ended SUCCEEDED in the attempt that was running, which no
 * replica's loss took for lost: the attempts before it, if any, never
 * started (a launch to a replica as it went away), and the command ran
 * once. */
static void assert_one_attempt(struct cs_rruns_suite *f, unsigned i, const int64_t *ids, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        Csched__V1__Run *run = cs_rruns_wait_end(f->rs, i, ids[k], CS_RRUNS_END_MS);
        size_t ran = 0;
        for (size_t a = 0; a < run->n_attempts; a++)
            ran += strncmp(run->attempts[a]->message, "never started: ", 15) != 0;
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED || ran != 1)
            fail_msg("run %lld ended %s after %zu attempts that ran (%s), want SUCCEEDED after "
                     "one",
                     (long long)ids[k], cs_test_run_state_name(run->state), ran,
                     run->n_attempts > 0 ? run->attempts[0]->message : "");
        csched__v1__run__free_unpacked(run, NULL);
        cs_rruns_assert_once(&f->oracle, ids[k], 1);
    }
    cs_rruns_assert_no_excess(&f->oracle);
}

/* The ids of the runs placed on replica i (on: true) or elsewhere, into
 * out; how many. */
static size_t placed(struct cs_rruns_suite *f, const int64_t *ids, char (*where)[64], unsigned i,
                     bool on, int64_t *out)
{
    size_t n = 0;
    for (size_t k = 0; k < N_LONG; k++)
        if ((strcmp(where[k], f->rs->r[i].id) == 0) == on)
            out[n++] = ids[k];
    return n;
}

static void test_worker_restarted_within_lease(void **state)
{
    struct cs_rruns_suite *f = *state;
    int64_t ids[N_LONG], kept[N_LONG];
    char where[N_LONG][64];
    unsigned a = cs_rruns_active(f, -1, NULL), w;

    /* Longer than the kill and the restart, shorter than the test's wait. */
    (void)start_long_runs(f, a, "restarted", "sleep 4", ids, where, &w);
    assert_int_equal(cs_replicas_kill9(f->rs, w), 0);
    assert_int_equal(cs_replicas_restart(f->rs, w, CS_REPLICAS_WAIT_UP), 0);
    size_t n = placed(f, ids, where, w, true, kept);
    assert_one_attempt(f, a, kept, n);
    cs_rruns_wait_forwarding(f->rs, w);
    fprintf(stderr,
            "workers: %s killed and started again: its %zu attempts adopted, each run "
            "SUCCEEDED after one attempt\n",
            f->rs->r[w].id, n);
}

static void test_active_killed_workers_go_on(void **state)
{
    struct cs_rruns_suite *f = *state;
    int64_t ids[N_LONG], kept[N_LONG];
    char where[N_LONG][64];
    unsigned a = cs_rruns_active(f, -1, NULL), w;

    (void)start_long_runs(f, a, "active", "sleep 4", ids, where, &w);
    assert_int_equal(cs_replicas_kill9(f->rs, a), 0);
    unsigned b = cs_rruns_active(f, (int)a, NULL);
    /* What ran on the active one's machine is lost with it, as before; what
     * the other machines run goes on. */
    size_t n = placed(f, ids, where, a, false, kept);
    assert_true(n > 0);
    assert_one_attempt(f, b, kept, n);
    fprintf(stderr,
            "workers: active %s killed; %s took over and asked the others: their %zu "
            "attempts each SUCCEEDED after one attempt\n",
            f->rs->r[a].id, f->rs->r[b].id, n);
    assert_int_equal(cs_replicas_restart(f->rs, a, CS_REPLICAS_WAIT_UP), 0);
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(close(fd), 0);
}

/* Reads run id's logs (both streams) through replica i, following or not:
 * following, makes go once the first line has come, so that the command
 * writes the rest while the stream is open. Returns what came, each
 * chunk's data appended. */
static char *read_through(struct cs_rruns_suite *f, unsigned i, int64_t id, bool follow,
                          const char *go)
{
    Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
    struct cs_call_opts opts = {.timeout_ms = CS_E2E_RUN_TIMEOUT_MS};
    Csched__V1__LogChunk *chunk;
    struct cs_stream *stream = NULL;
    struct cs_status st = {0};
    char first[64], *buf = calloc(1, 1);
    size_t used = 0;
    int rc;

    assert_non_null(buf);
    (void)snprintf(first, sizeof(first), "first-%lld\n", (long long)id);
    req.run_id = id;
    req.follow = follow;
    rc = cs_scheduler_read_logs(cs_replicas_e2e(f->rs, i)->client, &req, &stream, &opts, &st);
    if (rc != 0)
        fail_msg("ReadLogs(%lld): %s \"%s\"", (long long)id, cs_status_code_name(rc), st.message);
    while ((rc = cs_scheduler_read_logs_next(stream, &chunk, &st)) == 1) {
        buf = realloc(buf, used + chunk->data.len + 1);
        assert_non_null(buf);
        if (chunk->data.len > 0)
            memcpy(buf + used, chunk->data.data, chunk->data.len);
        used += chunk->data.len;
        buf[used] = '\0';
        csched__v1__log_chunk__free_unpacked(chunk, NULL);
        if (go != NULL && strstr(buf, first) != NULL) {
            touch(go);
            go = NULL;
        }
    }
    cs_stream_free(stream);
    if (rc != 0 || st.code != 0)
        fail_msg("ReadLogs(%lld) through %s ended with rc %d, %s \"%s\"", (long long)id,
                 f->rs->r[i].id, rc, cs_status_code_name(st.code), st.message);
    return buf;
}

static void test_logs_of_a_running_attempt_relayed(void **state)
{
    struct cs_rruns_suite *f = *state;
    int64_t ids[N_LONG], on_w[N_LONG];
    char where[N_LONG][64], payload[PATH_MAX + 200], go[PATH_MAX + 40];
    unsigned a = cs_rruns_active(f, -1, NULL), w;

    /* Each command writes a line, waits for its file go-ID, then writes one
     * to stderr and one more to stdout. */
    (void)snprintf(payload, sizeof(payload),
                   "echo first-$CSCHED_RUN_ID; while [ ! -e %s/go-$CSCHED_RUN_ID ]; do sleep "
                   "0.05; done; echo second-$CSCHED_RUN_ID >&2; echo third-$CSCHED_RUN_ID",
                   f->oracle.dir);
    (void)start_long_runs(f, a, "logs", payload, ids, where, &w);
    assert_true(placed(f, ids, where, w, true, on_w) > 0);
    /* Through a replica that is not the one running it: the standby that
     * is not w forwards to the active one, which relays to w. */
    unsigned through = 0;
    while (through == w || through == a)
        through++;
    int64_t id = on_w[0];

    /* Its start mark comes before the command: what it has written so far
     * is "" until its first line. */
    char want[64], *now = NULL;
    (void)snprintf(want, sizeof(want), "first-%lld\n", (long long)id);
    for (int64_t until = cs_test_now_ms() + CS_E2E_RUN_TIMEOUT_MS;; cs_test_sleep_ms(20)) {
        free(now);
        now = read_through(f, through, id, false, NULL);
        if (now[0] != '\0' || cs_test_now_ms() > until)
            break;
    }
    if (strcmp(now, want) != 0)
        fail_msg("run %lld running on %s, read through %s: \"%s\", want \"%s\"", (long long)id,
                 f->rs->r[w].id, f->rs->r[through].id, now, want);
    free(now);

    (void)snprintf(go, sizeof(go), "%s/go-%lld", f->oracle.dir, (long long)id);
    char *all = read_through(f, through, id, true, go);
    const char *lines[] = {"first", "third", "second"};
    for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
        (void)snprintf(want, sizeof(want), "%s-%lld\n", lines[k], (long long)id);
        if (strstr(all, want) == NULL)
            fail_msg("following run %lld on %s through %s gave \"%s\": no line \"%s\"",
                     (long long)id, f->rs->r[w].id, f->rs->r[through].id, all, want);
    }
    free(all);
    Csched__V1__Run *run = cs_rruns_wait_end(f->rs, a, id, CS_RRUNS_END_MS);
    assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    csched__v1__run__free_unpacked(run, NULL);
    fprintf(stderr,
            "workers: run %lld running on %s read through %s, and followed to its end there\n",
            (long long)id, f->rs->r[w].id, f->rs->r[through].id);

    for (size_t k = 0; k < N_LONG; k++) {
        (void)snprintf(go, sizeof(go), "%s/go-%lld", f->oracle.dir, (long long)ids[k]);
        touch(go);
    }
    assert_one_attempt(f, a, ids, N_LONG);
}

/* Calls method on replica i's Worker service as another replica would,
 * with the cluster's key; the reply's bytes into *reply (freed by the
 * caller). Returns the gRPC status code. */
static int worker_call(struct cs_rruns_suite *f, unsigned i, const char *method,
                       const ProtobufCMessage *request, uint8_t **reply, size_t *reply_len)
{
    char key[128];
    assert_int_equal(cs_replicas_sql(f->rs, "SELECT key FROM cluster_key", key, sizeof(key), false),
                     0);
    const char *md[] = {"csched-cluster-key",    key,       "csched-forwarded-by",       "r9",
                        "csched-forwarded-role", "replica", "csched-forwarded-name-bin", "r9"};
    size_t len = protobuf_c_message_get_packed_size(request);
    uint8_t *buf = malloc(len + 1);
    assert_non_null(buf);
    (void)protobuf_c_message_pack(request, buf);
    struct cs_status st = {0};
    int code = cs_e2e_raw_unary_reply(cs_replicas_e2e(f->rs, i), method, buf, len, md, 4, &st,
                                      reply, reply_len);
    if (code != 0)
        fail_msg("%s on %s: %d \"%s\"", method, f->rs->r[i].id, code, st.message);
    free(buf);
    return code;
}

static void test_late_launch_starts_nothing(void **state)
{
    struct cs_rruns_suite *f = *state;
    unsigned a = cs_rruns_active(f, -1, NULL), w = a == 0 ? 1 : 0;
    /* An attempt no replica has: the worker is asked for its end first, as
     * a new active replica asks for every attempt its row places there. */
    Csched__V1__AttemptRef ref = CSCHED__V1__ATTEMPT_REF__INIT;
    ref.run_id = 900000 + (int64_t)cs_test_now_ms() % 100000;
    ref.number = 1;
    Csched__V1__AttemptRef *listed[] = {&ref};
    Csched__V1__AwaitRequest await = CSCHED__V1__AWAIT_REQUEST__INIT;
    await.n_attempts = 1;
    await.attempts = listed;
    uint8_t *reply;
    size_t len;
    worker_call(f, w, "/csched.v1.Worker/Await", &await.base, &reply, &len);
    Csched__V1__AwaitResponse *ended = csched__v1__await_response__unpack(NULL, len, reply);
    free(reply);
    assert_non_null(ended);
    assert_int_equal(ended->n_ends, 1);
    assert_true(ended->ends[0]->not_started);
    csched__v1__await_response__free_unpacked(ended, NULL);

    /* Then the launch, late: its command would leave a file. */
    char mark[PATH_MAX + 40], *argv[3] = {"/bin/sh", "-c", NULL}, script[PATH_MAX + 60];
    (void)snprintf(mark, sizeof(mark), "%s/late-%lld", f->oracle.dir, (long long)ref.run_id);
    (void)snprintf(script, sizeof(script), "touch %s", mark);
    argv[2] = script;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    job.name = "late";
    job.n_command = 3;
    job.command = argv;
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;
    run.id = ref.run_id;
    run.job_name = "late";
    Csched__V1__AttemptLaunch one = CSCHED__V1__ATTEMPT_LAUNCH__INIT;
    one.attempt = &ref;
    one.job = &job;
    one.run = &run;
    Csched__V1__AttemptLaunch *launches[] = {&one};
    Csched__V1__LaunchRequest launch = CSCHED__V1__LAUNCH_REQUEST__INIT;
    launch.n_launches = 1;
    launch.launches = launches;
    worker_call(f, w, "/csched.v1.Worker/Launch", &launch.base, &reply, &len);
    Csched__V1__LaunchResponse *started = csched__v1__launch_response__unpack(NULL, len, reply);
    free(reply);
    assert_non_null(started);
    assert_int_equal(started->n_starts, 1);
    const Csched__V1__AttemptStart *start = started->starts[0];
    fprintf(stderr, "workers: a launch after \"never started\" on %s: error %d \"%s\"\n",
            f->rs->r[w].id, start->error, start->message);
    if (start->minder_pid != 0 || start->error != -EEXIST)
        fail_msg("the late launch on %s: minder %d, error %d \"%s\"; want nothing started "
                 "(-EEXIST)",
                 f->rs->r[w].id, start->minder_pid, start->error, start->message);
    csched__v1__launch_response__free_unpacked(started, NULL);
    assert_int_equal(access(mark, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workers_spread),
        cmocka_unit_test(test_logs_of_a_running_attempt_relayed),
        cmocka_unit_test(test_late_launch_starts_nothing),
        cmocka_unit_test(test_worker_killed),
        cmocka_unit_test(test_worker_restarted_within_lease),
        cmocka_unit_test(test_active_killed_workers_go_on),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
